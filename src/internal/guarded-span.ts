/**
 * Our spans' failures, with content capture off, by their error's type only. A span that ends in a
 * failure records it (OpenTelemetry: an `exception` event and the status message, from the error's
 * message and stack), and many errors quote content: a tool's own error may quote its arguments, an
 * `InvalidToolArgs` or `OutputInvalid` quotes the values its Schema refused, a `ToolFailed` carries
 * its tool's message. With capture off (the default), the span sees the error under its own type
 * (`ToolFailed`, `ModelError`, the class name of a thrown error) with its message left out; errors
 * whose messages the library writes from names and numbers only (a budget, a tool not allowed, ...)
 * keep theirs. The run itself, its callers and its hooks see the error as it was.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Tracer from "effect/Tracer"
import { CaptureMessageContent } from "./capture-content.ts"
import { errorTypeOfError } from "./error-type.ts"

/** Tagged errors whose messages never quote content: names of agents, skills and tools, and numbers. */
const contentFree = new Set([
  "BudgetExceeded",
  "ToolNotAllowed",
  "NoSkillMatched",
  "AgentConfigError",
  "DefinitionChanged",
  "SnapshotRejected",
  "SnapshotAlreadyResumed",
  "Cancelled"
])

/** What a span records of an error whose message is left out. */
class WithheldError extends Error {
  constructor(type: string, detail: string) {
    super(`${type}${detail}: message left out (content capture is off)`)
    this.name = type
    // The stack would only repeat the message, from this module.
    this.stack = `${type}: ${this.message}`
  }
}

/** A model error's fields that are not content: its provider, HTTP status and kind. */
const modelErrorDetail = (error: object): string => {
  const { provider, status, kind } = error as { readonly provider?: unknown; readonly status?: unknown; readonly kind?: unknown }
  const parts = [typeof provider === "string" ? provider : undefined, typeof status === "number" ? `HTTP ${status}` : undefined, typeof kind === "string" ? kind : undefined]
  const kept = parts.filter((p) => p !== undefined)
  return kept.length === 0 ? "" : ` (${kept.join(", ")})`
}

const withheld = (error: unknown): unknown => {
  const tag = typeof error === "object" && error !== null ? (error as { readonly _tag?: unknown })._tag : undefined
  if (typeof tag === "string" && contentFree.has(tag)) return error
  const type = errorTypeOfError(error)
  return new WithheldError(type, tag === "ModelError" ? modelErrorDetail(error as object) : "")
}

const withheldCause = <E>(cause: Cause.Cause<E>): Cause.Cause<E> =>
  Cause.fromReasons(cause.reasons.map((reason) =>
    Cause.isFailReason(reason)
      ? Cause.makeFailReason(withheld(reason.error) as E)
      : Cause.isDieReason(reason)
      ? Cause.makeDieReason(withheld(reason.defect))
      : reason
  ))

/**
 * `Effect.withSpan`, whose span records a failure by its error's type only when content capture is
 * off (see the module's comment); the effect's own failure is unchanged.
 *
 * @example
 * ```ts
 * const traced = withGuardedSpan(callTool, "execute_tool refund", { kind: "internal" })
 * ```
 */
export const withGuardedSpan = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  name: string,
  options?: Tracer.SpanOptions
): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    if (fiber.getRef(CaptureMessageContent)) return Effect.withSpan(effect, name, options)
    let original: Cause.Cause<E> | undefined
    const guarded = Effect.catchCause(effect, (cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
      original = cause
      return Effect.failCause(withheldCause(cause))
    })
    return Effect.catchCause(Effect.withSpan(guarded, name, options), (cause) => Effect.failCause(original ?? cause))
  }) as Effect.Effect<A, E, R>
