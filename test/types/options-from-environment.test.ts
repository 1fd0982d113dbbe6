/**
 * Options users fill from the environment take `string | undefined` under `exactOptionalPropertyTypes`
 * (this repository's setting): `openai(model, { apiKey: process.env.OPENAI_API_KEY })` compiles, and
 * undefined means "not given" (the default applies). `tsc --noEmit` in `npm test` checks this file.
 */
import { describe, expectTypeOf, it } from "vitest"
import { anthropic, gemini, ollama, openai, openaiResponses } from "../../src/index.ts"
import { studioHooks, type StudioHooksOptions } from "../../src/studio/index.ts"

const fromEnvironment = (name: string): string | undefined => process.env[name]

describe("options read from the environment", () => {
  it("take string | undefined", () => {
    // Type-checked, not called: without the variables set, a provider refuses to be built (AgentConfigError).
    const build = () => {
      const key = fromEnvironment("API_KEY")
      const url = fromEnvironment("BASE_URL")
      openai("gpt-4o-mini", { apiKey: key, baseURL: url, organization: fromEnvironment("OPENAI_ORG") })
      openaiResponses("gpt-4o-mini", { apiKey: key, baseURL: url })
      anthropic("claude-sonnet-4-5", { apiKey: key, baseURL: url })
      gemini("gemini-2.5-flash", { apiKey: key, baseURL: url })
      ollama("qwen2.5:7b", { host: fromEnvironment("OLLAMA_HOST") })
      studioHooks({ url: fromEnvironment("EFFECT_AGENT_STUDIO_URL"), token: fromEnvironment("STUDIO_TOKEN") })
    }
    expectTypeOf(build).toBeFunction()
    expectTypeOf<{ readonly url: string | undefined }>().toExtend<StudioHooksOptions>()
  })
})
