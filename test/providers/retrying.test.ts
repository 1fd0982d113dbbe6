/**
 * Retries are never silent: a provider that waits before another attempt announces the wait once,
 * as one log line and, inside a run, as a `Retrying` event that hooks, `runStream` and the SSE writers
 * see. Tested against real loopback servers: a port that refuses, then answers once the first retry
 * was announced; a server that answers 503 before it answers.
 */
import { Effect, Exit, Stream } from "effect"
import { parseJsonEventStream, uiMessageChunkSchema } from "ai"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { agent, eventStreamResponse, ModelClient, ModelError, type AgentEvent, type ModelRequest, type RunStreamEvent } from "../../src/index.ts"
import { announceRetry, ModelRetryListener, type RetryNotice } from "../../src/model/model-retry.ts"
import { ollama } from "../../src/providers/ollama.ts"
import { openai } from "../../src/providers/openai.ts"
import { resolveRetry, retryWait } from "../../src/providers/resilience.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"
import { closedPort, type Loopback, ollamaText, openAiChunk, openAiError, openAiText, sseBody, startLoopback, useLoopback } from "./loopback.ts"

const logs = quietLogs()
const serve = useLoopback()
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }
const retries = { retry: { times: 3, base: "40 millis" }, timeout: "5 seconds" } as const

/** A port that refuses connections until `open()` starts a server on it (once). */
const refusingThenAnswering = async (reply: Parameters<typeof startLoopback>[0]) => {
  const port = await closedPort()
  let server: Promise<Loopback> | undefined
  return {
    url: `http://127.0.0.1:${port}`,
    open: () => (server ??= startLoopback(reply, port)),
    close: async () => (await server)?.close()
  }
}

describe("a refused connection, then an answer", () => {
  it("the run's hooks see one Retrying between ModelCall and ModelResponse, and one line is logged", async () => {
    const port = await refusingThenAnswering([openAiText("hello")])
    const events: Array<AgentEvent> = []
    try {
      const a = agent("greeter")
        .model(openai("gpt-4o-mini", { apiKey: "k", baseURL: `${port.url}/v1`, ...retries }))
        .onEvent((event) => {
          events.push(event)
        })
        // The server starts listening when the first wait is announced, before the wait ends.
        .onRetrying(() => port.open().then(() => undefined))
      expect(await a.run("hi")).toBe("hello")
    } finally {
      await port.close()
    }
    const tags = events.map((e) => e._tag)
    expect(tags.slice(tags.indexOf("ModelCall"), tags.indexOf("ModelResponse") + 1)).toEqual(["ModelCall", "Retrying", "ModelResponse"])
    const retrying = events.find((e) => e._tag === "Retrying")!
    expect(retrying).toMatchObject({ agent: "greeter", turn: 1, attempt: 2, maxAttempts: 4, provider: "openai", model: "gpt-4o-mini" })
    expect(retrying._tag === "Retrying" && retrying.reason).toMatch(/^connection failed: .*ECONNREFUSED/)
    expect(retrying._tag === "Retrying" && retrying.waitMs).toBeGreaterThanOrEqual(32)
    expect(retrying._tag === "Retrying" && retrying.waitMs).toBeLessThanOrEqual(48)
    expect(logs.lines()).toHaveLength(1)
    expect(logs.lines()[0]).toMatch(/^INFO retrying model call to openai \(gpt-4o-mini\) in \d+ ms \(attempt 2 of 4\): connection failed: .*ECONNREFUSED/)
  })

  it("runStream carries it too, before the first delta (a streamed retry repeats nothing)", async () => {
    const port = await refusingThenAnswering([
      { pieces: [sseBody([openAiChunk({ role: "assistant", content: "hel" }), openAiChunk({ content: "lo" }), openAiChunk({}, "stop")])], contentType: "text/event-stream" }
    ])
    try {
      const a = agent("greeter")
        .model(openai("gpt-4o-mini", { apiKey: "k", baseURL: `${port.url}/v1`, ...retries }))
        .onRetrying(() => port.open().then(() => undefined))
      const exit = await Effect.runPromiseExit(Stream.runCollect(a.runStream("hi") as Stream.Stream<RunStreamEvent, unknown>))
      if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
      const tags = exit.value.map((e) => e._tag)
      expect(tags.filter((t) => t === "Retrying")).toHaveLength(1)
      expect(tags.indexOf("ModelCall")).toBeLessThan(tags.indexOf("Retrying"))
      expect(tags.indexOf("Retrying")).toBeLessThan(tags.indexOf("TextDelta"))
      expect(exit.value.filter((e) => e._tag === "TextDelta").map((e) => (e as { delta: string }).delta).join("")).toBe("hello")
    } finally {
      await port.close()
    }
    expect(logs.lines()).toHaveLength(1)
  })
})

describe("one notice per wait, none for a retry that does not happen", () => {
  it("a port that always refuses: `times` waits, `times` lines, then the ModelError", async () => {
    const port = await closedPort()
    const seen: Array<RetryNotice> = []
    const call = ollama("qwen2.5:7b", { host: `http://127.0.0.1:${port}`, retry: { times: 2, base: "5 millis" } }).chat(request)
    const error = failureOf(await runExit(call.pipe(Effect.provideService(ModelRetryListener, (n) => Effect.sync(() => seen.push(n))))))
    expect(error).toMatchObject({ _tag: "ModelError", provider: "ollama", retryable: true })
    expect(seen.map((n) => [n.provider, n.model, n.attempt, n.maxAttempts])).toEqual([["ollama", "qwen2.5:7b", 2, 3], ["ollama", "qwen2.5:7b", 3, 3]])
    expect(logs.lines()).toHaveLength(2)
  })

  it("503 twice, then an answer: two notices with the status; a Retry-After is the wait", async () => {
    const s = await serve([openAiError(503, "overloaded", "server_error", { "retry-after-ms": "30" }), openAiError(503, "overloaded", "server_error"), openAiText("ok")])
    const seen: Array<RetryNotice> = []
    const call = openai("gpt-4o-mini", { apiKey: "k", baseURL: `${s.url}/v1`, retry: { times: 3, base: "5 millis" } }).chat(request)
    const exit = await runExit(call.pipe(Effect.provideService(ModelRetryListener, (n) => Effect.sync(() => seen.push(n)))))
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(seen.map((n) => [n.attempt, n.status])).toEqual([[2, 503], [3, 503]])
    expect(seen[0]!.waitMs).toBe(30)
    expect(s.requests).toHaveLength(3)
    expect(logs.lines().map((l) => l.replace(/in \d+ ms/, "in N ms"))).toEqual([
      "INFO retrying model call to openai (gpt-4o-mini) in N ms (attempt 2 of 4) (HTTP 503): 503 overloaded",
      "INFO retrying model call to openai (gpt-4o-mini) in N ms (attempt 3 of 4) (HTTP 503): 503 overloaded"
    ])
  })

  it("a failure that is not retryable, and `retry: false`, announce nothing", async () => {
    const s = await serve([openAiError(400, "bad"), openAiError(503, "down", "server_error")])
    const seen: Array<RetryNotice> = []
    const listen = Effect.provideService(ModelRetryListener, (n: RetryNotice) => Effect.sync(() => void seen.push(n)))
    await runExit(openai("m", { apiKey: "k", baseURL: `${s.url}/v1` }).chat(request).pipe(listen))
    await runExit(openai("m", { apiKey: "k", baseURL: `${s.url}/v1`, retry: false }).chat(request).pipe(listen))
    expect(s.requests).toHaveLength(2)
    expect(seen).toEqual([])
    expect(logs.lines()).toEqual([])
  })
})

describe("Retrying on the wire and in hooks", () => {
  /** A client that waits once, as a provider would, then answers. */
  const retryOnce = ModelClient.fromFunction(() =>
    announceRetry({ provider: "gateway", attempt: 2, maxAttempts: 3, waitMs: 1200, reason: "HTTP 503" }).pipe(Effect.as({ _tag: "Text" as const, content: "ok" }))
  )

  it("SSE `events` carries `event: Retrying`; the UI message stream a transient `data-retrying` part the AI SDK accepts", async () => {
    const a = agent("a").model(retryOnce)
    const events = await eventStreamResponse(a.runStream("q") as Stream.Stream<RunStreamEvent, never>).text()
    expect(events).toMatch(/event: Retrying\ndata: \{"_tag":"Retrying"[^\n]*"attempt":2/)
    const ui = eventStreamResponse(a.runStream("q") as Stream.Stream<RunStreamEvent, never>, { format: "ui-message-stream" })
    const chunks: Array<unknown> = []
    for await (const result of parseJsonEventStream({ stream: ui.body!, schema: uiMessageChunkSchema })) {
      if (!result.success) throw result.error
      chunks.push(result.value)
    }
    expect(chunks.filter((c) => (c as { type: string }).type === "data-retrying")).toEqual([
      { type: "data-retrying", data: { attempt: 2, maxAttempts: 3, waitMs: 1200, reason: "HTTP 503", provider: "gateway" }, transient: true }
    ])
    expect(logs.lines()).toEqual(["INFO retrying model call to gateway in 1.2 s (attempt 2 of 3): HTTP 503", "INFO retrying model call to gateway in 1.2 s (attempt 2 of 3): HTTP 503"])
  })

  it("a Retrying hook that throws is reported and changes nothing", async () => {
    const failed: Array<string> = []
    const a = agent("a")
      .model(retryOnce)
      .onRetrying(() => {
        throw new Error("boom")
      })
      .onHookFailed((e) => void failed.push(e.hook))
    expect(await a.run("q")).toBe("ok")
    expect(failed).toEqual(["Retrying"])
    expect(logs.lines().filter((l) => l.startsWith("WARN"))).toEqual([expect.stringMatching(/^WARN hook Retrying of agent "a" failed: .*boom/)])
  })
})

describe("retryWait: the policy's wait (property)", () => {
  const error = fc.record({
    retryable: fc.option(fc.boolean(), { nil: undefined }),
    retryAfterMs: fc.option(fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constant(0)), { nil: undefined })
  })
  const policy = fc.record({
    times: fc.integer({ min: 0, max: 6 }),
    base: fc.integer({ min: 0, max: 5000 }),
    factor: fc.double({ min: 1, max: 4, noNaN: true }),
    maxDelay: fc.integer({ min: 0, max: 20_000 }),
    maxRetryAfter: fc.integer({ min: 0, max: 120_000 })
  })

  it("retries exactly what is retryable, within the bounds; never a negative or non-finite wait", () => {
    fc.assert(
      fc.property(policy, error, fc.integer({ min: 0, max: 8 }), (p, e, n) => {
        const resolved = resolveRetry({ times: p.times, base: p.base, factor: p.factor, maxDelay: p.maxDelay, maxRetryAfter: p.maxRetryAfter })
        const modelError = new ModelError({ provider: "p", reason: "r", ...(e.retryable === undefined ? {} : { retryable: e.retryable }), ...(e.retryAfterMs === undefined ? {} : { retryAfterMs: e.retryAfterMs }) })
        const wait = retryWait(resolved, n, modelError)
        const expected = e.retryable === true && n < p.times && (e.retryAfterMs === undefined || e.retryAfterMs <= p.maxRetryAfter)
        expect(wait !== undefined).toBe(expected)
        if (wait === undefined) return
        const ms = Effect.runSync(wait)
        expect(Number.isFinite(ms) && ms >= 0).toBe(true)
        if (e.retryAfterMs !== undefined) expect(ms).toBe(e.retryAfterMs)
        else {
          const computed = Math.min(p.maxDelay, p.base * p.factor ** n)
          expect(ms).toBeGreaterThanOrEqual(computed * 0.8 - 1e-9)
          expect(ms).toBeLessThanOrEqual(computed * 1.2 + 1e-9)
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 200) }
    )
  })
})
