/**
 * Our server-sent-events reader (src/providers/sse-stream.ts) reads a body as the SDKs' own streams
 * do: for any body (named and unnamed events, several data lines, comments, unknown fields, LF, CR or
 * CRLF line ends, `[DONE]`, invalid JSON, error payloads, an unfinished last event) torn at any byte
 * offsets (inside UTF-8 characters and CRLF pairs), with BOMs, the events equal the `openai` SDK's
 * `_iterSSEMessages`, and the OpenAI chunk reader yields the same chunks and fails with the same error
 * (class and message) as the SDK's `Stream.fromSSEResponse`.
 */
import { fc, test } from "@fast-check/vitest"
import { createRequire } from "node:module"
import { _iterSSEMessages, Stream as OpenAiStream } from "openai/core/streaming"
import { afterAll, beforeAll, describe, expect, vi } from "vitest"
import { openAiSseChunks } from "../../src/providers/openai.ts"
import { sseChunks } from "../../src/providers/sse-stream.ts"
import { tornResponse } from "../support/torn-response.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

// The SDKs log a JSON parse failure before rethrowing it; ours does not log. Hold the lines back.
beforeAll(() => void vi.spyOn(console, "error").mockImplementation(() => {}))
afterAll(() => vi.restoreAllMocks())

const text = fc.string({ unit: fc.constantFrom("a", "é", "😀", " ", ":", "\u2028", "\ufeff", "{", "}", "\""), maxLength: 8 })
const json = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
  fc.record({ error: fc.oneof(fc.constant(null), fc.record({ type: fc.constantFrom("overloaded_error", "api_error"), message: text })) }).map((v) => JSON.stringify(v)),
  fc.constantFrom("[DONE]", "[DONE] tail", "", "{not json", "{\"type\":\"message_stop\"}")
)
const line = fc.oneof(
  { weight: 4, arbitrary: json.map((d) => `data: ${d}`) },
  { weight: 1, arbitrary: json.map((d) => `data:${d}`) },
  { weight: 2, arbitrary: fc.constantFrom("ping", "error", "message_start", "thread.run", "", "content_block_delta").map((e) => `event: ${e}`) },
  { weight: 1, arbitrary: fc.constantFrom(": keep-alive", "id: 7", "retry: 100", "data", "event", "unknown field", "\ufeffdata: {}", "\ufeff", "\ufeff: x") }
)
const event = fc.array(line, { minLength: 0, maxLength: 4 })
const body = fc.record({
  events: fc.array(event, { maxLength: 6 }),
  eol: fc.constantFrom("\n", "\r", "\r\n"),
  unfinished: fc.option(line, { nil: undefined })
}).map(({ events, eol, unfinished }) => events.map((lines) => lines.map((l) => l + eol).join("") + eol).join("") + (unfinished ?? ""))
const tears = fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 })


/** Everything an iterable yields, then how it ended: `done`, or the error's class and message. */
const drain = async (iterable: AsyncIterable<unknown>) => {
  const values: Array<unknown> = []
  try {
    for await (const value of iterable) values.push(value)
    return { values, end: "done" }
  } catch (error) {
    return { values, end: `${(error as Error).constructor.name}: ${(error as Error).message}` }
  }
}

describe("sseChunks reads bodies as the SDKs do", () => {
  test.prop([body, tears], { numRuns })("the same events as the openai SDK's _iterSSEMessages", async (bodyText, sizes) => {
    const ours = await drain(sseChunks(tornResponse(bodyText, sizes), (e) => e, () => new Error("no body")))
    const theirs = await drain((async function*() {
      for await (const e of _iterSSEMessages(tornResponse(bodyText, sizes), new AbortController())) yield { event: e.event, data: e.data }
    })())
    expect(ours).toEqual(theirs)
  })

  test.prop([body, tears], { numRuns })("the same chunks and failure as the openai SDK's Stream", async (bodyText, sizes) => {
    const ours = await drain(openAiSseChunks(tornResponse(bodyText, sizes)))
    const theirs = await drain(OpenAiStream.fromSSEResponse(tornResponse(bodyText, sizes), new AbortController()))
    expect(ours).toEqual(theirs)
  })
})

test("the error classes are the SDKs' own (the copies `require` loads, as the providers load the SDKs)", async () => {
  const require = createRequire(import.meta.url)
  const OpenAI = require("openai").default as typeof import("openai").default
  const failed = await drain(openAiSseChunks(tornResponse(`data: {"error":{"message":"boom"}}\n\n`, [5])))
  expect(failed.end).toMatch(/^APIError: /)
  const openAiError = await openAiSseChunks(tornResponse(`data: {"error":{"message":"boom"}}\n\n`, [64]))[Symbol.asyncIterator]().next().catch((e: unknown) => e)
  expect(openAiError).toBeInstanceOf(OpenAI.APIError)
})
