/**
 * Providers as Layers, against loopback servers: built from options, read with `Config` (the current
 * `ConfigProvider`, the environment by default), and `fromEnvLayer`; each provides the
 * `ModelClientService` an agent without `.model(...)` requires.
 */
import { Config, ConfigProvider, Effect, type Layer } from "effect"
import { describe, expect, it } from "vitest"
import {
  AgentConfigError,
  agent,
  anthropicLayer,
  anthropicLayerConfig,
  fromEnvLayer,
  type ModelClientService,
  ollamaLayer,
  ollamaLayerConfig,
  openaiLayer,
  openaiLayerConfig
} from "../../src/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { anthropicText, ollamaText, openAiText, useLoopback } from "./loopback.ts"

const serve = useLoopback()

/** Runs an agent without a model over `layer`, reading settings from `env`. */
const runWith = (layer: Layer.Layer<ModelClientService, AgentConfigError>, env: Record<string, string> = {}) =>
  agent("a")
    .provide(layer)
    .runEffect("hi")
    .pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env)))

describe("provider Layers from options", () => {
  it("openaiLayer", async () => {
    const server = await serve([openAiText("from openai")])
    expect(await agent("a").provide(openaiLayer("gpt-4o-mini", { apiKey: "sk", baseURL: `${server.url}/v1` })).run("hi")).toBe("from openai")
    expect(server.requests[0]!.body).toMatchObject({ model: "gpt-4o-mini" })
  })

  it("ollamaLayer", async () => {
    const server = await serve([ollamaText("from ollama")])
    expect(await agent("a").provide(ollamaLayer("qwen2.5:7b", { host: `127.0.0.1:${server.port}` })).run("hi")).toBe("from ollama")
  })

  it("anthropicLayer", async () => {
    const server = await serve([anthropicText("from anthropic")])
    expect(await agent("a").provide(anthropicLayer("claude-sonnet-4-6", { apiKey: "k", baseURL: server.url })).run("hi")).toBe("from anthropic")
  })

  it("a refused option fails the run with AgentConfigError, not the call that built the Layer", async () => {
    const saved = process.env.OPENAI_API_KEY
    delete process.env.OPENAI_API_KEY
    try {
      const layer = openaiLayer("gpt-4o-mini") // no key anywhere: the SDK refuses to build a client
      const error = failureOf(await runExit(runWith(layer)))
      expect(error).toBeInstanceOf(AgentConfigError)
      expect(error.message).toMatch(/credentials|apiKey/i)
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved
    }
  })
})

describe("provider Layers read with Config", () => {
  it("openaiLayerConfig reads AI_MODEL, OPENAI_API_KEY, OPENAI_BASE_URL and LLM_TEMPERATURE by default", async () => {
    const server = await serve([openAiText("configured")])
    const env = { AI_MODEL: "gpt-4o-mini", OPENAI_API_KEY: "sk-env", OPENAI_BASE_URL: `${server.url}/v1`, LLM_TEMPERATURE: "0.2" }
    expect(await Effect.runPromise(runWith(openaiLayerConfig(), env))).toBe("configured")
    expect(server.requests[0]!.body).toMatchObject({ model: "gpt-4o-mini", temperature: 0.2 })
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-env")
  })

  it("takes other Configs for any setting", async () => {
    const server = await serve([openAiText("ok")])
    const layer = openaiLayerConfig({ model: Config.succeed("local-model"), apiKey: Config.Redacted("MY_KEY"), baseURL: Config.String("MY_URL") })
    expect(await Effect.runPromise(runWith(layer, { MY_KEY: "sk-mine", MY_URL: `${server.url}/v1` }))).toBe("ok")
    expect(server.requests[0]!.body).toMatchObject({ model: "local-model" })
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-mine")
  })

  it("ollamaLayerConfig and anthropicLayerConfig", async () => {
    const ollamaServer = await serve([ollamaText("o")])
    expect(await Effect.runPromise(runWith(ollamaLayerConfig(), { AI_MODEL: "m", OLLAMA_HOST: `127.0.0.1:${ollamaServer.port}` }))).toBe("o")
    const anthropicServer = await serve([anthropicText("a")])
    expect(await Effect.runPromise(runWith(anthropicLayerConfig(), { AI_MODEL: "m", ANTHROPIC_BASE_URL: anthropicServer.url }))).toBe("a")
  })

  it.each([
    [{}, /AI_MODEL/],
    [{ AI_MODEL: "m" }, /OPENAI_API_KEY/],
    [{ AI_MODEL: "m", OPENAI_API_KEY: "k", LLM_TEMPERATURE: "hot" }, /LLM_TEMPERATURE/]
  ])("openaiLayerConfig refuses %j with an AgentConfigError naming the setting", async (env, setting) => {
    const error = failureOf(await runExit(runWith(openaiLayerConfig(), env)))
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(error.message).toMatch(setting)
  })
})

describe("fromEnvLayer", () => {
  it("provides the client fromEnv would build", async () => {
    const server = await serve([openAiText("env")])
    const env = { AI_PROVIDER: "openai", AI_MODEL: "gpt-4o-mini", OPENAI_API_KEY: "sk", OPENAI_BASE_URL: `${server.url}/v1` }
    expect(await Effect.runPromise(runWith(fromEnvLayer, env))).toBe("env")
  })

  it.each([
    [{}, /AI_PROVIDER/],
    [{ AI_PROVIDER: "mistral", AI_MODEL: "m" }, /AI_PROVIDER/],
    [{ AI_PROVIDER: "ollama", AI_MODEL: "m", LLM_TEMPERATURE: "hot" }, /LLM_TEMPERATURE/],
    [{ AI_PROVIDER: "openai", AI_MODEL: "m" }, /OPENAI_API_KEY/]
  ])("refuses %j with an AgentConfigError naming the variable", async (env, variable) => {
    const error = failureOf(await runExit(runWith(fromEnvLayer, env)))
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(error.message).toMatch(variable)
  })
})
