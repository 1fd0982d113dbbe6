/**
 * The Gemini stream reader a `gemini(...)` model installs on its `@google/genai` client
 * (src/providers/gemini-stream.ts) reads bodies as the SDK's own `processStreamResponse` does: for any
 * body (`data:` events with JSON, error objects with and without HTTP codes, invalid JSON, other lines,
 * the three delimiters, blank padding, a whole error body, an unfinished last event) torn at any byte
 * offsets, with or without a content type, every item's `json()` and `headers` and the way the stream
 * ends (class and message of its error) are the same.
 */
import { fc, test } from "@fast-check/vitest"
import { createRequire } from "node:module"
import { describe, expect } from "vitest"
import { geminiStreamReader } from "../../src/providers/gemini-stream.ts"
import { tornResponse } from "../support/torn-response.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)
const genai = createRequire(import.meta.url)("@google/genai") as typeof import("@google/genai")
const sdkReader = Object.getPrototypeOf((new genai.GoogleGenAI({ apiKey: "k" }) as unknown as { apiClient: object }).apiClient).processStreamResponse as (
  response: Response
) => AsyncIterable<{ headers: Record<string, string>; json(): Promise<unknown> }>
const ourReader = geminiStreamReader(genai.ApiError)

const text = fc.string({ unit: fc.constantFrom("a", "é", "😀", " ", "\t", ":", "{", "}"), maxLength: 6 })
const payload = fc.oneof(
  fc.record({ candidates: fc.array(fc.record({ content: fc.record({ parts: fc.array(fc.record({ text }), { maxLength: 2 }) }) }), { maxLength: 2 }) }).map((v) => JSON.stringify(v)),
  fc.record({ error: fc.oneof(fc.constant(null), fc.constant("x"), fc.record({ code: fc.oneof(fc.constant(429), fc.constant(500), fc.constant(200), fc.constant("503")), status: text, message: text })) })
    .map((v) => JSON.stringify(v)),
  fc.jsonValue({ maxDepth: 1 }).map((v) => JSON.stringify(v)),
  fc.constantFrom("", "{not json", "[DONE]", "  {\"a\":1}  ")
)
const event = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(fc.constantFrom("data:", "data: ", " data:"), payload).map(([p, d]) => p + d) },
  { weight: 1, arbitrary: fc.constantFrom(": keep-alive", "event: x", "", "  ") }
)
const body = fc.record({
  events: fc.array(fc.tuple(event, fc.constantFrom("\n\n", "\r\r", "\r\n\r\n", "\n")), { maxLength: 6 }),
  errorBody: fc.option(fc.constantFrom(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota"}}`, `  {"error":{"code":400}}`, `{"ok":1}`), { nil: undefined }),
  tail: fc.option(event, { nil: undefined })
}).map(({ events, errorBody, tail }) => (errorBody ?? "") + events.map(([e, d]) => e + d).join("") + (tail ?? ""))
const tears = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 })
const contentType = fc.constantFrom<Record<string, string>>({ "content-type": "text/event-stream" }, {}, { "x-extra": "1" })


const outcome = (error: unknown) => `${(error as Error).constructor.name}: ${(error as Error).message}`

const drain = async (items: AsyncIterable<{ headers: Record<string, string>; json(): Promise<unknown> }>) => {
  const seen: Array<unknown> = []
  try {
    for await (const item of items) seen.push({ headers: item.headers, json: await item.json().catch((error: unknown) => ({ rejected: outcome(error) })) })
    return { seen, end: "done" }
  } catch (error) {
    return { seen, end: outcome(error) }
  }
}

describe("the Gemini stream reader", () => {
  test.prop([body, tears, contentType], { numRuns })("reads any body as the SDK's processStreamResponse does", async (bodyText, sizes, headers) => {
    const ours = await drain(ourReader(tornResponse(bodyText, sizes, headers)))
    const theirs = await drain(sdkReader.call(undefined, tornResponse(bodyText, sizes, headers)))
    expect(ours).toEqual(theirs)
  })
})
