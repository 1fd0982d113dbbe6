/**
 * Anthropic's Messages API on the official `@anthropic-ai/sdk`. System messages go to the top-level
 * `system`; tools are `{ name, description, input_schema }`; the model's calls are `tool_use` blocks
 * (arguments as objects, handed to the loop as JSON text) and results go back as `tool_result` blocks
 * in a user message. Extended thinking (`thinkingBudget`) returns signed `thinking` blocks that are
 * sent back, unchanged and first, on the next turn, as the API requires during tool use. `stream`
 * uses the Messages stream (`stream: true`, see ./anthropic-stream.ts).
 */
import { assembleResponse } from "./assemble-response.ts"
import type Anthropic from "@anthropic-ai/sdk"
import * as Effect from "effect/Effect"
import { AgentConfigError, ModelError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { lazyPackage } from "../internal/lazy-package.ts"
import type { LlmMessage, LlmResponse, ModelRequest, ReasoningPart, ToolChoice } from "../model/messages.ts"
import { metadataOf, type ModelClient } from "../model/model-client.ts"
import { checkFaultOptions } from "./check-fault-options.ts"
import { checkReply } from "./check-reply.ts"
import { argumentsText, callName, normaliseCalls } from "./normalise-calls.ts"
import { innermostMessage, isConnectionFailure, resilientCall, retryAdvice, shouldRetryStatus } from "./resilience.ts"
import { replyBody } from "./reply-body.ts"
import { errorBodyMessage } from "./error-body.ts"
import { effectStream as stream } from "../internal/lazy-effect.ts"
import { anthropicEventDecoder, statusOfErrorType, toAnthropicFinishReason as toFinishReason, toAnthropicUsage as toUsage } from "./anthropic-stream.ts"
import { resilientStream, type StreamingOptions } from "./resilient-stream.ts"
import { sseChunks } from "./sse-stream.ts"

type Params = Anthropic.Messages.MessageCreateParamsNonStreaming
type MessageParam = Anthropic.Messages.MessageParam
type Block = Anthropic.Messages.ContentBlockParam

/** Options of {@link anthropic}. The SDK's own retries are off: retries and timeouts are Effect's. */
export interface AnthropicOptions extends StreamingOptions {
  /** Default: the SDK reads `ANTHROPIC_API_KEY`. */
  readonly apiKey?: string | undefined
  /** Default: the SDK reads `ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`. */
  readonly baseURL?: string | undefined
  /** `max_tokens` (required by the API). Default 4096, raised above `thinkingBudget` when that is set. */
  readonly maxTokens?: number
  /** Sampling temperature, unless a request sets its own. Not sent with thinking (the API requires its default). */
  readonly temperature?: number
  /** `top_p`. */
  readonly topP?: number
  /** `top_k`. */
  readonly topK?: number
  /** `stop_sequences`. */
  readonly stop?: ReadonlyArray<string>
  /** Extended thinking: `thinking: { type: "enabled", budget_tokens }` (at least 1024). */
  readonly thinkingBudget?: number
  /** Sent with a tool choice: `disable_parallel_tool_use` (one call per turn). */
  readonly disableParallelToolUse?: boolean
  /** Extra headers on every request (`anthropic-beta`, …). */
  readonly headers?: Record<string, string>
}

const provider = "anthropic"

/** The SDK, loaded when the first `anthropic(...)` client is built. */
const sdk = lazyPackage<typeof import("@anthropic-ai/sdk")>("@anthropic-ai/sdk")

/**
 * A `ModelClient` for Anthropic's Messages API.
 *
 * @example
 * ```ts
 * const model = anthropic("claude-sonnet-5-5", { maxTokens: 2048 })
 * const thinker = anthropic("claude-sonnet-5-5", { thinkingBudget: 4000 })
 * agent("calc").model(model)
 * ```
 */
export const anthropic = (model: string, options: AnthropicOptions = {}): ModelClient => {
  checkFaultOptions(`anthropic model "${model}"`, options)
  let client: Anthropic
  try {
    client = new (sdk().default)({
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
      ...(options.headers === undefined ? {} : { defaultHeaders: options.headers }),
      maxRetries: 0,
      timeout: 24 * 60 * 60 * 1000
    })
  } catch (error) {
    throw new AgentConfigError({ subject: `anthropic model "${model}"`, reason: describeCause(error) })
  }
  return {
    metadata: metadataOf(provider, model, options.temperature, options.maxTokens ?? defaultMaxTokens),
    chat: (request) =>
      Effect.suspend(() => {
        const body = toAnthropicRequest(model, request, options)
        // JSON labelled `text/plain` arrives as text: read it, or say the body is not a reply. An error sent
        // with a 200 fails the call inside it, so that its retry verdict is honoured.
        const call = (signal: AbortSignal) =>
          client.messages.create(body, { signal }).then((reply) => {
            const message = replyBody(provider, reply)
            if (message instanceof ModelError) throw message
            const error = errorInReply(message)
            if (error !== undefined) throw error
            return message
          })
        return resilientCall({ provider, model }, options, call, toModelError).pipe(
          Effect.flatMap((message) => fromAnthropicResponse(message as unknown as Anthropic.Messages.Message))
        )
      }),
    // The Messages stream: text, thinking and tool-argument deltas as they arrive, usage at message_start and message_delta.
    stream: (request) =>
      stream().suspend(() => {
        const body = toAnthropicRequest(model, request, options)
        return resilientStream(
          { provider, model },
          options,
          (signal, onRead) =>
            client.messages.create({ ...body, stream: true }, { signal }).asResponse().then((response) => anthropicSseChunks(response, onRead)),
          toModelError,
          anthropicEventDecoder
        )
      })
  }
}

type StreamEvent = Anthropic.Messages.RawMessageStreamEvent

/**
 * A Messages stream's events as the SDK's `Stream` yields them, read by ./sse-stream.ts instead of the
 * SDK's generators (the SDK still sends the request and turns an HTTP error into its `APIError`): `ping`
 * and unnamed events skipped, an `error` event thrown as the SDK's `APIError` with its `error.type`,
 * each other event's data parsed (invalid JSON a `SyntaxError`). Every byte that arrives is heard by
 * `onRead` (a `ping` or a piece of a long event is activity for the idle timeout), and the stream ends
 * at `message_stop`, without waiting for the server to close the body. An error sent whole instead of a
 * stream is the error the whole call reads in it ({@link errorInReply}).
 */
const anthropicSseChunks = (response: Response, onRead: () => void): AsyncIterable<StreamEvent> => {
  const { APIError, AnthropicError } = sdk()
  return sseChunks<StreamEvent>(response, (sse, stop) => {
    if (sse.event === "ping" || sse.event === null) return undefined
    if (sse.event === "error") {
      let body: unknown
      try {
        body = JSON.parse(sse.data)
      } catch {
        // the SDK keeps the text as it came
      }
      body ??= sse.data
      const type = (body as { error?: { type?: unknown } } | null)?.error?.type
      throw new APIError(undefined, body as object, undefined, response.headers, typeof type === "string" ? type as never : undefined)
    }
    if (sse.data === "") return undefined
    const event = JSON.parse(sse.data) as StreamEvent
    if (sse.event === "message_stop") stop()
    return event
  }, () => new AnthropicError("Attempted to iterate over a response with no body"), { onRead, errorReply: errorInReply })
}

/**
 * The error a successful reply's body holds instead of a message (Anthropic's `{ type: "error", error:
 * { type, message } }`, a gateway's `{ error }`), whole or sent whole to a streamed request: classified
 * by its `error.type` as an `error` event is; `undefined` for any other reply.
 */
const errorInReply = (body: Record<string, unknown>): ModelError | undefined => {
  if (body["error"] === undefined || body["error"] === null) return undefined
  return typedError(body, reasonOf({ message: JSON.stringify(body), error: body }), "in the reply", undefined)
}

const defaultMaxTokens = 4096

/**
 * The Messages request body. Tool choice: `auto`, `any` (for `"required"`), `none`, or
 * `{ type: "tool", name }`. With thinking, the API accepts only `auto` and `none`: a forced choice is
 * sent as `auto` and the model is told which tool to call.
 *
 * @example
 * ```ts
 * const body = toAnthropicRequest("claude-sonnet-5-5", { messages, tools: [add.definition], toolChoice: "required" })
 * // body.tool_choice: { type: "any" }
 * ```
 */
export const toAnthropicRequest = (
  model: string,
  request: ModelRequest,
  options: Omit<AnthropicOptions, "apiKey" | "baseURL" | "headers" | keyof StreamingOptions> = {}
): Params => {
  const system = request.messages.flatMap((m) => (m.role === "system" ? [m.content] : []))
  const thinking = options.thinkingBudget
  let choice = request.toolChoice
  if (thinking !== undefined && typeof choice === "object") {
    system.push(`Call the tool "${choice.tool}" now.`)
    choice = "auto"
  } else if (thinking !== undefined && choice === "required") {
    system.push("Call one of the tools now.")
    choice = "auto"
  }
  const requested = options.maxTokens ?? defaultMaxTokens
  const maxTokens = thinking !== undefined && requested <= thinking ? thinking + defaultMaxTokens : requested
  const temperature = request.temperature ?? options.temperature
  const tools = request.tools.map((t) => ({
    name: t.name,
    ...(t.description === undefined ? {} : { description: t.description }),
    input_schema: t.parameters as Anthropic.Messages.Tool["input_schema"]
  }))
  return {
    model,
    max_tokens: maxTokens,
    messages: toAnthropicMessages(request.messages),
    ...(system.length === 0 ? {} : { system: system.join("\n\n") }),
    ...(tools.length === 0 ? {} : { tools }),
    ...(choice === undefined || tools.length === 0 ? {} : { tool_choice: toToolChoice(choice, options.disableParallelToolUse) }),
    ...(thinking === undefined ? {} : { thinking: { type: "enabled" as const, budget_tokens: thinking } }),
    ...(temperature === undefined || thinking !== undefined ? {} : { temperature }),
    ...(options.topP === undefined ? {} : { top_p: options.topP }),
    ...(options.topK === undefined ? {} : { top_k: options.topK }),
    ...(options.stop === undefined ? {} : { stop_sequences: [...options.stop] })
  }
}

const toToolChoice = (choice: ToolChoice, disableParallel: boolean | undefined): Anthropic.Messages.ToolChoice => {
  const parallel = disableParallel === undefined ? {} : { disable_parallel_tool_use: disableParallel }
  if (choice === "none") return { type: "none" }
  if (choice === "auto") return { type: "auto", ...parallel }
  if (choice === "required") return { type: "any", ...parallel }
  return { type: "tool", name: choice.tool, ...parallel }
}

/**
 * The conversation without system messages. Consecutive tool results become one user message of
 * `tool_result` blocks (the API wants every result of a turn in the next user message).
 */
const toAnthropicMessages = (messages: ReadonlyArray<LlmMessage>): Array<MessageParam> => {
  const out: Array<MessageParam> = []
  for (const message of messages) {
    switch (message.role) {
      case "system":
        break
      case "user":
        out.push({ role: "user", content: message.content })
        break
      case "assistant": {
        // Another provider's reasoning (signed `gemini:…` or `openai-responses:…`, after a fallback) is not
        // sent: Anthropic would refuse its signature. Anthropic's own signatures are base64, without a colon.
        const blocks: Array<Block> = (message.reasoning ?? []).flatMap((part): Array<Block> =>
          part._tag === "Thinking"
            ? (part.signature ?? "").includes(":") ? [] : [{ type: "thinking", thinking: part.text, signature: part.signature ?? "" }]
            : [{ type: "redacted_thinking", data: part.data }]
        )
        if (message.content !== "") blocks.push({ type: "text", text: message.content })
        for (const call of message.toolCalls ?? []) {
          blocks.push({ type: "tool_use", id: call.id, name: call.name, input: argumentsObject(call.arguments) })
        }
        out.push({ role: "assistant", content: blocks.length === 0 ? "" : blocks })
        break
      }
      case "tool": {
        const block: Block = { type: "tool_result", tool_use_id: message.toolCallId, content: message.content }
        const last = out.at(-1)
        if (last !== undefined && last.role === "user" && Array.isArray(last.content) && last.content.every((b) => b.type === "tool_result")) {
          last.content.push(block)
        } else {
          out.push({ role: "user", content: [block] })
        }
        break
      }
    }
  }
  return out
}

const argumentsObject = (raw: unknown): Record<string, unknown> => {
  try {
    const value = typeof raw === "string" ? JSON.parse(raw === "" ? "{}" : raw) : raw
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : { _raw: value }
  } catch {
    return { _raw: raw }
  }
}

/**
 * The provider-neutral response for a Messages reply.
 *
 * @example
 * ```ts
 * const response = yield* fromAnthropicResponse(message) // { _tag: "ToolCalls", calls: [{ id: "toolu_1", name: "add", arguments: '{"a":1}' }] }
 * ```
 */
export const fromAnthropicResponse = (message: Anthropic.Messages.Message): Effect.Effect<LlmResponse, ModelError> =>
  Effect.gen(function*() {
    if (typeof message !== "object" || message === null || !Array.isArray(message.content)) {
      return yield* new ModelError({ provider, reason: "unexpected response shape: the reply has no content", retryable: false })
    }
    const texts: Array<string> = []
    const reasoning: Array<ReasoningPart> = []
    const wire: Array<{ id: string; name: string; arguments: unknown }> = []
    for (const block of message.content) {
      if (typeof block !== "object" || block === null) {
        return yield* new ModelError({ provider, reason: `unexpected response shape: a content block is ${JSON.stringify(block) ?? "undefined"}`, retryable: false })
      }
      if (block.type === "text") texts.push(String(block.text ?? ""))
      else if (block.type === "thinking") reasoning.push({ _tag: "Thinking", text: String(block.thinking ?? ""), signature: String(block.signature ?? "") })
      else if (block.type === "redacted_thinking") reasoning.push({ _tag: "Redacted", data: String(block.data ?? "") })
      else if (block.type === "tool_use") {
        const name = yield* Effect.try({
          try: () => callName(block.name, block),
          catch: (cause) => new ModelError({ provider, reason: `unexpected response shape: ${describeCause(cause)}`, retryable: false, cause })
        })
        wire.push({ id: block.id, name, arguments: argumentsText(block.input) })
      }
    }
    const calls = yield* normaliseCalls(wire)
    const content = texts.join("")
    const finishReason = toFinishReason(message.stop_reason)
    const usage = toUsage(message.usage)
    yield* checkReply(provider, {
      finishReason,
      wireReason: `stop_reason ${JSON.stringify(message.stop_reason)}`,
      content,
      calls: calls.length,
      reasoning,
      usage
    })
    return assembleResponse({ content, calls, usage, finishReason, reasoning, responseId: message.id, responseModel: message.model })
  })

/**
 * A failed reply's or an error event's message: the server's, read from its body whatever its shape
 * (Anthropic's `{ error: { message } }`, a gateway's `{ error }`, `{ message }`, FastAPI's `detail`, an
 * HTML page without its tags: ./error-body.ts), else the SDK's wording. Always text: a `message` of
 * another kind in the body is not the reason.
 */
const reasonOf = (cause: { readonly message: string; readonly error?: unknown }): string => {
  const body = cause.error
  // Without a JSON body the SDK keeps the text in its message, after the status.
  const raw = body === undefined || body === null ? cause.message.replace(/^\d{3} /, "") : typeof body === "string" ? body : JSON.stringify(body)
  return errorBodyMessage(raw) ?? cause.message
}

/**
 * The `ModelError` of an Anthropic error object met where an event or a message was expected (`where`):
 * it has no HTTP status, so it is classified by its `error.type` (`overloaded_error`, `api_error`,
 * `rate_limit_error` and `timeout_error` are retried).
 */
const typedError = (body: unknown, message: string, where: string, cause: unknown): ModelError => {
  const type = (body as { error?: { type?: unknown } } | null | undefined)?.error?.type
  const named = typeof type === "string" ? type : undefined
  const status = statusOfErrorType(named)
  return new ModelError({
    provider,
    reason: `${named ?? "error"} ${where}: ${message}`,
    retryable: status !== undefined && shouldRetryStatus(status, {}, named),
    ...(cause === undefined ? {} : { cause })
  })
}

const toModelError = (cause: unknown): ModelError => {
  if (cause instanceof ModelError) return cause
  const Anthropic = sdk().default
  if (cause instanceof Anthropic.APIConnectionError) {
    return new ModelError({ provider, reason: `connection failed: ${innermostMessage(cause)}`, retryable: true, cause })
  }
  if (cause instanceof Anthropic.APIError && typeof cause.status === "number") {
    const advice = retryAdvice(cause.headers)
    const body = cause.error as { error?: { type?: string; message?: string } } | undefined
    return new ModelError({
      provider,
      reason: reasonOf(cause),
      status: cause.status,
      retryable: shouldRetryStatus(cause.status, advice, body?.error?.type),
      ...(advice.retryAfterMs === undefined ? {} : { retryAfterMs: advice.retryAfterMs }),
      cause
    })
  }
  if (cause instanceof Anthropic.APIError && cause.status === undefined && !(cause instanceof Anthropic.APIUserAbortError)) {
    // An `error` event mid-stream (overloaded_error, api_error, ...): no HTTP status, classified by its type.
    return typedError(cause.error, reasonOf(cause), "event in the stream", cause)
  }
  if (cause instanceof SyntaxError) {
    return new ModelError({ provider, reason: `the response body is not valid JSON: ${cause.message}`, retryable: false, cause })
  }
  if (isConnectionFailure(cause)) {
    return new ModelError({ provider, reason: `connection failed: ${describeCause((cause as Error).cause ?? cause)}`, retryable: true, cause })
  }
  return new ModelError({ provider, reason: describeCause(cause), retryable: false, cause })
}
