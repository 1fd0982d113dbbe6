/**
 * A streamed HTTP response read as server-sent events, for providers whose SDK parses every network
 * chunk through nested async generators (the `openai` SDK: body iterator, double-newline splitter, line
 * decoder, event parser; each a promise and a few microtasks per chunk, with a byte copy of the pending
 * buffer per event). Here one reader per response parses each chunk in plain code, with that SDK's
 * rules: UTF-8 (a character torn between chunks waits for its end; a BOM dropped at the start of each
 * line, as its line-by-line decoding does), lines ending in LF, CR or CRLF (a CRLF torn between chunks
 * counts once), `event:` and `data:` fields (one leading space dropped; data lines joined by LF),
 * comments and other fields ignored, an event dispatched at its blank line unless it has neither a
 * name nor data, an unfinished last event dropped. The provider turns each event into a chunk
 * (`read`), or skips it. test/properties/sse-stream.property.test.ts holds it to the SDK's reading.
 *
 * Where the SDK would end quietly, one kind of body is said instead: a body that held no event and is
 * not an event stream at all (see {@link notAnEventStream}: a whole JSON reply, or a page), which would
 * otherwise be taken for a stream cut short, and asked (and billed) again.
 *
 * Linear in the body's size: each network chunk is scanned once for line ends, and a line torn across
 * chunks is kept as its pieces and joined once, at its end (a pending text grown by `+` and searched
 * again on every read made one event of megabytes quadratic, slow enough to look like a stall).
 */
import { isRecord } from "../internal/is-record.ts"
import { bodySummary } from "./error-body.ts"

/** One server-sent event: its `event:` name (`null` without one) and its `data:` lines joined by LF. */
export interface SseEvent {
  readonly event: string | null
  readonly data: string
}

/** What a reader of server-sent events may be told beside the events. */
export interface SseHooks {
  /**
   * Called for every piece of the body that arrives, whole event or not (a keep-alive comment, a piece
   * of a long event): an idle watchdog counts it as activity.
   */
  readonly onRead?: (() => void) | undefined
  /**
   * The failure of a body that is one JSON object holding an error (a gateway's error sent with a 200, to
   * a request to stream), as the provider's whole call fails with the same body; `undefined` when it holds
   * none (it is then a whole reply from a server that ignored the request to stream).
   */
  readonly errorReply?: ((body: Record<string, unknown>) => unknown) | undefined
}

/**
 * The chunks of `response`'s server-sent events: `read` makes a chunk of an event, `undefined` skips
 * it, and what it throws fails the iteration after the chunks before it (as a generator would). `read`
 * calls `stop()` at the protocol's last event (`[DONE]`, `message_stop`): the chunk it makes of that
 * event is still handed out, then the iteration ends and the body is cancelled, without waiting for the
 * server to close it. An aborted read (`AbortError`) ends the iteration quietly, as the SDKs' streams
 * do; `return()` cancels the body. `noBody` is the failure of a response without a body. A body that
 * ended without any event fails as {@link notAnEventStream} says, when it is not an event stream.
 *
 * @example
 * ```ts
 * const chunks = sseChunks(response, (event, stop) => (event.data === "[DONE]" ? stop() : JSON.parse(event.data)), () => new Error("no body"))
 * for await (const chunk of chunks) console.log(chunk)
 * ```
 */
export const sseChunks = <C>(
  response: Response,
  read: (event: SseEvent, stop: () => void) => C | undefined,
  noBody: () => unknown,
  hooks: SseHooks = {}
): AsyncIterable<C> => ({
  [Symbol.asyncIterator]: () => new SseIterator(response, read, noBody, hooks)
})

const done: IteratorReturnResult<undefined> = { done: true, value: undefined }

/**
 * A streamed request answered with something that is not an event stream: a whole JSON reply (an
 * OpenAI-compatible server that ignores `stream: true`, a Gemini gateway that drops `alt=sse`) or a page
 * (a proxy's, a captive portal's). The providers make it a `ModelError` that is not retried, as the same
 * body answering a whole call is not: the server answered, and would answer the same again.
 */
export class NotAnEventStream extends Error {
  constructor(reason: string) {
    super(reason)
    this.name = "NotAnEventStream"
  }
}

/** The most of a body without events kept to tell what it is (a whole reply is read as JSON). */
const maxHeld = 1 << 20

/**
 * The start of a streamed reply's body, kept (up to 1 MiB) until the body shows itself an event stream
 * (an event's field is read), to tell what it is if it ends without any event ({@link notAnEventStream}).
 *
 * @example
 * ```ts
 * const start = new BodyStart()
 * start.add(text)             // every read, while no event came
 * start.stream()              // at the first event
 * throw start.failure(type, "`stream: true`", () => undefined) ?? cut
 * ```
 */
export class BodyStart {
  #pieces: Array<string> | undefined = []
  #held = 0

  /** Keeps the text of a read, unless the body is an event stream or enough of it is kept. */
  add(text: string): void {
    if (this.#pieces === undefined || this.#held >= maxHeld) return
    this.#pieces.push(text)
    this.#held += text.length
  }

  /** An event's field was read: the body is an event stream, and its start is let go. */
  stream(): void {
    this.#pieces = undefined
  }

  /** Once the body ended: what {@link notAnEventStream} makes of it, when no event came (said once). */
  failure(contentType: string | null, asked: string, errorReply: (body: Record<string, unknown>) => unknown): unknown {
    const pieces = this.#pieces
    this.#pieces = undefined
    return pieces === undefined ? undefined : notAnEventStream(pieces.join(""), contentType, asked, errorReply)
  }
}

/**
 * What a streamed reply's body that ended without any event is, when it is not an event stream: the
 * failure `errorReply` makes of a JSON object holding an error, else a {@link NotAnEventStream} saying
 * the server answered with a whole JSON reply (it ignored `asked`, the request to stream) or, for a page
 * (its first character `<`) or a text declared as something other than an event stream (`text/plain`:
 * a load balancer's message), with something else, quoting the text (./error-body.ts) as a whole call's
 * "not a JSON object" does. `undefined` for an empty body, and for any other text (declared an event
 * stream, or nothing): by the rules of server-sent events its lines are comments and fields of a
 * stream that was cut before its first event (the caller ends it as a cut, retried).
 *
 * @example
 * ```ts
 * notAnEventStream("<html><h1>Welcome to nginx!</h1></html>", "text/html", "`stream: true`", () => undefined)
 * // NotAnEventStream: the server answered with something that is not an event stream (text/html): Welcome to nginx!
 * ```
 */
export const notAnEventStream = (
  body: string,
  contentType: string | null,
  asked: string,
  errorReply: (body: Record<string, unknown>) => unknown
): unknown => {
  const text = body.replace(/^[\s\ufeff]+/, "")
  const opening = text[0]
  if (opening === undefined) return undefined
  let json: { readonly value: unknown } | undefined
  try {
    json = { value: JSON.parse(text) }
  } catch {
    // A whole reply cut short, or too large to keep, is still one when it opens as JSON.
  }
  if (json !== undefined && isRecord(json.value)) {
    const failure = errorReply(json.value)
    if (failure !== undefined) return failure
  }
  if (json !== undefined || opening === "{" || opening === "[") {
    return new NotAnEventStream(
      `the server answered with a whole JSON reply, not an event stream (it ignored ${asked}): use the provider's whole calls with this server (\`chat\`, or an agent run without runStream), or a server that streams`
    )
  }
  if (opening !== "<" && !declaredOtherwise(contentType)) return undefined
  return new NotAnEventStream(`the server answered with something that is not an event stream${contentType === null ? "" : ` (${contentType})`}: ${bodySummary(text)}`)
}

/**
 * Whether the reply declares a content type that is not an event stream (`text/plain`, say; none
 * declared is not).
 *
 * @example
 * ```ts
 * declaredOtherwise("text/html; charset=utf-8") // true
 * declaredOtherwise("text/event-stream") // false
 * ```
 */
export const declaredOtherwise = (contentType: string | null): boolean =>
  contentType !== null && contentType.split(";")[0]!.trim().toLowerCase() !== "text/event-stream"

/** No chunk came of the lines parsed so far. */
const none: unique symbol = Symbol("none")

/**
 * Parses lazily: `next()` parses lines only until one event makes a chunk, so the first chunk of a
 * large read is handed out before the rest of the read is parsed (as the SDK's generators do).
 */
class SseIterator<C> implements AsyncIterator<C, undefined> {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  /** A BOM is not dropped here but at the start of every line, as the SDK (which decodes line by line) does. */
  readonly #decoder = new TextDecoder("utf-8", { ignoreBOM: true })
  /** The text of the last read; lines before `#start` are parsed. */
  #text = ""
  #start = 0
  /** The start of the line being read, from earlier reads (joined once the line ends). */
  #pieces: Array<string> = []
  /** The next LF and CR in `#text` at or after `#start` (-1: none in this read; -2: not looked for). */
  #lf = -2
  #cr = -2
  /** The last read ended in a CR: a LF at the start of the next one is its CRLF's second half. */
  #afterCr = false
  #event: string | null = null
  #data: Array<string> = []
  /** The body's start, until an `event` or `data` field is read. */
  readonly #bodyStart = new BodyStart()
  /** What `read` threw, handed out after the chunks made before it. */
  #failure: { readonly cause: unknown } | undefined
  /** `read` saw the protocol's last event: nothing more is read. */
  #stopped = false
  readonly #stop = (): void => {
    this.#stopped = true
  }
  /** The body has ended (or failed, or was cancelled): no more reads. */
  #ended = false
  readonly #onRead = (result: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>["read"]>>): Promise<IteratorResult<C, undefined>> => {
    if (result.done) {
      this.#ended = true
      this.#append(this.#decoder.decode())
    } else {
      this.onBytes?.()
      this.#append(this.#decoder.decode(result.value, { stream: true }))
    }
    return this.next()
  }
  readonly #onError = (cause: unknown): IteratorResult<C, undefined> => {
    this.#ended = true
    if (typeof cause === "object" && cause !== null && (cause as { name?: unknown }).name === "AbortError") return done
    throw cause
  }

  readonly onBytes: (() => void) | undefined
  readonly #contentType: string | null
  readonly #errorReply: (body: Record<string, unknown>) => unknown

  constructor(
    response: Response,
    readonly read: (event: SseEvent, stop: () => void) => C | undefined,
    readonly noBody: () => unknown,
    hooks: SseHooks
  ) {
    this.#reader = response.body?.getReader()
    this.onBytes = hooks.onRead
    this.#contentType = response.headers.get("content-type")
    this.#errorReply = hooks.errorReply ?? (() => undefined)
  }

  next(): Promise<IteratorResult<C, undefined>> {
    const chunk = this.#failure === undefined && !this.#stopped ? this.#pump() : none
    if (chunk !== none) return Promise.resolve({ done: false, value: chunk })
    const failure = this.#failure
    if (failure !== undefined) {
      this.#failure = undefined
      this.#finish()
      return Promise.reject(failure.cause)
    }
    if (this.#reader === undefined) return Promise.reject(this.noBody())
    if (this.#stopped) {
      this.#finish()
      return Promise.resolve(done)
    }
    if (this.#ended) {
      // A body of no event that is not an event stream (a whole reply, a page): the server answered, so it
      // is said, not taken for a stream cut short (which is asked again, and billed again).
      const failure = this.#bodyStart.failure(this.#contentType, "`stream: true`", this.#errorReply)
      return failure === undefined ? Promise.resolve(done) : Promise.reject(failure)
    }
    return this.#reader.read().then(this.#onRead, this.#onError)
  }

  return(): Promise<IteratorResult<C, undefined>> {
    this.#finish()
    return Promise.resolve(done)
  }

  /** No more chunks: the body cancelled (unless it ended), the pending text and failure dropped. */
  #finish(): void {
    if (!this.#ended) {
      this.#ended = true
      this.#reader?.cancel().catch(() => {})
    }
    this.#text = ""
    this.#start = 0
    this.#pieces = []
    this.#failure = undefined
  }

  /** Takes the text of a read; what is left of the last one (the start of an unfinished line) is kept as a piece. */
  #append(text: string): void {
    this.#bodyStart.add(text)
    if (this.#start < this.#text.length) this.#pieces.push(this.#start === 0 ? this.#text : this.#text.slice(this.#start))
    this.#text = text
    this.#start = 0
    this.#lf = -2
    this.#cr = -2
    if (this.#afterCr && text !== "") {
      this.#afterCr = false
      if (text.charCodeAt(0) === 10) this.#start = 1
    }
  }

  /**
   * Parses complete lines until one event makes a chunk (or `read` fails or stops); `none` when the text
   * has no more complete lines. Once the body has ended, an unfinished last line is dropped (it could
   * only join an event that never gets its blank line).
   */
  #pump(): C | typeof none {
    const text = this.#text
    let start = this.#start
    let lf = this.#lf
    let cr = this.#cr
    let chunk: C | typeof none = none
    while (chunk === none && this.#failure === undefined && !this.#stopped) {
      if (lf !== -1 && lf < start) lf = text.indexOf("\n", start)
      if (cr !== -1 && cr < start) cr = text.indexOf("\r", start)
      let lineEnd: number
      let next: number
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        lineEnd = cr
        if (cr === text.length - 1) {
          // A CR at the end of a read may be the first half of a CRLF torn between reads.
          this.#afterCr = !this.#ended
          next = cr + 1
        } else next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1
      } else if (lf !== -1) {
        lineEnd = lf
        next = lf + 1
      } else break
      let line = text.slice(start, lineEnd)
      if (this.#pieces.length > 0) {
        this.#pieces.push(line)
        line = this.#pieces.join("")
        this.#pieces = []
      }
      chunk = this.#line(line)
      start = next
    }
    this.#start = start
    this.#lf = lf
    this.#cr = cr
    if (chunk === none && this.#ended) {
      this.#text = ""
      this.#start = 0
      this.#pieces = []
    }
    return chunk
  }

  /** Feeds one line; the chunk its event makes, if it ends one. */
  #line(text: string): C | typeof none {
    const line = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
    if (line === "") {
      const event = this.#event
      const data = this.#data
      if (!event && data.length === 0) return none
      this.#event = null
      this.#data = []
      try {
        const chunk = this.read({ event, data: data.length === 1 ? data[0]! : data.join("\n") }, this.#stop)
        return chunk === undefined ? none : chunk
      } catch (cause) {
        this.#failure = { cause }
        return none
      }
    }
    if (line.charCodeAt(0) === 58 /* ":" */) return none
    const colon = line.indexOf(":")
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? "" : line.slice(colon + 1)
    if (value.charCodeAt(0) === 32 /* " " */) value = value.slice(1)
    if (field === "event") {
      this.#event = value
      this.#bodyStart.stream()
    } else if (field === "data") {
      this.#data.push(value)
      this.#bodyStart.stream()
    }
    return none
  }
}
