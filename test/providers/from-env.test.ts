import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { AgentConfigError, fromEnv } from "../../src/index.ts"
import { anthropicText, ollamaText, openAiText, useLoopback } from "./loopback.ts"

const serve = useLoopback()

const request = { messages: [{ role: "user" as const, content: "hi" }], tools: [] }

describe("fromEnv", () => {
  it("builds an OpenAI client against OPENAI_BASE_URL with the temperature and step budget", async () => {
    const server = await serve([openAiText("ok")])
    const env = fromEnv({
      AI_PROVIDER: "openai",
      AI_MODEL: "gpt-4o-mini",
      LLM_TEMPERATURE: "0.3",
      LLM_MAX_AGENT_STEPS: "6",
      OPENAI_API_KEY: "sk-env",
      OPENAI_BASE_URL: `${server.url}/v1`
    })
    expect(env).toMatchObject({ provider: "openai", model: "gpt-4o-mini", temperature: 0.3, budget: { maxTurns: 6 } })
    await Effect.runPromise(env.client.chat(request))
    expect(server.requests[0]!.body).toMatchObject({ model: "gpt-4o-mini", temperature: 0.3 })
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-env")
  })

  it("builds an Ollama client against OLLAMA_HOST, sending no temperature by default", async () => {
    const server = await serve([ollamaText("ok")])
    const env = fromEnv({ AI_PROVIDER: "ollama", AI_MODEL: "qwen2.5:7b", OLLAMA_HOST: `127.0.0.1:${server.port}` })
    expect(env).toMatchObject({ provider: "ollama", temperature: undefined, budget: {} })
    await Effect.runPromise(env.client.chat(request))
    expect(server.requests[0]!.body).toMatchObject({ model: "qwen2.5:7b" })
    expect(server.requests[0]!.body.options?.temperature).toBeUndefined()
  })

  it("builds an Anthropic client with LLM_THINKING_BUDGET as its thinking budget", async () => {
    const server = await serve([anthropicText("ok")])
    const env = fromEnv({
      AI_PROVIDER: "anthropic",
      AI_MODEL: "claude-sonnet-4-6",
      LLM_THINKING_BUDGET: "2048",
      ANTHROPIC_API_KEY: "sk-ant",
      ANTHROPIC_BASE_URL: server.url
    })
    expect(env).toMatchObject({ provider: "anthropic", model: "claude-sonnet-4-6", endpoint: server.url })
    await Effect.runPromise(env.client.chat(request))
    expect(server.requests[0]!.body).toMatchObject({ model: "claude-sonnet-4-6", thinking: { type: "enabled", budget_tokens: 2048 } })
  })

  it("reads LLM_THINKING_BUDGET=0 for Anthropic as no thinking block (as for Gemini), not as an error", async () => {
    const server = await serve([anthropicText("ok")])
    const env = fromEnv({ AI_PROVIDER: "anthropic", AI_MODEL: "claude-sonnet-4-6", LLM_THINKING_BUDGET: "0", ANTHROPIC_API_KEY: "sk-ant", ANTHROPIC_BASE_URL: server.url })
    await Effect.runPromise(env.client.chat(request))
    expect(server.requests[0]!.body).toMatchObject({ model: "claude-sonnet-4-6" })
    expect(server.requests[0]!.body).not.toHaveProperty("thinking")
  })

  it.each([
    [{}, /AI_PROVIDER/],
    [{ AI_PROVIDER: "mistral", AI_MODEL: "m" }, /AI_PROVIDER/],
    [{ AI_PROVIDER: "anthropic", AI_MODEL: "m" }, /ANTHROPIC_API_KEY/],
    [{ AI_PROVIDER: "anthropic", AI_MODEL: "m", ANTHROPIC_API_KEY: "k", LLM_THINKING_BUDGET: "500" }, /LLM_THINKING_BUDGET/],
    [{ AI_PROVIDER: "anthropic", AI_MODEL: "m", ANTHROPIC_API_KEY: "k", LLM_THINKING_BUDGET: "lots" }, /LLM_THINKING_BUDGET/],
    [{ AI_PROVIDER: "ollama" }, /AI_MODEL/],
    [{ AI_PROVIDER: "ollama", AI_MODEL: "m", LLM_TEMPERATURE: "hot" }, /LLM_TEMPERATURE/],
    [{ AI_PROVIDER: "ollama", AI_MODEL: "m", LLM_MAX_AGENT_STEPS: "2.5" }, /LLM_MAX_AGENT_STEPS/],
    [{ AI_PROVIDER: "ollama", AI_MODEL: "m", LLM_MAX_AGENT_STEPS: "0" }, /LLM_MAX_AGENT_STEPS/],
    [{ AI_PROVIDER: "openai", AI_MODEL: "m" }, /OPENAI_API_KEY/]
  ])("refuses %j with one error naming the variable", (env, variable) => {
    expect(() => fromEnv(env)).toThrow(AgentConfigError)
    expect(() => fromEnv(env)).toThrow(variable)
  })
})
