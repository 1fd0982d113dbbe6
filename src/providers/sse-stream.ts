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
 * Linear in the body's size: each network chunk is scanned once for line ends, and a line torn across
 * chunks is kept as its pieces and joined once, at its end (a pending text grown by `+` and searched
 * again on every read made one event of megabytes quadratic, slow enough to look like a stall).
 */

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
}

/**
 * The chunks of `response`'s server-sent events: `read` makes a chunk of an event, `undefined` skips
 * it, and what it throws fails the iteration after the chunks before it (as a generator would). `read`
 * calls `stop()` at the protocol's last event (`[DONE]`, `message_stop`): the chunk it makes of that
 * event is still handed out, then the iteration ends and the body is cancelled, without waiting for the
 * server to close it. An aborted read (`AbortError`) ends the iteration quietly, as the SDKs' streams
 * do; `return()` cancels the body. `noBody` is the failure of a response without a body.
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
  [Symbol.asyncIterator]: () => new SseIterator(response, read, noBody, hooks.onRead)
})

const done: IteratorReturnResult<undefined> = { done: true, value: undefined }

/**
 * A streamed request answered with a whole JSON reply instead of an event stream (an OpenAI-compatible
 * server that ignores `stream: true`): a `ModelError` that is not retried, since the server answered.
 */
export class NotAnEventStream extends Error {
  constructor() {
    super("the server answered with a whole JSON reply, not an event stream (it ignored `stream: true`): use the provider's whole calls with this server (`chat`, or an agent run without runStream), or a server that streams")
    this.name = "NotAnEventStream"
  }
}
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
  /** An `event` or `data` field was read: the body is an event stream. */
  #sawField = false
  /** The body's first character that is not white space (or a BOM), once read. */
  #opening: string | undefined
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

  constructor(
    response: Response,
    readonly read: (event: SseEvent, stop: () => void) => C | undefined,
    readonly noBody: () => unknown,
    readonly onBytes: (() => void) | undefined
  ) {
    this.#reader = response.body?.getReader()
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
      // A body of no event that is JSON: a whole reply from a server that ignored `stream: true`. It
      // answered, so it is said, not taken for a stream cut short (which is asked again, and billed again).
      if (!this.#sawField && (this.#opening === "{" || this.#opening === "[")) {
        this.#sawField = true
        return Promise.reject(new NotAnEventStream())
      }
      return Promise.resolve(done)
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
    if (this.#opening === undefined) {
      const first = text.replace(/^[\s\ufeff]+/, "")
      if (first !== "") this.#opening = first[0]
    }
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
      this.#sawField = true
    } else if (field === "data") {
      this.#data.push(value)
      this.#sawField = true
    }
    return none
  }
}
