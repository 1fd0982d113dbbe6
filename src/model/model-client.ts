/**
 * ModelClient: the one seam between the agentic loop and a model. One method, so a mock is one line;
 * also a Context service with a Layer, so Effect programs can provide it from the outside.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import type * as Stream from "effect/Stream"
import { describeCause } from "../internal/describe-cause.ts"
import { ModelError } from "./model-error.ts"
import { fromMaybeEffectSettled, type Settle } from "../internal/from-maybe-effect.ts"
import type { LlmResponse, LlmResponseInit, ModelRequest } from "./messages.ts"
import { normalizeResponse } from "./normalize-response.ts"
import { partsOf, type ResponsePart } from "./response-part.ts"
import { effectStream as stream } from "../internal/lazy-effect.ts"


/**
 * Anything that can answer a model request. Implementations: `openai(...)`, `ollama(...)`,
 * `ModelClient.fromFunction(...)`, and the mocks in `effect-agent-dsl/testing`.
 *
 * @example
 * ```ts
 * const echo: ModelClient = { chat: (req) => Effect.succeed({ _tag: "Text", content: String(req.messages.length) }) }
 * ```
 */
export interface ModelClient {
  readonly chat: (request: ModelRequest) => Effect.Effect<LlmResponse, ModelError>
  /**
   * The same answer as it is generated (optional): text, reasoning and tool-call deltas, usage and the
   * finish reason. Streaming runs (`agent.runStream`) use it when present; a client without it is
   * adapted by `ModelClient.streamOf` (its whole answer as parts). Interrupting the stream must end
   * the request.
   */
  readonly stream?: (request: ModelRequest) => Stream.Stream<ResponsePart, ModelError>
  /**
   * Who answers (optional): the provider and model, and the request settings the client adds to every
   * call. Spans and metrics report them as `gen_ai.provider.name`, `gen_ai.request.model`, ... The
   * providers fill it in; a hand-written client may leave it out.
   */
  readonly metadata?: ModelMetadata
}

/**
 * What a `ModelClient` says about itself for telemetry. `provider` uses the OpenTelemetry GenAI names
 * where one exists (`openai`, `anthropic`, `ollama`, `gcp.gemini`, `aws.bedrock`, ...).
 *
 * @example
 * ```ts
 * const client: ModelClient = { chat, metadata: { provider: "openai", model: "gpt-4o-mini", maxTokens: 512 } }
 * ```
 */
export interface ModelMetadata {
  readonly provider?: string
  readonly model?: string
  /** The temperature the client sends when a request sets none. */
  readonly temperature?: number
  /** The output token limit the client sends. */
  readonly maxTokens?: number
}

/**
 * Internal: a provider's `metadata`, the settings it was not given left out.
 *
 * @example
 * ```ts
 * metadataOf("openai", "gpt-4o-mini", undefined, 512) // { provider: "openai", model: "gpt-4o-mini", maxTokens: 512 }
 * ```
 */
export const metadataOf = (provider: string, model: string, temperature: number | undefined, maxTokens: number | undefined): ModelMetadata => ({
  provider,
  model,
  ...(temperature === undefined ? {} : { temperature }),
  ...(maxTokens === undefined ? {} : { maxTokens })
})

/**
 * The Context service under which a `ModelClient` is provided to `agent.runEffect` when the agent was
 * built without `.model(...)`.
 *
 * @example
 * ```ts
 * const program = Effect.gen(function* () { const client = yield* ModelClientService; return yield* client.chat(req) })
 * ```
 */
export class ModelClientService extends Context.Service<ModelClientService, ModelClient>()(
  "effect-agent-dsl/ModelClient"
) {}

/**
 * What `ModelClient.fromFunction` accepts: a plain, async or effectful answer, written loosely
 * (`LlmResponseInit`: object arguments, ids optional).
 */
export type ModelFunction = (
  request: ModelRequest
) => LlmResponseInit | PromiseLike<LlmResponseInit> | Effect.Effect<LlmResponseInit, ModelError>

const fromFunction = (answer: ModelFunction, options?: { readonly provider?: string; readonly model?: string }): ModelClient => {
  const provider = options?.provider ?? "function"
  const toModelError = (cause: unknown) =>
    cause instanceof ModelError ? cause : new ModelError({ provider, reason: describeCause(cause), cause })
  // Numbers the answers of this client, so the ids it assigns are unique across a run's responses.
  let answered = 0
  // The normalised answer, or the ModelError saying why it is none (an Exit is an Effect: either
  // settle below resumes with it).
  const normalized = (response: LlmResponseInit): Exit.Exit<LlmResponse, ModelError> => {
    try {
      const result = normalizeResponse(response, ++answered)
      return Result.isSuccess(result)
        ? Exit.succeed(result.success)
        : Exit.fail(new ModelError({ provider, reason: `the response is not a valid LlmResponse: ${result.failure}`, retryable: false }))
    } catch (error) {
      // A response whose getters throw.
      return Exit.fail(toModelError(error))
    }
  }
  // The answer is normalised as it settles, in the call's own step (see `fromMaybeEffectSettled`).
  const settle: Settle<LlmResponseInit, LlmResponse, ModelError> = {
    onValue: normalized,
    onError: (error) => Exit.fail(toModelError(error))
  }
  const chat = (request: ModelRequest): Effect.Effect<LlmResponse, ModelError> => fromMaybeEffectSettled(() => answer(request), undefined, settle)
  safeChats.add(chat)
  // The same answer as an Exit value, for the loop's plain call (no `Effect.exit` around it).
  const asExit: Settle<LlmResponseInit, Exit.Exit<LlmResponse, ModelError>, never> = {
    onValue: (response) => Exit.succeed(normalized(response)),
    onError: (error) => Exit.succeed(Exit.fail(toModelError(error)))
  }
  safeChatExits.set(chat, (request) => fromMaybeEffectSettled(() => answer(request), undefined, asExit))
  // Telemetry names only what the caller said: no invented provider or model.
  const metadata: ModelMetadata = {
    ...(options?.provider === undefined ? {} : { provider: options.provider }),
    ...(options?.model === undefined ? {} : { model: options.model })
  }
  return metadata.provider === undefined && metadata.model === undefined ? { chat } : { chat, metadata }
}

/**
 * The `chat` functions made by `fromFunction`: their Effects fail with `ModelError` only, never die
 * and never interrupt themselves, so the loop calls them without guarding against a misbehaving
 * client. A client spreading one and replacing `chat` is guarded as any other.
 */
const safeChats = new WeakSet<ModelClient["chat"]>()

/** The `fromFunction` chats' Exit-answering twins (see `safeChatExit`). */
const safeChatExits = new WeakMap<ModelClient["chat"], (request: ModelRequest) => Effect.Effect<Exit.Exit<LlmResponse, ModelError>>>()

/**
 * Internal: for a `fromFunction` chat, the same call answering its outcome as an Exit in the call's
 * own step (the loop's plain model call, without an `Effect.exit` around it: issue #37); undefined for
 * any other chat.
 *
 * @example
 * ```ts
 * const exit = yield* safeChatExit(client.chat)!(request) // Exit<LlmResponse, ModelError>
 * ```
 */
export const safeChatExit = (chat: ModelClient["chat"]): ((request: ModelRequest) => Effect.Effect<Exit.Exit<LlmResponse, ModelError>>) | undefined =>
  safeChatExits.get(chat)

/**
 * Internal: whether `chat` is one of `fromFunction`'s (see above).
 *
 * @example
 * ```ts
 * isSafeChat(ModelClient.fromFunction(() => ({ _tag: "Text", content: "hi" })).chat) // true
 * ```
 */
export const isSafeChat = (chat: unknown): boolean => typeof chat === "function" && safeChats.has(chat as ModelClient["chat"])

/**
 * Helpers around the `ModelClient` interface.
 *
 * @example
 * ```ts
 * const client = ModelClient.fromFunction((req) => ({ _tag: "Text", content: "hi" }))
 * const program = calculator.runEffect("2+2").pipe(Effect.provide(ModelClient.layer(client)))
 * ```
 */
export const ModelClient = {
  /**
   * Wraps a function returning a response, a Promise of one, or an Effect; throws become `ModelError`.
   * Answers are normalised: object arguments serialised to JSON once, missing ids assigned.
   * `{ provider, model }`, when given, become the client's `metadata` (spans and metrics report them).
   */
  fromFunction,
  /** The Context service key. */
  Service: ModelClientService,
  /**
   * The parts of `client`'s answer to `request`: its own `stream` when it has one, else its `chat`
   * answer as parts (one delta per text).
   */
  streamOf: (client: ModelClient, request: ModelRequest): Stream.Stream<ResponsePart, ModelError> =>
    client.stream !== undefined
      ? client.stream(request)
      : stream().fromIterableEffect(Effect.map(client.chat(request), (response) => partsOf(response))),
  /** A Layer providing `client` as the `ModelClientService`. */
  layer: (client: ModelClient): Layer.Layer<ModelClientService> => Layer.succeed(ModelClientService, client)
} as const
