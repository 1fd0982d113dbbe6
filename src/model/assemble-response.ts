/**
 * The last step of every adapter: an `LlmResponse` from what it read off the wire, with usage, finish
 * reason, reasoning and the provider's response id and model only when present, and `content` on a tool-call reply only when not empty.
 */
import type { FinishReason, LlmResponse, ReasoningPart, ToolCall, Usage } from "./messages.ts"

/**
 * Builds the response an adapter hands the loop.
 *
 * @example
 * ```ts
 * assembleResponse({ content: "4", calls: [], usage: { inputTokens: 3, outputTokens: 1 }, finishReason: "stop", reasoning: [] })
 * // { _tag: "Text", content: "4", usage: {...}, finishReason: "stop" }
 * ```
 */
export const assembleResponse = (reply: {
  readonly content: string
  readonly calls: ReadonlyArray<ToolCall>
  readonly usage: Usage | undefined
  readonly finishReason: FinishReason | undefined
  readonly reasoning: ReadonlyArray<ReasoningPart>
  /** The provider's id for the answer and the model that gave it (empty strings count as absent). */
  readonly responseId?: string | null | undefined
  readonly responseModel?: string | null | undefined
}): LlmResponse => {
  const { content, calls, usage, finishReason, reasoning, responseId, responseModel } = reply
  const meta = {
    ...(usage === undefined ? {} : { usage }),
    ...(finishReason === undefined ? {} : { finishReason }),
    ...(reasoning.length === 0 ? {} : { reasoning }),
    ...(typeof responseId === "string" && responseId !== "" ? { responseId } : {}),
    ...(typeof responseModel === "string" && responseModel !== "" ? { responseModel } : {})
  }
  if (calls.length > 0) return { _tag: "ToolCalls", calls, ...(content === "" ? {} : { content }), ...meta }
  return { _tag: "Text", content, ...meta }
}
