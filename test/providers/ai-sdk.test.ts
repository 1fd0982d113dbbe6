import { APICallError, type LanguageModelV3GenerateResult } from "@ai-sdk/provider"
import { MockLanguageModelV3 } from "ai/test"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, fromAiSdk, type ModelRequest, skill } from "../../src/index.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const usage = {
  inputTokens: { total: 100, noCache: 36, cacheRead: 64, cacheWrite: 0 },
  outputTokens: { total: 40, text: 8, reasoning: 32 }
}
const result = (content: LanguageModelV3GenerateResult["content"], unified: "stop" | "tool-calls" | "length" | "content-filter"): LanguageModelV3GenerateResult => ({
  content,
  finishReason: { unified, raw: unified },
  usage,
  warnings: []
})
const call = (toolCallId: string, toolName: string, input: string) => ({ type: "tool-call" as const, toolCallId, toolName, input })

const fast = { retry: { times: 2, base: "5 millis" }, timeout: "2 seconds" } as const
const { add, multiply } = makeCalculatorTools()
const request: ModelRequest = { messages: [{ role: "system", content: "sys" }, { role: "user", content: "hi" }], tools: [add.definition] }

describe("fromAiSdk: an AI SDK LanguageModelV3 as a ModelClient", () => {
  it("runs the calculator and sends the spec's prompt, tools and tool choice", async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [
        result([{ type: "reasoning", text: "add first" }, call("c1", "add", '{"a":3,"b":5}')], "tool-calls"),
        result([call("c2", "multiply", '{"a":8,"b":2}')], "tool-calls"),
        result([{ type: "text", text: "(3 + 5) * 2 = 16" }], "stop")
      ]
    })
    const tools = makeCalculatorTools()
    const calculator = agent("calculator")
      .model(fromAiSdk(model, { temperature: 0.2, maxOutputTokens: 500 }))
      .tools({ add: tools.add, multiply: tools.multiply })
      .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
    expect(await calculator.run("What is (3 + 5) * 2?")).toBe("(3 + 5) * 2 = 16")
    expect(tools.addSpy.calls).toEqual([{ a: 3, b: 5 }])
    const [first, , third] = model.doGenerateCalls
    expect(first).toMatchObject({ temperature: 0.2, maxOutputTokens: 500, toolChoice: { type: "auto" } })
    expect(first!.tools![0]).toMatchObject({ type: "function", name: "add", description: "Add two numbers", inputSchema: add.definition.parameters })
    expect(first!.prompt.slice(1)).toEqual([{ role: "user", content: [{ type: "text", text: "What is (3 + 5) * 2?" }] }])
    expect(third!.prompt.slice(2, 4)).toEqual([
      {
        role: "assistant",
        content: [{ type: "reasoning", text: "add first" }, { type: "tool-call", toolCallId: "c1", toolName: "add", input: { a: 3, b: 5 } }]
      },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "add", output: { type: "text", value: "8" } }] }
    ])
    expect(first!.abortSignal).toBeInstanceOf(AbortSignal)
  })

  it("maps usage (cache reads, reasoning) and the finish reason", async () => {
    const model = new MockLanguageModelV3({ doGenerate: result([{ type: "text", text: "ok" }], "stop") })
    const response = await Effect.runPromise(fromAiSdk(model).chat(request))
    expect(response).toEqual({
      _tag: "Text",
      content: "ok",
      finishReason: "stop",
      usage: { inputTokens: 100, outputTokens: 40, cachedInputTokens: 64, reasoningTokens: 32 }
    })
  })

  it("maps a named tool choice and responseFormat", async () => {
    const model = new MockLanguageModelV3({ doGenerate: result([{ type: "text", text: '{"n":1}' }], "stop") })
    const schema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] } as const
    await Effect.runPromise(
      fromAiSdk(model).chat({ ...request, toolChoice: { tool: "add" }, responseFormat: { type: "json_schema", name: "answer", schema } })
    )
    expect(model.doGenerateCalls[0]).toMatchObject({ toolChoice: { type: "tool", toolName: "add" }, responseFormat: { type: "json", name: "answer", schema } })
  })

  it("truncation and content filtering end with a ModelError naming the cause", async () => {
    const model = new MockLanguageModelV3({
      doGenerate: [result([{ type: "text", text: "The ans" }], "length"), result([], "content-filter")]
    })
    const client = fromAiSdk(model)
    expect(failureOf(await runExit(client.chat(request)))).toMatchObject({ kind: "length", partial: "The ans" })
    expect(failureOf(await runExit(client.chat(request)))).toMatchObject({ kind: "content-filter" })
  })

  it("retries an APICallError the provider marks retryable, honouring retry-after-ms; not a 400", async () => {
    let calls = 0
    const times: Array<number> = []
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        times.push(Date.now())
        calls += 1
        if (calls === 1) {
          throw new APICallError({
            message: "Rate limited",
            url: "http://x",
            requestBodyValues: {},
            statusCode: 429,
            responseHeaders: { "retry-after-ms": "150" },
            isRetryable: true
          })
        }
        if (calls === 2) return result([{ type: "text", text: "ok" }], "stop")
        throw new APICallError({ message: "Bad request", url: "http://x", requestBodyValues: {}, statusCode: 400, isRetryable: false })
      }
    })
    const client = fromAiSdk(model, fast)
    expect(await Effect.runPromise(client.chat(request))).toMatchObject({ content: "ok" })
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(140)
    const error = failureOf(await runExit(client.chat(request)))
    expect(error).toMatchObject({ _tag: "ModelError", provider: "ai-sdk:mock-provider", status: 400, retryable: false })
    expect(calls).toBe(3)
  })

  it("a typed agent gets its output through the submit tool", async () => {
    const model = new MockLanguageModelV3({ doGenerate: result([call("s1", "submit", '{"answer":4}')], "tool-calls") })
    const typed = agent("typed", { output: Schema.Struct({ answer: Schema.Finite }) }).model(fromAiSdk(model))
    expect(await typed.run("2+2")).toEqual({ answer: 4 })
    expect(model.doGenerateCalls[0]!.toolChoice).toEqual({ type: "tool", toolName: "submit" })
  })

  it("gives calls without ids unique ids", async () => {
    const model = new MockLanguageModelV3({ doGenerate: result([call("", "add", "{}"), call("", "add", "{}")], "tool-calls") })
    const response = await Effect.runPromise(fromAiSdk(model).chat({ ...request, tools: [add.definition, multiply.definition] }))
    if (response._tag !== "ToolCalls") throw new Error("expected tool calls")
    expect(new Set(response.calls.map((c) => c.id)).size).toBe(2)
  })
})
