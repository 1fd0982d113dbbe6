/**
 * Hostile stream events never crash a provider's decoder: for any sequence of events (the documented
 * event types with fields of any shape, and arbitrary values), every chunk and the end of the stream
 * give parts or a `ModelError`, never a defect; and whatever parts come out fold without throwing. The
 * same for the non-streamed replies of Anthropic, the Responses API and Gemini.
 */
import { fc, test } from "@fast-check/vitest"
import { Cause, Effect, Exit } from "effect"
import { describe, expect } from "vitest"
import { ModelError, PartsAssembler, type ResponsePart } from "../../src/index.ts"
import { aiSdkPartDecoder } from "../../src/providers/ai-sdk-stream.ts"
import { anthropicEventDecoder } from "../../src/providers/anthropic-stream.ts"
import { fromAnthropicResponse } from "../../src/providers/anthropic.ts"
import { fromGeminiResponse, geminiChunkDecoder } from "../../src/providers/gemini.ts"
import { fromResponsesResponse, responsesEventDecoder } from "../../src/providers/openai-responses.ts"
import type { ChunkDecoder } from "../../src/providers/resilient-stream.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

const anyValue = fc.oneof(fc.anything(), fc.constant(null), fc.constant(undefined), fc.string({ unit: "binary" }), fc.integer())
const eventOf = (types: ReadonlyArray<string>, fields: ReadonlyArray<string>) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ type: fc.constantFrom(...types) }).chain((base) =>
      fc.dictionary(fc.constantFrom(...fields), anyValue, { maxKeys: 5 }).map((rest) => ({ ...rest, ...base }))) },
    { weight: 1, arbitrary: anyValue }
  )

const anthropicEvents = eventOf(
  ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop", "ping", "other"],
  ["message", "index", "content_block", "delta", "usage"]
)
const responsesEvents = eventOf(
  ["response.output_text.delta", "response.refusal.delta", "response.output_item.added", "response.function_call_arguments.delta", "response.reasoning_summary_text.delta", "response.output_item.done", "response.completed", "response.incomplete", "response.failed", "error"],
  ["delta", "output_index", "summary_index", "item", "response", "code", "message"]
)
const aiSdkParts = eventOf(
  ["text-delta", "reasoning-delta", "reasoning-end", "tool-input-start", "tool-input-delta", "tool-call", "finish", "error", "raw"],
  ["id", "delta", "textDelta", "toolName", "toolCallId", "input", "providerExecuted", "finishReason", "usage", "error"]
)
const geminiChunks = eventOf(["x"], ["candidates", "promptFeedback", "usageMetadata"])

/** Structured values in the places the decoders look, so the interesting branches are reached. */
const withShapes = <A>(arb: fc.Arbitrary<A>) =>
  fc.oneof(arb, fc.record({
    type: fc.constantFrom("content_block_start", "response.output_item.done", "response.completed", "tool-call", "finish"),
    index: fc.nat(3),
    output_index: fc.nat(3),
    content_block: fc.record({ type: fc.constantFrom("text", "thinking", "tool_use", "redacted_thinking"), text: anyValue, thinking: anyValue, id: anyValue, name: anyValue, data: anyValue }),
    item: fc.record({ type: fc.constantFrom("reasoning", "function_call", "message"), id: anyValue, summary: anyValue, call_id: anyValue, name: anyValue, arguments: anyValue }),
    response: fc.oneof(fc.constant(null), fc.record({ status: anyValue, output: anyValue, usage: anyValue, error: anyValue, incomplete_details: anyValue })),
    finishReason: anyValue,
    usage: anyValue,
    candidates: fc.oneof(anyValue, fc.array(fc.record({ content: fc.record({ parts: fc.oneof(anyValue, fc.array(fc.record({ text: anyValue, thought: anyValue, thoughtSignature: anyValue, functionCall: anyValue }), { maxLength: 3 })) }), finishReason: anyValue }), { maxLength: 2 }))
  }) as unknown as fc.Arbitrary<A>)

const mappings = {
  toFinishReason: (r: string | undefined) => (r === "stop" ? "stop" as const : undefined),
  toUsage: () => undefined,
  toModelError: (cause: unknown) => new ModelError({ provider: "test", reason: String(cause), retryable: false })
}

const decoders: ReadonlyArray<readonly [string, () => ChunkDecoder<any>, fc.Arbitrary<unknown>]> = [
  ["anthropic", anthropicEventDecoder, withShapes(anthropicEvents)],
  ["openaiResponses", responsesEventDecoder, withShapes(responsesEvents)],
  ["fromAiSdk", () => aiSdkPartDecoder("ai-sdk:test", mappings), withShapes(aiSdkParts)],
  ["gemini", () => geminiChunkDecoder(() => 1), withShapes(geminiChunks)]
]

describe.each(decoders)("the %s stream decoder under hostile events", (_name, make, arbEvent) => {
  test.prop([fc.array(arbEvent, { maxLength: 12 })], { numRuns })("gives parts or a ModelError, never a defect", async (events) => {
    const decoder = make()
    const parts: Array<ResponsePart> = []
    const program = Effect.gen(function*() {
      for (const event of events) {
        const decoded = decoder.chunk(event)
        if (decoded instanceof ModelError) return yield* decoded
        parts.push(...decoded)
      }
      parts.push(...(yield* decoder.end()))
    })
    const exit = await Effect.runPromiseExit(program)
    if (Exit.isFailure(exit)) {
      expect(Cause.hasDies(exit.cause)).toBe(false)
      expect(Cause.squash(exit.cause)).toBeInstanceOf(ModelError)
    }
    const assembler = new PartsAssembler(1)
    expect(() => {
      parts.forEach((p) => assembler.add(p))
      assembler.response()
    }).not.toThrow()
  })
})

const arbResponsesReply = fc.oneof(anyValue, fc.record({
  status: fc.oneof(anyValue, fc.constantFrom("completed", "incomplete", "failed")),
  output: fc.oneof(anyValue, fc.array(fc.oneof(anyValue, fc.record({
    type: fc.constantFrom("message", "function_call", "reasoning", "web_search_call"),
    content: fc.oneof(anyValue, fc.array(fc.oneof(anyValue, fc.record({ type: fc.constantFrom("output_text", "refusal"), text: anyValue, refusal: anyValue })), { maxLength: 3 })),
    call_id: anyValue,
    name: anyValue,
    arguments: anyValue,
    summary: anyValue,
    id: anyValue
  })), { maxLength: 4 })),
  usage: anyValue,
  error: anyValue,
  incomplete_details: anyValue
}))
const arbGeminiReply = withShapes(geminiChunks)

const arbAnthropicReply = fc.oneof(anyValue, fc.record({
  content: fc.oneof(anyValue, fc.array(fc.oneof(anyValue, fc.record({
    type: fc.constantFrom("text", "thinking", "redacted_thinking", "tool_use", "server_tool_use"),
    text: anyValue,
    thinking: anyValue,
    signature: anyValue,
    data: anyValue,
    id: anyValue,
    name: anyValue,
    input: anyValue
  })), { maxLength: 4 })),
  stop_reason: anyValue,
  usage: anyValue
}))

describe.each([
  ["anthropic", (r: unknown) => fromAnthropicResponse(r as never), arbAnthropicReply],
  ["openaiResponses", (r: unknown) => fromResponsesResponse(r as never), arbResponsesReply],
  ["gemini", (r: unknown) => fromGeminiResponse(r as never, () => 1), arbGeminiReply]
] as const)("the %s reply parser under hostile replies", (_name, parse, arbReply) => {
  test.prop([arbReply], { numRuns })("gives a response or a ModelError, never a defect", async (reply) => {
    const exit = await Effect.runPromiseExit(parse(reply))
    if (Exit.isFailure(exit)) {
      expect(Cause.hasDies(exit.cause)).toBe(false)
      expect(Cause.squash(exit.cause)).toBeInstanceOf(ModelError)
    }
  })
})
