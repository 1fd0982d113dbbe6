/**
 * When a stream is alive and when it is over, for every streaming provider against a loopback server
 * speaking its wire: a finished answer is the answer though the server keeps the connection open after
 * the protocol's last event (`[DONE]`, `response.completed`, `message_stop`, `done: true`); keep-alives
 * (SSE comments such as OpenRouter's `: PROCESSING`, Anthropic's `ping` events) and the bytes of an
 * event still arriving are activity for the idle timeout, not a stall; and one event of megabytes is
 * read in linear time (the readers kept a pending text they searched again on every read).
 */
import { Cause, Effect, Exit, Result, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { anthropic, gemini, type LlmResponse, type ModelClient, type ModelRequest, ollama, openai, openaiResponses, PartsAssembler } from "../../src/index.ts"
import type { StreamingOptions } from "../../src/providers/resilient-stream.ts"
import { quietLogs } from "../support/quiet-logs.ts"
import { type Reply, useLoopback } from "./loopback.ts"
import { anthropicEvents, geminiEvents, ollamaLines, openAiChatEvents, pieces, responsesEvents, sse, type WireReply } from "./wire.ts"

quietLogs()

const serve = useLoopback()
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }

/** A streaming provider: its client on a loopback URL, a whole answer's body, and the keep-alive its servers send between events. */
interface Streamer {
  readonly name: string
  readonly client: (url: string, options: StreamingOptions) => ModelClient
  /** The stream of `reply`, its text in deltas of `size` characters. */
  readonly body: (reply: WireReply, size: number) => string
  readonly contentType: string
  readonly keepAlive?: string
}

const streamers: ReadonlyArray<Streamer> = [
  {
    name: "openai",
    client: (url, options) => openai("gpt-4o-mini", { baseURL: `${url}/v1`, apiKey: "k", ...options }),
    body: (reply, size) => `${sse(openAiChatEvents(reply, 1, [size]))}data: [DONE]\n\n`,
    contentType: "text/event-stream",
    keepAlive: ": PROCESSING\n\n"
  },
  {
    name: "openaiResponses",
    client: (url, options) => openaiResponses("gpt-5-mini", { baseURL: `${url}/v1`, apiKey: "k", ...options }),
    body: (reply, size) => sse(responsesEvents(reply, 1, [size])),
    contentType: "text/event-stream",
    keepAlive: ": keep-alive\n\n"
  },
  {
    name: "anthropic",
    client: (url, options) => anthropic("claude-sonnet-4-6", { baseURL: url, apiKey: "k", ...options }),
    body: (reply, size) => sse(anthropicEvents(reply, [size])),
    contentType: "text/event-stream",
    keepAlive: "event: ping\ndata: {\"type\": \"ping\"}\n\n"
  },
  {
    name: "gemini",
    client: (url, options) => gemini("gemini-2.5-flash", { baseURL: url, apiKey: "k", ...options }),
    body: (reply, size) => sse(geminiEvents(reply, [size])),
    contentType: "text/event-stream",
    keepAlive: ": keep-alive\n\n"
  },
  {
    name: "ollama",
    client: (url, options) => ollama("qwen3:8b", { host: url, ...options }),
    body: (reply, size) => ollamaLines(reply, [size]),
    contentType: "application/x-ndjson"
  }
]

const answer = (text: string): WireReply => ({ text, calls: [], usage: { input: 5, output: 2 } })

/** Streams one answer: the response the loop would assemble, or the failure. */
const run = async (client: ModelClient): Promise<{ readonly response?: LlmResponse; readonly error?: unknown }> => {
  const exit = await Effect.runPromiseExit(Effect.suspend(() => {
    const assembler = new PartsAssembler(1)
    return client.stream!(request).pipe(
      Stream.runForEach((part) => Effect.sync(() => assembler.add(part))),
      Effect.map(() => Result.getOrThrow(assembler.response()))
    )
  }))
  return Exit.isSuccess(exit) ? { response: exit.value } : { error: Cause.squash(exit.cause) }
}

describe("a finished answer is the answer, though the server keeps the connection open", () => {
  it.each(streamers.filter((s) => s.name !== "gemini"))("$name: the stream ends at its last event, and the request is closed", async (s) => {
    const server = await serve([{ pieces: [s.body(answer("Hello, world"), 5)], contentType: s.contentType, then: "stall" }])
    // Without the stop at the last event, the stall after it ends the call as a stall; the idle
    // timeout leaves room for a first call on a loaded machine (the SDK loaded, the code compiled).
    const result = await run(s.client(server.url, { retry: false, idleTimeout: "2 seconds" }))
    expect(result.error).toBeUndefined()
    expect(result.response).toMatchObject({ _tag: "Text", content: "Hello, world" })
    await server.aborted
  })
})

describe("activity is any byte, not only a whole event", () => {
  // Gaps well inside the idle timeout (a loaded machine delays timers), their sum well past it.
  it.each(streamers.filter((s) => s.keepAlive !== undefined))("$name: keep-alives every 75 ms for 900 ms do not stall an idle timeout of 500 ms", async (s) => {
    const keepAlives = Array.from({ length: 12 }, () => s.keepAlive!)
    const server = await serve([{ pieces: [...keepAlives, s.body(answer("thought long"), 50)], contentType: s.contentType, gapMs: 75 }])
    const result = await run(s.client(server.url, { retry: false, idleTimeout: "500 millis" }))
    expect(result.error).toBeUndefined()
    expect(result.response).toMatchObject({ _tag: "Text", content: "thought long" })
  })

  it.each(streamers)("$name: an event that takes 900 ms to arrive, in pieces 75 ms apart, does not stall an idle timeout of 500 ms", async (s) => {
    const text = "long ".repeat(2000)
    // The text in one delta, so an event holding it arrives in 12 pieces (the Responses API repeats it in two more events).
    const body = s.body(answer(text), text.length)
    const server = await serve([{ pieces: pieces(body, [Math.ceil(text.length / 12)]), contentType: s.contentType, gapMs: 75 }])
    const result = await run(s.client(server.url, { retry: false, idleTimeout: "500 millis" }))
    expect(result.error).toBeUndefined()
    expect(result.response).toMatchObject({ _tag: "Text", content: text })
  })

  it("a stream silent but for nothing is still a stall (the idle timeout still bounds a dead server)", async () => {
    const s = streamers[0]!
    const server = await serve([{ pieces: [s.keepAlive!], contentType: s.contentType, then: "stall" }])
    const result = await run(s.client(server.url, { retry: false, idleTimeout: "200 millis" }))
    expect(result.error).toMatchObject({ _tag: "ModelError", retryable: true })
    expect(String((result.error as { reason: string }).reason)).toMatch(/stalled/)
  })
})

describe("one event of megabytes is read in linear time", () => {
  /** Reads `body` (written in pieces of 16 KB, as TLS records come) through the provider; milliseconds from the request to the end. */
  const timed = async (s: Streamer, body: string, text: string) => {
    const server = await serve([{ pieces: pieces(body, [16_384]), contentType: s.contentType, gapMs: 0 }])
    const started = performance.now()
    const result = await run(s.client(server.url, { retry: false, idleTimeout: "30 seconds" }))
    const elapsed = performance.now() - started
    expect(result.error).toBeUndefined()
    expect((result.response as { content: string }).content.length).toBe(text.length)
    await server.close()
    return elapsed
  }

  // The three readers: ./sse-stream.ts (Chat Completions, Responses, Anthropic), Gemini's and Ollama's.
  it.each(streamers.filter((s) => ["openai", "gemini", "ollama"].includes(s.name)))("$name: 8 MB in one event takes about as long as 8 MB in 128 events", async (s) => {
    const text = "y".repeat(8 * 1024 * 1024)
    await timed(s, s.body(answer("warm"), 5), "warm") // the SDK loaded, the code compiled
    const many = await timed(s, s.body(answer(text), 64 * 1024), text)
    const one = await timed(s, s.body(answer(text), text.length), text)
    // A reader that searches its whole pending text on every 16 KB read is quadratic in one event's
    // size: at 8 MB about ten times slower than the same bytes in events of 64 KB (3.7 s against
    // 0.4 s before the fix). Linear, about as fast; the margin leaves room for a loaded machine.
    expect(one).toBeLessThan(3 * many + 200)
  })
})
