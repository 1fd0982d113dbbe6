/**
 * Anthropic's Messages stream (`stream: true`) decoded into response parts. The SSE events, as the
 * streaming reference documents them: `message_start` (the message with its input usage),
 * `content_block_start` / `content_block_delta` / `content_block_stop` per block (`text_delta`,
 * `input_json_delta` torn anywhere, `thinking_delta`, `signature_delta`), `message_delta` (stop reason
 * and cumulative usage), `message_stop` (the last: the reader in ./anthropic.ts stops there); `ping`
 * is skipped and an `error` event is raised as the SDK's `APIError` by that reader.
 * Also the stop reason and usage mappings the non-streaming path shares.
 */
import type Anthropic from "@anthropic-ai/sdk"
import * as Effect from "effect/Effect"
import { ModelError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import type { FinishReason, ReasoningPart, Usage } from "../model/messages.ts"
import { type ResponsePart, responseInfoParts } from "../model/response-part.ts"
import { checkReply } from "./check-reply.ts"
import { argumentsText, callName } from "./normalise-calls.ts"
import { type ChunkDecoder, decodeChunk } from "./resilient-stream.ts"

const provider = "anthropic"

type Event = Anthropic.Messages.RawMessageStreamEvent
type RawUsage = Partial<Record<"input_tokens" | "output_tokens" | "cache_read_input_tokens" | "cache_creation_input_tokens", number | null>>

/** One open content block of the stream. */
type OpenBlock =
  | { readonly type: "text" }
  | { readonly type: "thinking"; text: string; signature: string }
  | { readonly type: "tool_use"; readonly input: unknown; arguments: boolean }
  | { readonly type: "other" }

/**
 * The decoder of one Messages stream. Thinking deltas are closed, at `content_block_stop`, by a
 * `ReasoningEnd` carrying the block's signature, so the assembled block is sent back unchanged;
 * redacted thinking comes whole. The message's id and model come with `message_start`. Usage is
 * reported at `message_start` and at every `message_delta` (where Anthropic sends the output tokens),
 * so a token budget can end a run mid-answer. A stream with neither a stop reason nor `message_stop`
 * was cut: a retryable `ModelError`. One that reached `message_stop` without a stop reason is read as
 * the same message whole is, whose `stop_reason` is `null`.
 *
 * @example
 * ```ts
 * resilientStream({ provider: "anthropic", model }, options, (signal, onRead) => openMessagesStream(body, signal, onRead), toModelError, anthropicEventDecoder)
 * ```
 */
export const anthropicEventDecoder = (): ChunkDecoder<Event> => {
  const blocks = new Map<number, OpenBlock>()
  const reasoning: Array<ReasoningPart> = []
  let usage: RawUsage | undefined
  let stop: string | null | undefined
  /** `message_stop` came: the stream ended as its protocol ends it. */
  let ended = false
  let content = ""
  let calls = 0
  const str = (value: unknown): string => (typeof value === "string" ? value : "")
  const usagePart = (): Array<ResponsePart> => {
    const converted = toAnthropicUsage(usage)
    return converted === undefined ? [] : [{ _tag: "Usage", usage: converted }]
  }
  return {
    chunk: (event) =>
      decodeChunk(
        (): ReadonlyArray<ResponsePart> => {
          switch (event.type) {
            case "message_start":
              usage = { ...event.message.usage }
              stop = event.message.stop_reason
              return [...responseInfoParts(event.message.id, event.message.model), ...usagePart()]
            case "content_block_start": {
              const block = event.content_block
              if (block.type === "text") {
                const text = str(block.text)
                blocks.set(event.index, { type: "text" })
                content += text
                return text === "" ? [] : [{ _tag: "TextDelta", delta: text }]
              }
              if (block.type === "thinking") {
                const thinking = str(block.thinking)
                blocks.set(event.index, { type: "thinking", text: thinking, signature: str(block.signature) })
                return thinking === "" ? [] : [{ _tag: "ReasoningDelta", delta: thinking }]
              }
              if (block.type === "redacted_thinking") {
                const data = str(block.data)
                blocks.set(event.index, { type: "other" })
                reasoning.push({ _tag: "Redacted", data })
                return [{ _tag: "Reasoning", part: { _tag: "Redacted", data } }]
              }
              if (block.type === "tool_use") {
                blocks.set(event.index, { type: "tool_use", input: block.input, arguments: false })
                calls += 1
                return [{ _tag: "ToolCallStart", index: event.index, id: str(block.id) || undefined, name: callName(block.name, block) }]
              }
              // Server tools (web search, code execution) run at Anthropic: nothing for the loop to do.
              blocks.set(event.index, { type: "other" })
              return []
            }
            case "content_block_delta": {
              const open = blocks.get(event.index)
              const delta = event.delta
              if (delta.type === "text_delta") {
                const text = str(delta.text)
                content += text
                return text === "" ? [] : [{ _tag: "TextDelta", delta: text }]
              }
              if (delta.type === "thinking_delta" && open?.type === "thinking") {
                const thinking = str(delta.thinking)
                open.text += thinking
                return thinking === "" ? [] : [{ _tag: "ReasoningDelta", delta: thinking }]
              }
              if (delta.type === "signature_delta" && open?.type === "thinking") {
                open.signature += str(delta.signature)
                return []
              }
              if (delta.type === "input_json_delta" && open?.type === "tool_use") {
                const json = str(delta.partial_json)
                if (json === "") return []
                open.arguments = true
                return [{ _tag: "ToolCallDelta", index: event.index, delta: json }]
              }
              if (open === undefined && (delta.type === "input_json_delta" || delta.type === "thinking_delta")) {
                throw new Error(`a ${delta.type} arrived for block ${event.index}, which never started`)
              }
              return []
            }
            case "content_block_stop": {
              const open = blocks.get(event.index)
              blocks.delete(event.index)
              if (open?.type === "thinking") {
                reasoning.push({ _tag: "Thinking", text: open.text, signature: open.signature })
                return [{ _tag: "ReasoningEnd", signature: open.signature }]
              }
              if (open?.type === "tool_use") {
                // A call without arguments streams no delta: its arguments are the start block's input.
                const rest: Array<ResponsePart> = open.arguments ? [] : [{ _tag: "ToolCallDelta", index: event.index, delta: argumentsText(open.input) }]
                return [...rest, { _tag: "ToolCallEnd", index: event.index }]
              }
              return []
            }
            case "message_delta": {
              stop = event.delta.stop_reason ?? stop
              const next: RawUsage = { ...usage }
              for (const [key, value] of Object.entries(event.usage ?? {})) {
                if (typeof value === "number") next[key as keyof RawUsage] = value
              }
              usage = next
              return usagePart()
            }
            case "message_stop":
              ended = true
              return []
            default:
              return []
          }
        },
        (cause) => new ModelError({ provider, reason: `unexpected stream event: ${describeCause(cause)}`, retryable: false, cause })
      ),
    end: () =>
      Effect.gen(function*() {
        if ((stop === undefined || stop === null) && !ended) {
          return yield* new ModelError({ provider, reason: "the stream ended before the answer finished (no stop_reason, no message_stop)", retryable: true })
        }
        const finishReason = toAnthropicFinishReason(stop)
        yield* checkReply(provider, { finishReason, wireReason: `stop_reason ${JSON.stringify(stop ?? null)}`, content, calls, reasoning, usage: toAnthropicUsage(usage) })
        return [{ _tag: "Finish", reason: finishReason }]
      })
  }
}

/**
 * The provider-neutral finish reason of a `stop_reason`.
 *
 * @example
 * ```ts
 * toAnthropicFinishReason("max_tokens") // "length"
 * ```
 */
export const toAnthropicFinishReason = (reason: string | null | undefined): FinishReason | undefined => {
  switch (reason) {
    case null:
    case undefined:
      return undefined
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "tool_use":
      return "tool-calls"
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length"
    case "refusal":
      return "refusal"
    default:
      return "other"
  }
}

/**
 * Anthropic counts cache reads and writes apart from `input_tokens`: all of them are input.
 *
 * @example
 * ```ts
 * toAnthropicUsage({ input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 5 }) // { inputTokens: 15, outputTokens: 2, cachedInputTokens: 5 }
 * ```
 */
export const toAnthropicUsage = (usage: RawUsage | null | undefined): Usage | undefined => {
  if (usage === undefined || usage === null) return undefined
  const read = usage.cache_read_input_tokens ?? 0
  const written = usage.cache_creation_input_tokens ?? 0
  return {
    inputTokens: (usage.input_tokens ?? 0) + read + written,
    outputTokens: usage.output_tokens ?? 0,
    ...(usage.cache_read_input_tokens === undefined || usage.cache_read_input_tokens === null ? {} : { cachedInputTokens: read })
  }
}

/**
 * The status an `error` event's type stands for: a mid-stream error has no HTTP status (the SDK
 * raises it as an `APIError` without one), so it is classified by `error.type`.
 *
 * @example
 * ```ts
 * statusOfErrorType("overloaded_error") // 529
 * ```
 */
export const statusOfErrorType = (type: string | undefined): number | undefined => errorTypeStatus[type ?? ""]

const errorTypeStatus: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529
}
