/**
 * gemini(...) and the server's word on retrying, against a loopback server speaking the Gemini API:
 * `Retry-After` (seconds or an HTTP date, bounded by `maxRetryAfter`) and `x-should-retry` on failed
 * replies, plain and streamed, as the other providers honour them; and an error body that is not JSON
 * (a proxy's HTML 502, labelled HTML or JSON) is a retryable `ModelError` with a short, readable reason;
 * a 429's `google.rpc.RetryInfo.retryDelay` in the body is read as `Retry-After` is.
 */
import { Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { gemini, type ModelRequest } from "../../src/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"
import { retryInfoAdvice } from "../../src/providers/gemini-fetch.ts"
import { type Reply, useLoopback } from "./loopback.ts"
import { geminiEvents, geminiJson, sse } from "./wire.ts"

quietLogs()

const serve = useLoopback()
const fast = { retry: { times: 2, base: "5 millis" }, timeout: "5 seconds", idleTimeout: "5 seconds" } as const
const client = (url: string, extra: Record<string, unknown> = {}) => gemini("gemini-2.5-flash", { apiKey: "k", baseURL: url, ...fast, ...extra })
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }
const answer = { text: "ok", calls: [], usage: { input: 1, output: 1 } }
const ok: Reply = { json: geminiJson(answer) }
const okStream: Reply = { pieces: [sse(geminiEvents(answer))], contentType: "text/event-stream" }

/** A failed reply as the Gemini API sends it: `{ error: { code, message, status } }`. */
const geminiError = (code: number, status: string, message: string, headers?: Record<string, string>): Reply => ({
  status: code,
  json: { error: { code, message, status } },
  ...(headers === undefined ? {} : { headers })
})

/** The 502 page Google's front end serves (its style sheet padded, as real pages are long), labelled `contentType`. */
const html502 = (contentType: string): Reply => ({
  status: 502,
  headers: { "content-type": contentType },
  raw: `<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <title>Error 502 (Server Error)!!1</title>
  <style>${"*{margin:0;padding:0}html,code{font:15px/22px arial,sans-serif}".repeat(200)}</style>
  <script>${"var x = 1;".repeat(200)}</script>
  <a href=//www.google.com/><span id=logo aria-label=Google></span></a>
  <p><b>502.</b> <ins>That’s an error.</ins>
  <p>The server encountered a temporary error and could not complete your request.<p>Please try again in 30 seconds.  <ins>That’s all we know.</ins>
`
})

describe("gemini(...): Retry-After and x-should-retry", () => {
  it("waits the Retry-After seconds a 429 asks for, not the backoff's short delay", async () => {
    const s = await serve([geminiError(429, "RESOURCE_EXHAUSTED", "slow down", { "retry-after": "0.3" }), ok])
    expect(await Effect.runPromise(client(s.url).chat(request))).toMatchObject({ content: "ok" })
    expect(s.requests).toHaveLength(2)
    expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(290)
  })

  it("gives up at once when an HTTP-date Retry-After is further away than maxRetryAfter, and says how long was asked", async () => {
    const later = new Date(Date.now() + 120_000).toUTCString()
    const s = await serve([geminiError(503, "UNAVAILABLE", "The model is overloaded.", { "retry-after": later })])
    const error = failureOf(await runExit(client(s.url).chat(request)))
    expect(s.requests).toHaveLength(1)
    expect(error.retryAfterMs).toBeGreaterThan(110_000)
    expect(error.retryAfterMs).toBeLessThanOrEqual(120_000)
    expect(error).toMatchObject({ _tag: "ModelError", status: 503, retryable: true, reason: "UNAVAILABLE: The model is overloaded." })
  })

  it("x-should-retry: false stops a retry of a 503; true retries a 400", async () => {
    const s = await serve([geminiError(503, "UNAVAILABLE", "no", { "x-should-retry": "false" })])
    expect(failureOf(await runExit(client(s.url).chat(request)))).toMatchObject({ status: 503, retryable: false })
    expect(s.requests).toHaveLength(1)
    await s.close()
    const t = await serve([geminiError(400, "FAILED_PRECONDITION", "try again", { "x-should-retry": "true" }), ok])
    expect(await Effect.runPromise(client(t.url).chat(request))).toMatchObject({ content: "ok" })
    expect(t.requests).toHaveLength(2)
  })

  it("a streamed call honours them too: it waits the Retry-After of a 429, and does not retry a 503 with x-should-retry: false", async () => {
    const s = await serve([geminiError(429, "RESOURCE_EXHAUSTED", "slow down", { "retry-after": "0.3" }), okStream])
    const parts = await Effect.runPromise(Stream.runCollect(client(s.url).stream!(request)))
    expect(parts).toContainEqual({ _tag: "TextDelta", delta: "ok" })
    expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(290)
    await s.close()
    const t = await serve([geminiError(503, "UNAVAILABLE", "no", { "x-should-retry": "false" }), okStream])
    expect(failureOf(await runExit(Stream.runCollect(client(t.url).stream!(request))))).toMatchObject({ status: 503, retryable: false })
    expect(t.requests).toHaveLength(1)
  })
})

/** A 429 as Gemini sends it: the wait in the body's `google.rpc.RetryInfo`, no `Retry-After` header. */
const quotaError = (retryDelay: unknown, headers?: Record<string, string>): Reply => ({
  status: 429,
  json: {
    error: {
      code: 429,
      message: "You exceeded your current quota, please check your plan and billing details.",
      status: "RESOURCE_EXHAUSTED",
      details: [
        { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaMetric: "generate_content_free_tier_requests" }] },
        { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay }
      ]
    }
  },
  ...(headers === undefined ? {} : { headers })
})

describe("gemini(...): the RetryInfo of an error body", () => {
  it("waits the retryDelay a 429's body asks for, not the backoff's short delay", async () => {
    const s = await serve([quotaError("0.3s"), ok])
    expect(await Effect.runPromise(client(s.url).chat(request))).toMatchObject({ content: "ok" })
    expect(s.requests).toHaveLength(2)
    expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(290)
  })

  it("gives up at once when the retryDelay is longer than maxRetryAfter, and says how long was asked", async () => {
    const s = await serve([quotaError("20s"), ok])
    const error = failureOf(await runExit(client(s.url, { retry: { times: 3, base: "5 millis", maxRetryAfter: "1 second" } }).chat(request)))
    expect(s.requests).toHaveLength(1)
    expect(error).toMatchObject({ _tag: "ModelError", status: 429, retryable: true, retryAfterMs: 20_000 })
    expect(error.reason).toContain("RESOURCE_EXHAUSTED: You exceeded your current quota")
  })

  it("a streamed call honours it too", async () => {
    const s = await serve([quotaError("20s")])
    const error = failureOf(await runExit(Stream.runCollect(client(s.url, { retry: { times: 3, base: "5 millis", maxRetryAfter: "1 second" } }).stream!(request))))
    expect(s.requests).toHaveLength(1)
    expect(error).toMatchObject({ status: 429, retryAfterMs: 20_000 })
  })

  it("an error event inside a stream carries it too", async () => {
    const event = (quotaError("20s") as { json: unknown }).json
    const s = await serve([{ pieces: [`data: ${JSON.stringify(event)}\r\n\r\n`], contentType: "text/event-stream" }])
    const error = failureOf(await runExit(Stream.runCollect(client(s.url, { retry: { times: 3, base: "5 millis", maxRetryAfter: "1 second" } }).stream!(request))))
    expect(s.requests).toHaveLength(1)
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 20_000 })
  })

  it("a Retry-After header, when sent, is the word that counts", async () => {
    const s = await serve([quotaError("20s", { "retry-after": "0.2" }), ok])
    expect(await Effect.runPromise(client(s.url, { retry: { times: 1, base: "5 millis", maxRetryAfter: "1 second" } }).chat(request))).toMatchObject({ content: "ok" })
    expect(s.requests).toHaveLength(2)
  })

  it.each([["1.5s", 1500], ["0s", 0], ["0.000001s", 0.001], [" 20s ", 20_000]] as const)("reads the protobuf Duration %j as %d ms", (delay, ms) => {
    expect(retryInfoAdvice(JSON.stringify({ error: { details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: delay }] } }))).toEqual({ retryAfterMs: ms })
  })

  it.each([["-1s"], ["20"], ["soon"], [20], [null], [{ seconds: 20 }]])("ignores a retryDelay that is no protobuf Duration (%j)", (delay) => {
    expect(retryInfoAdvice(JSON.stringify({ error: { details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: delay }] } }))).toEqual({})
  })

  it.each([[""], ["<html>"], ["{"], ["null"], ['{"error":"x"}'], ['{"error":{"details":{}}}'], ['{"error":{"details":[null,1,{"retryDelay":"2s"}]}}']])("finds none in %j", (body) => {
    expect(retryInfoAdvice(body)).toEqual({})
  })
})

describe("gemini(...): an error body that is not JSON", () => {
  it.each([["text/html; charset=UTF-8"], ["application/json; charset=UTF-8"]])(
    "an HTML 502 labelled %s is a retryable ModelError with a short, readable reason, and is retried",
    async (contentType) => {
      const s = await serve([html502(contentType), html502(contentType), ok])
      const error = failureOf(await runExit(client(s.url, { retry: false }).chat(request)))
      expect(error).toMatchObject({ _tag: "ModelError", status: 502, retryable: true })
      expect(error.reason).toMatch(/^the error body \([^)]*\) is not JSON: Error 502/)
      expect(error.reason).toContain("Error 502 (Server Error)!!1 502. That’s an error. The server encountered a temporary error")
      expect(error.reason).not.toMatch(/[<>{}]/)
      expect(error.message.length).toBeLessThan(400)
      expect(await Effect.runPromise(client(s.url).chat(request))).toMatchObject({ content: "ok" })
      expect(s.requests).toHaveLength(3)
    }
  )

  it("a streamed call retries an HTML 502 labelled JSON before the stream", async () => {
    const s = await serve([html502("application/json"), okStream])
    const parts = await Effect.runPromise(Stream.runCollect(client(s.url).stream!(request)))
    expect(parts).toContainEqual({ _tag: "TextDelta", delta: "ok" })
    expect(s.requests).toHaveLength(2)
  })
})

describe("gemini(...): its own fetch", () => {
  it("sends as the SDK's fetch does in Node: through undici's global dispatcher, header and body timeouts off", async () => {
    const key = Symbol.for("undici.globalDispatcher.1")
    const global = globalThis as unknown as Record<symbol, { dispatch(options: object, handler: unknown): boolean }>
    new Headers() // Node creates its dispatcher lazily
    const real = global[key]!
    const seen: Array<Record<string, unknown>> = []
    global[key] = Object.assign(Object.create(real), {
      dispatch: (options: Record<string, unknown>, handler: unknown) => (seen.push(options), real.dispatch(options, handler))
    })
    try {
      const s = await serve([ok])
      await Effect.runPromise(client(s.url).chat(request))
    } finally {
      global[key] = real
    }
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ headersTimeout: 0, bodyTimeout: 0 })
  })
})
