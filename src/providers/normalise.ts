/**
 * What every adapter does to a reply before the loop sees it: tool-call arguments as JSON text, a
 * unique id on every call (when the wire has none), and a reply that cannot be used (cut off, filtered,
 * refused, only thinking) turned into a `ModelError` whose `kind` names the cause.
 */
import { Effect, Random } from "effect"
import { ModelError, type ModelErrorKind } from "../errors.ts"
import type { FinishReason, ReasoningPart, ToolCall } from "./messages.ts"

/** A call as it came off the wire: any id (maybe none), arguments as text or an object. */
export interface WireCall {
  readonly id?: string | null | undefined
  readonly name: string
  readonly arguments: unknown
}

/** Arguments as JSON text: strings pass as they are, anything else is serialised once. */
export const argumentsText = (raw: unknown): string =>
  typeof raw === "string" ? raw : raw === undefined || raw === null ? "{}" : JSON.stringify(raw)

/**
 * Gives every call a non-empty id unique within the reply (`call_<random>` from Effect's `Random`, so a
 * seeded Random makes them deterministic) and its arguments as JSON text.
 *
 * @example
 * ```ts
 * const calls = yield* normaliseCalls([{ name: "add", arguments: { a: 1, b: 2 } }])
 * // [{ id: "call_k3j9x0a1", name: "add", arguments: '{"a":1,"b":2}' }]
 * ```
 */
export const normaliseCalls = (calls: ReadonlyArray<WireCall>): Effect.Effect<Array<ToolCall>> =>
  Effect.gen(function*() {
    const seen = new Set<string>()
    const out: Array<ToolCall> = []
    for (const call of calls) {
      let id = typeof call.id === "string" && call.id !== "" && !seen.has(call.id) ? call.id : undefined
      while (id === undefined || seen.has(id)) {
        const n = yield* Random.nextIntBetween(0, 2 ** 31 - 1)
        id = `call_${n.toString(36).padStart(6, "0")}`
      }
      seen.add(id)
      out.push({ id, name: call.name, arguments: argumentsText(call.arguments) })
    }
    return out
  })

const explanations: Record<ModelErrorKind, string> = {
  length: "the reply was cut off at the output token limit; raise the provider's max tokens option",
  "content-filter": "the provider's content filter withheld the reply",
  refusal: "the model refused to answer",
  "thinking-only": "the reply held only reasoning, neither an answer nor a tool call",
  unsupported: "the reply uses a feature this library does not support"
}

/**
 * The `ModelError` for a reply that cannot be used. `detail` is added to the message (the wire's own
 * reason); `partial` keeps what text there was.
 *
 * @example
 * ```ts
 * unusableReply("openai", "length", 'finish_reason "length"', "The answer is")
 * ```
 */
export const unusableReply = (provider: string, kind: ModelErrorKind, detail: string, partial?: string): ModelError =>
  new ModelError({
    provider,
    kind,
    retryable: false,
    reason: `${explanations[kind]} (${detail})`,
    ...(partial === undefined || partial === "" ? {} : { partial })
  })

/**
 * Checks a decoded reply: truncation, filtering and thinking without an answer fail with a `ModelError`
 * naming the cause; anything else passes.
 *
 * @example
 * ```ts
 * yield* checkReply("ollama", { finishReason: "length", wireReason: 'done_reason "length"', content: "The", calls: 0 })
 * ```
 */
export const checkReply = (
  provider: string,
  reply: {
    readonly finishReason: FinishReason | undefined
    readonly wireReason: string
    readonly content: string
    readonly calls: number
    readonly reasoning?: ReadonlyArray<ReasoningPart> | undefined
  }
): Effect.Effect<void, ModelError> => {
  if (reply.finishReason === "length") {
    const detail = reply.calls > 0 ? `${reply.wireReason}, while writing tool calls` : reply.wireReason
    return Effect.fail(unusableReply(provider, "length", detail, reply.content))
  }
  if (reply.finishReason === "content-filter") return Effect.fail(unusableReply(provider, "content-filter", reply.wireReason, reply.content))
  if (reply.finishReason === "refusal") return Effect.fail(unusableReply(provider, "refusal", reply.wireReason, reply.content))
  const thought = (reply.reasoning ?? []).some((part) => part._tag === "Redacted" || part.text.trim() !== "")
  if (reply.calls === 0 && reply.content.trim() === "" && thought) {
    return Effect.fail(unusableReply(provider, "thinking-only", reply.wireReason))
  }
  return Effect.void
}
