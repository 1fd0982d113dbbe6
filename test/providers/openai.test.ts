import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { agent, ModelError, skill, type ModelRequest } from "../../src/index.ts"
import { openai } from "../../src/providers/openai.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"
import { closedPort, completion, fastRetries as fast, openAiError, openAiText, openAiToolCalls, useLoopback } from "./loopback.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const serve = useLoopback()

const calculatorOn = (baseURL: string) => {
  const tools = makeCalculatorTools()
  const calculator = agent("calculator")
    .prompt("You are a calculator. Use the tools.")
    .model(openai("gpt-4o-mini", { apiKey: "sk-test", baseURL, temperature: 0.1, ...fast }))
    .tools({ add: tools.add, multiply: tools.multiply })
    .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  return { ...tools, calculator }
}

const request: ModelRequest = {
  messages: [{ role: "user", content: "hi" }],
  tools: [makeCalculatorTools().add.definition]
}

describe("openai provider against a loopback Chat Completions server", () => {
  it("runs the calculator end to end and sends the documented request shapes", async () => {
    const s = await serve([
      openAiToolCalls([{ id: "call_add", name: "add", arguments: '{"a":3,"b":5}' }]),
      openAiToolCalls([{ id: "call_mul", name: "multiply", arguments: '{"a":8,"b":2}' }]),
      openAiText("(3 + 5) * 2 = 16")
    ])
    const { calculator, addSpy, multiplySpy } = calculatorOn(`${s.url}/v1`)
    expect(await calculator.run("What is (3 + 5) * 2?")).toBe("(3 + 5) * 2 = 16")
    expect(addSpy.calls).toEqual([{ a: 3, b: 5 }])
    expect(multiplySpy.calls).toEqual([{ a: 8, b: 2 }])

    expect(s.requests).toHaveLength(3)
    expect(s.requests.every((r) => r.method === "POST" && r.url === "/v1/chat/completions")).toBe(true)
    expect(s.requests[0]!.headers.authorization).toBe("Bearer sk-test")
    const first = s.requests[0]!.body
    expect(first.model).toBe("gpt-4o-mini")
    expect(first.temperature).toBe(0.1)
    expect(first.tool_choice).toBe("auto")
    expect(first.tools).toEqual([
      {
        type: "function",
        function: {
          name: "add",
          description: "Add two numbers",
          parameters: {
            type: "object",
            properties: { a: { type: "number", description: "left operand" }, b: { type: "number" } },
            required: ["a", "b"],
            additionalProperties: false
          }
        }
      },
      expect.objectContaining({ type: "function", function: expect.objectContaining({ name: "multiply" }) })
    ])
    expect(first.messages[0].role).toBe("system")
    expect(first.messages[1]).toEqual({ role: "user", content: "What is (3 + 5) * 2?" })

    const third = s.requests[2]!.body.messages
    expect(third.slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_add", type: "function", function: { name: "add", arguments: '{"a":3,"b":5}' } }]
      },
      { role: "tool", tool_call_id: "call_add", content: "8" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_mul", type: "function", function: { name: "multiply", arguments: '{"a":8,"b":2}' } }]
      },
      { role: "tool", tool_call_id: "call_mul", content: "16" }
    ])
  })

  it("carries token usage, the completion's id and the model that answered into the response", async () => {
    const s = await serve([{ json: { ...completion({ content: "hello" }, "stop"), id: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG" } }])
    const response = await Effect.runPromise(openai("gpt-4o-mini", { apiKey: "k", baseURL: s.url }).chat(request))
    expect(response).toEqual({
      _tag: "Text",
      content: "hello",
      finishReason: "stop",
      usage: { inputTokens: 82, outputTokens: 17 },
      responseId: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
      responseModel: "gpt-4o-mini-2024-07-18"
    })
  })

  it("maps every tool choice to the wire form", async () => {
    const s = await serve([openAiText("ok")])
    const client = openai("m", { apiKey: "k", baseURL: s.url })
    for (const toolChoice of ["auto", "required", "none", { tool: "add" }] as const) {
      await Effect.runPromise(client.chat({ ...request, toolChoice }))
    }
    expect(s.requests.map((r) => r.body.tool_choice)).toEqual([
      "auto",
      "required",
      "none",
      { type: "function", function: { name: "add" } }
    ])
  })

  it("routes unparsable tool arguments as invalid arguments, never crashing", async () => {
    const s = await serve([
      openAiToolCalls([{ id: "c1", name: "add", arguments: '{"a": 3, "b": ' }]),
      openAiToolCalls([{ id: "c2", name: "add", arguments: '{"a":3,"b":5}' }]),
      openAiText("8")
    ])
    const { calculator, addSpy } = calculatorOn(s.url)
    expect(await calculator.run("3 + 5")).toBe("8")
    expect(addSpy.calls).toEqual([{ a: 3, b: 5 }])
    const feedback = s.requests[1]!.body.messages.at(-1)
    expect(feedback.role).toBe("tool")
    expect(feedback.tool_call_id).toBe("c1")
    expect(feedback.content).toContain("Invalid arguments")
  })

  it("retries a 429 and then succeeds", async () => {
    const s = await serve([openAiError(429, "Rate limit reached", "rate_limit_error"), openAiText("ok")])
    const response = await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request))
    expect(response).toMatchObject({ _tag: "Text", content: "ok" })
    expect(s.requests).toHaveLength(2)
  })

  it("gives a typed ModelError after the bounded retries of a 500 that never ends", async () => {
    const s = await serve([openAiError(500, "The server had an error", "server_error")])
    const error = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request)))
    expect(error).toBeInstanceOf(ModelError)
    expect(error).toMatchObject({ provider: "openai", status: 500, retryable: true })
    expect(s.requests).toHaveLength(3) // the first attempt and 2 retries
  })

  it("does not retry a 401 and reports its status and message", async () => {
    const s = await serve([openAiError(401, "Incorrect API key provided")])
    const error = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request)))
    expect(error).toMatchObject({ _tag: "ModelError", provider: "openai", status: 401, retryable: false })
    expect(error.message).toContain("Incorrect API key provided")
    expect(s.requests).toHaveLength(1)
  })

  it("times out a hanging server and aborts the request", async () => {
    const s = await serve([{ hang: true }])
    const client = openai("m", { apiKey: "k", baseURL: s.url, timeout: "100 millis", retry: false })
    const error = failureOf(await runExit(client.chat(request)))
    expect(error).toMatchObject({ _tag: "ModelError", retryable: false }) // a re-sent generation is billed again
    expect(error.message).toContain("no response within")
    await s.aborted
  })

  it("aborts the HTTP request when the Effect is interrupted", async () => {
    const s = await serve([{ hang: true }])
    const fiber = Effect.runFork(openai("m", { apiKey: "k", baseURL: s.url, retry: false }).chat(request))
    while (s.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    await Effect.runPromise(Fiber.interrupt(fiber))
    await s.aborted
  })

  it("reports a malformed JSON body as a non-retryable ModelError", async () => {
    const s = await serve([{ raw: "{not json" }])
    const error = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request)))
    expect(error).toMatchObject({ _tag: "ModelError", retryable: false })
    expect(s.requests).toHaveLength(1)
  })

  it("reports a completion without choices as a ModelError", async () => {
    const s = await serve([{ json: { id: "x", object: "chat.completion", created: 1, model: "m", choices: [] } }])
    const error = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: s.url }).chat(request)))
    expect(error.message).toContain("no choices")
  })

  it.each([
    ["finish_reason tool_calls without tool_calls", { content: null }, "tool_calls", 'finish_reason "tool_calls", but no tool call came'],
    ["a legacy function_call", { content: null, function_call: { name: "add", arguments: '{"a":3,"b":5}' } }, "function_call", "the legacy function_call field is not supported, use tools"]
  ])("a reply that names tool calls but holds none (%s) ends the run as malformed at once, not after every turn", async (_, message, finish, says) => {
    const s = await serve([{ json: completion(message, finish) }])
    const error = failureOf(await runExit(calculatorOn(`${s.url}/v1`).calculator.runEffect("What is 3 + 5?")))
    expect(error).toMatchObject({ _tag: "ModelError", kind: "malformed", retryable: false, reason: expect.stringContaining(says) })
    expect(s.requests).toHaveLength(1)
  })

  it("retries refused connections, then gives a typed ModelError", async () => {
    const port = await closedPort()
    const error = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: `http://127.0.0.1:${port}`, ...fast }).chat(request)))
    expect(error).toMatchObject({ _tag: "ModelError", provider: "openai", retryable: true })
    expect(error.message).toContain("connection failed")
  })

  it("refuses non-strict tools in strict mode before any HTTP call", async () => {
    const s = await serve([openAiText("ok")])
    const error = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: s.url, strict: true }).chat(request)))
    expect(error.message).toContain('tool "add" is not strict-compatible')
    expect(s.requests).toHaveLength(0)
  })
})
