/**
 * Ollama's native `/api/chat` (non-streaming) on the official `ollama` SDK. Tool-call arguments
 * arrive as objects; tool results go back with `tool_name`.
 */
import { Effect } from "effect"
import { type ChatRequest, type ChatResponse, type Message, Ollama, type Tool } from "ollama"
import { describeCause } from "../internal/describe-cause.ts"
import { ModelError } from "../model/model-error.ts"
import type { LlmMessage, LlmResponse, ModelRequest, ToolCall, ToolDefinition } from "../model/messages.ts"
import { argumentsText, assignedCallId } from "../model/normalize-response.ts"
import type { ModelClient } from "../model/model-client.ts"
import { isRetryableStatus, type ResilienceOptions, resilientCall } from "./resilience.ts"

/** Options of {@link ollama}. */
export interface OllamaOptions extends ResilienceOptions {
  /** A host name (default `localhost`), `host:port`, or a URL such as `http://gpu-box:11434`. */
  readonly host?: string
  /** Used with a bare host name. Default 11434. */
  readonly port?: number
  /** Sent as `options.temperature`, unless a request sets its own. */
  readonly temperature?: number
  /** Extra headers on every request. */
  readonly headers?: Record<string, string>
  /** How long the server keeps the model loaded after the call (`keep_alive`). */
  readonly keepAlive?: string | number
}

const provider = "ollama"

/**
 * A `ModelClient` for a local or remote Ollama server.
 *
 * @example
 * ```ts
 * const model = ollama("qwen2.5:7b", { temperature: 0.1 }) // http://localhost:11434
 * agent("calc").model(model)
 * ```
 */
export const ollama = (model: string, options: OllamaOptions = {}): ModelClient => {
  const host = ollamaHost(options)
  let answered = 0
  return {
    chat: (request) =>
      Effect.suspend(() => {
        const body = toOllamaRequest(model, request, options)
        return resilientCall(
          provider,
          options,
          (signal) => {
            // The SDK passes no signal to non-streaming requests; a per-call fetch adds ours.
            const client = new Ollama({
              host,
              ...(options.headers === undefined ? {} : { headers: options.headers }),
              fetch: (input, init) => fetch(input, { ...init, signal })
            })
            return client.chat({ ...body, stream: false })
          },
          toModelError
        ).pipe(Effect.flatMap((response) => fromOllamaResponse(response, ++answered)))
      })
  }
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
  options: Pick<OllamaOptions, "temperature" | "keepAlive"> = {}
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
  return {
    model,
    messages,
    stream: false,
    ...(definitions.length === 0 ? {} : { tools: definitions.map(toOllamaTool) }),
    ...(temperature === undefined ? {} : { options: { temperature } }),
    ...(options.keepAlive === undefined ? {} : { keep_alive: options.keepAlive })
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

const toOllamaMessage = (message: LlmMessage): Message => {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content }
    case "assistant":
      return message.toolCalls === undefined || message.toolCalls.length === 0
        ? { role: "assistant", content: message.content }
        : {
          role: "assistant",
          content: message.content,
          tool_calls: message.toolCalls.map((call) => ({ function: { name: call.name, arguments: argumentsObject(call.arguments) } }))
        }
    case "tool":
      return { role: "tool", content: message.content, tool_name: message.name }
  }
}

/** Ollama wants argument objects in the history; a JSON string (from another provider) is parsed. */
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
 * The provider-neutral response for an `/api/chat` reply, normalised here: argument objects become
 * JSON text once, and calls get ids (Ollama sends none) unique across this client's answers
 * (`callNumber` counts them).
 */
export const fromOllamaResponse = (response: ChatResponse, callNumber = 1): Effect.Effect<LlmResponse, ModelError> =>
  Effect.try({
    try: (): LlmResponse => {
      const message = response.message
      const usage = typeof response.prompt_eval_count === "number" && typeof response.eval_count === "number"
        ? { usage: { inputTokens: response.prompt_eval_count, outputTokens: response.eval_count } }
        : {}
      const calls: Array<ToolCall> = (message.tool_calls ?? []).map((call, index) => {
        const wireId = (call as { id?: unknown }).id
        const text = argumentsText(call.function.arguments)
        if (text._tag === "Failure") throw new Error(text.failure)
        return {
          id: typeof wireId === "string" && wireId !== "" ? wireId : assignedCallId(callNumber, index),
          name: call.function.name,
          arguments: text.success
        }
      })
      const content = message.content ?? ""
      if (calls.length > 0) return { _tag: "ToolCalls", calls, ...(content === "" ? {} : { content }), ...usage }
      return { _tag: "Text", content, ...usage }
    },
    catch: (cause) => new ModelError({ provider, reason: `unexpected response shape: ${describeCause(cause)}`, retryable: false, cause })
  })

const toModelError = (cause: unknown): ModelError => {
  const status = typeof cause === "object" && cause !== null && "status_code" in cause ? Number(cause.status_code) : undefined
  if (status !== undefined && Number.isFinite(status)) {
    return new ModelError({ provider, reason: describeCause(cause), status, retryable: isRetryableStatus(status), cause })
  }
  if (cause instanceof SyntaxError) {
    return new ModelError({ provider, reason: `the response body is not valid JSON: ${cause.message}`, retryable: false, cause })
  }
  if (cause instanceof TypeError) {
    // fetch reports refused connections, resets and DNS failures as TypeError("fetch failed").
    return new ModelError({ provider, reason: `connection failed: ${describeCause(cause.cause ?? cause)}`, retryable: true, cause })
  }
  return new ModelError({ provider, reason: describeCause(cause), retryable: false, cause })
}
