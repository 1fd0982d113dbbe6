/**
 * Chooses and configures a provider from environment variables, with Effect's `Config`, so a missing
 * or malformed value is one clear error naming the variable.
 *
 * | variable | meaning |
 * |---|---|
 * | `AI_PROVIDER` | `openai`, `openai-responses` (the Responses API), `ollama`, `anthropic` or `gemini` (required) |
 * | `AI_MODEL` | the model name (required) |
 * | `LLM_TEMPERATURE` | a finite number; unset: none is sent (reasoning models such as o4-mini refuse one) |
 * | `LLM_MAX_AGENT_STEPS` | a whole number >= 1: the agent's `maxTurns` |
 * | `OPENAI_API_KEY`, `OPENAI_BASE_URL` | for `openai`; the key may be left out when a base URL is set |
 * | `OLLAMA_HOST` | for `ollama`: `host`, `host:port` or a URL; default `localhost:11434` |
 * | `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` | for `anthropic`; the key may be left out when a base URL is set |
 * | `GEMINI_API_KEY` (else `GOOGLE_API_KEY`), `GOOGLE_GEMINI_BASE_URL` | for `gemini`; the key may be left out when a base URL is set |
 * | `LLM_THINKING_BUDGET` | for `anthropic`: the token budget of its thinking block (>= 1024; 0: no thinking block); for `gemini`: `thinkingBudget` (>= -1); other providers choose reasoning by model name |
 */
import type * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import type * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AgentConfigError } from "../errors.ts"
import { effectConfig as config, effectConfigProvider as configProvider } from "../internal/lazy-effect.ts"
import { type ModelClient, ModelClientService } from "../model/model-client.ts"
import { anthropic } from "./anthropic.ts"
import { ollama } from "./ollama.ts"
import { openai } from "./openai.ts"
import { openaiResponses } from "./openai-responses.ts"
import { gemini } from "./gemini.ts"

/** What `fromEnv` found: the client, and the settings it was built with. */
export interface EnvModel {
  readonly provider: "openai" | "openai-responses" | "ollama" | "anthropic" | "gemini"
  readonly model: string
  /** `undefined` when `LLM_TEMPERATURE` is unset: the request carries none, and the server's default applies. */
  readonly temperature: number | undefined
  readonly client: ModelClient
  /** `{ maxTurns }` when `LLM_MAX_AGENT_STEPS` is set, else `{}`: pass it to `.budget(...)`. */
  readonly budget: { readonly maxTurns?: number }
  /** Where requests go: the base URL or Ollama host; `undefined` for OpenAI's default. */
  readonly endpoint: string | undefined
}

// Effect's `Config` and `ConfigProvider` (with the file system and path modules they import: ~20 modules)

const makeEnvConfig = () => {
  const Config = config()
  return Config.all({
    provider: Config.Literals(["openai", "openai-responses", "ollama", "anthropic", "gemini"], "AI_PROVIDER"),
    model: Config.NonEmptyString("AI_MODEL"),
    temperature: Config.option(Config.Finite("LLM_TEMPERATURE")),
    maxSteps: Config.option(Config.Int("LLM_MAX_AGENT_STEPS")),
    openaiApiKey: Config.option(Config.Redacted("OPENAI_API_KEY")),
    openaiBaseUrl: Config.option(Config.NonEmptyString("OPENAI_BASE_URL")),
    ollamaHost: Config.option(Config.NonEmptyString("OLLAMA_HOST")),
    anthropicApiKey: Config.option(Config.Redacted("ANTHROPIC_API_KEY")),
    anthropicBaseUrl: Config.option(Config.NonEmptyString("ANTHROPIC_BASE_URL")),
    thinkingBudget: Config.option(Config.Int("LLM_THINKING_BUDGET")),
    geminiApiKey: Config.option(Config.Redacted("GEMINI_API_KEY")),
    googleApiKey: Config.option(Config.Redacted("GOOGLE_API_KEY")),
    geminiBaseUrl: Config.option(Config.NonEmptyString("GOOGLE_GEMINI_BASE_URL"))
  })
}
let envConfigMemo: ReturnType<typeof makeEnvConfig> | undefined
const envConfig = () => (envConfigMemo ??= makeEnvConfig())

const subject = "environment"

/**
 * Reads the environment (default `process.env`) and builds the client it describes. Throws
 * `AgentConfigError` naming the variable that is missing or invalid.
 *
 * @example
 * ```ts
 * // AI_PROVIDER=ollama AI_MODEL=qwen2.5:7b LLM_MAX_AGENT_STEPS=6
 * // AI_PROVIDER=anthropic AI_MODEL=claude-sonnet-5-5 LLM_THINKING_BUDGET=4000 ANTHROPIC_API_KEY=...
 * const env = fromEnv()
 * const calculator = agent("calc").model(env.client).budget(env.budget)
 * ```
 */
export const fromEnv = (env: Record<string, string | undefined> = process.env): EnvModel => {
  const exit = Effect.runSyncExit(envConfig().parse(configProvider().fromEnvRecord(env)))
  if (Exit.isFailure(exit)) throw new AgentConfigError({ subject, reason: describeConfigFailure(exit.cause, (name) => env[name]) })
  return envModel(exit.value)
}

/**
 * `fromEnv` as a Layer providing the `ModelClientService`, read from the current `ConfigProvider` (the
 * environment unless another is provided). A missing or malformed variable fails it with an
 * `AgentConfigError` naming the variable. `LLM_MAX_AGENT_STEPS` is checked but, being a budget, is
 * read with `fromEnv().budget`.
 *
 * @example
 * ```ts
 * const assistant = agent("assistant").tools({ lookup }).provide(fromEnvLayer)
 * await assistant.run("hi")
 * ```
 */
export const fromEnvLayer: Layer.Layer<ModelClientService, AgentConfigError> = Layer.effect(
  ModelClientService,
  Effect.gen(function*() {
    const provider = yield* configProvider().ConfigProvider
    const exit = yield* Effect.exit(envConfig().parse(provider))
    if (Exit.isFailure(exit)) return yield* new AgentConfigError({ subject, reason: describeConfigFailure(exit.cause) })
    return yield* Effect.try({
      try: () => envModel(exit.value).client,
      catch: (error) => error instanceof AgentConfigError ? error : new AgentConfigError({ subject, reason: String(error) })
    })
  })
)

const envModel = (config: Config.Success<ReturnType<typeof envConfig>>): EnvModel => {
  const maxSteps = Option.getOrUndefined(config.maxSteps)
  if (maxSteps !== undefined && maxSteps < 1) {
    throw new AgentConfigError({ subject, reason: `LLM_MAX_AGENT_STEPS must be a whole number >= 1, got ${maxSteps}` })
  }
  const budget: EnvModel["budget"] = maxSteps === undefined ? {} : { maxTurns: maxSteps }
  const temperature = Option.getOrUndefined(config.temperature)
  const sampling = temperature === undefined ? {} : { temperature }
  const common = { provider: config.provider, model: config.model, temperature, budget }
  if (config.provider === "ollama") {
    const host = Option.getOrUndefined(config.ollamaHost)
    const client = ollama(config.model, { ...sampling, ...(host === undefined ? {} : { host }) })
    return { ...common, client, endpoint: host ?? "localhost:11434" }
  }
  if (config.provider === "anthropic") {
    const apiKey = Option.getOrUndefined(Option.map(config.anthropicApiKey, Redacted.value))
    const baseURL = Option.getOrUndefined(config.anthropicBaseUrl)
    // 0 means no thinking (as for gemini, and as seed settings write "off"); else at least Anthropic's 1,024.
    const given = Option.getOrUndefined(config.thinkingBudget)
    const thinkingBudget = given === 0 ? undefined : given
    if (apiKey === undefined && baseURL === undefined) {
      throw new AgentConfigError({
        subject,
        reason: "ANTHROPIC_API_KEY is required when AI_PROVIDER=anthropic (or set ANTHROPIC_BASE_URL for a server that needs no key)"
      })
    }
    if (thinkingBudget !== undefined && thinkingBudget < 1024) {
      throw new AgentConfigError({ subject, reason: `LLM_THINKING_BUDGET must be 0 (no thinking) or a whole number >= 1024, got ${thinkingBudget}` })
    }
    const client = anthropic(config.model, {
      ...sampling,
      apiKey: apiKey ?? "unused",
      ...(baseURL === undefined ? {} : { baseURL }),
      ...(thinkingBudget === undefined ? {} : { thinkingBudget })
    })
    return { ...common, client, endpoint: baseURL }
  }
  if (config.provider === "gemini") {
    const apiKey = Option.getOrUndefined(Option.map(Option.orElse(config.geminiApiKey, () => config.googleApiKey), Redacted.value))
    const baseURL = Option.getOrUndefined(config.geminiBaseUrl)
    // 0 is Gemini's own "no thinking" (`thinkingConfig.thinkingBudget: 0`), sent as it is.
    const thinkingBudget = Option.getOrUndefined(config.thinkingBudget)
    if (apiKey === undefined && baseURL === undefined) {
      throw new AgentConfigError({
        subject,
        reason: "GEMINI_API_KEY (or GOOGLE_API_KEY) is required when AI_PROVIDER=gemini (or set GOOGLE_GEMINI_BASE_URL for a server that needs no key)"
      })
    }
    if (thinkingBudget !== undefined && thinkingBudget < -1) {
      throw new AgentConfigError({ subject, reason: `LLM_THINKING_BUDGET must be a whole number >= -1 for gemini, got ${thinkingBudget}` })
    }
    const client = gemini(config.model, {
      ...sampling,
      apiKey: apiKey ?? "unused",
      ...(baseURL === undefined ? {} : { baseURL }),
      ...(thinkingBudget === undefined ? {} : { thinkingBudget })
    })
    return { ...common, client, endpoint: baseURL }
  }
  const apiKey = Option.getOrUndefined(Option.map(config.openaiApiKey, Redacted.value))
  const baseURL = Option.getOrUndefined(config.openaiBaseUrl)
  if (apiKey === undefined && baseURL === undefined) {
    throw new AgentConfigError({
      subject,
      reason: `OPENAI_API_KEY is required when AI_PROVIDER=${config.provider} (or set OPENAI_BASE_URL for a server that needs no key)`
    })
  }
  const client = (config.provider === "openai-responses" ? openaiResponses : openai)(config.model, {
    ...sampling,
    apiKey: apiKey ?? "unused",
    ...(baseURL === undefined ? {} : { baseURL })
  })
  return { ...common, client, endpoint: baseURL }
}

/** "AI_MODEL is not set" or "LLM_TEMPERATURE=hot: Expected a string representing a finite number". */
const describeConfigFailure = (cause: Cause.Cause<Config.ConfigError>, valueOf?: (variable: string) => string | undefined): string => {
  const failure = cause.reasons.find((r) => r._tag === "Fail")
  if (failure === undefined || failure._tag !== "Fail") return String(cause)
  const inner = failure.error.cause
  const text = inner instanceof Error ? inner.message : String(inner)
  const located = /^([\s\S]*?)\s+at \["(\w+)"\]/.exec(text)
  if (located === null) return text
  const [, expected, variable] = located
  if (valueOf === undefined) return `${variable}: ${expected}`
  const value = valueOf(variable!)
  return value === undefined ? `${variable} is not set (${expected})` : `${variable}=${JSON.stringify(value)}: ${expected}`
}
