/**
 * Internal: the `fetch` a `gemini(...)` model gives its `@google/genai` client (`httpOptions.fetch`),
 * and the `ModelError` of a failed HTTP reply. The SDK turns a failed reply into an `ApiError` that
 * keeps the status and the body but not the headers, so `Retry-After` and `x-should-retry` were lost;
 * and it parses the body of a reply labelled JSON without a look, so a proxy's HTML 502 sent as JSON
 * became a `SyntaxError` without a status, never retried. This fetch reads a failed reply itself and
 * rejects with a `GeminiHttpError` (status, headers, body); a successful reply passes untouched (a whole
 * call's is read first: {@link wholeReplyFetch}).
 *
 * In Node the SDK sends its own fetches with undici's header and body timeouts off (the server bounds a
 * request: 10 minutes, 20 streaming), and only when it has no custom fetch; this one does the same, so
 * a long generation is bounded by the provider's `timeout` alone, as before.
 */
import { ModelError } from "../errors.ts"
import { isRecord } from "../internal/is-record.ts"
import { bodySummary, errorBodyMessage, truncate } from "./error-body.ts"
import { replyBody } from "./reply-body.ts"
import { type RetryAdvice, retryAdvice, shouldRetryStatus } from "./resilience.ts"

/** A failed HTTP reply of the Gemini API, as read by {@link geminiFetch}. */
export class GeminiHttpError extends Error {
  override readonly name = "GeminiHttpError"
  constructor(readonly status: number, readonly statusText: string, readonly headers: Headers, readonly body: string) {
    super(`HTTP ${status}${statusText === "" ? "" : ` ${statusText}`}`)
  }
}

/** undici's global dispatcher, which Node's `fetch` sends through (the symbol the SDK uses too). */
const globalDispatcher = Symbol.for("undici.globalDispatcher.1")
interface Dispatcher {
  dispatch(options: object, handler: unknown): boolean
}

/** The SDK's per-request dispatcher: the global one, with undici's header and body timeouts off. */
const withoutTimeouts: Dispatcher = {
  dispatch(options, handler) {
    const global = globalThis as { [globalDispatcher]?: Dispatcher }
    // Node creates its dispatcher lazily: a `Headers` is enough to make it.
    if (global[globalDispatcher] === undefined) new Headers()
    const dispatcher = global[globalDispatcher]
    if (dispatcher === undefined || typeof dispatcher.dispatch !== "function") throw new Error("undici's global dispatcher is not available")
    return dispatcher.dispatch({ ...options, headersTimeout: 0, bodyTimeout: 0 }, handler)
  }
}

const isNode = typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node === "string"

/**
 * The `fetch` of a Gemini client: a failed reply rejects with a {@link GeminiHttpError}.
 *
 * @example
 * ```ts
 * new GoogleGenAI({ apiKey, httpOptions: { fetch: geminiFetch } })
 * ```
 */
export const geminiFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  // A dispatcher-like object, not undici's class: cast, as the SDK's JavaScript needs no cast.
  const sent = isNode && (init === undefined || !("dispatcher" in init)) ? ({ ...init, dispatcher: withoutTimeouts } as unknown as RequestInit) : init
  const response = await fetch(input, sent)
  if (response.ok) return response
  throw new GeminiHttpError(response.status, response.statusText, response.headers, await response.text())
}

/**
 * The `fetch` of a whole (`generateContent`) call of `provider`: {@link geminiFetch}, and a successful
 * reply's body read first (./reply-body.ts): one that is not a JSON object (`null`, a number, a string,
 * a page) fails with the `ModelError` saying so, as the other providers' whole calls do, where the SDK
 * would fail on it with a `TypeError` of its own ("Cannot set properties of null").
 *
 * @example
 * ```ts
 * client.models.generateContent({ ...params, config: { ...params.config, httpOptions: { fetch: wholeReplyFetch("gcp.gemini") } } })
 * ```
 */
export const wholeReplyFetch = (provider: string) => async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await geminiFetch(input, init)
  const text = await response.text()
  const body = replyBody(provider, text)
  if (body instanceof ModelError) throw body
  // A gateway's error sent with a 200 (`{"error": {"code": 503, …}}`): failed as that status, as the
  // stream's reader fails the same body (retried by the status), not read as a reply without candidates.
  const error = isRecord(body) && isRecord(body["error"]) ? body["error"] : undefined
  const code = error?.["code"]
  if (typeof code === "number" && code >= 400 && code < 600) {
    throw new GeminiHttpError(code, typeof error?.["status"] === "string" ? error["status"] : "", response.headers, text)
  }
  return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers })
}

/**
 * The `ModelError` of a failed reply: the Gemini error's status and message when the body is one, else
 * a short text of the body; retryable by the status unless `x-should-retry` says otherwise, with the
 * delay `Retry-After` asks for, as the other providers read them, else the body's `RetryInfo.retryDelay`
 * (Gemini's own word on a 429: {@link retryInfoAdvice}).
 *
 * @example
 * ```ts
 * httpModelError("gcp.gemini", error) // reason "UNAVAILABLE: The model is overloaded.", status 503, retryable
 * ```
 */
export const httpModelError = (provider: string, error: GeminiHttpError): ModelError => {
  const headers = retryAdvice(error.headers)
  const advice = headers.retryAfterMs === undefined ? { ...headers, ...retryInfoAdvice(error.body) } : headers
  return new ModelError({
    provider,
    reason: errorReason(error),
    status: error.status,
    retryable: shouldRetryStatus(error.status, advice),
    ...(advice.retryAfterMs === undefined ? {} : { retryAfterMs: advice.retryAfterMs }),
    cause: error
  })
}

/**
 * The reason a parsed Google error body gives (`{"error": {"status", "message"}}`): "STATUS: message",
 * the message alone, or the status alone; undefined for a body of another shape.
 *
 * @example
 * ```ts
 * googleErrorReason({ error: { code: 503, status: "UNAVAILABLE", message: "The model is overloaded." } }) // "UNAVAILABLE: The model is overloaded."
 * ```
 */
export const googleErrorReason = (json: unknown): string | undefined => {
  const body = (json as { error?: { message?: unknown; status?: unknown } } | null)?.error
  const message = typeof body?.message === "string" && body.message !== "" ? body.message : undefined
  const status = typeof body?.status === "string" && body.status !== "" ? body.status : undefined
  if (message === undefined) return status
  return status === undefined ? message : `${status}: ${message}`
}

/** A protobuf `Duration` in its JSON form: decimal seconds with an `s` (`"20s"`, `"1.5s"`, `"0.000001s"`). */
const protobufDuration = /^(\d+(?:\.\d+)?)s$/

/**
 * The delay a Google error body asks for: the `retryDelay` of its `google.rpc.RetryInfo` detail
 * (`{"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "20s"}]}}`),
 * which Gemini sends with a 429 instead of a `Retry-After` header. `{}` when there is none or it is
 * not a duration.
 *
 * @example
 * ```ts
 * retryInfoAdvice('{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}') // { retryAfterMs: 1500 }
 * ```
 */
export const retryInfoAdvice = (body: string): RetryAdvice => {
  // Only a body that can be an object is parsed (an HTML page of megabytes is not).
  if (!body.trimStart().startsWith("{")) return {}
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return {}
  }
  const details = isRecord(json) && isRecord(json.error) ? json.error.details : undefined
  if (!Array.isArray(details)) return {}
  for (const detail of details) {
    if (!isRecord(detail) || typeof detail["@type"] !== "string" || !detail["@type"].endsWith("google.rpc.RetryInfo")) continue
    const delay = detail.retryDelay
    const match = typeof delay === "string" ? protobufDuration.exec(delay.trim()) : null
    if (match !== null) return { retryAfterMs: Number(match[1]) * 1000 }
  }
  return {}
}

const errorReason = (error: GeminiHttpError): string => {
  if (error.body.trim() === "") return `${error.message}, with an empty body`
  let json: unknown
  try {
    json = JSON.parse(error.body)
  } catch {
    const type = error.headers.get("content-type")
    const text = bodySummary(error.body)
    return `the error body${type === null ? "" : ` (${type})`} is not JSON: ${text === "" ? error.message : text}`
  }
  // Not Google's error shape (a proxy's `{"message"}`): what the body says, as for the other providers.
  return googleErrorReason(json) ?? errorBodyMessage(error.body) ?? truncate(error.body)
}
