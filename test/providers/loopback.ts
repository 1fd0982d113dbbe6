/**
 * A real HTTP server on 127.0.0.1 (random port) for provider tests. Each request is answered by the
 * next step of a script: a JSON reply with a status, a raw body, or a hang (never answered; its
 * connection's close is recorded, which is how an aborted request is observed).
 */
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach } from "vitest"

export type Reply =
  | { readonly status?: number; readonly json: unknown; readonly headers?: Record<string, string>; readonly delayMs?: number }
  | { readonly status?: number; readonly raw: string; readonly headers?: Record<string, string> }
  | { readonly hang: true }
  /** Sends the status line, headers and `partial` of the body, then destroys the socket. */
  | { readonly reset: string }
  /**
   * A streamed body: `pieces` (text, or bytes to tear inside UTF-8 characters) written one by one (`gapMs` apart; 0: as the socket drains), then the response ends (`"end"`),
   * the socket is destroyed (`"cut"`), or nothing more is sent (`"stall"`; its close is recorded).
   */
  | { readonly pieces: ReadonlyArray<string | Uint8Array>; readonly contentType: string; readonly gapMs?: number; readonly then?: "end" | "cut" | "stall" }

export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly body: any
  /** `Date.now()` when the request arrived. */
  readonly at: number
}

export interface Loopback {
  readonly url: string
  readonly port: number
  readonly requests: Array<RecordedRequest>
  /** Resolves when the client closed a hanging request. */
  readonly aborted: Promise<void>
  close(): Promise<void>
}

/** Starts a server answering with `replies` in order; the last reply repeats. `port` 0 picks a free one. */
export const startLoopback = async (replies: ReadonlyArray<Reply>, port = 0): Promise<Loopback> => {
  const requests: Array<RecordedRequest> = []
  let signalAborted: () => void = () => {}
  const aborted = new Promise<void>((resolve) => {
    signalAborted = resolve
  })
  const server = createServer((req, res) => {
    let data = ""
    req.on("data", (chunk) => (data += chunk))
    req.on("end", () => {
      let body: unknown = data
      try {
        body = data === "" ? undefined : JSON.parse(data)
      } catch {
        // keep the raw text
      }
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body, at: Date.now() })
      const reply = replies[Math.min(requests.length - 1, replies.length - 1)]!
      if ("hang" in reply) {
        res.on("close", () => signalAborted())
        return
      }
      if ("reset" in reply) {
        res.writeHead(200, { "content-type": "application/json", "content-length": String(reply.reset.length + 100) })
        res.write(reply.reset, () => setTimeout(() => res.socket?.destroy(), 10))
        return
      }
      if ("pieces" in reply) {
        res.on("close", () => signalAborted())
        res.writeHead(200, { "content-type": reply.contentType, "cache-control": "no-cache" })
        res.flushHeaders()
        const write = (i: number): void => {
          if (res.destroyed) return
          // `gapMs: 0`: as fast as the client reads (each piece its own write, waiting only for the socket to drain).
          if (reply.gapMs === 0) {
            while (i < reply.pieces.length) {
              if (!res.write(reply.pieces[i++]!)) return void res.once("drain", () => write(i))
            }
          }
          if (i < reply.pieces.length) {
            res.write(reply.pieces[i]!)
            setTimeout(() => write(i + 1), reply.gapMs ?? 1)
            return
          }
          if ((reply.then ?? "end") === "end") res.end()
          else if (reply.then === "cut") res.socket?.destroy()
        }
        write(0)
        return
      }
      const payload = "json" in reply ? JSON.stringify(reply.json) : reply.raw
      const send = () => {
        res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers })
        res.end(payload)
      }
      if ("json" in reply && reply.delayMs !== undefined) {
        res.on("close", () => signalAborted())
        setTimeout(send, reply.delayMs)
      } else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const bound = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    requests,
    aborted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * For a test file: `serve(replies)` starts a loopback server, closed after each test.
 *
 * @example
 * ```ts
 * const serve = useLoopback()
 * it("...", async () => { const s = await serve([openAiText("ok")]) })
 * ```
 */
export const useLoopback = (): ((replies: ReadonlyArray<Reply>) => Promise<Loopback>) => {
  let server: Loopback | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })
  return async (replies) => {
    server = await startLoopback(replies)
    return server
  }
}

/** Retry and timeout options that keep provider fault tests fast. */
export const fastRetries = { retry: { times: 2, base: "5 millis" }, timeout: "2 seconds" } as const

/** A port with nothing listening on it. */
export const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

// ---- OpenAI Chat Completions replies, shaped as the API reference documents them ----

let completionCounter = 0
export const completion = (message: Record<string, unknown>, finishReason: string, usage?: Record<string, unknown>) => ({
  id: `chatcmpl-${++completionCounter}`,
  object: "chat.completion",
  created: 1_700_000_000,
  model: "gpt-4o-mini-2024-07-18",
  system_fingerprint: "fp_44709d6fcb",
  choices: [{ index: 0, message: { role: "assistant", refusal: null, ...message }, logprobs: null, finish_reason: finishReason }],
  usage: usage ?? { prompt_tokens: 82, completion_tokens: 17, total_tokens: 99 }
})

export const openAiToolCalls = (calls: ReadonlyArray<{ id: string; name: string; arguments: string }>): Reply => ({
  json: completion(
    {
      content: null,
      tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }))
    },
    "tool_calls"
  )
})

export const openAiText = (content: string): Reply => ({ json: completion({ content }, "stop") })

export const openAiError = (
  status: number,
  message: string,
  type = "invalid_request_error",
  headers?: Record<string, string>,
  code: string | null = null
): Reply => ({
  status,
  json: { error: { message, type, param: null, code } },
  ...(headers === undefined ? {} : { headers })
})

// ---- Ollama /api/chat replies, shaped as docs/api.md documents them ----

export const ollamaReply = (message: Record<string, unknown>, overrides: Record<string, unknown> = {}) => ({
  model: "qwen2.5:7b",
  created_at: "2026-11-22T14:13:43.416799Z",
  message: { role: "assistant", content: "", ...message },
  done_reason: "stop",
  done: true,
  total_duration: 5_191_566_416,
  load_duration: 2_154_458,
  prompt_eval_count: 26,
  prompt_eval_duration: 383_809_000,
  eval_count: 12,
  eval_duration: 4_799_921_000,
  ...overrides
})

export const ollamaToolCalls = (calls: ReadonlyArray<{ name: string; arguments: Record<string, unknown> }>): Reply => ({
  json: ollamaReply({ tool_calls: calls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })) })
})

export const ollamaText = (content: string): Reply => ({ json: ollamaReply({ content }) })

export const ollamaError = (status: number, error: string): Reply => ({ status, json: { error } })

// ---- Anthropic Messages replies, shaped as the Messages API reference documents them ----

let messageCounter = 0
export const anthropicMessage = (content: ReadonlyArray<Record<string, unknown>>, stopReason: string, usage?: Record<string, unknown>) => ({
  id: `msg_${++messageCounter}`,
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-6",
  content,
  stop_reason: stopReason,
  stop_sequence: null,
  usage: usage ?? { input_tokens: 120, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
})

export const anthropicText = (text: string): Reply => ({ json: anthropicMessage([{ type: "text", text }], "end_turn") })

export const anthropicToolUse = (calls: ReadonlyArray<{ id: string; name: string; input: Record<string, unknown> }>, text?: string): Reply => ({
  json: anthropicMessage(
    [...(text === undefined ? [] : [{ type: "text", text }]), ...calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.input }))],
    "tool_use"
  )
})

export const anthropicError = (status: number, type: string, message: string, headers?: Record<string, string>): Reply => ({
  status,
  json: { type: "error", error: { type, message } },
  ...(headers === undefined ? {} : { headers })
})

// ---- Streams, shaped as each API documents them ----

/** Tears `text` into pieces at the given sizes, cycling (so SSE events and JSON lines split anywhere). */
export const tear = (text: string, sizes: ReadonlyArray<number> = [7, 3, 11, 1, 5]): Array<string> => {
  const pieces: Array<string> = []
  for (let i = 0, k = 0; i < text.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length]!)
    pieces.push(text.slice(i, i + size))
    i += size
  }
  return pieces
}

/** The id every chunk of a streamed completion repeats (as Chat Completions does). */
export const streamedCompletionId = "chatcmpl-s1"

/** One `chat.completion.chunk` as Chat Completions streams it. */
export const openAiChunk = (delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: streamedCompletionId,
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "gpt-4o-mini-2024-07-18",
  system_fingerprint: "fp_44709d6fcb",
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  ...extra
})

/** The usage chunk `stream_options: { include_usage: true }` adds before `[DONE]`. */
export const openAiUsageChunk = (prompt: number, completion: number) => ({
  id: streamedCompletionId,
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "gpt-4o-mini-2024-07-18",
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
})

/** An SSE body: one `data:` event per chunk, then `data: [DONE]` unless `done` is false. */
export const sseBody = (chunks: ReadonlyArray<unknown>, done = true): string =>
  chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + (done ? "data: [DONE]\n\n" : "")

/** An NDJSON body: one JSON object per line. */
export const ndjsonBody = (lines: ReadonlyArray<unknown>): string => lines.map((l) => `${JSON.stringify(l)}\n`).join("")

/** One `/api/chat` stream line. */
export const ollamaLine = (message: Record<string, unknown>, done = false, extra: Record<string, unknown> = {}) => ({
  model: "qwen2.5:7b",
  created_at: "2026-11-22T14:13:43.416799Z",
  message: { role: "assistant", content: "", ...message },
  done,
  ...(done ? { done_reason: "stop", total_duration: 5_191_566_416, prompt_eval_count: 26, eval_count: 12 } : {}),
  ...extra
})
