import { Effect, Fiber } from "effect"
import { describe, expect, it, vi } from "vitest"
import { agent, ModelError, type ModelRequest, skill } from "../../src/index.ts"
import { ollama, ollamaHost } from "../../src/providers/ollama.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"
import { closedPort, fastRetries as fast, ollamaError, ollamaText, ollamaToolCalls, useLoopback } from "./loopback.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const serve = useLoopback()
const { add, multiply } = makeCalculatorTools()
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [add.definition, multiply.definition] }

// The SDK logs while reading error bodies; keep test output readable.
vi.spyOn(console, "log").mockImplementation(() => {})

const calculatorOn = (port: number) => {
  const tools = makeCalculatorTools()
  const calculator = agent("calculator")
    .prompt("You are a calculator. Use the tools.")
    .model(ollama("qwen2.5:7b", { host: "127.0.0.1", port, temperature: 0.1, ...fast }))
    .tools({ add: tools.add, multiply: tools.multiply })
    .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  return { ...tools, calculator }
}

describe("ollama provider against a loopback /api/chat server", () => {
  it("runs the calculator end to end and sends the documented request shapes", async () => {
    const s = await serve([
      ollamaToolCalls([{ name: "add", arguments: { a: 3, b: 5 } }]),
      ollamaToolCalls([{ name: "multiply", arguments: { a: 8, b: 2 } }]),
      ollamaText("(3 + 5) * 2 = 16")
    ])
    const { calculator, addSpy, multiplySpy } = calculatorOn(s.port)
    expect(await calculator.run("What is (3 + 5) * 2?")).toBe("(3 + 5) * 2 = 16")
    expect(addSpy.calls).toEqual([{ a: 3, b: 5 }])
    expect(multiplySpy.calls).toEqual([{ a: 8, b: 2 }])

    expect(s.requests.map((r) => `${r.method} ${r.url}`)).toEqual(Array(3).fill("POST /api/chat"))
    const first = s.requests[0]!.body
    expect(first.model).toBe("qwen2.5:7b")
    expect(first.stream).toBe(false)
    expect(first.options).toEqual({ temperature: 0.1 })
    expect(first.tools[0]).toEqual({
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
    })
    expect(first.messages[1]).toEqual({ role: "user", content: "What is (3 + 5) * 2?" })
    const [call1, result1, call2, result2] = s.requests[2]!.body.messages.slice(2)
    const id1 = call1.tool_calls[0].id
    const id2 = call2.tool_calls[0].id
    expect(id1).toMatch(/^call_/)
    expect(id2).not.toBe(id1)
    expect([call1, result1, call2, result2]).toEqual([
      { role: "assistant", content: "", tool_calls: [{ id: id1, function: { name: "add", arguments: { a: 3, b: 5 } } }] },
      { role: "tool", content: "8", tool_name: "add", tool_call_id: id1 },
      { role: "assistant", content: "", tool_calls: [{ id: id2, function: { name: "multiply", arguments: { a: 8, b: 2 } } }] },
      { role: "tool", content: "16", tool_name: "multiply", tool_call_id: id2 }
    ])
  })

  it("carries token counts into the response", async () => {
    const s = await serve([ollamaText("hello")])
    const response = await Effect.runPromise(ollama("m", { host: s.url }).chat(request))
    expect(response).toEqual({ _tag: "Text", content: "hello", finishReason: "stop", usage: { inputTokens: 26, outputTokens: 12 }, responseModel: "qwen2.5:7b" })
  })

  it("maps tool choice: none sends no tools, a named tool is the only one sent and is asked for", async () => {
    const s = await serve([ollamaText("ok")])
    const client = ollama("m", { host: s.url })
    await Effect.runPromise(client.chat({ ...request, toolChoice: "none" }))
    await Effect.runPromise(client.chat({ ...request, toolChoice: { tool: "multiply" } }))
    await Effect.runPromise(client.chat({ ...request, toolChoice: "required" }))
    const [none, named, required] = s.requests.map((r) => r.body)
    expect(none.tools).toBeUndefined()
    expect(named.tools.map((t: any) => t.function.name)).toEqual(["multiply"])
    expect(named.messages.at(-1)).toEqual({ role: "system", content: 'Call the tool "multiply" now.' })
    expect(required.tools).toHaveLength(2)
    expect(required.messages.at(-1)).toEqual({ role: "system", content: "Call one of the tools now." })
  })

  it("routes arguments of the wrong shape as invalid arguments", async () => {
    const s = await serve([
      ollamaToolCalls([{ name: "add", arguments: { a: "three", b: 5 } }]),
      ollamaToolCalls([{ name: "add", arguments: { a: 3, b: 5 } }]),
      ollamaText("8")
    ])
    const { calculator, addSpy } = calculatorOn(s.port)
    expect(await calculator.run("3 + 5")).toBe("8")
    expect(addSpy.calls).toEqual([{ a: 3, b: 5 }])
    const feedback = s.requests[1]!.body.messages.at(-1)
    expect(feedback).toMatchObject({ role: "tool", tool_name: "add" })
    expect(feedback.content).toContain("Invalid arguments")
  })

  it("retries a 429 and then succeeds", async () => {
    const s = await serve([ollamaError(429, "too many requests"), ollamaText("ok")])
    const response = await Effect.runPromise(ollama("m", { host: s.url, ...fast }).chat(request))
    expect(response).toMatchObject({ content: "ok" })
    expect(s.requests).toHaveLength(2)
  })

  it("gives a typed ModelError after the bounded retries of a 500 that never ends", async () => {
    const s = await serve([ollamaError(500, "llama runner process has terminated")])
    const error = failureOf(await runExit(ollama("m", { host: s.url, ...fast }).chat(request)))
    expect(error).toBeInstanceOf(ModelError)
    expect(error).toMatchObject({ provider: "ollama", status: 500, retryable: true })
    expect(error.message).toContain("llama runner process has terminated")
    expect(s.requests).toHaveLength(3)
  })

  it("does not retry a 404 for an unknown model", async () => {
    const s = await serve([ollamaError(404, "model 'nope' not found")])
    const error = failureOf(await runExit(ollama("nope", { host: s.url, ...fast }).chat(request)))
    expect(error).toMatchObject({ status: 404, retryable: false })
    expect(error.message).toContain("model 'nope' not found")
    expect(s.requests).toHaveLength(1)
  })

  it("times out a hanging server and aborts the request", async () => {
    const s = await serve([{ hang: true }])
    const error = failureOf(await runExit(ollama("m", { host: s.url, timeout: "100 millis", retry: false }).chat(request)))
    expect(error.message).toContain("no response within")
    await s.aborted
  })

  it("aborts the HTTP request when the Effect is interrupted", async () => {
    const s = await serve([{ hang: true }])
    const fiber = Effect.runFork(ollama("m", { host: s.url, retry: false }).chat(request))
    while (s.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    await Effect.runPromise(Fiber.interrupt(fiber))
    await s.aborted
  })

  it("reports a malformed JSON body as a non-retryable ModelError", async () => {
    const s = await serve([{ raw: "{not json" }])
    const error = failureOf(await runExit(ollama("m", { host: s.url, ...fast }).chat(request)))
    expect(error).toMatchObject({ _tag: "ModelError", retryable: false })
    expect(s.requests).toHaveLength(1)
  })

  it("retries refused connections, then gives a typed ModelError", async () => {
    const port = await closedPort()
    const error = failureOf(await runExit(ollama("m", { host: "127.0.0.1", port, ...fast }).chat(request)))
    expect(error).toMatchObject({ provider: "ollama", retryable: true })
    expect(error.message).toContain("connection failed")
  })

  it("resolves hosts like the Kotlin DSL: localhost:11434 by default", () => {
    expect(ollamaHost({})).toBe("http://localhost:11434")
    expect(ollamaHost({ host: "gpu-box", port: 8080 })).toBe("http://gpu-box:8080")
    expect(ollamaHost({ host: "127.0.0.1:11435" })).toBe("http://127.0.0.1:11435")
    expect(ollamaHost({ host: "https://ollama.example" })).toBe("https://ollama.example")
  })
})
