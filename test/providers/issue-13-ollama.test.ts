/**
 * Issue #13, Ollama side: each bug reproduced on the loopback `/api/chat` server first, then fixed.
 */
import { Effect } from "effect"
import { describe, expect, it, vi } from "vitest"
import { agent, type ModelRequest, skill } from "../../src/index.ts"
import { ollama } from "../../src/providers/ollama.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"
import { ollamaReply, ollamaText, useLoopback } from "./loopback.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const serve = useLoopback()
const fast = { retry: { times: 2, base: "5 millis" }, timeout: "2 seconds" } as const
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [makeCalculatorTools().add.definition] }
vi.spyOn(console, "log").mockImplementation(() => {})

const calculatorOn = (host: string) => {
  const tools = makeCalculatorTools()
  const calculator = agent("calculator")
    .model(ollama("qwen3", { host, ...fast }))
    .tools({ add: tools.add, multiply: tools.multiply })
    .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  return { ...tools, calculator }
}

describe("bug 2 (ollama): retries", () => {
  it("honours Retry-After on a 503 from a proxy in front of Ollama", async () => {
    const s = await serve([{ status: 503, json: { error: "busy" }, headers: { "retry-after": "1" } }, ollamaText("ok")])
    await Effect.runPromise(ollama("m", { host: s.url, ...fast }).chat(request))
    expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(990)
  })

  it("retries a connection reset in the middle of the body", async () => {
    const s = await serve([{ reset: '{"model":"m","message":{"ro' }, ollamaText("ok")])
    const response = await Effect.runPromise(ollama("m", { host: s.url, ...fast }).chat(request))
    expect(response).toMatchObject({ content: "ok" })
    expect(s.requests).toHaveLength(2)
  })
})

describe("bug 3 (ollama): arguments and ids normalised in the adapter", () => {
  it("hands the loop JSON-text arguments and unique non-empty ids", async () => {
    const s = await serve([{
      json: ollamaReply({
        tool_calls: [{ function: { name: "add", arguments: { a: 1, b: 2 } } }, { function: { name: "add", arguments: { a: 3, b: 4 } } }]
      })
    }])
    const response = await Effect.runPromise(ollama("m", { host: s.url }).chat(request))
    if (response._tag !== "ToolCalls") throw new Error("expected tool calls")
    expect(response.calls.map((c) => c.arguments)).toEqual(['{"a":1,"b":2}', '{"a":3,"b":4}'])
    expect(new Set(response.calls.map((c) => c.id)).size).toBe(2)
    expect(response.calls.every((c) => c.id !== "")).toBe(true)
  })
})

describe("bug 4 (ollama): truncation", () => {
  it("done_reason length ends the run with ModelError kind length", async () => {
    const s = await serve([{ json: ollamaReply({ content: "The answer" }, { done_reason: "length" }) }])
    const error = failureOf(await runExit(calculatorOn(s.url).calculator.runEffect("2+2")))
    expect(error).toMatchObject({ _tag: "ModelError", kind: "length", partial: "The answer" })
  })
})

describe("bug 5 (ollama): a reply with only thinking", () => {
  it("ends with ModelError kind thinking-only instead of exhausting the turns", async () => {
    const s = await serve([{ json: ollamaReply({ content: "", thinking: "Let me add 2 and 2... it is 4." }) }])
    const error = failureOf(await runExit(calculatorOn(s.url).calculator.runEffect("2+2")))
    expect(error).toMatchObject({ _tag: "ModelError", kind: "thinking-only" })
    expect(s.requests).toHaveLength(1)
  })
})

describe("bug 7 (ollama)", () => {
  it("an error body whose error is an object is described, not [object Object]", async () => {
    const s = await serve([{ status: 400, json: { error: { message: "invalid tool schema", code: "bad_schema" } } }])
    const error = failureOf(await runExit(ollama("m", { host: s.url, ...fast }).chat(request)))
    expect(error.message).not.toContain("[object Object]")
    expect(error.message).toContain("invalid tool schema")
  })

  it("keeps usage when one count is missing (a cached prompt has no prompt_eval_count)", async () => {
    const s = await serve([{ json: ollamaReply({ content: "ok" }, { prompt_eval_count: undefined }) }])
    const response = await Effect.runPromise(ollama("m", { host: s.url }).chat(request))
    expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 12 })
  })

  it("sends thinking and call ids back in the history", async () => {
    const s = await serve([
      { json: ollamaReply({ thinking: "I should add.", tool_calls: [{ id: "call_x1", function: { name: "add", arguments: { a: 3, b: 5 } } }] }) },
      ollamaText("8")
    ])
    const { calculator } = calculatorOn(s.url)
    expect(await calculator.run("3+5")).toBe("8")
    const history = s.requests[1]!.body.messages
    expect(history.find((m: any) => m.role === "assistant")).toMatchObject({
      thinking: "I should add.",
      tool_calls: [{ id: "call_x1", function: { name: "add", arguments: { a: 3, b: 5 } } }]
    })
    expect(history.find((m: any) => m.role === "tool")).toMatchObject({ tool_name: "add", tool_call_id: "call_x1" })
  })

  it("reports the finish reason", async () => {
    const s = await serve([ollamaText("ok")])
    const response = await Effect.runPromise(ollama("m", { host: s.url }).chat(request))
    expect(response.finishReason).toBe("stop")
  })
})
