/**
 * Streaming against an implementation of each wire format this project did not write:
 * `@copilotkit/aimock` streams Anthropic Messages SSE (named events), OpenAI Responses SSE and Gemini
 * `streamGenerateContent` when asked. The same calculator run goes through each provider's `stream`.
 */
import { LLMock } from "@copilotkit/aimock"
import { Effect, Stream } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { agent, anthropic, type ModelClient, skill } from "../../src/index.ts"
import { makeCalculatorTools } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"
import { moreStreamingClients } from "./aimock-clients.ts"

quietLogs()

const fast = { retry: { times: 1, base: "5 millis" }, timeout: "5 seconds", idleTimeout: "10 seconds" } as const
let mock: LLMock

beforeAll(async () => {
  mock = new LLMock({ port: 0, host: "127.0.0.1", logLevel: "silent" })
  await mock.start()
})
afterAll(async () => {
  await mock.stop()
})
beforeEach(() => {
  mock.reset()
  mock.on({ userMessage: "What is 3 + 5?", hasToolResult: false }, { toolCalls: [{ name: "add", arguments: '{"a":3,"b":5}' }] })
  mock.on({ userMessage: "What is 3 + 5?", hasToolResult: true }, { content: "3 + 5 = 8 ✓ — ünïcödé" })
  mock.on({ userMessage: "Think first" }, { content: "Done.", reasoning: "Let me think it through." })
})

const clients: ReadonlyArray<readonly [string, () => ModelClient]> = [
  ["anthropic", () => anthropic("claude-sonnet-4-6", { apiKey: "mock", baseURL: mock.url, ...fast })],
  ...moreStreamingClients(() => mock.url, fast)
]

describe.each(clients)("%s provider streaming against @copilotkit/aimock", (_name, client) => {
  it("streams the calculator run: tool-call deltas, the tool, text deltas, the same answer as run()", async () => {
    const tools = makeCalculatorTools()
    const calculator = agent("calculator")
      .model(client())
      .tools({ add: tools.add, multiply: tools.multiply })
      .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
    const events = await Effect.runPromise(Stream.runCollect(calculator.runStream("What is 3 + 5?")))
    expect(events.at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Success", output: "3 + 5 = 8 ✓ — ünïcödé" } })
    expect(events.filter((e) => e._tag === "TextDelta").map((e) => (e as { delta: string }).delta).join("")).toBe("3 + 5 = 8 ✓ — ünïcödé")
    expect(events.filter((e) => e._tag === "ToolCallStart").map((e) => (e as { tool: string }).tool)).toEqual(["add"])
    expect(tools.addSpy.calls).toEqual([{ a: 3, b: 5 }])
    expect(mock.getRequests()).toHaveLength(2)
    const tools2 = makeCalculatorTools()
    const plain = agent("calculator")
      .model(client())
      .tools({ add: tools2.add, multiply: tools2.multiply })
      .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
    expect(await plain.run("What is 3 + 5?")).toBe("3 + 5 = 8 ✓ — ünïcödé")
  })

  it("streams the server's reasoning as reasoning deltas beside the answer", async () => {
    const parts = await Effect.runPromise(Stream.runCollect(client().stream!({ messages: [{ role: "user", content: "Think first" }], tools: [] })))
    expect(parts.filter((p) => p._tag === "ReasoningDelta").map((p) => (p as { delta: string }).delta).join("")).toBe("Let me think it through.")
    expect(parts.filter((p) => p._tag === "TextDelta").map((p) => (p as { delta: string }).delta).join("")).toBe("Done.")
  })
})
