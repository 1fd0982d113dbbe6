/**
 * Issue #13, OpenAI side: each bug found against independent servers, reproduced on the loopback
 * Chat Completions server first, then fixed.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, fromEnv, type ModelRequest, skill } from "../../src/index.ts"
import { openai } from "../../src/providers/openai.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"
import { completion, openAiError, openAiText, openAiToolCalls, useLoopback } from "./loopback.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const serve = useLoopback()
const fast = { retry: { times: 2, base: "5 millis" }, timeout: "2 seconds" } as const
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [makeCalculatorTools().add.definition] }

const calculatorOn = (baseURL: string) => {
  const tools = makeCalculatorTools()
  const calculator = agent("calculator")
    .model(openai("gpt-4o-mini", { apiKey: "k", baseURL, ...fast }))
    .tools({ add: tools.add, multiply: tools.multiply })
    .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  return { ...tools, calculator }
}

describe("bug 1: fromEnv and reasoning models", () => {
  it("sends no temperature unless LLM_TEMPERATURE is set, so o4-mini works", async () => {
    const s = await serve([openAiText("ok")])
    const env = fromEnv({ AI_PROVIDER: "openai", AI_MODEL: "o4-mini", OPENAI_API_KEY: "k", OPENAI_BASE_URL: s.url })
    expect(env.temperature).toBeUndefined()
    await Effect.runPromise(env.client.chat(request))
    expect(s.requests[0]!.body).not.toHaveProperty("temperature")
  })
})

describe("bug 2: retries honour the server", () => {
  it("waits the retry-after-ms a 429 asks for, not the schedule's short delay", async () => {
    const s = await serve([openAiError(429, "slow down", "rate_limit_error", { "retry-after-ms": "300" }), openAiText("ok")])
    await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request))
    expect(s.requests).toHaveLength(2)
    expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(290)
  })

  it("waits the Retry-After seconds a 503 asks for", async () => {
    const s = await serve([openAiError(503, "busy", "server_error", { "retry-after": "1" }), openAiText("ok")])
    await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request))
    expect(s.requests[1]!.at - s.requests[0]!.at).toBeGreaterThanOrEqual(990)
  })

  it("gives up at once when the server asks for longer than maxRetryAfter", async () => {
    const s = await serve([openAiError(429, "come back in an hour", "rate_limit_error", { "retry-after": "3600" })])
    const error = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request)))
    expect(error).toMatchObject({ status: 429, retryAfterMs: 3_600_000 })
    expect(s.requests).toHaveLength(1)
  })

  it("x-should-retry: false stops a retry of a 500; true retries a 400", async () => {
    const s = await serve([openAiError(500, "no", "server_error", { "x-should-retry": "false" })])
    failureOf(await runExit(openai("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request)))
    expect(s.requests).toHaveLength(1)
    await s.close()
    const t = await serve([openAiError(400, "try again", "invalid_request_error", { "x-should-retry": "true" }), openAiText("ok")])
    await Effect.runPromise(openai("m", { apiKey: "k", baseURL: t.url, ...fast }).chat(request))
    expect(t.requests).toHaveLength(2)
  })

  it("does not retry insufficient_quota, which never succeeds", async () => {
    const s = await serve([openAiError(429, "You exceeded your current quota", "insufficient_quota", undefined, "insufficient_quota")])
    const error = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request)))
    expect(error).toMatchObject({ status: 429, retryable: false })
    expect(s.requests).toHaveLength(1)
  })

  it("retries a connection reset in the middle of the body", async () => {
    const s = await serve([{ reset: '{"id":"chatcmpl-1","object":"chat.comp' }, openAiText("ok")])
    const response = await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url, ...fast }).chat(request))
    expect(response).toMatchObject({ _tag: "Text", content: "ok" })
    expect(s.requests).toHaveLength(2)
  })
})

describe("bug 3: tool calls without type or id", () => {
  it("accepts calls without type and without id, with unique ids the history reuses", async () => {
    const bare = (name: string, args: string) => ({ function: { name, arguments: args } })
    const s = await serve([
      { json: completion({ content: null, tool_calls: [bare("add", '{"a":3,"b":5}'), bare("add", '{"a":1,"b":1}')] }, "tool_calls") },
      openAiText("8 and 2")
    ])
    const { calculator, addSpy } = calculatorOn(s.url)
    expect(await calculator.run("3 + 5 and 1 + 1")).toBe("8 and 2")
    expect(addSpy.calls).toEqual([{ a: 3, b: 5 }, { a: 1, b: 1 }])
    const history = s.requests[1]!.body.messages
    const assistant = history.find((m: any) => m.role === "assistant")
    const ids = assistant.tool_calls.map((c: any) => c.id)
    expect(new Set(ids).size).toBe(2)
    expect(ids.every((id: unknown) => typeof id === "string" && id !== "")).toBe(true)
    expect(history.filter((m: any) => m.role === "tool").map((m: any) => m.tool_call_id)).toEqual(ids)
  })
})

describe("bug 4: truncation is reported", () => {
  it("a text cut at the token limit ends the run with ModelError kind length, not as the answer", async () => {
    const s = await serve([{ json: completion({ content: "The answer is" }, "length") }])
    const error = failureOf(await runExit(calculatorOn(s.url).calculator.runEffect("2+2")))
    expect(error).toMatchObject({ _tag: "ModelError", kind: "length", partial: "The answer is" })
    expect(error.message).toContain("token limit")
  })

  it("tool arguments cut at the token limit are reported as truncation, not invalid arguments", async () => {
    const s = await serve([{
      json: completion({ content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: '{"a":3,' } }] }, "length")
    }])
    const { calculator, addSpy } = calculatorOn(s.url)
    const error = failureOf(await runExit(calculator.runEffect("3+5")))
    expect(error).toMatchObject({ _tag: "ModelError", kind: "length" })
    expect(s.requests).toHaveLength(1)
    expect(addSpy.calls).toEqual([])
  })
})

describe("bug 5: filtered and refused replies name their cause", () => {
  it("content_filter ends with ModelError kind content-filter", async () => {
    const s = await serve([{ json: completion({ content: null }, "content_filter") }])
    const error = failureOf(await runExit(calculatorOn(s.url).calculator.runEffect("2+2")))
    expect(error).toMatchObject({ _tag: "ModelError", kind: "content-filter" })
    expect(s.requests).toHaveLength(1)
  })

  it("a refusal with empty content ends with ModelError kind refusal, carrying the refusal", async () => {
    const s = await serve([{ json: completion({ content: "", refusal: "I can't help with that." }, "stop") }])
    const error = failureOf(await runExit(calculatorOn(s.url).calculator.runEffect("2+2")))
    expect(error).toMatchObject({ _tag: "ModelError", kind: "refusal", partial: "I can't help with that." })
    expect(s.requests).toHaveLength(1)
  })

  it("a refusal on a typed agent is a refusal, not OutputInvalid", async () => {
    const s = await serve([{ json: completion({ content: null, refusal: "No." }, "stop") }])
    const typed = agent("typed", { output: Schema.Struct({ answer: Schema.Finite }) })
      .model(openai("m", { apiKey: "k", baseURL: s.url, ...fast }))
      .budget({ maxTurns: 1 })
    const error = failureOf(await runExit(typed.runEffect("2+2")))
    expect(error).toMatchObject({ _tag: "ModelError", kind: "refusal" })
  })
})

describe("bug 5: reasoning without an answer (OpenAI-compatible servers)", () => {
  it("reasoning_content with empty content and no calls ends with kind thinking-only", async () => {
    const s = await serve([{ json: completion({ content: "", reasoning_content: "2 + 2 is 4, so..." }, "stop") }])
    const error = failureOf(await runExit(calculatorOn(s.url).calculator.runEffect("2+2")))
    expect(error).toMatchObject({ _tag: "ModelError", kind: "thinking-only" })
    expect(s.requests).toHaveLength(1)
  })

  it("reasoning beside an answer is kept as reasoning", async () => {
    const s = await serve([{ json: completion({ content: "4", reasoning_content: "2 + 2" }, "stop") }])
    const response = await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url }).chat(request))
    expect(response).toMatchObject({ content: "4", reasoning: [{ _tag: "Thinking", text: "2 + 2" }] })
  })
})

describe("bug 6: long generations are not cut and re-sent", () => {
  it("a timed-out attempt is aborted and not sent again (it would be billed again)", async () => {
    const s = await serve([{ hang: true }])
    const client = openai("m", { apiKey: "k", baseURL: s.url, timeout: "100 millis", retry: { times: 2, base: "5 millis" } })
    const error = failureOf(await runExit(client.chat(request)))
    expect(error.message).toContain("no response within")
    await s.aborted
    expect(s.requests).toHaveLength(1)
  })

  it("retryTimeouts: true opts back in to re-sending a timed-out attempt", async () => {
    const s = await serve([{ hang: true }])
    const client = openai("m", { apiKey: "k", baseURL: s.url, timeout: "50 millis", retryTimeouts: true, retry: { times: 2, base: "5 millis" } })
    const error = failureOf(await runExit(client.chat(request)))
    expect(error).toMatchObject({ retryable: true })
    expect(s.requests).toHaveLength(3)
  })

  it("a slow generation is waited for and sent once", async () => {
    const s = await serve([{ json: completion({ content: "long answer" }, "stop"), delayMs: 400 }])
    const response = await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url, retry: { times: 2, base: "5 millis" } }).chat(request))
    expect(response).toMatchObject({ content: "long answer" })
    expect(s.requests).toHaveLength(1)
  })

  it("a generation slower than the old 60 s default would still be waited for: the default is 10 minutes", async () => {
    const { defaultTimeout } = await import("../../src/providers/resilience.ts")
    expect(defaultTimeout).toBe("10 minutes")
  })
})

describe("bug 7: custom tool calls", () => {
  it("a custom tool call named like a real tool is never decoded as that tool's arguments", async () => {
    const s = await serve([{
      json: completion({ content: null, tool_calls: [{ id: "c1", type: "custom", custom: { name: "add", input: '{"a":3,"b":5}' } }] }, "tool_calls")
    }])
    const { calculator, addSpy } = calculatorOn(s.url)
    const error = failureOf(await runExit(calculator.runEffect("3+5")))
    expect(addSpy.calls).toEqual([])
    expect(error).toMatchObject({ _tag: "ToolNotAllowed" })
  })
})

describe("usage and finish reason", () => {
  it("carries cached and reasoning tokens and the finish reason", async () => {
    const s = await serve([{
      json: completion({ content: "ok" }, "stop", {
        prompt_tokens: 100,
        completion_tokens: 40,
        total_tokens: 140,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 32 }
      })
    }])
    const response = await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url }).chat(request))
    expect(response).toEqual({
      _tag: "Text",
      content: "ok",
      finishReason: "stop",
      usage: { inputTokens: 100, outputTokens: 40, cachedInputTokens: 64, reasoningTokens: 32 },
      responseId: expect.stringMatching(/^chatcmpl-/),
      responseModel: "gpt-4o-mini-2024-07-18"
    })
  })

  it("tool calls report finish reason tool-calls", async () => {
    const s = await serve([openAiToolCalls([{ id: "c1", name: "add", arguments: "{}" }])])
    const response = await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url }).chat(request))
    expect(response).toMatchObject({ _tag: "ToolCalls", finishReason: "tool-calls" })
  })
})
