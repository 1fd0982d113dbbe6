/**
 * Internal: the reader of `streamGenerateContent?alt=sse` bodies that a `gemini(...)` model installs
 * on its own `@google/genai` client, in place of the SDK's `ApiClient.processStreamResponse` (the same
 * code in 2.x and 3.x). The SDK's reader, for every network chunk, parses the whole chunk as JSON to
 * look for an error body (an SSE chunk is not JSON: a `SyntaxError` thrown and caught per chunk), then
 * for every event parses its data a second time for the same check, wraps the data in a `Response`
 * (copying its headers into a new object) that the caller reads back with `json()`, a third parse.
 * This one reads the same way (the same delimiters, trimming, `data:` prefix, error checks, errors,
 * and items with `headers` and `json()`), parsing each event's data once and looking for an error body
 * only in chunks that can be one (their first non-blank character a `{`). If a later SDK has no such
 * method, nothing is installed and the SDK reads its streams itself.
 */

/** The SDK's error class (`ApiError`), as the caller's copy of the SDK has it. */
type ApiErrorClass = new (options: { message: string; status: number }) => Error

/** One event of the stream, as the SDK's `HttpResponse` presents it to its caller. */
class StreamChunk {
  readonly #payload: string
  readonly #parsed: { readonly value: unknown } | { readonly error: unknown }
  readonly #response: Response

  constructor(readonly headers: Record<string, string>, payload: string, parsed: { readonly value: unknown } | { readonly error: unknown }, response: Response) {
    this.#payload = payload
    this.#parsed = parsed
    this.#response = response
  }

  /** The event's data, parsed (rejected with the parse's `SyntaxError` when it is not JSON, as `Response.json()` is). */
  json(): Promise<unknown> {
    const parsed = this.#parsed
    return "value" in parsed ? Promise.resolve(parsed.value) : Promise.reject(parsed.error)
  }

  /** The `Response` the SDK would have made of the event's data, for a caller that reads it directly. */
  get responseInternal(): Response {
    const response = this.#response
    return new Response(this.#payload, { headers: response.headers, status: response.status, statusText: response.statusText })
  }
}

const delimiters = ["\n\n", "\r\r", "\r\n\r\n"] as const

/** Where the first event delimiter in `buffer` is, and its length (`index` -1: none). */
const firstDelimiter = (buffer: string): { index: number; length: number } => {
  let index = -1
  let length = 0
  for (const delimiter of delimiters) {
    const at = buffer.indexOf(delimiter)
    if (at !== -1 && (index === -1 || at < index)) {
      index = at
      length = delimiter.length
    }
  }
  return { index, length }
}

/** Whether `text` could be a JSON object (its first character after JSON's whitespace is `{`): only those can be error bodies. */
const mayBeObject = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue
    return c === 0x7b
  }
  return false
}

/** The SDK's check of a parsed body: an `error` object with an HTTP error `code` is thrown as its `ApiError`. */
const throwIfError = (ApiError: ApiErrorClass, json: unknown): void => {
  if (json === null || typeof json !== "object" || !("error" in json)) return
  const error = (json as { error: unknown }).error
  if (error === null || typeof error !== "object") return
  const { status, code } = error as { status?: unknown; code?: unknown }
  if (typeof code === "number" && code >= 400 && code < 600) {
    throw new ApiError({ message: `got status: ${status}. ${JSON.stringify(json)}`, status: code })
  }
}

/** The SDK's check of a text that may be an error body (what is not JSON is no error). */
const throwIfErrorText = (ApiError: ApiErrorClass, text: string): void => {
  if (!mayBeObject(text)) return
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return
  }
  throwIfError(ApiError, json)
}

/** The headers the SDK's `HttpResponse` of an event has: the response's, with the content type a `Response` of a string gets when there is none. */
const chunkHeaders = (response: Response): Record<string, string> => {
  const headers = new Headers(response.headers)
  if (!headers.has("content-type")) headers.set("content-type", "text/plain;charset=UTF-8")
  const out: Record<string, string> = {}
  for (const [name, value] of headers.entries()) out[name] = value
  return out
}

/**
 * The stream reader for `ApiError`'s SDK (see the module comment).
 *
 * @example
 * ```ts
 * const api = (client as { apiClient?: { processStreamResponse?: unknown } }).apiClient
 * if (typeof api?.processStreamResponse === "function") api.processStreamResponse = geminiStreamReader(sdk().ApiError)
 * ```
 */
export const geminiStreamReader = (ApiError: ApiErrorClass) =>
  async function* processStreamResponse(response: Response): AsyncGenerator<StreamChunk> {
    const reader = response?.body?.getReader()
    const decoder = new TextDecoder("utf-8")
    if (!reader) throw new Error("Response body is empty")
    const headers = chunkHeaders(response)
    try {
      let buffer = ""
      while (true) {
        const { done, value } = await reader.read()
        if (done) {
          if (buffer.trim().length > 0) throw new Error("Incomplete JSON segment at the end")
          break
        }
        const text = decoder.decode(value, { stream: true })
        throwIfErrorText(ApiError, text)
        buffer += text
        while (true) {
          const { index, length } = firstDelimiter(buffer)
          if (index === -1) break
          const event = buffer.substring(0, index).trim()
          buffer = buffer.substring(index + length)
          if (!event.startsWith("data:")) continue
          const payload = event.substring(5).trim()
          let parsed: { readonly value: unknown } | { readonly error: unknown }
          try {
            parsed = { value: JSON.parse(payload) }
          } catch (error) {
            parsed = { error }
          }
          if ("value" in parsed) throwIfError(ApiError, parsed.value)
          yield new StreamChunk({ ...headers }, payload, parsed, response)
        }
      }
    } finally {
      reader.releaseLock()
    }
  }
