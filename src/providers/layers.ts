/**
 * Providers as Layers: each provider's `ModelClient` provided as the `ModelClientService`, built from
 * options (`openaiLayer(model, options)`) or read with Effect's `Config` (`openaiLayerConfig()`, by
 * default from the environment variables `fromEnv` reads). An agent without `.model(...)` requires the
 * service; `.provide(layer)` or `Effect.provide(layer)` supplies it. A setting that is missing or
 * malformed fails the Layer with an `AgentConfigError` naming it.
 */
import type { AiSdkLanguageModel } from "./ai-sdk.ts"
import type * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AgentConfigError } from "../errors.ts"
import { effectConfig } from "../internal/lazy-effect.ts"
import { type ModelClient, ModelClientService } from "../model/model-client.ts"
import { type AiSdkOptions, fromAiSdk } from "./ai-sdk.ts"
import { anthropic, type AnthropicOptions } from "./anthropic.ts"
import { ollama, type OllamaOptions } from "./ollama.ts"
import { openai, type OpenAiOptions } from "./openai.ts"
import { openaiResponses, type OpenAiResponsesOptions } from "./openai-responses.ts"
import { gemini, type GeminiOptions } from "./gemini.ts"

/**
 * A setting read with `Config`: a value, a secret, or `Config.option(...)` of either for "may be unset".
 *
 * @example
 * ```ts
 * const apiKey: SettingConfig<string> = Config.option(Config.Redacted("MY_OPENAI_KEY"))
 * ```
 */
export type SettingConfig<A> = Config.Config<A | Redacted.Redacted<A> | Option.Option<A | Redacted.Redacted<A>>>

/**
 * The settings every `…LayerConfig` reads; each defaults to the variable `fromEnv` reads.
 *
 * @example
 * ```ts
 * const settings: ModelSettingsConfig = { model: Config.succeed("qwen2.5:7b"), temperature: Config.succeed(0) }
 * ```
 */
export interface ModelSettingsConfig {
  /** Default `AI_MODEL` (required). */
  readonly model?: Config.Config<string>
  /** Default `LLM_TEMPERATURE` (may be unset). */
  readonly temperature?: SettingConfig<number>
}

/**
 * What `openaiLayerConfig` reads: defaults `OPENAI_API_KEY`, `OPENAI_BASE_URL` (both may be unset).
 *
 * @example
 * ```ts
 * openaiLayerConfig({ baseURL: Config.String("LOCAL_LLM_URL") } satisfies OpenAiSettingsConfig)
 * ```
 */
export interface OpenAiSettingsConfig extends ModelSettingsConfig {
  readonly apiKey?: SettingConfig<string>
  readonly baseURL?: SettingConfig<string>
}

/**
 * What `anthropicLayerConfig` reads: defaults `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `LLM_THINKING_BUDGET`.
 *
 * @example
 * ```ts
 * anthropicLayerConfig({ thinkingBudget: Config.succeed(4000) } satisfies AnthropicSettingsConfig)
 * ```
 */
export interface AnthropicSettingsConfig extends ModelSettingsConfig {
  readonly apiKey?: SettingConfig<string>
  readonly baseURL?: SettingConfig<string>
  readonly thinkingBudget?: SettingConfig<number>
}

/**
 * What `ollamaLayerConfig` reads: default `OLLAMA_HOST` (may be unset: `localhost:11434`).
 *
 * @example
 * ```ts
 * ollamaLayerConfig({ host: Config.String("GPU_BOX") } satisfies OllamaSettingsConfig)
 * ```
 */
export interface OllamaSettingsConfig extends ModelSettingsConfig {
  readonly host?: SettingConfig<string>
}

/** A setting that may be unset. */
const optional = <A>(config: Config.Config<A | Redacted.Redacted<A>>): SettingConfig<A> => effectConfig().option(config)

const defaults = () => ({
  model: effectConfig().NonEmptyString("AI_MODEL"),
  temperature: optional(effectConfig().Finite("LLM_TEMPERATURE"))
})

/** A read setting as a plain value: secrets revealed, `Option.none()` and `undefined` as absent. */
const plain = <A>(value: A | Redacted.Redacted<A> | Option.Option<A | Redacted.Redacted<A>> | undefined): A | undefined => {
  const present = Option.isOption(value) ? Option.getOrUndefined(value) : value
  return Redacted.isRedacted(present) ? Redacted.value(present) : present
}

/** Only the settings that are present, so `exactOptionalPropertyTypes` options stay absent. */
const present = <T extends Record<string, unknown>>(settings: T): Partial<{ [K in keyof T]: Exclude<T[K], undefined> }> =>
  Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) as Partial<{ [K in keyof T]: Exclude<T[K], undefined> }>

/** A client built when the Layer is: a refused option fails the Layer instead of throwing at the call. */
const layerOf = (provider: string, make: () => ModelClient): Layer.Layer<ModelClientService, AgentConfigError> =>
  Layer.effect(ModelClientService, Effect.try({ try: make, catch: (error) => asConfigError(provider, error) }))

const asConfigError = (provider: string, error: unknown): AgentConfigError =>
  error instanceof AgentConfigError ? error : new AgentConfigError({ subject: `${provider} layer`, reason: error instanceof Error ? error.message : String(error) })

/** A Layer that reads `configs`, then builds the client; a Config failure becomes an `AgentConfigError`. */
const layerFromConfig = <S extends Record<string, Config.Config<unknown>>>(
  provider: string,
  configs: S,
  make: (settings: { readonly [K in keyof S]: S[K] extends Config.Config<infer A> ? A : never }) => ModelClient
): Layer.Layer<ModelClientService, AgentConfigError> =>
  Layer.effect(
    ModelClientService,
    Effect.gen(function*() {
      const settings = yield* effectConfig().all(configs)
      return yield* Effect.try({ try: () => make(settings as never), catch: (error) => asConfigError(provider, error) })
    }).pipe(Effect.mapError((error) => asConfigError(provider, error)))
  )

/** The settings both OpenAI layers read (Chat Completions and Responses), with their defaults. */
const openAiSettings = (config: OpenAiSettingsConfig) => ({
  model: config.model ?? defaults().model,
  temperature: config.temperature ?? defaults().temperature,
  apiKey: config.apiKey ?? optional(effectConfig().Redacted("OPENAI_API_KEY")),
  baseURL: config.baseURL ?? optional(effectConfig().NonEmptyString("OPENAI_BASE_URL"))
})

type Setting<A> = A | Redacted.Redacted<A> | Option.Option<A | Redacted.Redacted<A>>

/** Key, base URL and temperature from those settings: a key is required unless a base URL is set. */
const openAiConnection = (
  subject: string,
  s: {
    readonly apiKey: Setting<string>
    readonly baseURL: Setting<string>
    readonly temperature: Setting<number>
  }
): { readonly apiKey: string; readonly baseURL?: string; readonly temperature?: number } => {
  const apiKey = plain(s.apiKey)
  const baseURL = plain(s.baseURL)
  if (apiKey === undefined && baseURL === undefined) {
    throw new AgentConfigError({ subject, reason: "an API key (OPENAI_API_KEY) is required unless a base URL (OPENAI_BASE_URL) is set" })
  }
  return { ...present({ temperature: plain(s.temperature), baseURL }), apiKey: apiKey ?? "unused" }
}

/**
 * `openai(model, options)` as a Layer providing the `ModelClientService`.
 *
 * @example
 * ```ts
 * const assistant = agent("assistant").tools({ lookup }) // no .model(...): it requires ModelClientService
 * await assistant.provide(openaiLayer("gpt-4o-mini", { apiKey })).run("hi")
 * ```
 */
export const openaiLayer = (model: string, options: OpenAiOptions = {}): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerOf("openai", () => openai(model, options))

/**
 * An OpenAI client read with `Config`: by default `AI_MODEL`, `OPENAI_API_KEY`, `OPENAI_BASE_URL` and
 * `LLM_TEMPERATURE` from the current `ConfigProvider` (the environment). `options` adds the rest.
 *
 * @example
 * ```ts
 * const OpenAi = openaiLayerConfig({ model: Config.succeed("gpt-4o-mini"), apiKey: Config.Redacted("MY_OPENAI_KEY") })
 * ```
 */
export const openaiLayerConfig = (
  config: OpenAiSettingsConfig = {},
  options: Omit<OpenAiOptions, "apiKey" | "baseURL" | "temperature"> = {}
): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerFromConfig("openai", openAiSettings(config), (s) => openai(s.model, { ...options, ...openAiConnection("openai layer", s) }))

/**
 * `openaiResponses(model, options)` (the Responses API) as a Layer providing the `ModelClientService`.
 *
 * @example
 * ```ts
 * await assistant.provide(openaiResponsesLayer("gpt-5-mini", { apiKey, store: false })).run("hi")
 * ```
 */
export const openaiResponsesLayer = (model: string, options: OpenAiResponsesOptions = {}): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerOf("openai", () => openaiResponses(model, options))

/**
 * An OpenAI Responses client read with `Config`, from the same settings as {@link openaiLayerConfig}.
 *
 * @example
 * ```ts
 * const Responses = openaiResponsesLayerConfig({ model: Config.succeed("gpt-5-mini") }, { reasoningSummary: "auto" })
 * ```
 */
export const openaiResponsesLayerConfig = (
  config: OpenAiSettingsConfig = {},
  options: Omit<OpenAiResponsesOptions, "apiKey" | "baseURL" | "temperature"> = {}
): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerFromConfig("openai", openAiSettings(config), (s) => openaiResponses(s.model, { ...options, ...openAiConnection("openai responses layer", s) }))

/**
 * `ollama(model, options)` as a Layer providing the `ModelClientService`.
 *
 * @example
 * ```ts
 * const program = assistant.runEffect("hi").pipe(Effect.provide(ollamaLayer("qwen2.5:7b", { host: "localhost:11434" })))
 * ```
 */
export const ollamaLayer = (model: string, options: OllamaOptions = {}): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerOf("ollama", () => ollama(model, options))

/**
 * An Ollama client read with `Config`: by default `AI_MODEL`, `OLLAMA_HOST` and `LLM_TEMPERATURE`.
 *
 * @example
 * ```ts
 * assistant.provide(ollamaLayerConfig({ host: Config.succeed("gpu-box:11434") }))
 * ```
 */
export const ollamaLayerConfig = (
  config: OllamaSettingsConfig = {},
  options: Omit<OllamaOptions, "host" | "port" | "temperature"> = {}
): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerFromConfig("ollama", {
    model: config.model ?? defaults().model,
    temperature: config.temperature ?? defaults().temperature,
    host: config.host ?? optional(effectConfig().NonEmptyString("OLLAMA_HOST"))
  }, (s) => ollama(s.model, { ...options, ...present({ temperature: plain(s.temperature), host: plain(s.host) }) }))

/**
 * `anthropic(model, options)` as a Layer providing the `ModelClientService`.
 *
 * @example
 * ```ts
 * assistant.provide(anthropicLayer("claude-sonnet-5-5", { apiKey }))
 * ```
 */
export const anthropicLayer = (model: string, options: AnthropicOptions = {}): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerOf("anthropic", () => anthropic(model, options))

/**
 * An Anthropic client read with `Config`: by default `AI_MODEL`, `ANTHROPIC_API_KEY`,
 * `ANTHROPIC_BASE_URL`, `LLM_TEMPERATURE` and `LLM_THINKING_BUDGET`.
 *
 * @example
 * ```ts
 * assistant.provide(anthropicLayerConfig())
 * ```
 */
export const anthropicLayerConfig = (
  config: AnthropicSettingsConfig = {},
  options: Omit<AnthropicOptions, "apiKey" | "baseURL" | "temperature" | "thinkingBudget"> = {}
): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerFromConfig("anthropic", {
    model: config.model ?? defaults().model,
    temperature: config.temperature ?? defaults().temperature,
    apiKey: config.apiKey ?? optional(effectConfig().Redacted("ANTHROPIC_API_KEY")),
    baseURL: config.baseURL ?? optional(effectConfig().NonEmptyString("ANTHROPIC_BASE_URL")),
    thinkingBudget: config.thinkingBudget ?? optional(effectConfig().Int("LLM_THINKING_BUDGET"))
  }, (s) => {
    const apiKey = plain(s.apiKey)
    const baseURL = plain(s.baseURL)
    if (apiKey === undefined && baseURL === undefined) {
      throw new AgentConfigError({ subject: "anthropic layer", reason: "an API key (ANTHROPIC_API_KEY) is required unless a base URL (ANTHROPIC_BASE_URL) is set" })
    }
    return anthropic(s.model, {
      ...options,
      ...present({ temperature: plain(s.temperature), baseURL, thinkingBudget: plain(s.thinkingBudget) }),
      apiKey: apiKey ?? "unused"
    })
  })

/**
 * `gemini(model, options)` as a Layer providing the `ModelClientService`.
 *
 * @example
 * ```ts
 * assistant.provide(geminiLayer("gemini-2.5-flash", { apiKey }))
 * ```
 */
export const geminiLayer = (model: string, options: GeminiOptions = {}): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerOf("gemini", () => gemini(model, options))

/**
 * What `geminiLayerConfig` reads: defaults `GEMINI_API_KEY` (else `GOOGLE_API_KEY`),
 * `GOOGLE_GEMINI_BASE_URL` and `LLM_THINKING_BUDGET` (each may be unset).
 *
 * @example
 * ```ts
 * geminiLayerConfig({ apiKey: Config.Redacted("MY_GEMINI_KEY") } satisfies GeminiSettingsConfig)
 * ```
 */
export interface GeminiSettingsConfig extends ModelSettingsConfig {
  readonly apiKey?: SettingConfig<string>
  readonly baseURL?: SettingConfig<string>
  readonly thinkingBudget?: SettingConfig<number>
}

/**
 * A Gemini client read with `Config`: by default `AI_MODEL`, `GEMINI_API_KEY` or `GOOGLE_API_KEY`,
 * `GOOGLE_GEMINI_BASE_URL`, `LLM_TEMPERATURE` and `LLM_THINKING_BUDGET`.
 *
 * @example
 * ```ts
 * assistant.provide(geminiLayerConfig())
 * ```
 */
export const geminiLayerConfig = (
  config: GeminiSettingsConfig = {},
  options: Omit<GeminiOptions, "apiKey" | "baseURL" | "temperature" | "thinkingBudget"> = {}
): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerFromConfig("gemini", {
    model: config.model ?? defaults().model,
    temperature: config.temperature ?? defaults().temperature,
    apiKey: config.apiKey ?? optional(effectConfig().Redacted("GEMINI_API_KEY").pipe(effectConfig().orElse(() => effectConfig().Redacted("GOOGLE_API_KEY")))),
    baseURL: config.baseURL ?? optional(effectConfig().NonEmptyString("GOOGLE_GEMINI_BASE_URL")),
    thinkingBudget: config.thinkingBudget ?? optional(effectConfig().Int("LLM_THINKING_BUDGET"))
  }, (s) => {
    const apiKey = plain(s.apiKey)
    const baseURL = plain(s.baseURL)
    if (apiKey === undefined && baseURL === undefined) {
      throw new AgentConfigError({ subject: "gemini layer", reason: "an API key (GEMINI_API_KEY or GOOGLE_API_KEY) is required unless a base URL (GOOGLE_GEMINI_BASE_URL) is set" })
    }
    return gemini(s.model, {
      ...options,
      ...present({ temperature: plain(s.temperature), baseURL, thinkingBudget: plain(s.thinkingBudget) }),
      apiKey: apiKey ?? "unused"
    })
  })

/**
 * An AI SDK language model (`fromAiSdk`) as a Layer providing the `ModelClientService`. The AI SDK's
 * providers read their own settings, so there is no `Config` form.
 *
 * @example
 * ```ts
 * assistant.provide(aiSdkLayer(createOpenAI({ apiKey })("gpt-4o-mini")))
 * ```
 */
export const aiSdkLayer = (model: AiSdkLanguageModel, options: AiSdkOptions = {}): Layer.Layer<ModelClientService, AgentConfigError> =>
  layerOf("ai-sdk", () => fromAiSdk(model, options))
