/**
 * Ollama's native `/api/chat` on the official `ollama` SDK, which sends the requests (a streamed
 * reply's NDJSON body is read here, by `ollamaLines`). Tool-call arguments
 * arrive as objects and are handed to the loop as JSON text; calls without ids get unique ones; tool
 * results go back with `tool_name` (and `tool_call_id`), assistant turns with their `thinking`.
 */
import { assembleResponse } from "./assemble-response.ts"
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { ChatRequest, ChatResponse, Message, Ollama, Options, Tool } from "ollama"
import { AgentConfigError, ModelError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { lazyPackage } from "../internal/lazy-package.ts"
import { effectStream as stream } from "../internal/lazy-effect.ts"
import type { FinishReason, LlmMessage, LlmResponse, ModelRequest, ReasoningPart, ToolDefinition, Usage } from "../model/messages.ts"
import { metadataOf, type ModelClient } from "../model/model-client.ts"
import { errorBodyMessage } from "./error-body.ts"
import { replyBody } from "./reply-body.ts"
import { checkFaultOptions } from "./check-fault-options.ts"
import { checkReply } from "./check-reply.ts"
import { argumentsText, callName, normaliseCalls } from "./normalise-calls.ts"
import { isConnectionFailure, type ResilienceOptions, resilientCall, retryAdvice, shouldRetryStatus } from "./resilience.ts"
import { type ChunkDecoder, decodeChunk, resilientStream, type StreamingOptions } from "./resilient-stream.ts"
import { type ResponsePart, responseInfoParts } from "../model/response-part.ts"


/** Options of {@link ollama}. */
export interface OllamaOptions extends StreamingOptions {
  /** A host name (default `localhost`), `host:port`, or a URL such as `http://gpu-box:11434`. */
  readonly host?: string | undefined
  /** Used with a bare host name. Default 11434. */
  readonly port?: number
  /** Sent as `options.temperature`, unless a request sets its own. */
  readonly temperature?: number
  /** Extra headers on every request. */
  readonly headers?: Record<string, string>
  /** How long the server keeps the model loaded after the call (`keep_alive`). */
  readonly keepAlive?: string | number
  /** The context window in tokens (`options.num_ctx`); Ollama's default is small and silently truncates long prompts. */
  readonly numCtx?: number
  /** The output token limit (`options.num_predict`). */
  readonly numPredict?: number
  /** Thinking for thinking models (`think`): on, off, or a level for models that take one. */
  readonly think?: boolean | "low" | "medium" | "high"
  /** A JSON Schema or `"json"` for every reply (`format`); a request's `responseFormat` takes precedence. */
  readonly format?: "json" | Record<string, unknown>
  /** More model options (`options`: `seed`, `top_p`, `stop`, …), merged under the ones above. */
  readonly options?: Partial<Options>
}

const provider = "ollama"

/** The SDK, loaded when the first `ollama(...)` client makes a call. */
const sdk = lazyPackage<typeof import("ollama")>("ollama")

/**
 * A `ModelClient` for a local or remote Ollama server.
 *
 * @example
 * ```ts
 * const model = ollama("qwen2.5:7b", { temperature: 0.1, numCtx: 16384 }) // http://localhost:11434
 * agent("calc").model(model)
 * ```
 */
export const ollama = (model: string, options: OllamaOptions = {}): ModelClient => {
  checkFaultOptions(`ollama model "${model}"`, options)
  const host = ollamaHost(options)
  let Client: typeof Ollama
  try {
    Client = sdk().Ollama
  } catch (error) {
    throw new AgentConfigError({ subject: `ollama model "${model}"`, reason: describeCause(error) })
  }
  // The SDK passes no signal to non-streaming requests, and drops the headers of an error reply: a
  // per-call client whose fetch adds our signal and keeps the reply (its headers for the retry advice;
  // a stream's body, which the SDK never starts reading, for our own reader).
  const withClient = <A>(signal: AbortSignal, call: (client: Ollama) => Promise<A>): Promise<{ readonly value: A; readonly reply: Response | undefined }> => {
    let reply: Response | undefined
    const client = new Client({
      host,
      ...(options.headers === undefined ? {} : { headers: options.headers }),
      fetch: async (input, init) => {
        reply = await fetch(input, { ...init, signal })
        if (reply.ok) return reply
        // A failed reply's message is read here, from every documented shape (./error-body.ts), and
        // handed to the SDK as the `{ error }` JSON it reads: it reads only that shape, and writes a
        // line to stdout for any other body (which corrupts a stdio protocol such as an MCP server's).
        const text = await reply.text().catch(() => "")
        const headers = new Headers(reply.headers)
        headers.set("content-type", "application/json")
        headers.delete("content-length")
        // An `error` the body holds already (Ollama's string, an OpenAI-style object with its `code`,
        // which says whether to retry) is handed on as it is.
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        const held = typeof json === "object" && json !== null ? (json as { readonly error?: unknown }).error : undefined
        const error = held !== undefined && held !== null ? held : errorBodyMessage(text) ?? `${reply.status} ${reply.statusText}`.trim()
        return new Response(JSON.stringify({ error }), { status: reply.status, statusText: reply.statusText, headers })
      }
    })
    return call(client).then((value) => ({ value, reply }), (cause: unknown) => {
      throw reply === undefined ? cause : new WithHeaders(cause, reply.headers)
    })
  }
  return {
    metadata: metadataOf(provider, model, options.temperature, options.numPredict),
    chat: (request) =>
      Effect.suspend(() => {
        const body = toOllamaRequest(model, request, options)
        return resilientCall({ provider, model }, options, (signal) => withClient(signal, (client) => client.chat({ ...body, stream: false })), toModelError)
          .pipe(Effect.flatMap(({ value }) => fromOllamaResponse(value)))
      }),
    // `/api/chat` with `stream: true`: NDJSON, one message delta per line, usage and `done_reason` on the last.
    stream: (request) =>
      stream().suspend(() => {
        const body = toOllamaRequest(model, request, options)
        return resilientStream(
          { provider, model },
          options,
          // The SDK sends the request and reads an error reply; the body is read by `ollamaLines`.
          (signal, onRead) => withClient(signal, (client) => client.chat({ ...body, stream: true })).then(({ reply }) => ollamaLines(reply, onRead)),
          toModelError,
          ollamaChunkDecoder
        )
      })
  }
}

/**
 * Decodes `/api/chat` stream lines: `message.content` and `message.thinking` deltas; tool calls whole
 * (Ollama sends each call complete in one line, usually without an id); `done_reason` and the token
 * counts on the line with `done: true`; the `model` every line names (Ollama sends no response id).
 * A stream that ends before the `done` line was cut: a retryable `ModelError`.
 */
export const ollamaChunkDecoder = (): ChunkDecoder<ChatResponse> => {
  let next = 0
  let last: ChatResponse | undefined
  let content = ""
  let thinking = ""
  let model: unknown
  return {
    chunk: (line) =>
      decodeChunk(
        () => {
          // Every line names the model: said once, again only if it changes.
          const parts: Array<ResponsePart> = line.model === model ? [] : responseInfoParts(undefined, line.model)
          model = line.model
          const message = line.message as (Message & { tool_calls?: Array<{ id?: string }> }) | undefined
          const thought = message?.thinking ?? (message as { reasoning_content?: unknown } | undefined)?.reasoning_content
          if (typeof thought === "string" && thought !== "") {
            thinking += thought
            parts.push({ _tag: "ReasoningDelta", delta: thought })
          }
          if (typeof message?.content === "string" && message.content !== "") {
            content += message.content
            parts.push({ _tag: "TextDelta", delta: message.content })
          }
          for (const call of message?.tool_calls ?? []) {
            const fn = (call as { function?: { name?: unknown; arguments?: unknown } }).function
            const name = callName(fn?.name, call)
            const index = next++
            parts.push({ _tag: "ToolCallStart", index, id: typeof call.id === "string" && call.id !== "" ? call.id : undefined, name })
            parts.push({ _tag: "ToolCallDelta", index, delta: argumentsText(fn?.arguments) }, { _tag: "ToolCallEnd", index })
          }
          if (line.done === true) last = line
          return parts
        },
        (cause) => new ModelError({ provider, reason: `unexpected response shape: ${describeCause(cause)}`, retryable: false, cause })
      ),
    end: () =>
      Effect.gen(function*() {
        if (last === undefined) {
          return yield* new ModelError({ provider, reason: "the stream ended before the answer finished (no line with done: true)", retryable: true })
        }
        const doneReason = (last as { done_reason?: string }).done_reason
        const finishReason = toFinishReason(doneReason, next)
        const reasoning: Array<ReasoningPart> = thinking === "" ? [] : [{ _tag: "Thinking", text: thinking }]
        const usage = toUsage(last)
        yield* checkReply(provider, { finishReason, wireReason: `done_reason ${JSON.stringify(doneReason)}`, content, calls: next, reasoning, usage })
        const parts: Array<ResponsePart> = usage === undefined ? [] : [{ _tag: "Usage", usage }]
        parts.push({ _tag: "Finish", reason: finishReason })
        return parts
      })
  }
}

/** A failure together with the headers of the reply that caused it. */
class WithHeaders {
  constructor(readonly cause: unknown, readonly headers: Headers) {}
}

/** The server URL from `host` and `port`. */
export const ollamaHost = (options: Pick<OllamaOptions, "host" | "port">): string => {
  const host = options.host ?? "localhost"
  if (/^https?:\/\//.test(host)) return host
  if (/:\d+$/.test(host)) return `http://${host}`
  return `http://${host}:${options.port ?? 11434}`
}

/**
 * The `/api/chat` request body. Ollama has no `tool_choice`: `"none"` sends no tools; `{ tool }` sends
 * only that tool and tells the model to call it; `"required"` tells it to call one of the tools.
 */
export const toOllamaRequest = (
  model: string,
  request: ModelRequest,
  options: Omit<OllamaOptions, "host" | "port" | "headers" | keyof ResilienceOptions> = {}
): ChatRequest & { stream: false } => {
  const choice = request.toolChoice
  const definitions = choice === "none"
    ? []
    : typeof choice === "object"
    ? request.tools.filter((t) => t.name === choice.tool)
    : request.tools
  const messages = request.messages.map(toOllamaMessage)
  if (typeof choice === "object") messages.push({ role: "system", content: `Call the tool "${choice.tool}" now.` })
  if (choice === "required" && definitions.length > 0) messages.push({ role: "system", content: "Call one of the tools now." })
  const temperature = request.temperature ?? options.temperature
  const modelOptions: Partial<Options> = {
    ...options.options,
    ...(temperature === undefined ? {} : { temperature }),
    ...(options.numCtx === undefined ? {} : { num_ctx: options.numCtx }),
    ...(options.numPredict === undefined ? {} : { num_predict: options.numPredict })
  }
  const format = request.responseFormat?.schema ?? options.format
  return {
    model,
    messages,
    stream: false,
    ...(definitions.length === 0 ? {} : { tools: definitions.map(toOllamaTool) }),
    ...(Object.keys(modelOptions).length === 0 ? {} : { options: modelOptions }),
    ...(options.keepAlive === undefined ? {} : { keep_alive: options.keepAlive }),
    ...(options.think === undefined ? {} : { think: options.think }),
    ...(format === undefined ? {} : { format: format as string | object })
  }
}

const toOllamaTool = (definition: ToolDefinition): Tool => ({
  type: "function",
  function: {
    name: definition.name,
    ...(definition.description === undefined ? {} : { description: definition.description }),
    // The SDK's `parameters` type is narrower than JSON Schema; the server takes any JSON Schema.
    parameters: definition.parameters as NonNullable<Tool["function"]["parameters"]>
  }
})

/** The SDK's message type lacks the call ids newer servers read; they are sent all the same. */
type WireMessage = Message & { tool_call_id?: string }

const toOllamaMessage = (message: LlmMessage): WireMessage => {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content }
    case "assistant": {
      const thinking = (message.reasoning ?? []).flatMap((part) => (part._tag === "Thinking" ? [part.text] : [])).join("\n")
      const base = { role: "assistant", content: message.content, ...(thinking === "" ? {} : { thinking }) }
      return message.toolCalls === undefined || message.toolCalls.length === 0
        ? base
        : {
          ...base,
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            function: { name: call.name, arguments: argumentsObject(call.arguments) }
          })) as NonNullable<Message["tool_calls"]>
        }
    }
    case "tool":
      return { role: "tool", content: message.content, tool_name: message.name, tool_call_id: message.toolCallId }
  }
}

/** Ollama wants argument objects in the history; a JSON string is parsed. */
const argumentsObject = (raw: unknown): Record<string, unknown> => {
  let value = raw
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw)
    } catch {
      return { _raw: raw }
    }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : { _raw: value }
}

/**
 * The provider-neutral response for an `/api/chat` reply: arguments as JSON text, ids assigned when
 * the server gives none, `done_reason` as the finish reason, `thinking` as reasoning.
 */
export const fromOllamaResponse = (reply: ChatResponse): Effect.Effect<LlmResponse, ModelError> =>
  Effect.gen(function*() {
    // The SDK hands over whatever JSON the body held: one that is not an object (`null`, a number) says so.
    const body = replyBody(provider, reply)
    if (body instanceof ModelError) return yield* body
    const response = body as unknown as ChatResponse
    const message = response.message as (Omit<Message, "tool_calls"> & { tool_calls?: Array<{ id?: string }> }) | undefined
    if (message === undefined || message === null) {
      return yield* new ModelError({ provider, reason: "unexpected response shape: the reply has no message", retryable: false })
    }
    const wire = yield* Effect.try({
      try: () =>
        (message.tool_calls ?? []).map((call) => {
          const fn = (call as { function?: { name?: unknown; arguments?: unknown } }).function
          return { id: call.id, name: callName(fn?.name, call), arguments: fn?.arguments }
        }),
      catch: (cause) => new ModelError({ provider, reason: `unexpected response shape: ${describeCause(cause)}`, retryable: false, cause })
    })
    const calls = yield* normaliseCalls(wire)
    const content = message.content ?? ""
    // Ollama documents `thinking`; some compatible servers send `reasoning_content` as on /v1.
    const thought = message.thinking ?? (message as { reasoning_content?: unknown }).reasoning_content
    const reasoning: Array<ReasoningPart> = typeof thought === "string" && thought !== "" ? [{ _tag: "Thinking", text: thought }] : []
    const doneReason = (response as { done_reason?: string }).done_reason
    const finishReason = toFinishReason(doneReason, calls.length)
    const usage = toUsage(response)
    yield* checkReply(provider, { finishReason, wireReason: `done_reason ${JSON.stringify(doneReason)}`, content, calls: calls.length, reasoning, usage })
    return assembleResponse({ content, calls, usage, finishReason, reasoning, responseModel: response.model })
  })

const toFinishReason = (reason: string | undefined, calls: number): FinishReason | undefined => {
  if (reason === "length") return "length"
  if (reason === undefined || reason === "") return undefined
  if (calls > 0) return "tool-calls"
  return reason === "stop" ? "stop" : "other"
}

/** Ollama leaves out `prompt_eval_count` when the prompt came from its cache: a missing count is 0. */
const toUsage = (response: ChatResponse): Usage | undefined => {
  const input = typeof response.prompt_eval_count === "number" ? response.prompt_eval_count : undefined
  const output = typeof response.eval_count === "number" ? response.eval_count : undefined
  if (input === undefined && output === undefined) return undefined
  return { inputTokens: input ?? 0, outputTokens: output ?? 0 }
}

/** The longest piece of a line that is not JSON kept in a reason. */
const maxLineShown = 120

/**
 * The chat lines of a streamed `/api/chat` reply, read here instead of by the SDK, which skips a line
 * that is not JSON with a console warning (the run would go on without the text or the tool call it
 * held), describes an error object as "[object Object]", and splits its whole pending text again on
 * every read (quadratic in a long line). Here: lines end at LF, a blank line is skipped, a line that is not a JSON object fails the
 * stream whatever the content type says, a line with an `error` fails it with the error's text (an
 * object's `message`), the stream ends at the line with `done: true` (the body is cancelled), and
 * every read is heard by `onRead` (activity for the idle timeout). A body that ends before the `done`
 * line just ends, inside a line too (see `lastLine`): the decoder calls that a cut.
 */
async function* ollamaLines(reply: Response | undefined, onRead: () => void): AsyncGenerator<ChatResponse> {
  const reader = reply?.body?.getReader()
  if (reader === undefined) throw new Error("Missing body")
  const decoder = new TextDecoder()
  // The start of the line being read, from earlier reads: joined once, at its end.
  let pieces: Array<string> = []
  try {
    while (true) {
      const { done, value } = await reader.read()
      if (!done) onRead()
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true })
      let start = 0
      for (let lf = text.indexOf("\n"); lf !== -1; lf = text.indexOf("\n", start)) {
        let line = text.slice(start, lf)
        start = lf + 1
        if (pieces.length > 0) {
          pieces.push(line)
          line = pieces.join("")
          pieces = []
        }
        const chunk = chatLine(line)
        if (chunk === undefined) continue
        yield chunk
        if (chunk.done === true) return
      }
      if (start < text.length) pieces.push(start === 0 ? text : text.slice(start))
      if (done) {
        const chunk = lastLine(pieces.join(""))
        if (chunk !== undefined) yield chunk
        return
      }
    }
  } finally {
    // After `done: true` the server may keep the connection open: nothing more is read.
    reader.cancel().catch(() => {})
  }
}

/**
 * The body's last line, which has no LF: read as any line, unless it is the start of a JSON object that
 * the body's end cut off (`undefined`: the stream just ends, and the decoder calls it cut, retryable like
 * any cut stream). A last line that is not JSON at all (an HTML page) is still "not JSON".
 */
const lastLine = (line: string): ChatResponse | undefined => {
  if (line.trimStart().startsWith("{")) {
    try {
      JSON.parse(line)
    } catch {
      return undefined
    }
  }
  return chatLine(line)
}

/** One line of the stream: `undefined` when blank; a line that is not a JSON object, or holds an `error`, throws. */
const chatLine = (line: string): ChatResponse | undefined => {
  if (line.trim() === "") return undefined
  const shown = () => JSON.stringify(line.length > maxLineShown ? `${line.slice(0, maxLineShown)}…` : line)
  let parsed: unknown
  try {
    parsed = JSON.parse(line)
  } catch {
    throw new Error(`a line of the stream is not JSON: ${shown()}`)
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error(`a line of the stream is not a JSON object: ${shown()}`)
  if ("error" in parsed) throw new Error(describeErrorBody((parsed as { error: unknown }).error, "the stream reported an error"))
  return parsed as ChatResponse
}

const toModelError = (failure: unknown): ModelError => {
  const cause = failure instanceof WithHeaders ? failure.cause : failure
  const headers = failure instanceof WithHeaders ? failure.headers : undefined
  const status = typeof cause === "object" && cause !== null && "status_code" in cause ? Number(cause.status_code) : undefined
  if (status !== undefined && Number.isFinite(status)) {
    const advice = retryAdvice(headers)
    const body = (cause as { error?: unknown }).error
    const code = typeof body === "object" && body !== null ? (body as { code?: unknown; type?: unknown }).code ?? (body as { type?: unknown }).type : undefined
    return new ModelError({
      provider,
      reason: describeErrorBody(body, cause),
      status,
      retryable: shouldRetryStatus(status, advice, typeof code === "string" ? code : undefined),
      ...(advice.retryAfterMs === undefined ? {} : { retryAfterMs: advice.retryAfterMs }),
      cause
    })
  }
  if (cause instanceof SyntaxError) {
    return new ModelError({ provider, reason: `the response body is not valid JSON: ${cause.message}`, retryable: false, cause })
  }
  if (cause instanceof TypeError && (isConnectionFailure(cause) || cause.message === "fetch failed")) {
    // fetch reports refused connections, resets and DNS failures as TypeError("fetch failed").
    return new ModelError({ provider, reason: `connection failed: ${describeCause(cause.cause ?? cause)}`, retryable: true, cause })
  }
  return new ModelError({ provider, reason: describeCause(cause), retryable: false, cause })
}

/** The SDK's `error` is the body's `error` field: a string, or an object (from proxies and gateways). */
const describeErrorBody = (body: unknown, cause: unknown): string => {
  if (typeof body === "string") return body
  if (typeof body === "object" && body !== null) {
    const message = (body as { message?: unknown }).message
    return typeof message === "string" ? message : describeCause(body)
  }
  return describeCause(cause)
}
