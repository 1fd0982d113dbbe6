/**
 * OpenAI's Responses API (`POST /v1/responses`) on the official `openai` SDK, non-streaming and
 * streaming. A separate constructor, `openaiResponses(...)`, rather than an option of `openai(...)`:
 * its options differ (`store`, `previousResponseId`, `reasoningSummary`) and so does its wire.
 *
 * Messages become input items: system and user messages as `{ role, content }`, an assistant turn as
 * its reasoning items (sent back unchanged, `encrypted_content` included), its text, and a
 * `function_call` item per call; tool results as `function_call_output`. A reasoning item travels on
 * the assistant message as a `Thinking` part whose text is its summary and whose `signature` holds the
 * item itself (`openai-responses:` + JSON), so it is sent back as it came.
 */
import * as Effect from "effect/Effect"
import { ModelError } from "../errors.ts"
import { replyBody } from "./reply-body.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { effectStream as stream } from "../internal/lazy-effect.ts"
import type { FinishReason, LlmMessage, LlmResponse, ModelRequest, ReasoningPart, ToolChoice, Usage } from "../model/messages.ts"
import { metadataOf, type ModelClient } from "../model/model-client.ts"
import { type ResponsePart, responseInfoParts } from "../model/response-part.ts"
import { assembleResponse } from "./assemble-response.ts"
import { checkReply } from "./check-reply.ts"
import { argumentsText, callName, normaliseCalls } from "./normalise-calls.ts"
import { errorInReply, isTransientStreamError, openAiSdkClient, openAiSseChunks, toModelError } from "./openai.ts"
import { checkFaultOptions } from "./check-fault-options.ts"
import { resilientCall } from "./resilience.ts"
import { type ChunkDecoder, decodeChunk, resilientStream, type StreamingOptions } from "./resilient-stream.ts"

/** Options of {@link openaiResponses}. The SDK's own retries are off: retries and timeouts are Effect's. */
export interface OpenAiResponsesOptions extends StreamingOptions {
  /** Default: the SDK reads `OPENAI_API_KEY`. */
  readonly apiKey?: string | undefined
  /** Default: the SDK reads `OPENAI_BASE_URL`, else `https://api.openai.com/v1`. */
  readonly baseURL?: string | undefined
  readonly organization?: string | undefined
  /** Sampling temperature, unless a request sets its own (leave it out for reasoning models). */
  readonly temperature?: number
  /** `max_output_tokens` (reasoning tokens included). */
  readonly maxTokens?: number
  /** `reasoning.effort`. */
  readonly reasoningEffort?: "none" | "minimal" | "low" | "medium" | "high" | "xhigh"
  /** `reasoning.summary`: ask for reasoning summaries (streamed as reasoning deltas). */
  readonly reasoningSummary?: "auto" | "concise" | "detailed"
  /**
   * `store`. `false` keeps nothing at OpenAI: reasoning items then come with `encrypted_content`
   * (asked through `include`), which is sent back on the next turn. Default: the API's (`true`).
   */
  readonly store?: boolean
  /**
   * `previous_response_id`, sent with every request: continue a conversation stored at OpenAI (whose
   * items the server prepends); the run's own messages follow it. Needs `store` left on.
   */
  readonly previousResponseId?: string
  /** `parallel_tool_calls`. */
  readonly parallelToolCalls?: boolean
  /** `top_p`. */
  readonly topP?: number
  /**
   * `true`: every tool is sent with `strict: true` (tools must be built with `strict: true`). Default:
   * each tool's own setting, sent explicitly (`strict: false` too: the Responses API defaults to strict).
   */
  readonly strict?: boolean
  /** Extra headers on every request. */
  readonly headers?: Record<string, string>
}

const provider = "openai"

/**
 * A `ModelClient` for OpenAI's Responses API.
 *
 * @example
 * ```ts
 * const model = openaiResponses("gpt-5-mini", { reasoningEffort: "low", reasoningSummary: "auto" })
 * const stateless = openaiResponses("o4-mini", { store: false }) // reasoning sent back encrypted
 * agent("calc").model(model)
 * ```
 */
export const openaiResponses = (model: string, options: OpenAiResponsesOptions = {}): ModelClient => {
  checkFaultOptions(`openai responses model "${model}"`, options)
  const client = openAiSdkClient(`openai responses model "${model}"`, options)
  const create = client.responses.create.bind(client.responses) as unknown as (
    body: unknown,
    options: { signal: AbortSignal }
  ) => Promise<unknown> & { asResponse(): Promise<Response> }
  return {
    metadata: metadataOf(provider, model, options.temperature, options.maxTokens),
    chat: (request) =>
      Effect.suspend(() => {
        const body = toResponsesRequest(model, request, options)
        if (body instanceof ModelError) return Effect.fail(body)
        // A `failed` status is raised inside the call, so that its retry verdict (server_error) is honoured.
        const call = (signal: AbortSignal) =>
          // The body is read here, not by the SDK: it parses only what is labelled JSON, then reads the
          // parsed reply's fields (a `TypeError` on a text body). JSON labelled `text/plain` is read.
          create(body, { signal }).asResponse().then((raw) => raw.text()).then((text) => {
            const response = replyBody(provider, text)
            if (response instanceof ModelError) throw response
            const error = responseError(response)
            if (error !== undefined) throw error
            return response
          })
        return resilientCall({ provider, model }, options, call, toModelError).pipe(
          Effect.flatMap((response) => fromResponsesResponse(response as WireResponse))
        )
      }),
    stream: (request) =>
      stream().suspend(() => {
        const body = toResponsesRequest(model, request, options)
        if (body instanceof ModelError) return stream().fail(body)
        return resilientStream(
          { provider, model },
          options,
          // Read by ./sse-stream.ts (as Chat Completions are): every byte is activity, and the stream ends at its last event.
          (signal, onRead) =>
            create({ ...body, stream: true }, { signal }).asResponse().then((response) => openAiSseChunks<WireEvent>(response, { onRead, isLast: isLastEvent, errorReply: responseError })),
          toModelError,
          responsesEventDecoder
        )
      })
  }
}

type Body = Record<string, unknown>

/**
 * The Responses request body for a provider-neutral request.
 *
 * @example
 * ```ts
 * toResponsesRequest("gpt-5-mini", { messages, tools: [add.definition], toolChoice: { tool: "add" } })
 * // { model, input: [...], tools: [{ type: "function", name: "add", parameters, strict: false }], tool_choice: { type: "function", name: "add" } }
 * ```
 */
export const toResponsesRequest = (model: string, request: ModelRequest, options: OpenAiResponsesOptions = {}): Body | ModelError => {
  const tools: Array<Body> = []
  for (const t of request.tools) {
    if (options.strict === true && t.strict !== true) {
      return new ModelError({ provider, reason: `tool "${t.name}" is not strict-compatible: build it with tool(..., { strict: true })`, retryable: false })
    }
    tools.push({
      type: "function",
      name: t.name,
      ...(t.description === undefined ? {} : { description: t.description }),
      parameters: t.parameters,
      strict: t.strict === true
    })
  }
  const temperature = request.temperature ?? options.temperature
  const format = request.responseFormat
  const reasoning = {
    ...(options.reasoningEffort === undefined ? {} : { effort: options.reasoningEffort }),
    ...(options.reasoningSummary === undefined ? {} : { summary: options.reasoningSummary })
  }
  return {
    model,
    input: toInputItems(request.messages),
    ...(tools.length === 0 ? {} : { tools }),
    ...(request.toolChoice === undefined || tools.length === 0 ? {} : { tool_choice: toToolChoice(request.toolChoice) }),
    ...(options.parallelToolCalls === undefined || tools.length === 0 ? {} : { parallel_tool_calls: options.parallelToolCalls }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(options.topP === undefined ? {} : { top_p: options.topP }),
    ...(options.maxTokens === undefined ? {} : { max_output_tokens: options.maxTokens }),
    ...(Object.keys(reasoning).length === 0 ? {} : { reasoning }),
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.store === false ? { include: ["reasoning.encrypted_content"] } : {}),
    ...(options.previousResponseId === undefined ? {} : { previous_response_id: options.previousResponseId }),
    ...(format === undefined ? {} : { text: { format: { type: "json_schema", name: format.name, schema: format.schema, strict: format.strict ?? true } } })
  }
}

const toToolChoice = (choice: ToolChoice): unknown => (typeof choice === "string" ? choice : { type: "function", name: choice.tool })

const signaturePrefix = "openai-responses:"

/** A reasoning item as it travels in a `Thinking` part's signature. */
const encodeReasoning = (item: WireReasoning): string =>
  signaturePrefix + JSON.stringify({
    id: item.id,
    summary: item.summary ?? [],
    ...(typeof item.encrypted_content === "string" ? { encrypted_content: item.encrypted_content } : {})
  })

const toInputItems = (messages: ReadonlyArray<LlmMessage>): Array<Body> => {
  const items: Array<Body> = []
  for (const message of messages) {
    switch (message.role) {
      case "system":
      case "user":
        items.push({ role: message.role, content: message.content })
        break
      case "assistant":
        for (const part of message.reasoning ?? []) {
          // Only reasoning items of this API go back; others (another provider's thinking) are dropped.
          if (part._tag === "Thinking" && part.signature?.startsWith(signaturePrefix) === true) {
            try {
              items.push({ type: "reasoning", ...JSON.parse(part.signature.slice(signaturePrefix.length)) })
            } catch {
              // A signature that is not ours: dropped like any other provider's.
            }
          }
        }
        if (message.content !== "") items.push({ role: "assistant", content: message.content })
        for (const call of message.toolCalls ?? []) {
          items.push({ type: "function_call", call_id: call.id, name: call.name, arguments: call.arguments })
        }
        break
      case "tool":
        items.push({ type: "function_call_output", call_id: message.toolCallId, output: message.content })
        break
    }
  }
  return items
}

interface WireReasoning {
  readonly type: "reasoning"
  readonly id: string
  readonly summary?: ReadonlyArray<{ readonly type: string; readonly text: string }>
  readonly encrypted_content?: string | null
}
type WireItem =
  | { readonly type: "message"; readonly content?: ReadonlyArray<{ readonly type: string; readonly text?: string; readonly refusal?: string }> }
  | { readonly type: "function_call"; readonly call_id: string; readonly name: string; readonly arguments: string }
  | WireReasoning
  | { readonly type: "other" }
interface WireResponse {
  readonly id?: string
  readonly model?: string
  readonly status?: string
  readonly output?: ReadonlyArray<WireItem>
  readonly error?: { readonly code?: string; readonly message?: string } | null
  readonly incomplete_details?: { readonly reason?: string } | null
  readonly usage?: {
    readonly input_tokens?: number
    readonly output_tokens?: number
    readonly input_tokens_details?: { readonly cached_tokens?: number }
    readonly output_tokens_details?: { readonly reasoning_tokens?: number }
  } | null
}
type WireEvent = { readonly type: string; readonly [key: string]: any }

const summaryText = (item: WireReasoning): string => (Array.isArray(item.summary) ? item.summary : []).map((s) => String(s?.text ?? "")).join("\n\n")

const thinkingOf = (item: WireReasoning): ReasoningPart => ({ _tag: "Thinking", text: summaryText(item), signature: encodeReasoning(item) })

/**
 * The provider-neutral response for a Responses reply: output text, refusals (kind `refusal`),
 * function calls, reasoning items; `status` `incomplete` (`max_output_tokens` → kind `length`,
 * `content_filter` → `content-filter`) and `failed` become `ModelError`s.
 *
 * @example
 * ```ts
 * const response = yield* fromResponsesResponse(await client.responses.create(body))
 * ```
 */
export const fromResponsesResponse = (response: WireResponse): Effect.Effect<LlmResponse, ModelError> =>
  Effect.gen(function*() {
    if (response === null || typeof response !== "object" || !Array.isArray(response.output)) {
      return yield* new ModelError({ provider, reason: "unexpected response shape: the response has no output", retryable: false })
    }
    if (response.status === "failed") return yield* Effect.fail(failedError(response))
    const { content, refusal, reasoning, wire } = yield* Effect.try({
      try: () => readOutput(response.output ?? []),
      catch: (cause) => new ModelError({ provider, reason: `unexpected response shape: ${describeCause(cause)}`, retryable: false, cause })
    })
    const calls = yield* normaliseCalls(wire)
    const finishReason = finishOf(response, refusal, calls.length)
    const usage = toUsage(response.usage)
    yield* checkReply(provider, { finishReason, wireReason: wireReasonOf(response, refusal), content: refusal !== "" ? refusal : content, calls: calls.length, reasoning, usage })
    return assembleResponse({
      content,
      calls,
      usage,
      finishReason,
      reasoning,
      responseId: response.id,
      responseModel: response.model
    })
  })

/** The text, refusal, reasoning items and function calls of a reply's output items. */
const readOutput = (output: ReadonlyArray<WireItem>) => {
  let content = ""
  let refusal = ""
  const reasoning: Array<ReasoningPart> = []
  const wire: Array<{ id: string; name: string; arguments: unknown }> = []
  for (const item of output) {
    if (item.type === "message") {
      for (const part of item.content ?? []) {
        if (part.type === "output_text") content += String(part.text ?? "")
        else if (part.type === "refusal") refusal += String(part.refusal ?? "")
      }
    } else if (item.type === "function_call") {
      wire.push({ id: String(item.call_id ?? ""), name: callName(item.name, item), arguments: item.arguments })
    } else if (item.type === "reasoning") reasoning.push(thinkingOf(item))
  }
  return { content, refusal, reasoning, wire }
}

const finishOf = (response: WireResponse, refusal: string, calls: number): FinishReason => {
  if (refusal !== "") return "refusal"
  if (response.status === "incomplete") {
    const reason = response.incomplete_details?.reason
    return reason === "max_output_tokens" ? "length" : reason === "content_filter" ? "content-filter" : "other"
  }
  return calls > 0 ? "tool-calls" : "stop"
}

const wireReasonOf = (response: WireResponse, refusal: string): string =>
  refusal !== ""
    ? "refusal"
    : response.status === "incomplete"
    ? `status "incomplete", reason ${JSON.stringify(response.incomplete_details?.reason)}`
    : `status ${JSON.stringify(response.status)}`

/** `status: "failed"` (or a `response.failed` event): retryable for server errors and rate limits. */
const failedError = (response: WireResponse | null | undefined): ModelError => {
  const code = typeof response?.error?.code === "string" ? response.error.code : undefined
  return new ModelError({
    provider,
    reason: `the response failed: ${code ?? "error"}: ${String(response?.error?.message ?? "no message")}`,
    retryable: isTransientStreamError({ code })
  })
}

/**
 * The error a successful reply's body holds, whole or sent whole to a streamed request: a `failed`
 * response's, or a gateway's `{ error: { code, message } }` (as for Chat Completions: ./openai.ts);
 * `undefined` for any other reply (a response's `error` is `null` unless it failed).
 */
const responseError = (body: Record<string, unknown>): unknown =>
  body["status"] === "failed" ? failedError(body as WireResponse) : errorInReply(body)

/** The events after which the Responses stream sends nothing more. */
const lastEvents: ReadonlySet<unknown> = new Set(["response.completed", "response.incomplete", "response.failed"])
const isLastEvent = (event: WireEvent): boolean => typeof event === "object" && event !== null && lastEvents.has(event.type)

const toUsage = (usage: WireResponse["usage"]): Usage | undefined => {
  if (usage === undefined || usage === null) return undefined
  const cached = usage.input_tokens_details?.cached_tokens
  const reasoning = usage.output_tokens_details?.reasoning_tokens
  return {
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    ...(typeof cached === "number" ? { cachedInputTokens: cached } : {}),
    ...(typeof reasoning === "number" ? { reasoningTokens: reasoning } : {})
  }
}

/**
 * Decodes the Responses stream: `response.output_text.delta`, `response.refusal.delta`,
 * `response.function_call_arguments.delta` (calls by `output_index`, started at
 * `response.output_item.added`), `response.reasoning_summary_text.delta` (summaries of one item
 * joined by a blank line), reasoning items closed at `response.output_item.done` with the whole item
 * as their signature, and the end: `response.completed`, `response.incomplete`, `response.failed`,
 * or an `error` event. The response's `id` and `model` come from `response.created` and again from its end. A stream without one of those ends was cut: a retryable `ModelError`.
 *
 * @example
 * ```ts
 * resilientStream(target, options, (signal, onRead) => client.responses.create({ ...body, stream: true }, { signal }).asResponse().then((r) => openAiSseChunks(r, { onRead })), toModelError, responsesEventDecoder)
 * ```
 */
export const responsesEventDecoder = (): ChunkDecoder<WireEvent> => {
  const calls = new Map<number, { streamed: boolean }>()
  const summaries = new Map<number, number>()
  let final: WireResponse | undefined
  let content = ""
  let refusal = ""
  const reasoning: Array<ReasoningPart> = []
  return {
    chunk: (event) => {
      if (typeof event !== "object" || event === null) {
        return new ModelError({ provider, reason: `unexpected stream event: ${describeCause(event)}`, retryable: false })
      }
      if (event.type === "error") {
        const code = typeof event.code === "string" ? event.code : undefined
        return new ModelError({
          provider,
          reason: `error event in the stream: ${code ?? "error"}: ${String(event.message ?? "")}`,
          retryable: isTransientStreamError({ code: event.code })
        })
      }
      if (event.type === "response.failed") return failedError(event.response as WireResponse)
      return decodeChunk(
        (): ReadonlyArray<ResponsePart> => {
          const index = event.output_index as number
          switch (event.type) {
            case "response.output_text.delta": {
              const delta = String(event.delta ?? "")
              content += delta
              return delta === "" ? [] : [{ _tag: "TextDelta", delta }]
            }
            case "response.refusal.delta":
              refusal += String(event.delta ?? "")
              return []
            case "response.output_item.added": {
              const item = event.item as WireItem
              if (item.type !== "function_call") return []
              calls.set(index, { streamed: false })
              return [{ _tag: "ToolCallStart", index, id: item.call_id, name: callName(item.name, item) }]
            }
            case "response.function_call_arguments.delta": {
              const call = calls.get(index)
              if (call === undefined) throw new Error(`arguments arrived for output ${index}, which is no function call`)
              const delta = String(event.delta ?? "")
              if (delta === "") return []
              call.streamed = true
              return [{ _tag: "ToolCallDelta", index, delta }]
            }
            case "response.reasoning_summary_text.delta": {
              const delta = String(event.delta ?? "")
              const summary = Number(event.summary_index ?? 0)
              const previous = summaries.get(index)
              summaries.set(index, summary)
              const separator = previous !== undefined && previous !== summary ? "\n\n" : ""
              return delta === "" && separator === "" ? [] : [{ _tag: "ReasoningDelta", delta: separator + delta }]
            }
            case "response.output_item.done": {
              const item = event.item as WireItem
              if (item.type === "reasoning") {
                const part = thinkingOf(item)
                reasoning.push(part)
                // Summaries that did not stream (or a reasoning item without any) come whole here.
                const head: Array<ResponsePart> = summaries.has(index) || part._tag !== "Thinking" || part.text === "" ? [] : [{ _tag: "ReasoningDelta", delta: part.text }]
                return [...head, { _tag: "ReasoningEnd", signature: part._tag === "Thinking" ? part.signature : undefined }]
              }
              if (item.type === "function_call") {
                const call = calls.get(index)
                if (call === undefined) {
                  calls.set(index, { streamed: true })
                  return [{ _tag: "ToolCallStart", index, id: item.call_id, name: callName(item.name, item) }, { _tag: "ToolCallDelta", index, delta: argumentsText(item.arguments) }, { _tag: "ToolCallEnd", index }]
                }
                // Arguments that did not stream come whole here; none at all are "{}", as in a whole reply.
                const rest: Array<ResponsePart> = call.streamed ? [] : [{ _tag: "ToolCallDelta", index, delta: argumentsText(item.arguments) }]
                return [...rest, { _tag: "ToolCallEnd", index }]
              }
              return []
            }
            case "response.created":
              return typeof event.response === "object" && event.response !== null
                ? responseInfoParts(event.response.id, event.response.model)
                : []
            case "response.completed":
            case "response.incomplete":
              if (typeof event.response !== "object" || event.response === null) throw new Error(`${event.type} without a response`)
              final = event.response as WireResponse
              return responseInfoParts(final.id, final.model)
            default:
              return []
          }
        },
        (cause) => new ModelError({ provider, reason: `unexpected stream event: ${describeCause(cause)}`, retryable: false, cause })
      )
    },
    end: () =>
      Effect.gen(function*() {
        if (final === undefined) {
          return yield* new ModelError({ provider, reason: "the stream ended before the answer finished (no response.completed)", retryable: true })
        }
        const finishReason = finishOf(final, refusal, calls.size)
        const usage = toUsage(final.usage)
        yield* checkReply(provider, { finishReason, wireReason: wireReasonOf(final, refusal), content: refusal !== "" ? refusal : content, calls: calls.size, reasoning, usage })
        return [...(usage === undefined ? [] : [{ _tag: "Usage", usage } as const]), { _tag: "Finish", reason: finishReason }]
      })
  }
}
