/**
 * The OpenAI provider against `@dwmkerr/mock-llm`, an OpenAI-compatible mock server this project did
 * not write, started on 127.0.0.1 by the test. Its documented replies are minimal: no `usage`, no
 * `created`, and tool calls with neither `id`, `type` nor `arguments` (issue #13, bug 3).
 */
import { createServer } from "@dwmkerr/mock-llm/dist/server.js"
import { Effect, Schema } from "effect"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it, vi } from "vitest"
import { agent, openai, skill, tool } from "../../src/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

type Rule = { path: string; match?: string; sequence?: number; response: { status: number; content: string } }

// mock-llm prints its A2A and MCP endpoints when it starts; keep test output readable.
vi.spyOn(console, "log").mockImplementation(() => {})

let server: Server | undefined
afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())))
  server = undefined
})

/** Starts mock-llm with `rules` (last match wins) after its default echo rule. */
const start = async (rules: ReadonlyArray<Rule>): Promise<string> => {
  const echo: Rule = {
    path: "/v1/chat/completions",
    match: "@",
    response: {
      status: 200,
      content:
        '{"id":"chatcmpl-{{timestamp}}","object":"chat.completion","model":"{{jmes request body.model}}","choices":[{"message":{"role":"assistant","content":"{{jmes request body.messages[-1].content}}"},"finish_reason":"stop"}]}'
    }
  }
  const app = createServer({ streaming: { chunkSize: 50, chunkIntervalMs: 1 }, rules: [echo, ...rules] }, "127.0.0.1", 0)
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
}

const fast = { retry: { times: 1, base: "5 millis" }, timeout: "5 seconds" } as const

describe("openai provider against @dwmkerr/mock-llm", () => {
  it("reads its echo reply (no usage, no created)", async () => {
    const baseURL = await start([])
    const response = await Effect.runPromise(
      openai("gpt-4", { apiKey: "k", baseURL, ...fast }).chat({ messages: [{ role: "user", content: "Hello" }], tools: [] })
    )
    expect(response).toEqual({ _tag: "Text", content: "Hello", finishReason: "stop", responseId: expect.stringMatching(/^chatcmpl-/), responseModel: "gpt-4" })
  })

  it("runs its documented tool-calling sequence: a call without id, type or arguments, then the answer", async () => {
    const baseURL = await start([
      {
        path: "/v1/chat/completions",
        sequence: 0,
        response: { status: 200, content: '{"choices":[{"message":{"tool_calls":[{"function":{"name":"get_weather"}}]},"finish_reason":"tool_calls"}]}' }
      },
      {
        path: "/v1/chat/completions",
        sequence: 1,
        response: { status: 200, content: '{"choices":[{"message":{"content":"The weather is 72°F"},"finish_reason":"stop"}]}' }
      }
    ])
    const calls: Array<unknown> = []
    const getWeather = tool("get_weather", {
      description: "Current weather",
      args: Schema.Struct({}),
      run: (args) => {
        calls.push(args)
        return "72°F, sunny"
      }
    })
    const forecaster = agent("forecaster")
      .model(openai("gpt-4", { apiKey: "k", baseURL, ...fast }))
      .tools({ get_weather: getWeather })
      .skills(({ get_weather }) => [skill("weather", "Tell the weather").tools(get_weather)])
    expect(await forecaster.run("What's the weather?")).toBe("The weather is 72°F")
    expect(calls).toEqual([{}])
  })

  it("reports its simulated 401 without retrying, and retries its 503", async () => {
    const baseURL = await start([
      {
        path: "/v1/chat/completions",
        match: "contains(body.messages[-1].content, 'error-401')",
        response: { status: 401, content: '{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}' }
      },
      {
        path: "/v1/chat/completions",
        match: "contains(body.messages[-1].content, 'error-503')",
        response: { status: 503, content: '{"error":{"message":"Service unavailable","type":"server_error"}}' }
      }
    ])
    const client = openai("gpt-4", { apiKey: "k", baseURL, ...fast })
    const unauthorised = failureOf(await runExit(client.chat({ messages: [{ role: "user", content: "error-401" }], tools: [] })))
    expect(unauthorised).toMatchObject({ status: 401, retryable: false })
    expect(unauthorised.message).toContain("Incorrect API key provided.")
    const unavailable = failureOf(await runExit(client.chat({ messages: [{ role: "user", content: "error-503" }], tools: [] })))
    expect(unavailable).toMatchObject({ status: 503, retryable: true })
  })
})
