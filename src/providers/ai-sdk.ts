/**
 * Any Vercel AI SDK language model as a `ModelClient`, so the AI SDK's providers (`@ai-sdk/openai`,
 * `@ai-sdk/anthropic`, `@ai-sdk/google`, `@ai-sdk/mistral`, Bedrock, …) work here. It speaks the
 * provider specification of `@ai-sdk/provider` (`LanguageModelV4` of `ai` 7 and `@ai-sdk/*` 4.x,
 * `LanguageModelV3` of `ai` 6, `LanguageModelV2` of `ai` 5) through `doGenerate`, and `doStream` for
 * streamed runs (./ai-sdk-stream.ts) when the model has it, with this library's retries and timeouts
 * around them and the model's `abortSignal` wired to interruption.
 *
 * The model is typed by the members used here ({@link AiSdkLanguageModel}), not by one version of
 * `@ai-sdk/provider`: that package is not a dependency of ours, so every version's models type-check
 * and none needs installing beside the user's own AI SDK provider.
 */
import { assembleResponse } from "./assemble-response.ts"
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Message,
  LanguageModelV3ToolChoice
} from "@ai-sdk/provider"
import * as Effect from "effect/Effect"
import { ModelError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import type { FinishReason, LlmMessage, LlmResponse, ModelRequest, ReasoningPart, ToolChoice, Usage } from "../model/messages.ts"
import { metadataOf, type ModelClient } from "../model/model-client.ts"
import { checkFaultOptions } from "./check-fault-options.ts"
import { checkReply } from "./check-reply.ts"
import { argumentsText, callName, normaliseCalls } from "./normalise-calls.ts"
import { isConnectionFailure, resilientCall, retryAdvice, shouldRetryStatus } from "./resilience.ts"
import { effectStream as stream } from "../internal/lazy-effect.ts"
import { type AiSdkStreamPart, aiSdkPartDecoder } from "./ai-sdk-stream.ts"
import { resilientStream, type StreamingOptions } from "./resilient-stream.ts"

/** Options of {@link fromAiSdk}. */
export interface AiSdkOptions extends StreamingOptions {
  /** Sampling temperature, unless a request sets its own. */
  readonly temperature?: number
  /** `maxOutputTokens`. */
  readonly maxOutputTokens?: number
  readonly topP?: number
  readonly topK?: number
  readonly seed?: number
  readonly stopSequences?: ReadonlyArray<string>
  /** Provider-specific options, passed as they are (`{ openai: { reasoningEffort: "low" } }`). */
  readonly providerOptions?: Record<string, Record<string, unknown>>
  /** Extra headers on every call. */
  readonly headers?: Record<string, string>
}

/**
 * The OpenTelemetry GenAI provider name of an AI SDK model's `provider` ("openai.chat" → "openai",
 * "google.generative-ai" → "gcp.gemini"); a provider the conventions do not list keeps its own name.
 */
const genAiProviderName = (sdkProvider: string): string => {
  if (sdkProvider.startsWith("google.vertex")) return "gcp.vertex_ai"
  const head = sdkProvider.split(".")[0] ?? sdkProvider
  return genAiProviderNames[head] ?? head
}

const genAiProviderNames: Record<string, string> = {
  google: "gcp.gemini",
  "amazon-bedrock": "aws.bedrock",
  bedrock: "aws.bedrock",
  azure: "azure.ai.openai",
  mistral: "mistral_ai",
  xai: "x_ai"
}

/**
 * An AI SDK language model of any specification version (`LanguageModelV2`, `V3`, `V4`), described by
 * the members {@link fromAiSdk} uses. The call options are written as `never` so that a model of any
 * version (each with its own call options type) is accepted; the adapter sends options every version
 * reads (prompt, tools, tool choice, sampling settings, abort signal).
 *
 * @example
 * ```ts
 * import { createOpenAI } from "@ai-sdk/openai"
 * const model: AiSdkLanguageModel = createOpenAI({ apiKey })("gpt-4o-mini")
 * ```
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: "v2" | "v3" | "v4"
  readonly provider: string
  readonly modelId: string
  doGenerate(options: never): PromiseLike<unknown>
  /** Streams the answer (`{ stream: ReadableStream<StreamPart> }`); without it, streamed runs adapt `doGenerate`. */
  doStream?(options: never): PromiseLike<unknown>
}

/**
 * Wraps an AI SDK language model.
 *
 * @example
 * ```ts
 * import { createOpenAI } from "@ai-sdk/openai"
 * const model = fromAiSdk(createOpenAI({ apiKey })("gpt-4o-mini"), { temperature: 0 })
 * agent("calc").model(model)
 * ```
 */
export const fromAiSdk = (model: AiSdkLanguageModel, options: AiSdkOptions = {}): ModelClient => {
  const provider = `ai-sdk:${model.provider}`
  checkFaultOptions(`fromAiSdk model "${model.provider}:${model.modelId}"`, options)
  const generate = model.doGenerate.bind(model) as (options: LanguageModelV3CallOptions) => PromiseLike<unknown>
  const doStream = typeof model.doStream === "function"
    ? model.doStream.bind(model) as (options: LanguageModelV3CallOptions) => PromiseLike<unknown>
    : undefined
  const streaming: Pick<ModelClient, "stream"> = doStream === undefined ? {} : {
    stream: (request) =>
      stream().suspend(() => {
        const callOptions = toCallOptions(request, options)
        return resilientStream<AiSdkStreamPart>(
          { provider, model: model.modelId },
          options,
          async (abortSignal) => streamOf(await doStream({ ...callOptions, abortSignal })),
          (cause) => toModelError(provider, cause),
          () => aiSdkPartDecoder(provider, { toFinishReason, toUsage, toModelError: (cause) => toModelError(provider, cause) })
        )
      })
  }
  return {
    ...streaming,
    metadata: metadataOf(genAiProviderName(model.provider), model.modelId, options.temperature, options.maxOutputTokens),
    chat: (request) =>
      Effect.suspend(() => {
        const callOptions = toCallOptions(request, options)
        return resilientCall(
          { provider, model: model.modelId },
          options,
          (abortSignal) => Promise.resolve(generate({ ...callOptions, abortSignal })),
          (cause) => toModelError(provider, cause)
        ).pipe(Effect.flatMap((result) => fromGenerateResult(provider, result as GenerateResult)))
      })
  }
}

/** The parts of a `doStream` result: its `stream`, a `ReadableStream` (async iterable on Node 18+). */
const streamOf = (result: unknown): AsyncIterable<AiSdkStreamPart> => {
  const readable = (result as { stream?: unknown } | null)?.stream
  if (typeof readable !== "object" || readable === null || typeof (readable as Record<symbol, unknown>)[Symbol.asyncIterator] !== "function") {
    throw new TypeError("doStream returned no stream")
  }
  return readable as AsyncIterable<AiSdkStreamPart>
}

/**
 * The call options for a provider-neutral request.
 *
 * @example
 * ```ts
 * const options = toCallOptions({ messages, tools: [], toolChoice: "auto" }, { temperature: 0 })
 * ```
 */
const toCallOptions = (request: ModelRequest, options: AiSdkOptions = {}): LanguageModelV3CallOptions => {
  const temperature = request.temperature ?? options.temperature
  const format = request.responseFormat
  return {
    prompt: toPrompt(request.messages),
    ...(request.tools.length === 0
      ? {}
      : {
        tools: request.tools.map((t) => ({
          type: "function" as const,
          name: t.name,
          ...(t.description === undefined ? {} : { description: t.description }),
          inputSchema: t.parameters as never,
          ...(t.strict === true ? { strict: true } : {})
        }))
      }),
    ...(request.toolChoice === undefined || request.tools.length === 0 ? {} : { toolChoice: toToolChoice(request.toolChoice) }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
    ...(options.topP === undefined ? {} : { topP: options.topP }),
    ...(options.topK === undefined ? {} : { topK: options.topK }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.stopSequences === undefined ? {} : { stopSequences: [...options.stopSequences] }),
    // Passed as the user wrote them: the providers read JSON values, which the option's type does not spell out.
    ...(options.providerOptions === undefined ? {} : { providerOptions: options.providerOptions as LanguageModelV3CallOptions["providerOptions"] & {} }),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(format === undefined ? {} : { responseFormat: { type: "json" as const, schema: format.schema as never, name: format.name } })
  }
}

const toToolChoice = (choice: ToolChoice): LanguageModelV3ToolChoice =>
  typeof choice === "string" ? { type: choice } : { type: "tool", toolName: choice.tool }

const toPrompt = (messages: ReadonlyArray<LlmMessage>): Array<LanguageModelV3Message> =>
  messages.map((message): LanguageModelV3Message => {
    switch (message.role) {
      case "system":
        return { role: "system", content: message.content }
      case "user":
        return { role: "user", content: [{ type: "text", text: message.content }] }
      case "assistant":
        return {
          role: "assistant",
          content: [
            ...(message.reasoning ?? []).flatMap((part) => (part._tag === "Thinking" ? [{ type: "reasoning" as const, text: part.text }] : [])),
            ...(message.content === "" ? [] : [{ type: "text" as const, text: message.content }]),
            ...(message.toolCalls ?? []).map((call) => ({
              type: "tool-call" as const,
              toolCallId: call.id,
              toolName: call.name,
              input: parseInput(call.arguments)
            }))
          ]
        }
      case "tool":
        return {
          role: "tool",
          content: [{ type: "tool-result", toolCallId: message.toolCallId, toolName: message.name, output: { type: "text", value: message.content } }]
        }
    }
  })

const parseInput = (raw: unknown): unknown => {
  if (typeof raw !== "string") return raw
  try {
    return JSON.parse(raw === "" ? "{}" : raw)
  } catch {
    return raw
  }
}

/** A `doGenerate` result of either specification version, read loosely. */
interface GenerateResult {
  readonly content: ReadonlyArray<{ readonly type: string; readonly [key: string]: unknown }>
  readonly finishReason: string | { readonly unified: string; readonly raw?: string | undefined }
  readonly usage?: unknown
  /** The provider's id for the answer and the model that gave it (`modelId`), when it reports them. */
  readonly response?: { readonly id?: unknown; readonly modelId?: unknown } | undefined
}

/**
 * The provider-neutral response for a `doGenerate` result.
 *
 * @example
 * ```ts
 * const response = yield* fromGenerateResult("ai-sdk:openai", await model.doGenerate(options))
 * ```
 */
export const fromGenerateResult = (provider: string, result: GenerateResult): Effect.Effect<LlmResponse, ModelError> =>
  Effect.gen(function*() {
    if (result === null || typeof result !== "object" || !Array.isArray(result.content)) {
      return yield* new ModelError({ provider, reason: "unexpected response shape: the result has no content", retryable: false })
    }
    const texts: Array<string> = []
    const reasoning: Array<ReasoningPart> = []
    const wire: Array<{ id: string; name: string; arguments: unknown }> = []
    for (const part of result.content) {
      if (part.type === "text" && typeof part.text === "string") texts.push(part.text)
      else if (part.type === "reasoning" && typeof part.text === "string" && part.text !== "") reasoning.push({ _tag: "Thinking", text: part.text })
      else if (part.type === "tool-call" && part.providerExecuted !== true) {
        const name = yield* Effect.try({
          try: () => callName(part.toolName, part),
          catch: (cause) => new ModelError({ provider, reason: `unexpected response shape: ${describeCause(cause)}`, retryable: false, cause })
        })
        wire.push({ id: String(part.toolCallId ?? ""), name, arguments: argumentsText(part.input) })
      }
    }
    const calls = yield* normaliseCalls(wire)
    const content = texts.join("")
    const unified = typeof result.finishReason === "string" ? result.finishReason : result.finishReason?.unified
    const finishReason = toFinishReason(unified)
    const usage = toUsage(result.usage)
    yield* checkReply(provider, { finishReason, wireReason: `finishReason ${JSON.stringify(unified)}`, content, calls: calls.length, reasoning, usage })
    const info = typeof result.response === "object" && result.response !== null ? result.response : {}
    return assembleResponse({
      content,
      calls,
      usage,
      finishReason,
      reasoning,
      responseId: typeof info.id === "string" ? info.id : undefined,
      responseModel: typeof info.modelId === "string" ? info.modelId : undefined
    })
  })

const toFinishReason = (reason: string | undefined): FinishReason | undefined => {
  switch (reason) {
    case "stop":
    case "length":
    case "content-filter":
    case "tool-calls":
      return reason
    case undefined:
    case "unknown":
      return undefined
    default:
      return "other"
  }
}

/** V3 usage is nested (`inputTokens.total`, `.cacheRead`; `outputTokens.reasoning`); V2's is flat. */
const toUsage = (usage: unknown): Usage | undefined => {
  if (typeof usage !== "object" || usage === null) return undefined
  const u = usage as Record<string, unknown>
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined)
  const input = u.inputTokens
  const output = u.outputTokens
  const nested = typeof input === "object" && input !== null
  const inputTotal = nested ? num((input as Record<string, unknown>).total) : num(input)
  const outputTotal = typeof output === "object" && output !== null ? num((output as Record<string, unknown>).total) : num(output)
  const cached = nested ? num((input as Record<string, unknown>).cacheRead) : num(u.cachedInputTokens)
  const reasoning = typeof output === "object" && output !== null ? num((output as Record<string, unknown>).reasoning) : num(u.reasoningTokens)
  if (inputTotal === undefined && outputTotal === undefined) return undefined
  return {
    inputTokens: inputTotal ?? 0,
    outputTokens: outputTotal ?? 0,
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning })
  }
}

/** The members of the AI SDK's `APICallError` read here (the same in `@ai-sdk/provider` 2.x, 3.x and 4.x). */
interface ApiCallError extends Error {
  readonly statusCode?: number
  readonly responseHeaders?: Record<string, string>
  readonly responseBody?: string
  readonly isRetryable: boolean
}

/**
 * `APICallError.isInstance` of every `@ai-sdk/provider` version: the class marks its instances with
 * `Symbol.for("vercel.ai.error.AI_APICallError")` so that copies of the package recognise each other's
 * errors. Reading the marker here recognises the user's provider's errors without loading (or
 * depending on) any version of `@ai-sdk/provider`.
 */
const apiCallErrorMarker = Symbol.for("vercel.ai.error.AI_APICallError")
const isApiCallError = (u: unknown): u is ApiCallError =>
  typeof u === "object" && u !== null && (u as Record<symbol, unknown>)[apiCallErrorMarker] === true

/** `APICallError` carries the status, headers and the provider's own retry verdict. */
const toModelError = (provider: string, cause: unknown): ModelError => {
  if (isApiCallError(cause)) {
    const advice = retryAdvice(cause.responseHeaders)
    const status = cause.statusCode
    const retryable = status === undefined
      ? cause.isRetryable
      : advice.shouldRetry ?? (cause.isRetryable && shouldRetryStatus(status, advice, quotaCode(cause.responseBody)))
    return new ModelError({
      provider,
      reason: cause.message,
      retryable,
      ...(status === undefined ? {} : { status }),
      ...(advice.retryAfterMs === undefined ? {} : { retryAfterMs: advice.retryAfterMs }),
      cause
    })
  }
  if (isConnectionFailure(cause)) {
    return new ModelError({ provider, reason: `connection failed: ${describeCause((cause as Error).cause ?? cause)}`, retryable: true, cause })
  }
  return new ModelError({ provider, reason: describeCause(cause), retryable: false, cause })
}

const quotaCode = (body: string | undefined): string | undefined =>
  body !== undefined && body.includes("insufficient_quota") ? "insufficient_quota" : undefined
