/**
 * The events a composite (`pipeline`, `parallel`, `forum`, `loop`, `branch`) adds to its runs' stream:
 * its start, its end and its hooks' failures. They live here, beside the agents' events
 * (`events.ts`), so that what reads a stream (the UI message stream, AG-UI, the studio) reads a
 * composite's as it reads an agent's, without depending on the composition operators.
 */
import type { AgentError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { isRecord } from "../internal/is-record.ts"
import type { RunEndEvent, RunStreamEvent, WaitingCall } from "./events.ts"
import type { RunSnapshot } from "./run-snapshot.ts"

/** The operator a composite was built with. */
export type CompositeKind = "pipeline" | "parallel" | "forum" | "loop" | "branch"

/** A composite run began. */
export interface CompositeStart {
  readonly _tag: "CompositeStart"
  readonly name: string
  readonly kind: CompositeKind
  readonly runId: string
  readonly parentRunId: string | undefined
  readonly input: unknown
}

/** A composite run ended (success, failure or interruption). */
export interface CompositeEnd {
  readonly _tag: "CompositeEnd"
  readonly name: string
  readonly kind: CompositeKind
  readonly runId: string
  readonly parentRunId: string | undefined
  readonly outcome:
    | { readonly _tag: "Success"; readonly output: unknown }
    | { readonly _tag: "Failure"; readonly error: unknown }
    | { readonly _tag: "Interrupted" }
  readonly durationMs: number
}

/**
 * A hook of a composite (`onRunStart`, `onRunEnd`) threw, rejected, failed or did not settle within
 * `hookTimeout`; the run went on unchanged. Reported to `onHookFailed` hooks and logged.
 */
export interface CompositeHookFailed {
  readonly _tag: "CompositeHookFailed"
  readonly name: string
  readonly kind: CompositeKind
  readonly runId: string
  readonly parentRunId: string | undefined
  /** The event whose hook failed. */
  readonly hook: "CompositeStart" | "CompositeEnd"
  readonly error: unknown
}

/** What `composite.runStream` emits: the agents' events and deltas, and the composites' starts and ends. */
export type CompositeStreamEvent = RunStreamEvent | CompositeStart | CompositeEnd | CompositeHookFailed

/** True for a composite's own event (its start, end or a hook's failure), false for an agent's. */
export const isCompositeEvent = (event: CompositeStreamEvent): event is CompositeStart | CompositeEnd | CompositeHookFailed =>
  event._tag === "CompositeStart" || event._tag === "CompositeEnd" || event._tag === "CompositeHookFailed"

/**
 * A composite's end as an agent run's end would say it (`RunEnd`'s outcome), for what reads both alike:
 * a `Completed` value's output, a suspension's waiting calls, a failure as its tagged error (an error
 * without a tag as a `CompositeFailed` one with its message).
 *
 * @example
 * ```ts
 * runOutcomeOfComposite({ _tag: "Success", output: { _tag: "Completed", output: "done" } }) // { _tag: "Success", output: "done" }
 * ```
 */
export const runOutcomeOfComposite = (outcome: CompositeEnd["outcome"]): RunEndEvent["outcome"] => {
  switch (outcome._tag) {
    case "Interrupted":
      return outcome
    case "Failure": {
      const error = outcome.error
      const tagged = isRecord(error) && typeof error["_tag"] === "string" && typeof error["message"] === "string"
      return { _tag: "Failure", error: (tagged ? error : { _tag: "CompositeFailed", message: describeCause(error) }) as unknown as AgentError }
    }
    case "Success": {
      const value = outcome.output
      if (isRecord(value) && value["_tag"] === "Suspended" && Array.isArray(value["pending"]) && value["snapshot"] !== undefined) {
        return { _tag: "Suspended", pending: value["pending"] as ReadonlyArray<WaitingCall>, snapshot: value["snapshot"] as RunSnapshot }
      }
      return { _tag: "Success", output: isRecord(value) && value["_tag"] === "Completed" && "output" in value ? value["output"] : value }
    }
  }
}
