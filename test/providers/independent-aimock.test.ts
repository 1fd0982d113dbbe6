/**
 * The three providers against an implementation of their wire formats that this project did not
 * write: `@copilotkit/aimock` (its `LLMock` serves OpenAI Chat Completions at `/v1/chat/completions`,
 * Anthropic Messages at `/v1/messages` and Ollama at `/api/chat` from one fixture set), started on
 * 127.0.0.1 by the tests. The same calculator run goes through each provider.
 */
import { LLMock } from "@copilotkit/aimock"
import { Effect, Schema, Stream } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { agent, anthropic, type ModelClient, ollama, openai, outputStrategy, skill } from "../../src/index.ts"
import { makeCalculatorTools } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const fast = { retry: { times: 1, base: "5 millis" }, timeout: "5 seconds" } as const
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
  mock.on({ userMessage: "What is 3 + 5?", hasToolResult: true }, { content: "3 + 5 = 8" })
  mock.on({ userMessage: "Give me a number" }, { content: '{"n":42}' })
  mock.on({ userMessage: "Say hello" }, { content: "Hello!" })
  mock.on({ userMessage: "Think first" }, { content: "Done.", reasoning: "Let me think it through." })
  // aimock matches OpenAI's response_format type; its Ollama and Anthropic routes ignore format.
  mock.on({ userMessage: "Native number", responseFormat: "json_schema" }, { content: '{"n":7}' })
  mock.on({ userMessage: "Native number" }, { content: '{"n":7}' })
})

const clients: ReadonlyArray<readonly [string, () => ModelClient]> = [
  ["openai", () => openai("gpt-4o-mini", { apiKey: "mock", baseURL: `${mock.url}/v1`, ...fast })],
  ["anthropic", () => anthropic("claude-sonnet-4-6", { apiKey: "mock", baseURL: mock.url, ...fast })],
  ["ollama", () => ollama("qwen2.5:7b", { host: mock.url, ...fast })]
]

describe.each(clients)("%s provider against @copilotkit/aimock", (name, client) => {
  it("answers a plain prompt", async () => {
    const response = await Effect.runPromise(client().chat({ messages: [{ role: "user", content: "Say hello" }], tools: [] }))
    expect(response).toMatchObject({ _tag: "Text", content: "Hello!" })
  })

  it("runs the calculator: a tool call, its result sent back, the final answer", async () => {
    const tools = makeCalculatorTools()
    const calculator = agent("calculator")
      .model(client())
      .tools({ add: tools.add, multiply: tools.multiply })
      .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
    expect(await calculator.run("What is 3 + 5?")).toBe("3 + 5 = 8")
    expect(tools.addSpy.calls).toEqual([{ a: 3, b: 5 }])
    const paths = mock.getRequests().map((r) => r.path)
    expect(paths).toHaveLength(2)
    expect(new Set(paths).size).toBe(1)
    expect(paths[0]).toBe(name === "openai" ? "/v1/chat/completions" : name === "anthropic" ? "/v1/messages" : "/api/chat")
  })

  it("retries the server's 503 and then succeeds; gives up on its 401", async () => {
    mock.nextRequestError(503, { message: "upstream overloaded", type: "server_error" })
    const ok = await Effect.runPromise(client().chat({ messages: [{ role: "user", content: "Say hello" }], tools: [] }))
    expect(ok).toMatchObject({ content: "Hello!" })
    expect(mock.getRequests()).toHaveLength(2)
    mock.clearRequests()
    mock.nextRequestError(401, { message: "invalid api key", type: "authentication_error" })
    const exit = await Effect.runPromise(Effect.exit(client().chat({ messages: [{ role: "user", content: "Say hello" }], tools: [] })))
    expect(exit._tag).toBe("Failure")
    expect(String(exit._tag === "Failure" ? exit.cause : "")).toContain("401")
    expect(mock.getRequests()).toHaveLength(1)
  })

  it("native structured output: the typed answer comes back as JSON text and decodes", async () => {
    const typed = agent("numbers", { output: outputStrategy(Schema.Struct({ n: Schema.Finite }), "native") }).model(client())
    expect(await typed.run("Native number")).toEqual({ n: 7 })
    const body = mock.getRequests()[0]!.body as Record<string, unknown>
    if (name === "openai") expect(body.response_format).toMatchObject({ type: "json_schema" })
  })

  // aimock's /api/chat sends the reasoning as `reasoning_content` (Ollama documents `thinking`): both are read.
  it("reads the server's reasoning beside the answer", async () => {
    const response = await Effect.runPromise(client().chat({ messages: [{ role: "user", content: "Think first" }], tools: [] }))
    expect(response).toMatchObject({ _tag: "Text", content: "Done.", reasoning: [{ _tag: "Thinking", text: "Let me think it through." }] })
    if (name === "anthropic") expect(response.reasoning?.[0]).toHaveProperty("signature")
  })

  it("decodes a typed answer given as JSON text", async () => {
    const typed = agent("numbers", { output: Schema.Struct({ n: Schema.Finite }) }).model(client())
    // aimock answers text here rather than a submit call; the loop accepts a final text that decodes.
    expect(await typed.run("Give me a number")).toEqual({ n: 42 })
  })
})

// aimock streams when asked (`stream: true`): OpenAI SSE chunks ending with [DONE], Ollama NDJSON.
describe.each(clients.filter(([name]) => name !== "anthropic"))("%s provider streaming against @copilotkit/aimock", (name, client) => {
  it("streams the calculator run: tool-call deltas, the tool, text deltas, the same answer as run()", async () => {
    const tools = makeCalculatorTools()
    const calculator = agent("calculator")
      .model(client())
      .tools({ add: tools.add, multiply: tools.multiply })
      .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
    const events = await Effect.runPromise(Stream.runCollect(calculator.runStream("What is 3 + 5?")))
    expect(events.at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Success", output: "3 + 5 = 8" } })
    expect(events.filter((e) => e._tag === "TextDelta").map((e) => (e as { delta: string }).delta).join("")).toBe("3 + 5 = 8")
    expect(events.filter((e) => e._tag === "ToolCallStart").map((e) => (e as { tool: string }).tool)).toEqual(["add"])
    expect(tools.addSpy.calls).toEqual([{ a: 3, b: 5 }])
    expect(mock.getRequests().map((r) => (r.body as { stream?: unknown }).stream)).toEqual([true, true])
    expect(name).toBeDefined()
  })
})
