/**
 * Issue #13, "options passed through": each provider option reaches the wire under its documented
 * name, and a request's `responseFormat` (native structured output) maps to each provider's form.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { type ModelRequest, tool } from "../../src/index.ts"
import { ollama } from "../../src/providers/ollama.ts"
import { openai } from "../../src/providers/openai.ts"
import { makeCalculatorTools } from "../fixtures.ts"
import { ollamaText, openAiText, useLoopback } from "./loopback.ts"

const serve = useLoopback()
const { add } = makeCalculatorTools()
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [add.definition] }
const strictAdd = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), strict: true, run: ({ a, b }) => a + b })
const answer = { type: "object", properties: { n: { type: "number" } }, required: ["n"], additionalProperties: false } as const

describe("openai options", () => {
  it("sends reasoning_effort, seed, top_p, stop and max_completion_tokens", async () => {
    const s = await serve([openAiText("ok")])
    const client = openai("o4-mini", { apiKey: "k", baseURL: s.url, reasoningEffort: "low", seed: 7, topP: 0.9, stop: ["END"], maxTokens: 256 })
    await Effect.runPromise(client.chat(request))
    expect(s.requests[0]!.body).toMatchObject({ reasoning_effort: "low", seed: 7, top_p: 0.9, stop: ["END"], max_completion_tokens: 256 })
    expect(s.requests[0]!.body).not.toHaveProperty("max_tokens")
    expect(s.requests[0]!.body).not.toHaveProperty("parallel_tool_calls")
  })

  it("sends max_tokens instead for servers that ignore max_completion_tokens", async () => {
    const s = await serve([openAiText("ok")])
    await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url, maxTokens: 64, maxTokensField: "max_tokens" }).chat(request))
    expect(s.requests[0]!.body.max_tokens).toBe(64)
    expect(s.requests[0]!.body).not.toHaveProperty("max_completion_tokens")
  })

  it("sends parallel_tool_calls false with strict tools unless set, and as set otherwise", async () => {
    const s = await serve([openAiText("ok")])
    const strictRequest = { ...request, tools: [strictAdd.definition] }
    await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url }).chat(strictRequest))
    await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url, parallelToolCalls: true }).chat(strictRequest))
    await Effect.runPromise(openai("m", { apiKey: "k", baseURL: s.url, parallelToolCalls: false }).chat(request))
    expect(s.requests.map((r) => r.body.parallel_tool_calls)).toEqual([false, true, false])
  })

  it("maps responseFormat to response_format json_schema, strict by default", async () => {
    const s = await serve([openAiText('{"n":4}')])
    await Effect.runPromise(
      openai("m", { apiKey: "k", baseURL: s.url }).chat({ ...request, tools: [], responseFormat: { type: "json_schema", name: "answer", schema: answer } })
    )
    expect(s.requests[0]!.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "answer", schema: answer, strict: true } })
  })
})

describe("ollama options", () => {
  it("sends num_ctx, num_predict, think, keep_alive, format and extra options", async () => {
    const s = await serve([ollamaText("ok")])
    const client = ollama("qwen3", {
      host: s.url,
      temperature: 0.2,
      numCtx: 16384,
      numPredict: 512,
      think: true,
      keepAlive: "10m",
      format: "json",
      options: { seed: 3, top_p: 0.8 }
    })
    await Effect.runPromise(client.chat(request))
    expect(s.requests[0]!.body).toMatchObject({
      think: true,
      keep_alive: "10m",
      format: "json",
      options: { temperature: 0.2, num_ctx: 16384, num_predict: 512, seed: 3, top_p: 0.8 }
    })
  })

  it("maps responseFormat to format with the schema, over the option", async () => {
    const s = await serve([ollamaText('{"n":4}')])
    await Effect.runPromise(
      ollama("m", { host: s.url, format: "json" }).chat({ ...request, responseFormat: { type: "json_schema", name: "answer", schema: answer } })
    )
    expect(s.requests[0]!.body.format).toEqual(answer)
  })
})
