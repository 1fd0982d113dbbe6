/**
 * How a stream ended decides what a missing finish reason means. A stream that ended as its protocol
 * ends it (`[DONE]`, `message_stop`, a Gemini body that ends cleanly after its chunks) but sent no
 * finish reason gives what the same reply whole gives (the parity table covers the replies); a stream
 * cut before that end (no `[DONE]`, no `message_stop`, no `done: true` line, the body ending inside an
 * event or a line, the connection closed mid-way, an empty body)
 * stays a retryable `ModelError`, retried while nothing reached the caller.
 */
import { Cause, Effect, Exit, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { anthropic, gemini, type ModelClient, ModelError, type ModelRequest, ollama, openai, type RetryOptions } from "../../src/index.ts"
import { quietLogs } from "../support/quiet-logs.ts"
import { ndjsonBody, ollamaLine, openAiChunk, openAiUsageChunk, type Reply, sseBody, useLoopback } from "./loopback.ts"
import { anthropicEvents, geminiEvents, sse, tearBytes } from "./wire.ts"

quietLogs()

const serve = useLoopback()
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }
const once = { retry: false, timeout: "5 seconds", idleTimeout: "5 seconds" } as const

const streamed = (body: string, then: "end" | "cut" = "end"): Reply => ({ pieces: tearBytes(body), contentType: "text/event-stream", then })

/** The stream's end: its text, or the error it failed with. */
const outcome = async (client: ModelClient) => {
  const exit = await Effect.runPromiseExit(Stream.runCollect(client.stream!(request)))
  if (Exit.isSuccess(exit)) return { text: exit.value.flatMap((p) => (p._tag === "TextDelta" ? [p.delta] : [])).join("") }
  const error = Cause.squash(exit.cause)
  return error instanceof ModelError ? { retryable: error.retryable, reason: error.reason } : { defect: String(error) }
}

describe("openai: [DONE] is the stream's end", () => {
  const client = (url: string) => openai("m", { apiKey: "k", baseURL: `${url}/v1`, ...once })
  const noFinish = [openAiChunk({ role: "assistant", content: "" }), openAiChunk({ content: "The answer is 42." }), openAiUsageChunk(3, 5)]

  it("no finish_reason, then [DONE]: the text, as whole", async () => {
    const s = await serve([streamed(sseBody(noFinish, true))])
    expect(await outcome(client(s.url))).toEqual({ text: "The answer is 42." })
  })

  it("no finish_reason and no [DONE], the body ended cleanly: cut, retryable", async () => {
    const s = await serve([streamed(sseBody(noFinish, false))])
    expect(await outcome(client(s.url))).toEqual({ retryable: true, reason: "the stream ended before the answer finished (no finish_reason, no [DONE])" })
  })

  it("no finish_reason, the connection closed mid-way: cut, retryable", async () => {
    const s = await serve([streamed(sseBody(noFinish, false), "cut")])
    expect(await outcome(client(s.url))).toMatchObject({ retryable: true })
  })

  it("[DONE] and no choice at all: a completion without choices, as whole", async () => {
    const s = await serve([streamed(sseBody([openAiUsageChunk(3, 0)], true))])
    expect(await outcome(client(s.url))).toEqual({ retryable: false, reason: "the completion has no choices" })
  })

  it("a cut stream is retried while nothing reached the caller", async () => {
    const s = await serve([streamed(sseBody(noFinish.slice(0, 1), false)), streamed(sseBody(noFinish, true))])
    expect(await outcome(openai("m", { apiKey: "k", baseURL: `${s.url}/v1`, retry: { times: 1, base: "5 millis" } }))).toEqual({ text: "The answer is 42." })
    expect(s.requests).toHaveLength(2)
  })
})

describe("anthropic: message_stop is the stream's end", () => {
  const client = (url: string) => anthropic("claude", { apiKey: "k", baseURL: url, ...once })
  const withoutStop = anthropicEvents({ text: "The answer is 42.", calls: [], usage: { input: 3, output: 5 } })
    .map(([name, data]): readonly [string, unknown] => (name === "message_delta" ? [name, { ...(data as object), delta: { stop_reason: null, stop_sequence: null } }] : [name, data]))
  const beforeStop = withoutStop.filter(([name]) => name !== "message_stop")

  it("no stop_reason, then message_stop: the text, as whole", async () => {
    const s = await serve([streamed(sse(withoutStop))])
    expect(await outcome(client(s.url))).toEqual({ text: "The answer is 42." })
  })

  it("no stop_reason and no message_stop, the body ended cleanly: cut, retryable", async () => {
    const s = await serve([streamed(sse(beforeStop))])
    expect(await outcome(client(s.url))).toEqual({ retryable: true, reason: "the stream ended before the answer finished (no stop_reason, no message_stop)" })
  })

  it("no stop_reason, the connection closed mid-way: cut, retryable", async () => {
    const s = await serve([streamed(sse(beforeStop), "cut")])
    expect(await outcome(client(s.url))).toMatchObject({ retryable: true })
  })
})

describe("gemini: the stream ends with its body", () => {
  const client = (url: string) => gemini("gemini-2.5-flash", { apiKey: "k", baseURL: url, ...once })
  // The chunks of a reply whose last has no finishReason (a Gemini-compatible server that sends none).
  const withoutFinish = geminiEvents({ text: "The answer is 42.", calls: [], usage: { input: 3, output: 5 } }, [5])
    .map(([name, data]): readonly [undefined, unknown] => {
      const chunk = data as { candidates?: Array<Record<string, unknown>> }
      return [name, { ...chunk, candidates: chunk.candidates?.map(({ finishReason: _, ...candidate }) => candidate) }]
    })

  it("no finishReason, the body ended cleanly after its chunks: the text, as whole", async () => {
    const s = await serve([streamed(sse(withoutFinish))])
    expect(await outcome(client(s.url))).toEqual({ text: "The answer is 42." })
  })

  it("no finishReason, the connection closed mid-way: cut, retryable", async () => {
    const s = await serve([streamed(sse(withoutFinish.slice(0, 2)), "cut")])
    expect(await outcome(client(s.url))).toMatchObject({ retryable: true })
  })

  it("an empty body: cut before the answer began, retryable", async () => {
    const s = await serve([streamed("")])
    expect(await outcome(client(s.url))).toEqual({ retryable: true, reason: "the stream ended before the answer began (an empty body)" })
  })

  it("a body that ends inside an event: cut, retryable", async () => {
    const body = sse(withoutFinish)
    const s = await serve([streamed(body.slice(0, body.length - 12))])
    expect(await outcome(client(s.url))).toMatchObject({ retryable: true })
  })
})

describe("ollama: the done line is the stream's end", () => {
  const client = (url: string, retry: RetryOptions | false = false) => ollama("m", { host: url, ...once, retry })
  const ndjson = (body: string): Reply => ({ pieces: tearBytes(body), contentType: "application/x-ndjson" })
  const answer = ndjsonBody([ollamaLine({ content: "The answer is 42." }), ollamaLine({}, true)])
  // The body ends cleanly inside the first line: the start of a JSON object, never finished.
  const insideALine = JSON.stringify(ollamaLine({ content: "The answer is 42." })).slice(0, 60)

  it("the body ends inside a line, before any content: cut, retryable", async () => {
    const s = await serve([ndjson(insideALine)])
    expect(await outcome(client(s.url))).toEqual({ retryable: true, reason: "the stream ended before the answer finished (no line with done: true)" })
  })

  it("a stream cut inside a line is retried while nothing reached the caller", async () => {
    const s = await serve([ndjson(insideALine), ndjson(answer)])
    expect(await outcome(client(s.url, { times: 1, base: "5 millis" }))).toEqual({ text: "The answer is 42." })
    expect(s.requests).toHaveLength(2)
  })

  it("a last line without its LF is read as any line: the done line ends the answer, a page that is not JSON is not a cut", async () => {
    const s = await serve([ndjson(answer.trimEnd()), ndjson("<html><body><h1>Welcome to nginx!</h1></body></html>")])
    expect(await outcome(client(s.url))).toEqual({ text: "The answer is 42." })
    expect(await outcome(client(s.url))).toMatchObject({ retryable: false, reason: expect.stringContaining("not JSON") })
  })
})
