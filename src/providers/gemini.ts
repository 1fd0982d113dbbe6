/**
 * Google Gemini on the official `@google/genai` SDK: `generateContent` and `generateContentStream`.
 * System messages become `systemInstruction`; tools are function declarations whose parameters are
 * converted to Gemini's schema subset (./gemini-schema.ts); tool results go back as `functionResponse`
 * parts in a user turn. Function calls without an id get one (`gemini_call_<response>_<index>`, stable
 * within a client and the same streamed or not); only ids Gemini gave are sent back to it.
 *
 * Thinking: thought summaries (`includeThoughts`) are the reasoning text; thought signatures (on
 * function-call and text parts) are kept on the assistant message as the `signature` of a `Thinking`
 * part (`gemini:` + JSON, by part) and put back on the same parts of the next request, as Gemini
 * requires for function calling with thinking models.
 *
 * Failed replies are read by the client's own fetch (./gemini-fetch.ts), which keeps their headers: the
 * SDK's `ApiError` drops them, and with them `Retry-After` and `x-should-retry`.
 */
import * as Effect from "effect/Effect"
import type * as GenAi from "@google/genai"
import { AgentConfigError, ModelError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { jsonOrUndefined } from "../internal/json-or-undefined.ts"
import { lazyPackage } from "../internal/lazy-package.ts"
import { effectStream as stream } from "../internal/lazy-effect.ts"
import type { FinishReason, LlmMessage, LlmResponse, ModelRequest, ReasoningPart, ToolCall, ToolChoice, Usage } from "../model/messages.ts"
import { metadataOf, type ModelClient } from "../model/model-client.ts"
import { type ResponsePart, responseInfoParts } from "../model/response-part.ts"
import { assembleResponse } from "./assemble-response.ts"
import { checkFaultOptions } from "./check-fault-options.ts"
import { checkReply, unusableReply } from "./check-reply.ts"
import { geminiFetch, GeminiHttpError, googleErrorReason, httpModelError, retryInfoAdvice, wholeReplyFetch } from "./gemini-fetch.ts"
import { GeminiSchemaError, toGeminiSchema } from "./gemini-schema.ts"
import { geminiStreamReader, hearingReads, incompleteEvent } from "./gemini-stream.ts"
import { argumentsText, callName } from "./normalise-calls.ts"
import { isConnectionFailure, resilientCall, shouldRetryStatus } from "./resilience.ts"
import { type ChunkDecoder, decodeChunk, resilientStream, type StreamingOptions } from "./resilient-stream.ts"

/** Options of {@link gemini}. The SDK's own retries are off: retries and timeouts are Effect's. */
export interface GeminiOptions extends StreamingOptions {
  /** Default: the SDK reads `GOOGLE_API_KEY`, else `GEMINI_API_KEY`. */
  readonly apiKey?: string | undefined
  /** Default: the SDK reads `GOOGLE_GEMINI_BASE_URL`, else `https://generativelanguage.googleapis.com`. */
  readonly baseURL?: string | undefined
  /** Sampling temperature, unless a request sets its own. */
  readonly temperature?: number
  /** `maxOutputTokens`. */
  readonly maxTokens?: number
  readonly topP?: number
  readonly topK?: number
  readonly stop?: ReadonlyArray<string>
  readonly seed?: number
  /** `thinkingConfig.thinkingBudget` (tokens; `0` turns thinking off where the model allows, `-1` lets it decide). */
  readonly thinkingBudget?: number
  /** `thinkingConfig.includeThoughts`: thought summaries as reasoning. Default `true` when `thinkingBudget` is set. */
  readonly includeThoughts?: boolean
  /** Extra headers on every request. */
  readonly headers?: Record<string, string>
}

const provider = "gcp.gemini"
const sdk = lazyPackage<typeof import("@google/genai")>("@google/genai")
const wholeReplies = wholeReplyFetch(provider)

/**
 * A `ModelClient` for Google's Gemini API.
 *
 * @example
 * ```ts
 * const model = gemini("gemini-2.5-flash", { thinkingBudget: 1024 })
 * agent("calc").model(model)
 * ```
 */
export const gemini = (model: string, options: GeminiOptions = {}): ModelClient => {
  checkFaultOptions(`gemini model "${model}"`, options)
  let client: GenAi.GoogleGenAI
  try {
    // Our fetch reads failed replies itself, keeping the headers the SDK's `ApiError` drops (./gemini-fetch.ts).
    const httpOptions: GenAi.HttpOptions = {
      fetch: geminiFetch,
      ...(options.baseURL === undefined ? {} : { baseUrl: options.baseURL }),
      ...(options.headers === undefined ? {} : { headers: options.headers })
    }
    client = new (sdk().GoogleGenAI)({
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      httpOptions
    })
  } catch (error) {
    throw new AgentConfigError({ subject: `gemini model "${model}"`, reason: describeCause(error) })
  }
  // Streams read by ./gemini-stream.ts (the SDK's reader parses each event three times); the SDK's own when it has no such method.
  const api = (client as unknown as { apiClient?: { processStreamResponse?: unknown } }).apiClient
  if (api !== undefined && typeof api.processStreamResponse === "function") api.processStreamResponse = geminiStreamReader(sdk().ApiError)
  // Numbers the responses that needed ids, so assigned ids differ across a run's turns.
  let responses = 0
  const nextResponse = () => ++responses
  return {
    metadata: metadataOf(provider, model, options.temperature, options.maxTokens),
    chat: (request) =>
      Effect.suspend(() => {
        const params = toGeminiRequest(model, request, options)
        if (params instanceof ModelError) return Effect.fail(params)
        return resilientCall(
          { provider, model },
          options,
          // The reply is read by a fetch of its own, which refuses a body that is not a JSON object.
          (abortSignal) =>
            client.models.generateContent({
              ...params,
              config: { ...params.config, abortSignal, httpOptions: { ...params.config.httpOptions, fetch: wholeReplies } }
            }),
          toModelError
        ).pipe(Effect.flatMap((response) => fromGeminiResponse(response as WireResponse, nextResponse)))
      }),
    stream: (request) =>
      stream().suspend(() => {
        const params = toGeminiRequest(model, request, options)
        if (params instanceof ModelError) return stream().fail(params)
        return resilientStream<WireResponse>(
          { provider, model },
          options,
          // A fetch per request, so that the reader tells this attempt of every read of the body (activity for the idle timeout).
          (abortSignal, onRead) =>
            client.models.generateContentStream({
              ...params,
              config: { ...params.config, abortSignal, httpOptions: { ...params.config.httpOptions, fetch: hearingReads(geminiFetch, onRead) } }
            }) as Promise<AsyncIterable<WireResponse>>,
          toModelError,
          () => geminiChunkDecoder(nextResponse)
        )
      })
  }
}

type Params = GenAi.GenerateContentParameters & { config: GenAi.GenerateContentConfig }
type Part = GenAi.Part

/**
 * The `generateContent` parameters for a provider-neutral request, or why a tool cannot be declared.
 *
 * @example
 * ```ts
 * toGeminiRequest("gemini-2.5-flash", { messages, tools: [add.definition], toolChoice: "required" })
 * // config.toolConfig: { functionCallingConfig: { mode: "ANY" } }
 * ```
 */
export const toGeminiRequest = (model: string, request: ModelRequest, options: GeminiOptions = {}): Params | ModelError => {
  const declarations: Array<GenAi.FunctionDeclaration> = []
  for (const t of request.tools) {
    try {
      const parameters = toGeminiSchema(t.parameters)
      // A tool without parameters is declared without any: Gemini refuses an object with no properties.
      const none = parameters.properties === undefined && (parameters.type === "object" || parameters.type === undefined)
      declarations.push({
        name: t.name,
        ...(t.description === undefined ? {} : { description: t.description }),
        ...(none ? {} : { parameters: parameters as GenAi.Schema })
      })
    } catch (error) {
      if (!(error instanceof GeminiSchemaError)) throw error
      return new ModelError({ provider, reason: `tool "${t.name}" cannot be declared to Gemini: ${error.message}`, retryable: false, kind: "unsupported" })
    }
  }
  const system = request.messages.flatMap((m) => (m.role === "system" ? [m.content] : []))
  const temperature = request.temperature ?? options.temperature
  const format = request.responseFormat
  const thinking = options.thinkingBudget === undefined && options.includeThoughts === undefined
    ? undefined
    : {
      ...(options.thinkingBudget === undefined ? {} : { thinkingBudget: options.thinkingBudget }),
      includeThoughts: options.includeThoughts ?? true
    }
  const config: GenAi.GenerateContentConfig = {
    ...(system.length === 0 ? {} : { systemInstruction: system.join("\n\n") }),
    ...(declarations.length === 0 ? {} : { tools: [{ functionDeclarations: declarations }] }),
    ...(request.toolChoice === undefined || declarations.length === 0 ? {} : { toolConfig: { functionCallingConfig: toCallingConfig(request.toolChoice) } }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(options.maxTokens === undefined ? {} : { maxOutputTokens: options.maxTokens }),
    ...(options.topP === undefined ? {} : { topP: options.topP }),
    ...(options.topK === undefined ? {} : { topK: options.topK }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.stop === undefined ? {} : { stopSequences: [...options.stop] }),
    ...(thinking === undefined ? {} : { thinkingConfig: thinking }),
    ...(format === undefined ? {} : { responseMimeType: "application/json", responseJsonSchema: format.schema })
  }
  return { model, contents: toContents(request.messages), config }
}

const toCallingConfig = (choice: ToolChoice): GenAi.FunctionCallingConfig => {
  const Mode = sdk().FunctionCallingConfigMode
  if (choice === "auto") return { mode: Mode.AUTO }
  if (choice === "none") return { mode: Mode.NONE }
  if (choice === "required") return { mode: Mode.ANY }
  return { mode: Mode.ANY, allowedFunctionNames: [choice.tool] }
}

const signaturePrefix = "gemini:"
const assignedPrefix = "gemini_call_"

/** The thought signatures of one model turn: on its text, and on each function call by position. */
interface Signatures {
  text?: string
  calls: Array<string | null>
}

const encodeSignatures = (signatures: Signatures): string | undefined =>
  signatures.text === undefined && signatures.calls.every((s) => s === null) ? undefined : signaturePrefix + JSON.stringify(signatures)

const decodeSignatures = (reasoning: ReadonlyArray<ReasoningPart> | undefined): Signatures => {
  for (const part of reasoning ?? []) {
    if (part._tag === "Thinking" && part.signature?.startsWith(signaturePrefix) === true) {
      try {
        return JSON.parse(part.signature.slice(signaturePrefix.length)) as Signatures
      } catch {
        // not ours
      }
    }
  }
  return { calls: [] }
}

const toContents = (messages: ReadonlyArray<LlmMessage>): Array<GenAi.Content> => {
  const contents: Array<GenAi.Content> = []
  for (const message of messages) {
    switch (message.role) {
      case "system":
        break
      case "user":
        contents.push({ role: "user", parts: [{ text: message.content }] })
        break
      case "assistant": {
        const signatures = decodeSignatures(message.reasoning)
        const parts: Array<Part> = []
        if (message.content !== "" || signatures.text !== undefined) {
          parts.push({ text: message.content, ...(signatures.text === undefined ? {} : { thoughtSignature: signatures.text }) })
        }
        ;(message.toolCalls ?? []).forEach((call, index) => {
          const signature = signatures.calls[index]
          parts.push({
            functionCall: { ...(call.id.startsWith(assignedPrefix) ? {} : { id: call.id }), name: call.name, args: argumentsObject(call.arguments) },
            ...(typeof signature === "string" ? { thoughtSignature: signature } : {})
          })
        })
        contents.push({ role: "model", parts: parts.length === 0 ? [{ text: "" }] : parts })
        break
      }
      case "tool": {
        const part: Part = {
          functionResponse: {
            ...(message.toolCallId.startsWith(assignedPrefix) ? {} : { id: message.toolCallId }),
            name: message.name,
            response: { output: message.content }
          }
        }
        const last = contents.at(-1)
        if (last !== undefined && last.role === "user" && last.parts?.every((p) => p.functionResponse !== undefined) === true) last.parts.push(part)
        else contents.push({ role: "user", parts: [part] })
        break
      }
    }
  }
  return contents
}

const argumentsObject = (raw: string): Record<string, unknown> => {
  try {
    const value = JSON.parse(raw === "" ? "{}" : raw)
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : { _raw: value }
  } catch {
    return { _raw: raw }
  }
}

/** A `GenerateContentResponse` as read here (the SDK's class, or the same fields as JSON). */
interface WireResponse {
  readonly candidates?: ReadonlyArray<{
    readonly content?: { readonly parts?: ReadonlyArray<WirePart> }
    readonly finishReason?: string
    readonly finishMessage?: string
  }>
  readonly promptFeedback?: { readonly blockReason?: string; readonly blockReasonMessage?: string }
  readonly responseId?: string
  readonly modelVersion?: string
  readonly usageMetadata?: {
    readonly promptTokenCount?: number
    readonly candidatesTokenCount?: number
    readonly thoughtsTokenCount?: number
    readonly cachedContentTokenCount?: number
    readonly toolUsePromptTokenCount?: number
  }
}
interface WirePart {
  readonly text?: string
  readonly thought?: boolean
  readonly thoughtSignature?: string
  readonly functionCall?: { readonly id?: string; readonly name?: string; readonly args?: Record<string, unknown> }
}

/** What one response (or one stream) carries, folded part by part: the same for both paths. */
class TurnFold {
  content = ""
  thoughts = ""
  readonly calls: Array<ToolCall> = []
  readonly signatures: Signatures = { calls: [] }
  finish: string | undefined
  usage: Usage | undefined
  responseId: string | undefined
  responseModel: string | undefined
  #response: number | undefined
  constructor(readonly nextResponse: () => number) {}

  /** Folds one part; returns the parts it streams. */
  part(part: WirePart): Array<ResponsePart> {
    if (part.functionCall !== undefined) {
      const index = this.calls.length
      const wireId = part.functionCall.id
      const id = typeof wireId === "string" && wireId !== "" && !this.calls.some((c) => c.id === wireId)
        ? wireId
        : `${assignedPrefix}${(this.#response ??= this.nextResponse())}_${index}`
      const call: ToolCall = { id, name: callName(part.functionCall.name, part.functionCall), arguments: argumentsText(part.functionCall.args) }
      this.calls.push(call)
      this.signatures.calls.push(part.thoughtSignature ?? null)
      return [
        { _tag: "ToolCallStart", index, id, name: call.name },
        { _tag: "ToolCallDelta", index, delta: call.arguments },
        { _tag: "ToolCallEnd", index }
      ]
    }
    if (part.thoughtSignature !== undefined) this.signatures.text = part.thoughtSignature
    const text = typeof part.text === "string" ? part.text : ""
    if (text === "") return []
    if (part.thought === true) {
      this.thoughts += text
      return [{ _tag: "ReasoningDelta", delta: text }]
    }
    this.content += text
    return [{ _tag: "TextDelta", delta: text }]
  }

  response(response: WireResponse): Array<ResponsePart> {
    // Every chunk repeats `responseId` and `modelVersion`: said once, again only if they change.
    const out: Array<ResponsePart> = []
    for (const info of responseInfoParts(response.responseId, response.modelVersion)) {
      if (info._tag !== "ResponseInfo" || (info.id === this.responseId && info.model === this.responseModel)) continue
      out.push(info)
      this.responseId = info.id ?? this.responseId
      this.responseModel = info.model ?? this.responseModel
    }
    const candidate = response.candidates?.[0]
    for (const part of candidate?.content?.parts ?? []) out.push(...this.part(part))
    if (candidate?.finishReason !== undefined && candidate.finishReason !== "FINISH_REASON_UNSPECIFIED") this.finish = candidate.finishReason
    const usage = toUsage(response.usageMetadata)
    if (usage !== undefined) this.usage = usage
    return out
  }

  reasoning(): Array<ReasoningPart> {
    const signature = encodeSignatures(this.signatures)
    if (this.thoughts === "" && signature === undefined) return []
    return [signature === undefined ? { _tag: "Thinking", text: this.thoughts } : { _tag: "Thinking", text: this.thoughts, signature }]
  }

  /** Why the turn cannot be used, or its finish reason. */
  check(blocked: WireResponse["promptFeedback"]): Effect.Effect<FinishReason | undefined, ModelError> {
    if (blocked?.blockReason !== undefined) {
      return Effect.fail(unusableReply(provider, "content-filter", `promptFeedback.blockReason ${JSON.stringify(blocked.blockReason)}`, undefined, this.usage))
    }
    // Gemini could not write (or was not allowed) the call it began: the text before it is a preamble, not an answer.
    if (this.calls.length === 0 && this.finish !== undefined && unreadableCall.has(this.finish)) {
      return Effect.fail(unusableReply(provider, "malformed", `finishReason ${JSON.stringify(this.finish)}`, this.content, this.usage))
    }
    const finishReason = toFinishReason(this.finish, this.calls.length)
    return checkReply(provider, {
      finishReason,
      wireReason: `finishReason ${JSON.stringify(this.finish)}`,
      content: this.content,
      calls: this.calls.length,
      reasoning: this.reasoning(),
      usage: this.usage
    }).pipe(Effect.as(finishReason))
  }
}

/**
 * The provider-neutral response for a `generateContent` reply.
 *
 * @example
 * ```ts
 * const response = yield* fromGeminiResponse(await ai.models.generateContent(params), () => 1)
 * ```
 */
export const fromGeminiResponse = (response: WireResponse, nextResponse: () => number): Effect.Effect<LlmResponse, ModelError> =>
  Effect.gen(function*() {
    if (response === null || typeof response !== "object") {
      return yield* new ModelError({ provider, reason: "unexpected response shape: not an object", retryable: false })
    }
    const fold = new TurnFold(nextResponse)
    yield* Effect.try({
      try: () => fold.response(response),
      catch: (cause) => new ModelError({ provider, reason: `unexpected response shape: ${describeCause(cause)}`, retryable: false, cause })
    })
    if (!Array.isArray(response.candidates) || response.candidates.length === 0) {
      if (response.promptFeedback?.blockReason === undefined) {
        return yield* new ModelError({ provider, reason: "the response has no candidates", retryable: false })
      }
    }
    const finishReason = yield* fold.check(response.promptFeedback)
    return assembleResponse({
      content: fold.content,
      calls: fold.calls,
      usage: fold.usage,
      finishReason,
      reasoning: fold.reasoning(),
      responseId: fold.responseId,
      responseModel: fold.responseModel
    })
  })

/**
 * Decodes `generateContentStream` chunks: each is a whole `GenerateContentResponse` whose parts are
 * pieces of the answer (text and thoughts as deltas, function calls whole), its usage cumulative,
 * its finish reason in the last chunk, its `responseId` and `modelVersion` on every chunk. The stream
 * has no last event: it ends with its body. A body cut before its end (the connection closed, or the
 * body ending inside an event) fails the read, a retryable `ModelError`, before this decoder ends; so
 * does a body that ends before any chunk. A body that ends cleanly after its chunks but without a finish
 * reason (Gemini-compatible servers that send none) is read as the same reply whole is.
 *
 * @example
 * ```ts
 * resilientStream(target, options, (abortSignal) => ai.models.generateContentStream({ ...params, config: { ...params.config, abortSignal } }), toModelError, () => geminiChunkDecoder(next))
 * ```
 */
export const geminiChunkDecoder = (nextResponse: () => number): ChunkDecoder<WireResponse> => {
  const fold = new TurnFold(nextResponse)
  let blocked: WireResponse["promptFeedback"]
  let chunks = 0
  /** Some chunk held a candidate (a reply of none is refused whole). */
  let candidates = false
  return {
    chunk: (chunk) =>
      decodeChunk(
        () => {
          chunks += 1
          if (Array.isArray(chunk.candidates) && chunk.candidates.length > 0) candidates = true
          if (chunk.promptFeedback?.blockReason !== undefined) blocked = chunk.promptFeedback
          const parts = fold.response(chunk)
          return fold.usage === undefined || chunk.usageMetadata === undefined ? parts : [...parts, { _tag: "Usage" as const, usage: fold.usage }]
        },
        (cause) => new ModelError({ provider, reason: `unexpected chunk shape: ${describeCause(cause)}`, retryable: false, cause })
      ),
    end: () =>
      Effect.gen(function*() {
        if (fold.finish === undefined && blocked === undefined) {
          if (chunks === 0) return yield* new ModelError({ provider, reason: "the stream ended before the answer began (an empty body)", retryable: true })
          // As a whole reply without candidates is.
          if (!candidates) return yield* new ModelError({ provider, reason: "the response has no candidates", retryable: false })
        }
        const finishReason = yield* fold.check(blocked)
        const reasoning = fold.reasoning()[0]
        const end: Array<ResponsePart> = reasoning === undefined || reasoning._tag !== "Thinking"
          ? []
          : [{ _tag: "ReasoningEnd", signature: reasoning.signature }]
        return [...end, { _tag: "Finish", reason: finishReason }]
      })
  }
}

/** Finish reasons that end a turn in a function call Gemini did not give. */
const unreadableCall: ReadonlySet<string> = new Set(["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"])

const toFinishReason = (reason: string | undefined, calls: number): FinishReason | undefined => {
  switch (reason) {
    case undefined:
      return undefined
    case "STOP":
      return calls > 0 ? "tool-calls" : "stop"
    case "MAX_TOKENS":
      return "length"
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
    case "IMAGE_PROHIBITED_CONTENT":
      return "content-filter"
    default:
      return calls > 0 ? "tool-calls" : "other"
  }
}

/** Gemini counts thoughts apart from the candidates: both are output. */
const toUsage = (usage: WireResponse["usageMetadata"]): Usage | undefined => {
  if (usage === undefined || usage === null) return undefined
  const thoughts = usage.thoughtsTokenCount
  const cached = usage.cachedContentTokenCount
  return {
    inputTokens: (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0),
    outputTokens: (usage.candidatesTokenCount ?? 0) + (thoughts ?? 0),
    ...(typeof cached === "number" ? { cachedInputTokens: cached } : {}),
    ...(typeof thoughts === "number" ? { reasoningTokens: thoughts } : {})
  }
}

const toModelError = (cause: unknown): ModelError => {
  if (cause instanceof ModelError) return cause
  if (cause instanceof GeminiHttpError) return httpModelError(provider, cause)
  const { ApiError } = sdk()
  // An error event inside a stream (an HTTP error reply is a GeminiHttpError): no headers to read, but
  // its body (in the message, after the status) may carry a RetryInfo.
  if (cause instanceof ApiError && typeof cause.status === "number") {
    const json = cause.message.indexOf("{")
    const advice = json < 0 ? {} : retryInfoAdvice(cause.message.slice(json))
    return new ModelError({
      provider,
      // The body's own words, as a failed reply's are read ("UNAVAILABLE: …"), not the SDK's "got status: …" around them.
      reason: (json < 0 ? undefined : googleErrorReason(jsonOrUndefined(cause.message.slice(json)))) ?? cause.message,
      status: cause.status,
      retryable: shouldRetryStatus(cause.status, {}),
      ...(advice.retryAfterMs === undefined ? {} : { retryAfterMs: advice.retryAfterMs }),
      cause
    })
  }
  if (isConnectionFailure(cause)) {
    return new ModelError({ provider, reason: `connection failed: ${describeCause((cause as Error).cause ?? cause)}`, retryable: true, cause })
  }
  // The stream readers' words (ours and the SDK's) for a body that ended inside an event: it was cut, as
  // the other providers' are, unless ours found the body was no event stream (a whole JSON reply, a page).
  if (cause instanceof Error && cause.message === incompleteEvent) {
    if (cause.cause !== undefined) return toModelError(cause.cause)
    return new ModelError({ provider, reason: "the stream ended before the answer finished (inside an event)", retryable: true, cause })
  }
  if (cause instanceof SyntaxError) {
    return new ModelError({ provider, reason: `the response body is not valid JSON: ${cause.message}`, retryable: false, cause })
  }
  return new ModelError({ provider, reason: describeCause(cause), retryable: false, cause })
}
