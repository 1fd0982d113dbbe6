import { Effect, Fiber, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, anthropic, ModelError, type ModelRequest, skill } from "../../src/index.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"
import {
  anthropicError,
  anthropicMessage,
  anthropicText,
  anthropicToolUse,
  closedPort,
  fastRetries as fast,
  useLoopback
} from "./loopback.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const serve = useLoopback()
const { add, multiply } = makeCalculatorTools()
const request: ModelRequest = {
  messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }],
  tools: [add.definition, multiply.definition]
}

const calculatorOn = (baseURL: string, options: { thinkingBudget?: number } = {}) => {
  const tools = makeCalculatorTools()
  const calculator = agent("calculator")
    .prompt("You are a calculator. Use the tools.")
    .model(anthropic("claude-sonnet-4-6", { apiKey: "sk-ant-test", baseURL, temperature: 0.1, ...options, ...fast }))
    .tools({ add: tools.add, multiply: tools.multiply })
    .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  return { ...tools, calculator }
}

describe("anthropic provider against a loopback Messages API server", () => {
  it("runs the calculator end to end and sends the documented request shapes", async () => {
    const s = await serve([
      anthropicToolUse([{ id: "toolu_1", name: "add", input: { a: 3, b: 5 } }], "Adding first."),
      anthropicToolUse([{ id: "toolu_2", name: "multiply", input: { a: 8, b: 2 } }]),
      anthropicText("(3 + 5) * 2 = 16")
    ])
    const { calculator, addSpy, multiplySpy } = calculatorOn(s.url)
    expect(await calculator.run("What is (3 + 5) * 2?")).toBe("(3 + 5) * 2 = 16")
    expect(addSpy.calls).toEqual([{ a: 3, b: 5 }])
    expect(multiplySpy.calls).toEqual([{ a: 8, b: 2 }])

    expect(s.requests.map((r) => `${r.method} ${r.url}`)).toEqual(Array(3).fill("POST /v1/messages"))
    // @anthropic-ai/sdk 1.x sends the key as a bearer token (0.x sent x-api-key).
    expect(s.requests[0]!.headers.authorization ?? s.requests[0]!.headers["x-api-key"]).toMatch(/sk-ant-test/)
    expect(s.requests[0]!.headers["anthropic-version"]).toBeDefined()
    const first = s.requests[0]!.body
    expect(first).toMatchObject({ model: "claude-sonnet-4-6", max_tokens: 4096, temperature: 0.1, tool_choice: { type: "auto" } })
    expect(typeof first.system).toBe("string")
    expect(first.system).toContain("You are a calculator")
    expect(first.messages).toEqual([{ role: "user", content: "What is (3 + 5) * 2?" }])
    expect(first.tools[0]).toEqual({
      name: "add",
      description: "Add two numbers",
      input_schema: {
        type: "object",
        properties: { a: { type: "number", description: "left operand" }, b: { type: "number" } },
        required: ["a", "b"],
        additionalProperties: false
      }
    })
    expect(s.requests[2]!.body.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: [{ type: "text", text: "Adding first." }, { type: "tool_use", id: "toolu_1", name: "add", input: { a: 3, b: 5 } }]
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "8" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_2", name: "multiply", input: { a: 8, b: 2 } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "16" }] }
    ])
  })

  it("puts the results of parallel calls in one user message", async () => {
    const s = await serve([
      anthropicToolUse([{ id: "t1", name: "add", input: { a: 1, b: 2 } }, { id: "t2", name: "multiply", input: { a: 2, b: 3 } }]),
      anthropicText("3 and 6")
    ])
    const { calculator } = calculatorOn(s.url)
    expect(await calculator.run("1+2 and 2*3")).toBe("3 and 6")
    expect(s.requests[1]!.body.messages.at(-1)).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "t1", content: "3" }, { type: "tool_result", tool_use_id: "t2", content: "6" }]
    })
  })

  it("maps tool choice: required is any, a named tool is tool, none is none", async () => {
    const s = await serve([anthropicText("ok")])
    const client = anthropic("m", { apiKey: "k", baseURL: s.url, disableParallelToolUse: true })
    await Effect.runPromise(client.chat({ ...request, toolChoice: "required" }))
    await Effect.runPromise(client.chat({ ...request, toolChoice: { tool: "multiply" } }))
    await Effect.runPromise(client.chat({ ...request, toolChoice: "none" }))
    expect(s.requests.map((r) => r.body.tool_choice)).toEqual([
      { type: "any", disable_parallel_tool_use: true },
      { type: "tool", name: "multiply", disable_parallel_tool_use: true },
      { type: "none" }
    ])
  })

  it("extended thinking: sends the budget, no temperature, and the signed thinking back first", async () => {
    const s = await serve([
      {
        json: anthropicMessage(
          [
            { type: "thinking", thinking: "I need add.", signature: "sig-abc" },
            { type: "redacted_thinking", data: "opaque" },
            { type: "tool_use", id: "toolu_9", name: "add", input: { a: 1, b: 1 } }
          ],
          "tool_use"
        )
      },
      anthropicText("2")
    ])
    const { calculator } = calculatorOn(s.url, { thinkingBudget: 2048 })
    expect(await calculator.run("1+1")).toBe("2")
    const first = s.requests[0]!.body
    expect(first.thinking).toEqual({ type: "enabled", budget_tokens: 2048 })
    expect(first.max_tokens).toBeGreaterThan(2048)
    expect(first).not.toHaveProperty("temperature")
    expect(s.requests[1]!.body.messages[1]).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I need add.", signature: "sig-abc" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "tool_use", id: "toolu_9", name: "add", input: { a: 1, b: 1 } }
      ]
    })
  })

  it("with thinking, a forced tool choice is sent as auto plus an instruction (the API refuses forced use)", async () => {
    const s = await serve([anthropicText("ok")])
    await Effect.runPromise(anthropic("m", { apiKey: "k", baseURL: s.url, thinkingBudget: 1024 }).chat({ ...request, toolChoice: { tool: "add" } }))
    expect(s.requests[0]!.body.tool_choice).toEqual({ type: "auto" })
    expect(s.requests[0]!.body.system).toContain('Call the tool "add" now.')
  })

  it("carries usage with cache reads, the finish reason, and the message's id and model", async () => {
    const s = await serve([{
      json: {
        ...anthropicMessage([{ type: "text", text: "hi" }], "end_turn", {
          input_tokens: 10,
          output_tokens: 5,
          cache_read_input_tokens: 90,
          cache_creation_input_tokens: 0
        }),
        id: "msg_013Zva2CMHLNnXjNJJKqJ2EF"
      }
    }])
    const response = await Effect.runPromise(anthropic("m", { apiKey: "k", baseURL: s.url }).chat(request))
    expect(response).toEqual({
      _tag: "Text",
      content: "hi",
      finishReason: "stop",
      usage: { inputTokens: 100, outputTokens: 5, cachedInputTokens: 90 },
      responseId: "msg_013Zva2CMHLNnXjNJJKqJ2EF",
      responseModel: "claude-sonnet-4-6"
    })
  })

  it("max_tokens ends with ModelError kind length; refusal with kind refusal", async () => {
    const s = await serve([
      { json: anthropicMessage([{ type: "text", text: "The answ" }], "max_tokens") },
      { json: anthropicMessage([], "refusal") }
    ])
    const client = anthropic("m", { apiKey: "k", baseURL: s.url })
    expect(failureOf(await runExit(client.chat(request)))).toMatchObject({ kind: "length", partial: "The answ" })
    expect(failureOf(await runExit(client.chat(request)))).toMatchObject({ kind: "refusal" })
  })

  it("a typed agent gets its output through the submit tool", async () => {
    const s = await serve([anthropicToolUse([{ id: "t1", name: "submit", input: { answer: 4 } }])])
    const typed = agent("typed", { output: Schema.Struct({ answer: Schema.Finite }) })
      .model(anthropic("m", { apiKey: "k", baseURL: s.url }))
    expect(await typed.run("2+2")).toEqual({ answer: 4 })
    expect(s.requests[0]!.body.tool_choice).toEqual({ type: "tool", name: "submit" })
  })

  it("retries a 529 overloaded_error honouring retry-after, and not a 400", async () => {
    const s = await serve([anthropicError(529, "overloaded_error", "Overloaded", { "retry-after": "0.2" }), anthropicText("ok")])
    await Effect.runPromise(anthropic("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request))
    expect(s.requests).toHaveLength(2)
    expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(190)
    await s.close()
    const t = await serve([anthropicError(400, "invalid_request_error", "max_tokens: field required")])
    const error = failureOf(await runExit(anthropic("m", { apiKey: "k", baseURL: t.url, ...fast }).chat(request)))
    expect(error).toBeInstanceOf(ModelError)
    expect(error).toMatchObject({ provider: "anthropic", status: 400, retryable: false })
    expect(error.message).toContain("max_tokens: field required")
    expect(t.requests).toHaveLength(1)
  })

  it("retries refused connections, then gives a typed ModelError", async () => {
    const port = await closedPort()
    const error = failureOf(await runExit(anthropic("m", { apiKey: "k", baseURL: `http://127.0.0.1:${port}`, ...fast }).chat(request)))
    expect(error).toMatchObject({ _tag: "ModelError", provider: "anthropic", retryable: true })
  })

  it("aborts the HTTP request when the Effect is interrupted", async () => {
    const s = await serve([{ hang: true }])
    const fiber = Effect.runFork(anthropic("m", { apiKey: "k", baseURL: s.url, retry: false }).chat(request))
    while (s.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    await Effect.runPromise(Fiber.interrupt(fiber))
    await s.aborted
  })
})
