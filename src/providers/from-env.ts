/**
 * Chooses and configures a provider from environment variables, with Effect's `Config`, so a missing
 * or malformed value is one clear error naming the variable.
 *
 * | variable | meaning |
 * |---|---|
 * | `AI_PROVIDER` | `openai` or `ollama` (required) |
 * | `AI_MODEL` | the model name (required) |
 * | `LLM_TEMPERATURE` | a finite number, default 0 |
 * | `LLM_MAX_AGENT_STEPS` | a whole number >= 1: the agent's `maxTurns` |
 * | `OPENAI_API_KEY`, `OPENAI_BASE_URL` | for `openai`; the key may be left out when a base URL is set |
 * | `OLLAMA_HOST` | for `ollama`: `host`, `host:port` or a URL; default `localhost:11434` |
 */
import { type Cause, Config, ConfigProvider, Effect, Exit, Option, Redacted } from "effect"
import { AgentConfigError } from "../errors.ts"
import type { ModelClient } from "../model/model-client.ts"
import { ollama } from "./ollama.ts"
import { openai } from "./openai.ts"

/** What `fromEnv` found: the client, and the settings it was built with. */
export interface EnvModel {
  readonly provider: "openai" | "ollama"
  readonly model: string
  readonly temperature: number
  readonly client: ModelClient
  /** `{ maxTurns }` when `LLM_MAX_AGENT_STEPS` is set, else `{}`: pass it to `.budget(...)`. */
  readonly budget: { readonly maxTurns?: number }
  /** Where requests go: the base URL or Ollama host; `undefined` for OpenAI's default. */
  readonly endpoint: string | undefined
}

const envConfig = Config.all({
  provider: Config.Literals(["openai", "ollama"], "AI_PROVIDER"),
  model: Config.NonEmptyString("AI_MODEL"),
  temperature: Config.Finite("LLM_TEMPERATURE").pipe(Config.withDefault(0)),
  maxSteps: Config.option(Config.Int("LLM_MAX_AGENT_STEPS")),
  openaiApiKey: Config.option(Config.Redacted("OPENAI_API_KEY")),
  openaiBaseUrl: Config.option(Config.NonEmptyString("OPENAI_BASE_URL")),
  ollamaHost: Config.option(Config.NonEmptyString("OLLAMA_HOST"))
})

const subject = "environment"

/**
 * Reads the environment (default `process.env`) and builds the client it describes. Throws
 * `AgentConfigError` naming the variable that is missing or invalid.
 *
 * @example
 * ```ts
 * // AI_PROVIDER=ollama AI_MODEL=qwen2.5:7b LLM_MAX_AGENT_STEPS=6
 * const env = fromEnv()
 * const calculator = agent("calc").model(env.client).budget(env.budget)
 * ```
 */
export const fromEnv = (env: Record<string, string | undefined> = process.env): EnvModel => {
  const exit = Effect.runSyncExit(envConfig.parse(ConfigProvider.fromEnvRecord(env)))
  if (Exit.isFailure(exit)) throw new AgentConfigError({ subject, reason: describeConfigFailure(exit.cause, env) })
  const config = exit.value
  const maxSteps = Option.getOrUndefined(config.maxSteps)
  if (maxSteps !== undefined && maxSteps < 1) {
    throw new AgentConfigError({ subject, reason: `LLM_MAX_AGENT_STEPS must be a whole number >= 1, got ${maxSteps}` })
  }
  const budget: EnvModel["budget"] = maxSteps === undefined ? {} : { maxTurns: maxSteps }
  const common = { provider: config.provider, model: config.model, temperature: config.temperature, budget }
  if (config.provider === "ollama") {
    const host = Option.getOrUndefined(config.ollamaHost)
    const client = ollama(config.model, { temperature: config.temperature, ...(host === undefined ? {} : { host }) })
    return { ...common, client, endpoint: host ?? "localhost:11434" }
  }
  const apiKey = Option.getOrUndefined(Option.map(config.openaiApiKey, Redacted.value))
  const baseURL = Option.getOrUndefined(config.openaiBaseUrl)
  if (apiKey === undefined && baseURL === undefined) {
    throw new AgentConfigError({
      subject,
      reason: "OPENAI_API_KEY is required when AI_PROVIDER=openai (or set OPENAI_BASE_URL for a server that needs no key)"
    })
  }
  const client = openai(config.model, {
    temperature: config.temperature,
    apiKey: apiKey ?? "unused",
    ...(baseURL === undefined ? {} : { baseURL })
  })
  return { ...common, client, endpoint: baseURL }
}

/** "AI_MODEL is not set" or "LLM_TEMPERATURE=hot: Expected a string representing a finite number". */
const describeConfigFailure = (cause: Cause.Cause<Config.ConfigError>, env: Record<string, string | undefined>): string => {
  const failure = cause.reasons.find((r) => r._tag === "Fail")
  if (failure === undefined || failure._tag !== "Fail") return String(cause)
  const inner = failure.error.cause
  const text = inner instanceof Error ? inner.message : String(inner)
  const located = /^([\s\S]*?)\s+at \["(\w+)"\]/.exec(text)
  if (located === null) return text
  const [, expected, variable] = located
  const value = env[variable!]
  return value === undefined ? `${variable} is not set (${expected})` : `${variable}=${JSON.stringify(value)}: ${expected}`
}
