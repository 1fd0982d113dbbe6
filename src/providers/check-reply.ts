/**
 * A reply the model did give but that cannot be used: cut off at the token limit, withheld by a content
 * filter, refused, or only thinking. Each becomes a `ModelError` whose `kind` names the cause, so a run
 * ends with it instead of taking a truncated text as the answer or exhausting its turns.
 */
import * as Effect from "effect/Effect"
import { ModelError } from "../errors.ts"
import type { ModelErrorKind } from "../model/model-error.ts"
import type { FinishReason, ReasoningPart, Usage } from "../model/messages.ts"

const explanations: Record<ModelErrorKind, string> = {
  length: "the reply was cut off at the output token limit; raise the provider's max tokens option",
  "content-filter": "the provider's content filter withheld the reply",
  refusal: "the model refused to answer",
  "thinking-only": "the reply held only reasoning, neither an answer nor a tool call",
  malformed: "the reply held neither an answer nor a tool call (the model's tool call could not be read, or it stopped for another reason)",
  unsupported: "the reply uses a feature this library does not support"
}

/**
 * The `ModelError` for a reply that cannot be used. `detail` is added to the message (the wire's own
 * reason); `partial` keeps what text there was, `usage` what the reply cost (when the provider said).
 *
 * @example
 * ```ts
 * unusableReply("openai", "length", 'finish_reason "length"', "The answer is")
 * ```
 */
export const unusableReply = (provider: string, kind: ModelErrorKind, detail: string, partial?: string, usage?: Usage): ModelError =>
  new ModelError({
    provider,
    kind,
    retryable: false,
    reason: `${explanations[kind]} (${detail})`,
    ...(partial === undefined || partial === "" ? {} : { partial }),
    ...(usage === undefined ? {} : { usage })
  })

/**
 * Checks a decoded reply: truncation, filtering, thinking without an answer, and nothing at all (no text,
 * no call) with a finish that is not a plain stop (tool calls said but none sent, too) fail with a
 * `ModelError` naming the cause; anything else passes.
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
    /** What the reply cost, when known: an unusable reply's error carries it. */
    readonly usage?: Usage | undefined
  }
): Effect.Effect<void, ModelError> => {
  const usage = reply.usage
  if (reply.finishReason === "length") {
    const detail = reply.calls > 0 ? `${reply.wireReason}, while writing tool calls` : reply.wireReason
    return Effect.fail(unusableReply(provider, "length", detail, reply.content, usage))
  }
  if (reply.finishReason === "content-filter") return Effect.fail(unusableReply(provider, "content-filter", reply.wireReason, reply.content, usage))
  if (reply.finishReason === "refusal") return Effect.fail(unusableReply(provider, "refusal", reply.wireReason, reply.content, usage))
  const thought = (reply.reasoning ?? []).some((part) => part._tag === "Redacted" || part.text.trim() !== "")
  if (reply.calls === 0 && reply.content.trim() === "" && thought) {
    return Effect.fail(unusableReply(provider, "thinking-only", reply.wireReason, undefined, usage))
  }
  // Nothing to act on, and not a plain stop: asking again as if it answered would spend the turns.
  const empty = reply.calls === 0 && reply.content.trim() === ""
  if (empty && reply.finishReason === "other") return Effect.fail(unusableReply(provider, "malformed", reply.wireReason, undefined, usage))
  // It stopped to call tools, and none came (a server dropped them, or sent them where they are not read).
  if (empty && reply.finishReason === "tool-calls") {
    return Effect.fail(unusableReply(provider, "malformed", `${reply.wireReason}, but no tool call came`, undefined, usage))
  }
  return Effect.void
}
