/**
 * `fromAiSdk` with a real AI SDK provider, `@ai-sdk/openai-compatible`, against the loopback Chat
 * Completions server: the AI SDK does the wire, this library does the loop, retries and timeouts. Run
 * on the provider of `ai` 6 (2.x, `LanguageModelV3`) and of `ai` 7 (3.x, `LanguageModelV4`), each
 * passed to `fromAiSdk` without a cast (so this file also proves both type-check).
 */
import { createOpenAICompatible as createV3 } from "@ai-sdk/openai-compatible"
import { createOpenAICompatible as createV4 } from "ai-sdk-openai-compatible-v4"
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { agent, fromAiSdk, type ModelRequest, skill } from "../../src/index.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"
import { completion, openAiError, openAiText, openAiToolCalls, useLoopback } from "./loopback.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const serve = useLoopback()
const fast = { retry: { times: 2, base: "5 millis" }, timeout: "2 seconds" } as const
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [makeCalculatorTools().add.definition] }
const versions = [
  { spec: "v3", modelOn: (url: string) => createV3({ name: "loopback", baseURL: `${url}/v1`, apiKey: "k" })("gpt-4o-mini") },
  { spec: "v4", modelOn: (url: string) => createV4({ name: "loopback", baseURL: `${url}/v1`, apiKey: "k" })("gpt-4o-mini") }
] as const

describe.each(versions)("fromAiSdk(@ai-sdk/openai-compatible, LanguageModel $spec) against a loopback Chat Completions server", ({ spec, modelOn }) => {
  it("is the specification version it claims", () => {
    expect(modelOn("http://127.0.0.1:1").specificationVersion).toBe(spec)
    expect(fromAiSdk(modelOn("http://127.0.0.1:1"))).toHaveProperty("chat")
  })

  it("runs the calculator end to end", async () => {
    const s = await serve([
      openAiToolCalls([{ id: "call_add", name: "add", arguments: '{"a":3,"b":5}' }]),
      openAiToolCalls([{ id: "call_mul", name: "multiply", arguments: '{"a":8,"b":2}' }]),
      openAiText("(3 + 5) * 2 = 16")
    ])
    const tools = makeCalculatorTools()
    const calculator = agent("calculator")
      .model(fromAiSdk(modelOn(s.url), { temperature: 0.1, ...fast }))
      .tools({ add: tools.add, multiply: tools.multiply })
      .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
    expect(await calculator.run("What is (3 + 5) * 2?")).toBe("(3 + 5) * 2 = 16")
    expect(tools.multiplySpy.calls).toEqual([{ a: 8, b: 2 }])
    expect(s.requests.every((r) => r.url === "/v1/chat/completions")).toBe(true)
    expect(s.requests[0]!.body).toMatchObject({ model: "gpt-4o-mini", temperature: 0.1, tool_choice: "auto" })
    expect(s.requests[2]!.body.messages).toContainEqual({ role: "tool", tool_call_id: "call_add", content: "8" })
  })

  it("reports usage and maps finish_reason length to ModelError kind length", async () => {
    const s = await serve([openAiText("ok"), { json: completion({ content: "The answ" }, "length") }])
    const client = fromAiSdk(modelOn(s.url), fast)
    expect(await Effect.runPromise(client.chat(request))).toMatchObject({ content: "ok", finishReason: "stop", usage: { inputTokens: 82, outputTokens: 17 } })
    expect(failureOf(await runExit(client.chat(request)))).toMatchObject({ kind: "length", partial: "The answ" })
  })

  it("retries a 429 honouring retry-after-ms, and not a 401", async () => {
    const s = await serve([openAiError(429, "slow down", "rate_limit_error", { "retry-after-ms": "200" }), openAiText("ok")])
    await Effect.runPromise(fromAiSdk(modelOn(s.url), fast).chat(request))
    expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(190)
    await s.close()
    const t = await serve([openAiError(401, "Incorrect API key provided")])
    const error = failureOf(await runExit(fromAiSdk(modelOn(t.url), fast).chat(request)))
    expect(error).toMatchObject({ status: 401, retryable: false })
    expect(t.requests).toHaveLength(1)
  })

  it("aborts the HTTP request when the Effect is interrupted", async () => {
    const s = await serve([{ hang: true }])
    const fiber = Effect.runFork(fromAiSdk(modelOn(s.url), { retry: false }).chat(request))
    while (s.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    await Effect.runPromise(Fiber.interrupt(fiber))
    await s.aborted
  })
})
