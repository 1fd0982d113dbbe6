/**
 * OpenAI Chat Completions on the official `openai` SDK. Works with any OpenAI-compatible server
 * (vLLM, llama.cpp, LM Studio, Ollama's /v1, gateways) through `baseURL`.
 */
import { Effect } from "effect"
import OpenAI from "openai"
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
  ChatCompletionToolChoiceOption
} from "openai/resources/chat/completions"
import { AgentConfigError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { ModelError } from "../model/model-error.ts"
import type { LlmMessage, LlmResponse, ModelRequest, ToolCall, ToolChoice, ToolDefinition } from "../model/messages.ts"
import type { ModelClient } from "../model/model-client.ts"
import { isRetryableStatus, type ResilienceOptions, resilientCall } from "./resilience.ts"

/** Options of {@link openai}. The SDK's own retries are off: retries and timeouts are Effect's. */
export interface OpenAiOptions extends ResilienceOptions {
  /** Default: the SDK reads `OPENAI_API_KEY`. */
  readonly apiKey?: string
  /** Default: the SDK reads `OPENAI_BASE_URL`, else `https://api.openai.com/v1`. */
  readonly baseURL?: string
  readonly organization?: string
  /** Sampling temperature, unless a request sets its own. */
  readonly temperature?: number
  /** Sent as `max_completion_tokens`. */
  readonly maxTokens?: number
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
  let client: OpenAI
  try {
    client = new OpenAI({
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
      ...(options.organization === undefined ? {} : { organization: options.organization }),
      ...(options.headers === undefined ? {} : { defaultHeaders: options.headers }),
      maxRetries: 0,
      timeout: 24 * 60 * 60 * 1000
    })
  } catch (error) {
    throw new AgentConfigError({ subject: `openai model "${model}"`, reason: describeCause(error) })
  }
  return {
    chat: (request) =>
      Effect.suspend(() => {
        const body = toOpenAiRequest(model, request, options)
        if (body instanceof ModelError) return Effect.fail(body)
        return resilientCall(provider, options, (signal) => client.chat.completions.create(body, { signal }), toModelError).pipe(
          Effect.flatMap(fromOpenAiResponse)
        )
      })
  }
}

/** The Chat Completions request body for a provider-neutral request. */
export const toOpenAiRequest = (
  model: string,
  request: ModelRequest,
  options: Pick<OpenAiOptions, "temperature" | "maxTokens" | "strict"> = {}
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
  return {
    model,
    messages: request.messages.map(toOpenAiMessage),
    ...(tools.length === 0 ? {} : { tools }),
    ...(request.toolChoice === undefined || tools.length === 0 ? {} : { tool_choice: toOpenAiToolChoice(request.toolChoice) }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(options.maxTokens === undefined ? {} : { max_completion_tokens: options.maxTokens })
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
            function: { name: call.name, arguments: call.arguments }
          }))
        }
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content }
  }
}

/** The provider-neutral response for a Chat Completion. Arguments stay raw JSON strings. */
export const fromOpenAiResponse = (completion: ChatCompletion): Effect.Effect<LlmResponse, ModelError> =>
  Effect.try({
    try: () => mapCompletion(completion),
    catch: (cause) =>
      cause instanceof ModelError
        ? cause
        : new ModelError({ provider, reason: `unexpected response shape: ${describeCause(cause)}`, retryable: false, cause })
  })

const mapCompletion = (completion: ChatCompletion): LlmResponse => {
  const choice = completion.choices?.[0]
  if (choice === undefined) throw new ModelError({ provider, reason: "the completion has no choices", retryable: false })
  const message = choice.message
  const usage = completion.usage === undefined || completion.usage === null
    ? {}
    : { usage: { inputTokens: completion.usage.prompt_tokens, outputTokens: completion.usage.completion_tokens } }
  const calls: Array<ToolCall> = (message.tool_calls ?? []).map((call) =>
    call.type === "function"
      ? { id: call.id, name: call.function.name, arguments: call.function.arguments }
      : { id: call.id, name: call.custom.name, arguments: call.custom.input }
  )
  const content = message.content ?? message.refusal ?? ""
  if (calls.length > 0) return { _tag: "ToolCalls", calls, ...(content === "" ? {} : { content }), ...usage }
  return { _tag: "Text", content, ...usage }
}

const toModelError = (cause: unknown): ModelError => {
  if (cause instanceof OpenAI.APIConnectionError) {
    return new ModelError({ provider, reason: `connection failed: ${cause.message}`, retryable: true, cause })
  }
  if (cause instanceof OpenAI.APIError && typeof cause.status === "number") {
    return new ModelError({ provider, reason: cause.message, status: cause.status, retryable: isRetryableStatus(cause.status), cause })
  }
  if (cause instanceof SyntaxError) {
    return new ModelError({ provider, reason: `the response body is not valid JSON: ${cause.message}`, retryable: false, cause })
  }
  return new ModelError({ provider, reason: describeCause(cause), retryable: false, cause })
}
