/**
 * gemini(...) and the server's word on retrying, against a loopback server speaking the Gemini API:
 * `Retry-After` (seconds or an HTTP date, bounded by `maxRetryAfter`) and `x-should-retry` on failed
 * replies, plain and streamed, as the other providers honour them; and an error body that is not JSON
 * (a proxy's HTML 502, labelled HTML or JSON) is a retryable `ModelError` with a short, readable reason.
 */
import { Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { gemini, type ModelRequest } from "../../src/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"
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
