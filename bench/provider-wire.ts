/**
 * The loopback server of the `providers` bench (bench/provider-streaming.ts): one HTTP server on
 * 127.0.0.1 (a free port) that streams a text answer in each provider's real streaming wire format,
 * the events built by the provider tests' own wire bodies (test/providers/wire.ts):
 *   POST …/chat/completions                    OpenAI Chat Completions SSE (`chat.completion.chunk`,
 *                                              the usage chunk when `stream_options.include_usage`, `[DONE]`)
 *   POST …/messages                            Anthropic Messages SSE (named events)
 *   POST …/models/<m>:streamGenerateContent    Gemini `alt=sse` chunks
 *   POST …/api/chat                            Ollama NDJSON lines
 * The model name says how many deltas to stream: `deltas-200` streams 200 words of the same width
 * (`w000 `, `w001 `, …), one word per event, so every library is sent the same events.
 *
 * Pacing, the same for every library: the events before the first delta and the first delta go out
 * with the response head; each next delta is written when the consumer has seen the previous one
 * (`advance()`, called from the bench's delta callback), and the events after the last delta when it
 * has seen the last. So each delta arrives in a read of its own, as a real model's deltas (tens of ms
 * apart) do, and no library gets several deltas per read because it is slower. A watchdog flushes a
 * stream that saw no progress for 250 ms (a library holding a delta back until the next one arrived)
 * and counts it in `stalls`, which the bench treats as a failed run.
 *
 * The server runs in the bench's process, so its writes are in the measured CPU time: the same for
 * every library; the bench's `floor` subject (fetch, split, JSON.parse) shows how much of a delta's
 * time the transport itself takes.
 */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { anthropicEvents, geminiEvents, ollamaLines, openAiChatEvents, sse, type WireReply } from "../test/providers/wire.ts"

/** The streaming wire formats the bench serves. */
export type WireFormat = "openai" | "anthropic" | "gemini" | "ollama"

/** The `i`-th word of a stream of `deltas` (all of one width, so a fixed piece size is one word). */
export const word = (i: number, deltas: number): string => `w${String(i).padStart(String(Math.max(1, deltas - 1)).length, "0")} `

/** The whole text of a stream of `deltas` words. */
export const wholeText = (deltas: number): string => Array.from({ length: deltas }, (_, i) => word(i, deltas)).join("")

/** The model name that asks the server for `deltas` deltas. */
export const modelFor = (deltas: number): string => `deltas-${deltas}`

interface Rendered {
  /** Every event of the body, encoded. */
  readonly events: ReadonlyArray<Buffer>
  /** Index of the first delta event; the `deltas` delta events follow it one by one. */
  readonly first: number
  readonly deltas: number
  readonly contentType: string
}

const usage = { input: 26, output: 200 }

/** The events of `deltas` words in `wire`'s format, the delta events located and checked. */
const render = (wire: WireFormat, deltas: number, includeUsage: boolean): Rendered => {
  const reply: WireReply = { text: wholeText(deltas), calls: [], usage: { ...usage, output: deltas } }
  const size = [word(0, deltas).length]
  let texts: Array<string>
  let contentType = "text/event-stream"
  switch (wire) {
    case "openai": {
      const events = openAiChatEvents(reply, 1, size)
      texts = (includeUsage ? events : events.slice(0, -1)).map((event) => sse([event]))
      texts.push("data: [DONE]\n\n")
      break
    }
    case "anthropic":
      texts = anthropicEvents(reply, size).map((event) => sse([event]))
      break
    case "gemini":
      texts = geminiEvents(reply, size).map((event) => sse([event]))
      break
    case "ollama":
      texts = ollamaLines(reply, size).split(/(?<=\n)/)
      contentType = "application/x-ndjson"
      break
  }
  const first = texts.findIndex((text) => text.includes(JSON.stringify(word(0, deltas))))
  for (let i = 0; i < deltas; i++) {
    if (!texts[first + i]?.includes(JSON.stringify(word(i, deltas)))) throw new Error(`provider-wire: ${wire} event ${first + i} is not delta ${i}`)
  }
  return { events: texts.map((text) => Buffer.from(text, "utf8")), first, deltas, contentType }
}

interface Current {
  readonly res: ServerResponse
  readonly body: Rendered
  /** Deltas written so far. */
  written: number
  /** `advance()` calls so far (deltas the consumer has seen). */
  seen: number
  progressAt: number
}

export interface WireServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  /** Model calls (requests) served so far, per wire format. */
  readonly calls: Record<WireFormat, number>
  /** Streams the watchdog had to flush (a consumer that never saw a delta it was sent). */
  readonly stalls: () => number
  /** The consumer saw the last delta it was sent: send the next one (or the end of the body). */
  readonly advance: () => void
  close(): Promise<void>
}

/**
 * How the server sends a stream: `"read"` (default) a delta per read, the next when the consumer saw
 * the previous one; `"burst"` the whole body in one write, so a delta's cost is the parsing and the
 * library's own, the transport's per-read cost spread over the deltas of a read.
 */
export type Pace = "read" | "burst"

/** Starts the server on a free loopback port. */
export const startWireServer = async (pace: Pace = "read"): Promise<WireServer> => {
  const cache = new Map<string, Rendered>()
  const rendered = (wire: WireFormat, deltas: number, includeUsage: boolean) => {
    const key = `${wire}/${deltas}/${includeUsage}`
    let body = cache.get(key)
    if (body === undefined) cache.set(key, (body = render(wire, deltas, includeUsage)))
    return body
  }
  const calls: Record<WireFormat, number> = { openai: 0, anthropic: 0, gemini: 0, ollama: 0 }
  let current: Current | undefined
  let stalls = 0

  const writeTail = (c: Current) => {
    const { events, first, deltas } = c.body
    for (let i = first + deltas; i < events.length; i++) c.res.write(events[i])
    c.res.end()
    if (current === c) current = undefined
  }
  const advance = () => {
    const c = current
    if (c === undefined) return
    c.seen++
    c.progressAt = performance.now()
    if (c.seen < c.written) return
    if (c.written < c.body.deltas) c.res.write(c.body.events[c.body.first + c.written++])
    else writeTail(c)
  }

  const server = createServer((req, res) => {
    let data = ""
    req.setEncoding("utf8")
    req.on("data", (chunk: string) => (data += chunk))
    req.on("end", () => {
      const url = req.url ?? ""
      let body: { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } } = {}
      try {
        body = JSON.parse(data)
      } catch {
        // a body that is not JSON is answered 400 below
      }
      const wire: WireFormat | undefined = url.includes(":streamGenerateContent")
        ? "gemini"
        : url.endsWith("/chat/completions")
        ? "openai"
        : url.endsWith("/messages")
        ? "anthropic"
        : url.endsWith("/api/chat")
        ? "ollama"
        : undefined
      const model = wire === "gemini" ? /models\/([^:/]+):/.exec(url)?.[1] : body.model
      const deltas = Number(/^deltas-(\d+)$/.exec(model ?? "")?.[1])
      if (wire === undefined || !(deltas > 0) || (wire !== "gemini" && body.stream !== true)) {
        res.writeHead(400, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: `provider-wire: not a streaming request this server knows: ${req.method} ${url} model ${model}` } }))
        return
      }
      if (current !== undefined) throw new Error("provider-wire: a stream was requested while another one is open")
      calls[wire]++
      const stream = rendered(wire, deltas, wire !== "openai" || body.stream_options?.include_usage === true)
      res.writeHead(200, { "content-type": stream.contentType, "cache-control": "no-cache" })
      if (pace === "burst") {
        res.end(Buffer.concat(stream.events))
        return
      }
      const c: Current = { res, body: stream, written: 1, seen: 0, progressAt: performance.now() }
      current = c
      res.on("close", () => {
        if (current === c) current = undefined
      })
      res.write(Buffer.concat(stream.events.slice(0, stream.first + 1)))
    })
  })
  server.keepAliveTimeout = 60_000
  const watchdog = setInterval(() => {
    const c = current
    if (c !== undefined && performance.now() - c.progressAt > 250) {
      stalls++
      for (; c.written < c.body.deltas; c.written++) c.res.write(c.body.events[c.body.first + c.written])
      writeTail(c)
    }
  }, 250)
  watchdog.unref()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    stalls: () => stalls,
    advance,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(watchdog)
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
