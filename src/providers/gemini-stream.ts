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
 * method, nothing is installed and the SDK reads its streams itself. One thing more than the SDK's: a
 * body that ends inside its first event carries what it was, when it was no event stream at all
 * (`cutInsideAnEvent`).
 */
import { BodyStart, declaredOtherwise } from "./sse-stream.ts"

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
/** The longest delimiter but one character: how much of the pending text a delimiter torn between reads can start in. */
const overlap = 3

/**
 * The SDK's buffer, split into events at the first of its delimiters, in linear time: the SDK appends
 * each read to one string and searches it from its start for every delimiter on every read, which made
 * an event of megabytes quadratic (slow enough to look like a stall). Here the pending text is kept as
 * its pieces, joined once when its event ends, and each read is searched once, from where a delimiter
 * torn between reads could start (the pending text's last characters).
 */
class EventSplitter {
  /** The text since the last delimiter (it holds none), as it came. */
  #pieces: Array<string> = []
  /** The pending text's last `overlap` characters. */
  #tail = ""
  /** The text being split, where its next event starts, and the next place of each delimiter in it (-2: not looked for, -1: none). */
  #search = ""
  #from = 0
  readonly #next = [-2, -2, -2]

  /** Takes the text of a read. */
  add(text: string): void {
    this.#search = this.#tail + text
    this.#from = 0
    this.#next.fill(-2)
  }

  /** The next whole event of what was added, or `undefined` when the rest waits for more text. */
  event(): string | undefined {
    const search = this.#search
    const from = this.#from
    let index = -1
    let length = 0
    for (let d = 0; d < delimiters.length; d++) {
      let at = this.#next[d]!
      if (at !== -1 && at < from) this.#next[d] = at = search.indexOf(delimiters[d]!, from)
      if (at !== -1 && (index === -1 || at < index)) {
        index = at
        length = delimiters[d]!.length
      }
    }
    const tail = this.#tail.length
    if (index === -1) {
      // No delimiter: the rest of this text joins the pending text.
      const rest = from === 0 ? search.slice(tail) : search.slice(from)
      if (rest !== "") this.#pieces.push(rest)
      this.#tail = search.slice(Math.max(from, search.length - overlap))
      this.#search = ""
      this.#from = 0
      this.#next.fill(-2)
      return undefined
    }
    let event: string
    if (this.#pieces.length === 0) event = search.slice(from, index)
    else {
      // Only the first event of a read has pending pieces (its delimiter may start in their last characters).
      const pending = this.#pieces.join("")
      event = index >= tail ? pending + search.slice(tail, index) : pending.slice(0, pending.length - tail + index)
      this.#pieces = []
    }
    this.#tail = ""
    this.#from = index + length
    return event
  }

  /** The pending text (what follows the last delimiter). */
  rest(): string {
    return this.#pieces.join("")
  }
}

/** Who hears the reads of a response's body (see {@link hearingReads}). */
const readListeners = new WeakMap<Response, () => void>()

/**
 * A `fetch` that has the stream reader tell `onRead` of every read of the body it returns: a
 * `gemini(...)` model passes one per streamed request (`config.httpOptions.fetch`), so that any byte
 * is activity for its idle timeout, though no event is complete yet.
 *
 * @example
 * ```ts
 * client.models.generateContentStream({ ...params, config: { ...params.config, abortSignal, httpOptions: { fetch: hearingReads(geminiFetch, onRead) } } })
 * ```
 */
export const hearingReads = (
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>,
  onRead: () => void
) =>
async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await fetch(input, init)
  readListeners.set(response, onRead)
  return response
}

/**
 * What the SDK's reader (and this one) throws when the body ends inside an event: the stream was cut
 * (a `gemini(...)` model retries it as one), unless its `cause` says the body was no event stream.
 */
export const incompleteEvent = "Incomplete JSON segment at the end"

/**
 * The SDK's error for a body that ended inside an event. When no event came and the body is not an
 * event stream (./sse-stream.ts `notAnEventStream`: a gateway that dropped `alt=sse` answers with a
 * whole JSON reply, or Gemini's own JSON array of responses; a page), that failure is its `cause`: the
 * same error as the SDK's, and a `gemini(...)` model says the cause instead of retrying a cut.
 */
const cutInsideAnEvent = (notAStream: unknown): Error => new Error(incompleteEvent, notAStream === undefined ? undefined : { cause: notAStream })

/** Whether `text` could be a JSON object (its first character after JSON's whitespace is `{`): only those can be error bodies. */
const mayBeObject = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue
    return c === 0x7b
  }
  return false
}

/** The SDK's check of a parsed body: an `error` object with an HTTP error `code` is its `ApiError`; `undefined` for any other. */
const errorOf = (ApiError: ApiErrorClass, json: unknown): Error | undefined => {
  if (json === null || typeof json !== "object" || !("error" in json)) return undefined
  const error = (json as { error: unknown }).error
  if (error === null || typeof error !== "object") return undefined
  const { status, code } = error as { status?: unknown; code?: unknown }
  return typeof code === "number" && code >= 400 && code < 600 ? new ApiError({ message: `got status: ${status}. ${JSON.stringify(json)}`, status: code }) : undefined
}

/** Throws what {@link errorOf} finds. */
const throwIfError = (ApiError: ApiErrorClass, json: unknown): void => {
  const error = errorOf(ApiError, json)
  if (error !== undefined) throw error
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
    const onRead = readListeners.get(response)
    const events = new EventSplitter()
    const start = new BodyStart()
    try {
      while (true) {
        const { done, value } = await reader.read()
        if (done) {
          // A body that is no event stream fails as one cut inside an event, with what it is as its
          // cause. One that ends on a blank line leaves no rest (its text was read as events with no
          // data): the SDK ends it as an empty stream, and so does this reader, unless its content
          // type says it is something else (a proxy's page).
          const contentType = response.headers.get("content-type")
          const rest = events.rest().trim().length > 0
          const notAStream = rest || declaredOtherwise(contentType) ? start.failure(contentType, "`alt=sse`", (json) => errorOf(ApiError, json)) : undefined
          if (rest || notAStream !== undefined) throw cutInsideAnEvent(notAStream)
          break
        }
        onRead?.()
        const text = decoder.decode(value, { stream: true })
        throwIfErrorText(ApiError, text)
        events.add(text)
        start.add(text)
        for (let raw = events.event(); raw !== undefined; raw = events.event()) {
          const event = raw.trim()
          if (!event.startsWith("data:")) continue
          start.stream()
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
