/**
 * An AI SDK model's `doStream` parts (`LanguageModelV2/V3/V4StreamPart`) decoded into response parts:
 * `text-*` and `reasoning-*` deltas, tool inputs (`tool-input-start`/`-delta`/`-end`, then the whole
 * `tool-call`), `finish` (reason and usage), `response-metadata` (the answer's id and `modelId`),
 * `error`; `stream-start`, `raw`, `ping`, sources and files are ignored. The three specification versions share these part names;
 * they differ in `finishReason` (a string in V2, `{ unified, raw }` in V3/V4) and usage (flat in V2,
 * nested in V3/V4), both read loosely.
 */
import * as Effect from "effect/Effect"
import { ModelError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import type { FinishReason, ReasoningPart, Usage } from "../model/messages.ts"
import { type ResponsePart, responseInfoParts } from "../model/response-part.ts"
import { checkReply } from "./check-reply.ts"
import { argumentsText, callName } from "./normalise-calls.ts"
import { type ChunkDecoder, decodeChunk } from "./resilient-stream.ts"

/** A stream part of any specification version, read loosely. */
export interface AiSdkStreamPart {
  readonly type: string
  readonly [key: string]: unknown
}

/** What the decoder shares with the non-streaming adapter: the finish reason, usage and error mappings. */
export interface AiSdkMappings {
  readonly toFinishReason: (reason: string | undefined) => FinishReason | undefined
  readonly toUsage: (usage: unknown) => Usage | undefined
  readonly toModelError: (cause: unknown) => ModelError
}

/**
 * The decoder of one `doStream` result. Calls are numbered in the order their input starts (or their
 * `tool-call` arrives, for providers that send only that); provider-executed calls are skipped, as in
 * `doGenerate`. A call whose input streamed no delta takes the `tool-call`'s input. A stream without
 * a `finish` part was cut: a retryable `ModelError`.
 *
 * @example
 * ```ts
 * resilientStream(target, options, (signal) => open(signal), toModelError, () => aiSdkPartDecoder("ai-sdk:openai", mappings))
 * ```
 */
export const aiSdkPartDecoder = (provider: string, mappings: AiSdkMappings): ChunkDecoder<AiSdkStreamPart> => {
  /** Calls by their stream id: index, whether a delta arrived, whether it ended. */
  const calls = new Map<string, { index: number; streamed: boolean; done: boolean }>()
  const skipped = new Set<string>()
  const reasoning: Array<ReasoningPart> = []
  let thinking: string | undefined
  let content = ""
  let finish: { reason: unknown; usage: unknown } | undefined
  const str = (v: unknown): string => (typeof v === "string" ? v : "")
  const start = (id: string, name: string): Array<ResponsePart> => {
    const index = calls.size
    calls.set(id, { index, streamed: false, done: false })
    return [{ _tag: "ToolCallStart", index, id: id === "" ? undefined : id, name }]
  }
  return {
    chunk: (part) => {
      if (typeof part !== "object" || part === null) {
        return new ModelError({ provider, reason: `unexpected stream part: ${describeCause(part)}`, retryable: false })
      }
      if (part.type === "error") return mappings.toModelError(part.error)
      return decodeChunk(
        (): ReadonlyArray<ResponsePart> => {
          switch (part.type) {
            case "text-delta": {
              // V1-era providers call the field `textDelta`.
              const delta = str(part.delta ?? part.textDelta)
              content += delta
              return delta === "" ? [] : [{ _tag: "TextDelta", delta }]
            }
            case "reasoning-delta": {
              const delta = str(part.delta)
              if (delta === "") return []
              thinking = (thinking ?? "") + delta
              return [{ _tag: "ReasoningDelta", delta }]
            }
            case "reasoning-end": {
              if (thinking === undefined) return []
              reasoning.push({ _tag: "Thinking", text: thinking })
              thinking = undefined
              return [{ _tag: "ReasoningEnd" }]
            }
            case "tool-input-start": {
              const id = str(part.id)
              if (part.providerExecuted === true) {
                skipped.add(id)
                return []
              }
              return calls.has(id) ? [] : start(id, callName(part.toolName, part))
            }
            case "tool-input-delta": {
              const id = str(part.id)
              const call = calls.get(id)
              const delta = str(part.delta)
              if (call === undefined) {
                if (skipped.has(id)) return []
                throw new Error(`input arrived for tool call "${id}", which never started`)
              }
              if (delta === "") return []
              call.streamed = true
              return [{ _tag: "ToolCallDelta", index: call.index, delta }]
            }
            case "tool-call": {
              const id = str(part.toolCallId)
              if (part.providerExecuted === true || skipped.has(id)) return []
              const out: Array<ResponsePart> = calls.has(id) ? [] : start(id, callName(part.toolName, part))
              const call = calls.get(id)!
              if (call.done) return out
              if (!call.streamed) out.push({ _tag: "ToolCallDelta", index: call.index, delta: argumentsText(part.input) })
              call.done = true
              out.push({ _tag: "ToolCallEnd", index: call.index })
              return out
            }
            case "finish":
              finish = { reason: part.finishReason, usage: part.usage }
              return []
            case "response-metadata":
              return responseInfoParts(part.id, part.modelId)
            default:
              return []
          }
        },
        (cause) => new ModelError({ provider, reason: `unexpected stream part: ${describeCause(cause)}`, retryable: false, cause })
      )
    },
    end: () =>
      Effect.gen(function*() {
        if (finish === undefined) {
          return yield* new ModelError({ provider, reason: "the stream ended before the answer finished (no finish part)", retryable: true })
        }
        if (thinking !== undefined) {
          reasoning.push({ _tag: "Thinking", text: thinking })
          thinking = undefined
        }
        const raw = finish.reason
        const unified = typeof raw === "string" ? raw : typeof raw === "object" && raw !== null ? (raw as { unified?: string }).unified : undefined
        const finishReason = mappings.toFinishReason(unified)
        yield* checkReply(provider, { finishReason, wireReason: `finishReason ${JSON.stringify(unified)}`, content, calls: calls.size, reasoning, usage: mappings.toUsage(finish.usage) })
        // A call whose input never came (no delta, no `tool-call`) has no arguments: "{}", as in a whole answer.
        const parts: Array<ResponsePart> = [...calls.values()].filter((c) => !c.done).flatMap((c): Array<ResponsePart> => [
          ...(c.streamed ? [] : [{ _tag: "ToolCallDelta" as const, index: c.index, delta: "{}" }]),
          { _tag: "ToolCallEnd", index: c.index }
        ])
        const usage = mappings.toUsage(finish.usage)
        if (usage !== undefined) parts.push({ _tag: "Usage", usage })
        parts.push({ _tag: "Finish", reason: finishReason })
        return parts
      })
  }
}
