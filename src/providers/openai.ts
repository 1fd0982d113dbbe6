/**
 * OpenAI Chat Completions on the official `openai` SDK. Works with any OpenAI-compatible server
 * (vLLM, llama.cpp, LM Studio, Ollama's /v1, gateways) through `baseURL`.
 */
import { assembleResponse } from "./assemble-response.ts"
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type OpenAI from "openai"
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolChoiceOption
} from "openai/resources/chat/completions"
import { AgentConfigError, ModelError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { isRecord } from "../internal/is-record.ts"
import { shownValue } from "../internal/shown-value.ts"
import { lazyPackage } from "../internal/lazy-package.ts"
import { effectStream as stream } from "../internal/lazy-effect.ts"
import type {
  FinishReason,
  LlmMessage,
  LlmResponse,
  ModelRequest,
  ReasoningPart,
  ToolChoice,
  ToolDefinition,
  Usage
} from "../model/messages.ts"
import { metadataOf, type ModelClient } from "../model/model-client.ts"
import { checkFaultOptions } from "./check-fault-options.ts"
import { checkReply, unusableReply } from "./check-reply.ts"
import { errorBodyMessage } from "./error-body.ts"
import { replyBody } from "./reply-body.ts"
import { callName, normaliseCalls, type WireCall } from "./normalise-calls.ts"
import { innermostMessage, isConnectionFailure, isRetryableStatus, resilientCall, retryAdvice, shouldRetryStatus } from "./resilience.ts"
import { type ChunkDecoder, decodeChunk, resilientStream, type StreamingOptions } from "./resilient-stream.ts"
import { sseChunks } from "./sse-stream.ts"
import { type ResponsePart, responseInfoParts } from "../model/response-part.ts"


/** Options of {@link openai}. The SDK's own retries are off: retries and timeouts are Effect's. */
export interface OpenAiOptions extends StreamingOptions {
  /** Default: the SDK reads `OPENAI_API_KEY`. */
  readonly apiKey?: string | undefined
  /** Default: the SDK reads `OPENAI_BASE_URL`, else `https://api.openai.com/v1`. */
  readonly baseURL?: string | undefined
  readonly organization?: string | undefined
  /** Sampling temperature, unless a request sets its own. Leave it out for reasoning models (o1, o3, o4-mini, gpt-5). */
  readonly temperature?: number
  /** The output token limit, sent as `max_completion_tokens` (or `max_tokens`, see `maxTokensField`). */
  readonly maxTokens?: number
  /** `"max_tokens"` for OpenAI-compatible servers that ignore `max_completion_tokens`. Default `"max_completion_tokens"`. */
  readonly maxTokensField?: "max_completion_tokens" | "max_tokens"
  /** `reasoning_effort` for reasoning models. */
  readonly reasoningEffort?: "none" | "minimal" | "low" | "medium" | "high" | "xhigh"
  /** `parallel_tool_calls`. Default: `false` when a strict tool is sent (strict schemas hold only without it), else unset. */
  readonly parallelToolCalls?: boolean
  /** `seed`, for best-effort reproducible sampling. */
  readonly seed?: number
  /** `top_p` (nucleus sampling). */
  readonly topP?: number
  /** `stop` sequences. */
  readonly stop?: string | ReadonlyArray<string>
  /**
   * `true`: every tool is sent with `strict: true`; tools must then be built with `strict: true` so that
   * their schemas follow OpenAI's strict subset (others are refused before any HTTP call).
   * Default: each tool's own setting.
   */
  readonly strict?: boolean
  /** Extra headers on every request. */
  readonly headers?: Record<string, string>
}

const provider = "openai"

/** The SDK, loaded when the first `openai(...)` client is built. */
const sdk = lazyPackage<typeof import("openai")>("openai")

/**
 * A `ModelClient` for OpenAI Chat Completions.
 *
 * @example
 * ```ts
 * const model = openai("gpt-4o-mini", { temperature: 0 })
 * const local = openai("qwen2.5:7b", { baseURL: "http://localhost:11434/v1", apiKey: "unused" })
 * agent("calc").model(model)
 * ```
 */
export const openai = (model: string, options: OpenAiOptions = {}): ModelClient => {
  checkFaultOptions(`openai model "${model}"`, options)
  const client = openAiSdkClient(`openai model "${model}"`, options)
  return {
    metadata: metadataOf(provider, model, options.temperature, options.maxTokens),
    chat: (request) =>
      Effect.suspend(() => {
        const body = toOpenAiRequest(model, request, options)
        if (body instanceof ModelError) return Effect.fail(body)
        // The body is read inside the call, so that an error a server sends in a 200 (OpenRouter's
        // `{ error: { code, message } }`, with or without choices) is the same `ModelError` with the same
        // retry verdict as the same error inside a stream, or sent whole to a streamed request (`openAiSseChunks`).
        const call = (signal: AbortSignal) =>
          client.chat.completions.create(body, { signal }).then((reply) => {
            const completion = replyBody(provider, reply)
            if (completion instanceof ModelError) throw completion
            const error = errorInReply(completion)
            if (error !== undefined) throw error
            return completion
          })
        return resilientCall({ provider, model }, options, call, toModelError).pipe(
          Effect.flatMap((completion) => fromOpenAiResponse(completion as unknown as ChatCompletion))
        )
      }),
    // `stream: true` with usage in the last chunk; tool-call deltas are assembled by index.
    stream: (request) =>
      stream().suspend(() => {
        const body = toOpenAiRequest(model, request, options)
        if (body instanceof ModelError) return stream().fail(body)
        return resilientStream(
          { provider, model },
          options,
          (signal, onRead) =>
            client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }, { signal }).asResponse()
              .then((response) => openAiSseChunks<ChatCompletionChunk | StreamDone>(response, { onRead, done: streamDone })),
          toModelError,
          openAiChunkDecoder
        )
      })
  }
}

/**
 * Internal: a streamed OpenAI response's chunks as the SDK's `Stream` yields them, read by
 * ./sse-stream.ts instead of the SDK's generators (the SDK still sends the request and turns an HTTP
 * error into its `APIError`): each event's `data:` JSON, `data` with an `error` thrown as the SDK's
 * `APIError` (an `error` event too, for `thread.` events, which are yielded as `{ event, data }`),
 * invalid JSON a `SyntaxError`. `[DONE]` ends the stream (the SDK reads on, yielding nothing, until the
 * server closes the body; a server that keeps it open would leave a finished answer waiting for the
 * idle timeout), and so does a chunk `isLast` picks (the Responses API's `response.completed`, which
 * has no `[DONE]` after it). `done`, when given, is handed out for `[DONE]` (the SDK yields nothing for
 * it), so that a decoder can tell a stream that ended properly from one cut before its end.
 * `onRead` hears every piece of the body, and `errorReply` (by default {@link errorInReply}) reads a
 * body that is one JSON object instead of a stream (see `SseHooks`).
 *
 * @example
 * ```ts
 * client.chat.completions.create({ ...body, stream: true }, { signal }).asResponse().then((response) => openAiSseChunks<ChatCompletionChunk>(response))
 * ```
 */
export const openAiSseChunks = <C>(
  response: Response,
  options: {
    readonly onRead?: (() => void) | undefined
    readonly isLast?: ((chunk: C) => boolean) | undefined
    readonly done?: C | undefined
    readonly errorReply?: ((body: Record<string, unknown>) => unknown) | undefined
  } = {}
): AsyncIterable<C> => {
  const { APIError, OpenAIError } = sdk().default
  const { isLast, done } = options
  return sseChunks<C>(response, (sse, stop) => {
    if (sse.data.startsWith("[DONE]")) {
      stop()
      return done
    }
    const data = JSON.parse(sse.data)
    if (sse.event === null || !sse.event.startsWith("thread.")) {
      if (data?.error) throw new APIError(undefined, data.error, undefined, response.headers)
      if (isLast?.(data) === true) stop()
      return data
    }
    if (sse.event === "error") throw new APIError(undefined, data.error, data.message, undefined)
    return { event: sse.event, data } as C
  }, () => new OpenAIError("Attempted to iterate over a response with no body"), { onRead: options.onRead, errorReply: options.errorReply ?? errorInReply })
}

/**
 * Internal: the error a successful reply's body holds (OpenRouter's `{ error: { code, message } }`, with
 * or without choices), as the SDK's `APIError` of the same error inside a stream (no status: classified
 * by its `type` or `code`); `undefined` when its `error` is missing or `null`.
 *
 * @example
 * ```ts
 * errorInReply({ error: { code: 502, message: "upstream died" } }) // APIError "upstream died", retried by toModelError
 * ```
 */
export const errorInReply = (body: Record<string, unknown>): Error | undefined => {
  const error = body["error"]
  return error === undefined || error === null ? undefined : new (sdk().default.APIError)(undefined, error as object, undefined, undefined as never)
}

/** Internal: the chunk {@link openAiSseChunks} hands out for `[DONE]`, when asked to. */
export const streamDone = Object.freeze({ _tag: "[DONE]" as const })
type StreamDone = typeof streamDone

/**
 * Decodes Chat Completions chunks (`data:` lines of `chat.completion.chunk`): content, reasoning
 * (`reasoning_content`/`reasoning` of compatible servers) and refusal deltas; tool calls by `index`
 * (id and name in their first delta, then argument pieces); `finish_reason`; usage in the last chunk;
 * the completion's `id` and `model` (on every chunk) as one `ResponseInfo` part; `[DONE]`
 * ({@link streamDone}), the stream's proper end.
 * A stream that ends with neither a finish reason nor `[DONE]` was cut: a retryable `ModelError`. One
 * that ended with `[DONE]` but no finish reason (some OpenAI-compatible servers never send one) is
 * read as the same reply whole is, whose `finish_reason` is `null`.
 */
export const openAiChunkDecoder = (): ChunkDecoder<ChatCompletionChunk | StreamDone> => {
  /**
   * The call each wire `index` is streaming now, by the index of its parts. A delta at a started index
   * that names a tool and another id (or has no index at all) starts another call: servers that reuse
   * an index, or send none, would otherwise merge two calls into one.
   */
  const current = new Map<number | undefined, { readonly index: number; readonly id: string | undefined }>()
  /** Arguments that arrived before the call's name (some servers send them so). */
  const early = new Map<number | undefined, { id: string | undefined; arguments: string }>()
  let finish: string | null | undefined
  /** `[DONE]` came: the stream ended as its protocol ends it. */
  let ended = false
  /** Some chunk held a choice (a stream of none is a completion without choices). */
  let chose = false
  let usage: Usage | undefined
  let content = ""
  let refusal = ""
  let thinking = ""
  let calls = 0
  /** The calls (by the index of their parts) that got some argument text. */
  const argued = new Set<number>()
  let informed = false
  let infoId: unknown
  let infoModel: unknown
  /** Whether the chunk names another completion id or model than the last one said (JSON's sameness, string compares when both are strings). */
  const newInfo = (id: unknown, model: unknown): boolean => {
    const changed = !informed ||
      (typeof id === "string" && typeof model === "string"
        ? id !== infoId || model !== infoModel
        : JSON.stringify([id, model]) !== JSON.stringify([infoId, infoModel]))
    informed = true
    infoId = id
    infoModel = model
    return changed
  }
  return {
    chunk: (input) =>
      decodeChunk(
        () => {
          if (input === streamDone) {
            ended = true
            return []
          }
          const chunk = input as ChatCompletionChunk
          // Every chunk repeats the completion's id and model: said once, again only if it changes.
          const parts: Array<ResponsePart> = []
          if (newInfo(chunk.id, chunk.model)) parts.push(...responseInfoParts(chunk.id, chunk.model))
          const fromUsage = toUsage(chunk.usage)
          if (fromUsage !== undefined) usage = fromUsage
          const choice = chunk.choices?.[0]
          if (choice === undefined) return parts
          chose = true
          const delta = (choice.delta ?? {}) as ChatCompletionChunk.Choice.Delta & { reasoning_content?: unknown; reasoning?: unknown }
          const thought = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning
          if (typeof thought === "string" && thought !== "") {
            thinking += thought
            parts.push({ _tag: "ReasoningDelta", delta: thought })
          }
          if (typeof delta.content === "string" && delta.content !== "") {
            content += delta.content
            parts.push({ _tag: "TextDelta", delta: delta.content })
          }
          if (typeof delta.refusal === "string") refusal += delta.refusal
          for (const call of delta.tool_calls ?? []) {
            const wire = call.index as number | undefined
            const name = call.function?.name
            const raw = call.function?.arguments as unknown
            // Arguments as an object (some servers): serialised once, as a whole answer's are.
            const args = typeof raw === "string" ? raw : raw === undefined || raw === null ? "" : JSON.stringify(raw)
            const named = typeof name === "string" && name !== ""
            const open = current.get(wire)
            const another = open !== undefined && named && (wire === undefined || (typeof call.id === "string" && call.id !== "" && call.id !== open.id))
            if (open !== undefined && !another) {
              if (args !== "") {
                argued.add(open.index)
                parts.push({ _tag: "ToolCallDelta", index: open.index, delta: args })
              }
              continue
            }
            if (!named) {
              const pending = early.get(wire) ?? { id: undefined, arguments: "" }
              early.set(wire, { id: pending.id ?? call.id ?? undefined, arguments: pending.arguments + args })
              continue
            }
            const pending = early.get(wire)
            early.delete(wire)
            // Calls are numbered in the order they start: `calls` of them have started.
            const index = calls
            const id = call.id ?? pending?.id ?? undefined
            current.set(wire, { index, id })
            calls += 1
            parts.push({ _tag: "ToolCallStart", index, id, name })
            const text = (pending?.arguments ?? "") + args
            if (text !== "") {
              argued.add(index)
              parts.push({ _tag: "ToolCallDelta", index, delta: text })
            }
          }
          if (choice.finish_reason !== null && choice.finish_reason !== undefined) finish = choice.finish_reason
          return parts
        },
        (cause) => new ModelError({ provider, reason: `unexpected chunk shape: ${describeCause(cause)}`, retryable: false, cause })
      ),
    end: () =>
      Effect.gen(function*() {
        if ((finish === undefined || finish === null) && !ended) {
          return yield* new ModelError({ provider, reason: "the stream ended before the answer finished (no finish_reason, no [DONE])", retryable: true })
        }
        // As a whole completion without choices is.
        if (!chose) return yield* new ModelError({ provider, reason: "the completion has no choices", retryable: false })
        if (early.size > 0) {
          return yield* new ModelError({ provider, reason: "a streamed tool call never got a name", retryable: false })
        }
        const legacy = legacyCall(finish, calls, content, usage)
        if (legacy !== undefined) return yield* legacy
        const reasoning: Array<ReasoningPart> = thinking === "" ? [] : [{ _tag: "Thinking", text: thinking }]
        const finishReason = refusal !== "" ? "refusal" : toFinishReason(finish)
        yield* checkReply(provider, {
          finishReason,
          wireReason: refusal !== "" ? "refusal" : `finish_reason ${JSON.stringify(finish ?? null)}`,
          content: refusal !== "" ? refusal : content,
          calls,
          reasoning,
          usage
        })
        // A call that streamed no arguments has none: "{}", as `argumentsText` makes of a whole answer's.
        const parts: Array<ResponsePart> = []
        for (let index = 0; index < calls; index++) {
          if (!argued.has(index)) parts.push({ _tag: "ToolCallDelta", index, delta: "{}" })
          parts.push({ _tag: "ToolCallEnd", index })
        }
        if (usage !== undefined) parts.push({ _tag: "Usage", usage })
        parts.push({ _tag: "Finish", reason: finishReason })
        return parts
      })
  }
}

/** The options that shape a request body. */
type BodyOptions = Pick<
  OpenAiOptions,
  "temperature" | "maxTokens" | "maxTokensField" | "strict" | "reasoningEffort" | "parallelToolCalls" | "seed" | "topP" | "stop"
>

/** The Chat Completions request body for a provider-neutral request. */
export const toOpenAiRequest = (
  model: string,
  request: ModelRequest,
  options: BodyOptions = {}
): ChatCompletionCreateParamsNonStreaming | ModelError => {
  const tools: Array<ChatCompletionTool> = []
  for (const definition of request.tools) {
    if (options.strict === true && definition.strict !== true) {
      return new ModelError({
        provider,
        reason: `tool "${definition.name}" is not strict-compatible: build it with tool(..., { strict: true })`,
        retryable: false
      })
    }
    tools.push(toOpenAiTool(definition, options.strict))
  }
  const temperature = request.temperature ?? options.temperature
  const anyStrict = tools.some((t) => t.type === "function" && t.function.strict === true)
  const parallel = options.parallelToolCalls ?? (anyStrict ? false : undefined)
  const format = request.responseFormat
  return {
    model,
    messages: request.messages.map(toOpenAiMessage),
    ...(tools.length === 0 ? {} : { tools }),
    ...(request.toolChoice === undefined || tools.length === 0 ? {} : { tool_choice: toOpenAiToolChoice(request.toolChoice) }),
    ...(parallel === undefined || tools.length === 0 ? {} : { parallel_tool_calls: parallel }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(options.maxTokens === undefined ? {} : { [options.maxTokensField ?? "max_completion_tokens"]: options.maxTokens }),
    ...(options.reasoningEffort === undefined ? {} : { reasoning_effort: options.reasoningEffort }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.topP === undefined ? {} : { top_p: options.topP }),
    ...(options.stop === undefined ? {} : { stop: typeof options.stop === "string" ? options.stop : [...options.stop] }),
    ...(format === undefined
      ? {}
      : {
        response_format: {
          type: "json_schema" as const,
          json_schema: { name: format.name, schema: format.schema as Record<string, unknown>, strict: format.strict ?? true }
        }
      })
  }
}

const toOpenAiTool = (definition: ToolDefinition, strict: boolean | undefined): ChatCompletionTool => ({
  type: "function",
  function: {
    name: definition.name,
    ...(definition.description === undefined ? {} : { description: definition.description }),
    parameters: definition.parameters as Record<string, unknown>,
    ...(strict === false || definition.strict !== true ? {} : { strict: true })
  }
})

const toOpenAiToolChoice = (choice: ToolChoice): ChatCompletionToolChoiceOption =>
  typeof choice === "string" ? choice : { type: "function", function: { name: choice.tool } }

const toOpenAiMessage = (message: LlmMessage): ChatCompletionMessageParam => {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content }
    case "assistant":
      return message.toolCalls === undefined || message.toolCalls.length === 0
        ? { role: "assistant", content: message.content }
        : {
          role: "assistant",
          content: message.content === "" ? null : message.content,
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: "function" as const,
            function: { name: call.name, arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments) }
          }))
        }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content }
  }
}

/**
 * A message's `content` as text: a string, or an array of parts (Mistral's Magistral answers with
 * `[{ type: "text", text }, …]` through its OpenAI-compatible endpoint) whose text parts are joined;
 * absent or null is no text. Anything else is a `ModelError` saying so, never silently empty.
 */
const contentOf = (content: unknown): Effect.Effect<string, ModelError> => {
  if (typeof content === "string") return Effect.succeed(content)
  if (content === undefined || content === null) return Effect.succeed("")
  if (Array.isArray(content)) {
    const texts: Array<string> = []
    for (const part of content) {
      if (typeof part === "string") texts.push(part)
      else if (isRecord(part) && typeof part["text"] === "string" && (part["type"] === "text" || part["type"] === undefined)) texts.push(part["text"])
    }
    return Effect.succeed(texts.join(""))
  }
  return Effect.fail(new ModelError({ provider, reason: `unexpected response shape: the message's content is ${shownValue(content)}, not text`, retryable: false }))
}

/** The provider-neutral response for a Chat Completion. Arguments stay raw JSON strings. */
export const fromOpenAiResponse = (completion: ChatCompletion): Effect.Effect<LlmResponse, ModelError> =>
  Effect.gen(function*() {
    const choice = completion.choices?.[0]
    if (choice === undefined) return yield* new ModelError({ provider, reason: "the completion has no choices", retryable: false })
    const message = (choice.message ?? {}) as WireMessage
    const wire = yield* Effect.try({
      try: () => (message.tool_calls ?? []).map(wireCall),
      catch: (cause) => new ModelError({ provider, reason: `unexpected response shape: ${describeCause(cause)}`, retryable: false, cause })
    })
    const calls = yield* normaliseCalls(wire)
    const content = yield* contentOf(message.content)
    const thinking = typeof message.reasoning_content === "string" ? message.reasoning_content : message.reasoning
    const reasoning: Array<ReasoningPart> = typeof thinking === "string" && thinking !== "" ? [{ _tag: "Thinking", text: thinking }] : []
    const refusal = typeof message.refusal === "string" && message.refusal !== "" ? message.refusal : undefined
    const usage = toUsage(completion.usage)
    const legacy = legacyCall(choice.finish_reason, calls.length, content, usage)
    if (legacy !== undefined) return yield* legacy
    const finishReason = refusal !== undefined ? "refusal" : toFinishReason(choice.finish_reason)
    yield* checkReply(provider, {
      finishReason,
      wireReason: refusal !== undefined ? "refusal" : `finish_reason ${JSON.stringify(choice.finish_reason)}`,
      content: refusal ?? content,
      calls: calls.length,
      reasoning,
      usage
    })
    return assembleResponse({
      content,
      calls,
      usage,
      finishReason,
      reasoning,
      responseId: completion.id,
      responseModel: completion.model
    })
  })

/** A reply message as OpenAI-compatible servers send it: `type`, `id` and `content` may be missing. */
interface WireMessage {
  readonly content?: string | null
  readonly refusal?: string | null
  readonly reasoning_content?: unknown
  readonly reasoning?: unknown
  readonly tool_calls?: ReadonlyArray<unknown> | null
}

/**
 * One tool call. A missing `type` with a `function` is a function call (common outside OpenAI). A
 * custom (free-form) call is renamed `custom:<name>`, a name no tool can have, so the allowlist refuses
 * it instead of decoding its text as a function tool's arguments.
 */
const wireCall = (raw: unknown): WireCall => {
  const call = raw as { id?: string | null; type?: string; function?: { name: string; arguments?: unknown }; custom?: { name: string; input?: unknown } }
  if (call.type === "custom" && call.custom !== undefined) {
    return { id: call.id, name: `custom:${call.custom.name}`, arguments: call.custom.input ?? "" }
  }
  return { id: call.id, name: callName(call.function?.name, raw), arguments: call.function?.arguments }
}

/**
 * A reply that stopped for a legacy `function_call` (the API before `tools`) and holds no tool call: its
 * call is in a field that is not read, so the reply cannot be used (kind `malformed`, any text before the
 * call its `partial`), never an answer or an empty turn asked again. The same streamed and whole.
 */
const legacyCall = (finish: string | null | undefined, calls: number, content: string, usage: Usage | undefined): ModelError | undefined =>
  finish === "function_call" && calls === 0
    ? unusableReply(provider, "malformed", 'finish_reason "function_call": the legacy function_call field is not supported, use tools', content, usage)
    : undefined

const toFinishReason = (reason: string | null | undefined): FinishReason | undefined => {
  switch (reason) {
    case null:
    case undefined:
      return undefined
    case "stop":
      return "stop"
    case "tool_calls":
    case "function_call":
      return "tool-calls"
    case "length":
      return "length"
    case "content_filter":
      return "content-filter"
    default:
      return "other"
  }
}

const toUsage = (usage: ChatCompletion["usage"] | null | undefined): Usage | undefined => {
  if (usage === undefined || usage === null) return undefined
  const cached = usage.prompt_tokens_details?.cached_tokens
  const reasoning = usage.completion_tokens_details?.reasoning_tokens
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    ...(typeof cached === "number" ? { cachedInputTokens: cached } : {}),
    ...(typeof reasoning === "number" ? { reasoningTokens: reasoning } : {})
  }
}

/**
 * Internal: the SDK's client for `openai` and `openaiResponses`, with the SDK's own retries and
 * timeout off (Effect's apply); a refused option or a missing SDK is an `AgentConfigError` about `subject`.
 *
 * @example
 * ```ts
 * const client = openAiSdkClient(`openai model "gpt-4o-mini"`, { apiKey })
 * ```
 */
export const openAiSdkClient = (
  subject: string,
  options: { readonly apiKey?: string | undefined; readonly baseURL?: string | undefined; readonly organization?: string | undefined; readonly headers?: Record<string, string> }
): OpenAI => {
  try {
    return new (sdk().default)({
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
      ...(options.organization === undefined ? {} : { organization: options.organization }),
      ...(options.headers === undefined ? {} : { defaultHeaders: options.headers }),
      fetch: keepingErrorBodies,
      maxRetries: 0,
      timeout: 24 * 60 * 60 * 1000
    })
  } catch (error) {
    throw new AgentConfigError({ subject, reason: describeCause(error) })
  }
}

/**
 * The bodies of failed replies, by the reply's `Headers` (which the SDK's `APIError` keeps): the SDK
 * keeps only a body's `error` member, so a server that words its error otherwise (vLLM's
 * `{"object": "error", "message"}`, FastAPI's `{"detail"}`, a proxy's `{"message"}`) lost its message.
 */
const errorBodies = new WeakMap<Headers, string>()

/** The SDK's `fetch`: a failed reply's body is read from a copy and kept (the SDK reads the reply itself, unchanged). */
const keepingErrorBodies = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await fetch(input, init)
  if (!response.ok && response.body !== null) {
    try {
      errorBodies.set(response.headers, await response.clone().text())
    } catch {
      // The SDK's own read fails the same way and says so.
    }
  }
  return response
}

/**
 * A failed reply's reason: the server's message from its body (see ./error-body.ts) after the status,
 * as the SDK words it; the SDK's own wording when the body says nothing more (it reads `error.message`).
 */
const httpReason = (cause: { readonly status: number; readonly message: string; readonly headers?: Headers | undefined; readonly error?: unknown }): string => {
  const body = cause.headers === undefined ? undefined : errorBodies.get(cause.headers)
  if (body === undefined || isRecord(cause.error)) return cause.message
  const message = errorBodyMessage(body)
  return message === undefined ? cause.message : `${cause.status} ${message}`
}

/**
 * Internal: the \`ModelError\` for anything the \`openai\` SDK throws (shared with \`openaiResponses\`).
 *
 * @example
 * \`\`\`ts
 * toModelError(new OpenAI.APIConnectionError({ message: "refused" })) // retryable: true
 * \`\`\`
 */
export const toModelError = (cause: unknown): ModelError => {
  if (cause instanceof ModelError) return cause
  const OpenAI = sdk().default
  if (cause instanceof OpenAI.APIConnectionError) {
    return new ModelError({ provider, reason: `connection failed: ${innermostMessage(cause)}`, retryable: true, cause })
  }
  if (cause instanceof OpenAI.APIError && typeof cause.status === "number") {
    const advice = retryAdvice(cause.headers)
    const code = cause.code ?? cause.type ?? undefined
    return new ModelError({
      provider,
      reason: httpReason(cause),
      status: cause.status,
      retryable: shouldRetryStatus(cause.status, advice, code ?? undefined),
      ...(advice.retryAfterMs === undefined ? {} : { retryAfterMs: advice.retryAfterMs }),
      cause
    })
  }
  if (cause instanceof OpenAI.APIError && cause.status === undefined && !(cause instanceof OpenAI.APIUserAbortError)) {
    // An error event inside the stream: no HTTP status or headers, classified by its type or code.
    return new ModelError({ provider, reason: cause.message, retryable: isTransientStreamError(cause.error), cause })
  }
  if (cause instanceof SyntaxError) {
    return new ModelError({ provider, reason: `the response body is not valid JSON: ${cause.message}`, retryable: false, cause })
  }
  if (isConnectionFailure(cause)) {
    return new ModelError({ provider, reason: `connection failed: ${describeCause((cause as Error).cause ?? cause)}`, retryable: true, cause })
  }
  return new ModelError({ provider, reason: describeCause(cause), retryable: false, cause })
}

/**
 * Error types and codes that say waiting may help: OpenAI's (`too_many_requests` is the type and code of
 * the Responses API's error event for a 429, openai/openai-dotnet#881), and the names gateways pass on
 * from Anthropic.
 */
const transientErrors: ReadonlySet<unknown> = new Set(["server_error", "rate_limit_exceeded", "too_many_requests", "rate_limit_error", "overloaded_error"])

/**
 * Internal: whether an error inside a stream (a Chat Completions `data: {"error": …}` event, a Responses
 * `error` event or failed response), which has no HTTP status or headers of its own, is worth another
 * attempt: its `type` or `code` names a server error or a rate limit (`server_error`,
 * `rate_limit_exceeded`, `too_many_requests`, `rate_limit_error`, `overloaded_error`), or its numeric `code` or `status` (as
 * OpenRouter and vLLM send) is a retryable HTTP status. `insufficient_quota` never is. The stream is
 * retried only while no content reached the caller, as for any failure.
 *
 * @example
 * ```ts
 * isTransientStreamError({ type: "server_error", message: "boom" }) // true
 * isTransientStreamError({ code: 502, message: "upstream" }) // true
 * ```
 */
export const isTransientStreamError = (error: unknown): boolean => {
  if (typeof error !== "object" || error === null) return false
  const { type, code, status } = error as { readonly type?: unknown; readonly code?: unknown; readonly status?: unknown }
  if (code === "insufficient_quota" || type === "insufficient_quota") return false
  if (transientErrors.has(type) || transientErrors.has(code)) return true
  for (const value of [code, status]) {
    const number = typeof value === "number" ? value : typeof value === "string" && /^\d{3}$/.test(value) ? Number(value) : undefined
    if (number !== undefined && Number.isInteger(number)) return isRetryableStatus(number)
  }
  return false
}
