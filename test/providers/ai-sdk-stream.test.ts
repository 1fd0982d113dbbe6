/**
 * fromAiSdk(model).stream through the model's `doStream`: real `@ai-sdk/openai-compatible` models
 * (V3 and V4) against a loopback Chat Completions SSE server torn at byte offsets, and hand-written
 * models for each specification version's stream parts (V2's string finish reason and flat usage),
 * provider-executed calls, `error` parts, cuts, interruption reaching the `abortSignal`, and a model
 * without `doStream` (adapted from `doGenerate`).
 */
import { createOpenAICompatible as createV3 } from "@ai-sdk/openai-compatible"
import { createOpenAICompatible as createV4 } from "ai-sdk-openai-compatible-v4"
import { Cause, Effect, Exit, Result, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, fromAiSdk, type LlmResponse, type ModelRequest, PartsAssembler, type ResponsePart, tool } from "../../src/index.ts"
import { quietLogs } from "../support/quiet-logs.ts"
import { useLoopback } from "./loopback.ts"
import { openAiChatEvents, openAiChatJson, sse, tearBytes, type WireReply } from "./wire.ts"

quietLogs()

const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }
const fast = { retry: { times: 2, base: "5 millis" }, idleTimeout: "5 seconds" } as const
const assemble = (parts: ReadonlyArray<ResponsePart>): LlmResponse => {
  const assembler = new PartsAssembler(1)
  parts.forEach((p) => assembler.add(p))
  return Result.getOrThrow(assembler.response())
}
const errorOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined)
const collect = (client: ReturnType<typeof fromAiSdk>, req: ModelRequest = request) => Effect.runPromiseExit(Stream.runCollect(client.stream!(req)))

const reply: WireReply = {
  thinking: { text: "Thinking — 思考 🤔", signature: "unused" },
  text: "Sum: ✓",
  calls: [{ id: "a", name: "add", input: { a: 3, b: 5, s: "é😀" } }, { id: "b", name: "add", input: { a: 1, b: 2 } }],
  usage: { input: 40, output: 12 }
}

const versions = [
  { spec: "v3", modelOn: (url: string) => createV3({ name: "loopback", baseURL: `${url}/v1`, apiKey: "k" })("gpt-4o-mini") },
  { spec: "v4", modelOn: (url: string) => createV4({ name: "loopback", baseURL: `${url}/v1`, apiKey: "k" })("gpt-4o-mini") }
] as const

describe.each(versions)("fromAiSdk(@ai-sdk/openai-compatible $spec).stream against loopback Chat Completions SSE", ({ modelOn }) => {
  const serve = useLoopback()

  it.each([[[1, 6, 11]], [[13, 7]]])("byte-torn SSE (%j): the assembled answer equals doGenerate's", async (sizes) => {
    const server = await serve([
      { json: openAiChatJson(reply, 0) },
      { pieces: tearBytes(sse(openAiChatEvents(reply, 0, [3, 1]), { crlf: true, keepAlive: true }) + "data: [DONE]\r\n\r\n", sizes), contentType: "text/event-stream" }
    ])
    const client = fromAiSdk(modelOn(server.url), fast)
    const plain = await Effect.runPromise(client.chat(request))
    const exit = await collect(client)
    if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
    expect(assemble(exit.value)).toEqual(plain)
    expect(plain).toMatchObject({
      _tag: "ToolCalls",
      content: "Sum: ✓",
      reasoning: [{ _tag: "Thinking", text: "Thinking — 思考 🤔" }],
      responseId: "chatcmpl-w0",
      responseModel: "gpt-4o-mini"
    })
    expect(server.requests[1]?.body).toMatchObject({ stream: true })
    expect(exit.value.filter((p) => p._tag === "ToolCallDelta").length).toBeGreaterThan(2)
  })

  it("a streamed agent run executes the tools and ends with the streamed text", async () => {
    const second: WireReply = { text: "done ✓", calls: [], usage: { input: 1, output: 1 } }
    const server = await serve([
      { pieces: tearBytes(sse(openAiChatEvents({ ...reply, thinking: undefined }, 0)) + "data: [DONE]\n\n"), contentType: "text/event-stream" },
      { pieces: tearBytes(sse(openAiChatEvents(second, 1)) + "data: [DONE]\n\n"), contentType: "text/event-stream" }
    ])
    const seen: Array<unknown> = []
    const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite, s: Schema.optional(Schema.String) }), run: (x) => (seen.push(x), x.a + x.b) })
    const events = await Effect.runPromise(Stream.runCollect(agent("calc").model(fromAiSdk(modelOn(server.url), fast)).tools({ add }).runStream("go")))
    expect(events.at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Success", output: "done ✓" } })
    expect(seen).toEqual([{ a: 3, b: 5, s: "é😀" }, { a: 1, b: 2 }])
  })
})

/** A hand-written model whose `doStream` yields `parts` (or throws `fail`), recording its abort signal. */
const scripted = (spec: "v2" | "v3" | "v4", attempts: ReadonlyArray<ReadonlyArray<Record<string, unknown>> | { readonly fail: unknown }>, opts: { hang?: boolean } = {}) => {
  const signals: Array<AbortSignal> = []
  let n = 0
  return {
    signals,
    calls: () => n,
    model: {
      specificationVersion: spec,
      provider: "scripted.chat",
      modelId: "m",
      doGenerate: () => Promise.reject(new Error("doGenerate must not be called when streaming")),
      doStream: (options: { abortSignal?: AbortSignal }) => {
        signals.push(options.abortSignal!)
        const parts = attempts[Math.min(n++, attempts.length - 1)]!
        if ("fail" in parts) return Promise.reject(parts.fail)
        return Promise.resolve({
          stream: new ReadableStream({
            start(controller) {
              for (const part of parts) controller.enqueue(part)
              if (opts.hang !== true) controller.close()
            }
          })
        })
      }
    } as const
  }
}

const apiCallError = (status: number, isRetryable: boolean) =>
  Object.assign(new Error(`HTTP ${status}`), { [Symbol.for("vercel.ai.error.AI_APICallError")]: true, statusCode: status, isRetryable, responseHeaders: {} })

describe("fromAiSdk(model).stream: the stream parts of each specification version", () => {
  it("V2 parts (string finish reason, flat usage): text, reasoning blocks, tool input deltas, a tool-call without input parts, provider-executed calls skipped", async () => {
    const { model } = scripted("v2", [[
      { type: "stream-start", warnings: [] },
      { type: "response-metadata", id: "r1", modelId: "gpt-4o-2024-08-06", timestamp: new Date(0) },
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-delta", id: "r", delta: "first " },
      { type: "reasoning-delta", id: "r", delta: "thought" },
      { type: "reasoning-end", id: "r" },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hel" },
      { type: "raw", rawValue: { anything: true } },
      { type: "text-delta", id: "t", delta: "lo" },
      { type: "text-end", id: "t" },
      { type: "tool-input-start", id: "c1", toolName: "add" },
      { type: "tool-input-delta", id: "c1", delta: "{\"a\":" },
      { type: "tool-input-delta", id: "c1", delta: "1,\"b\":2}" },
      { type: "tool-input-end", id: "c1" },
      { type: "tool-call", toolCallId: "c1", toolName: "add", input: "{\"a\":1,\"b\":2}" },
      { type: "tool-input-start", id: "ws", toolName: "web_search", providerExecuted: true },
      { type: "tool-input-delta", id: "ws", delta: "{}" },
      { type: "tool-call", toolCallId: "ws", toolName: "web_search", input: "{}", providerExecuted: true },
      { type: "tool-call", toolCallId: "c2", toolName: "multiply", input: "{\"a\":2,\"b\":3}" },
      { type: "finish", finishReason: "tool-calls", usage: { inputTokens: 7, outputTokens: 3, reasoningTokens: 2 } }
    ]])
    const exit = await collect(fromAiSdk(model, fast))
    if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
    expect(exit.value.filter((p) => p._tag === "TextDelta").map((p) => (p as { delta: string }).delta)).toEqual(["Hel", "lo"])
    expect(assemble(exit.value)).toEqual({
      _tag: "ToolCalls",
      content: "Hello",
      calls: [{ id: "c1", name: "add", arguments: "{\"a\":1,\"b\":2}" }, { id: "c2", name: "multiply", arguments: "{\"a\":2,\"b\":3}" }],
      usage: { inputTokens: 7, outputTokens: 3, reasoningTokens: 2 },
      finishReason: "tool-calls",
      reasoning: [{ _tag: "Thinking", text: "first thought" }],
      responseId: "r1",
      responseModel: "gpt-4o-2024-08-06"
    })
  })

  it.each(["v3", "v4"] as const)("%s parts: nested usage and { unified, raw } finish reason; length becomes kind length", async (spec) => {
    const { model } = scripted(spec, [[
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "The answ" },
      { type: "finish", finishReason: { unified: "length", raw: "length" }, usage: { inputTokens: { total: 9, cacheRead: 4 }, outputTokens: { total: 5, reasoning: 1 } } }
    ]])
    const exit = await collect(fromAiSdk(model, fast))
    expect(errorOf(exit)).toMatchObject({ _tag: "ModelError", kind: "length", partial: "The answ" })
  })

  it("an error part before any content is retried (per the error's verdict); after content it fails the stream, not retried", async () => {
    const ok = [{ type: "text-delta", id: "t", delta: "ok" }, { type: "finish", finishReason: "stop", usage: {} }]
    const early = scripted("v3", [[{ type: "stream-start", warnings: [] }, { type: "error", error: apiCallError(503, true) }], ok])
    const first = await collect(fromAiSdk(early.model, fast))
    expect(Exit.isSuccess(first) && assemble(first.value)).toMatchObject({ _tag: "Text", content: "ok" })
    expect(early.calls()).toBe(2)
    const late = scripted("v3", [[{ type: "text-delta", id: "t", delta: "seen" }, { type: "error", error: apiCallError(503, true) }], ok])
    const second = await collect(fromAiSdk(late.model, fast))
    expect(errorOf(second)).toMatchObject({ _tag: "ModelError", retryable: true, status: 503 })
    expect(late.calls()).toBe(1)
    const refused = scripted("v3", [{ fail: apiCallError(401, false) }, ok])
    expect(errorOf(await collect(fromAiSdk(refused.model, fast)))).toMatchObject({ _tag: "ModelError", retryable: false, status: 401 })
    expect(refused.calls()).toBe(1)
  })

  it("a stream without a finish part counts as cut: retried when nothing was delivered", async () => {
    const { model, calls } = scripted("v3", [[{ type: "stream-start", warnings: [] }], [{ type: "text-delta", id: "t", delta: "x" }, { type: "finish", finishReason: "stop", usage: {} }]])
    const exit = await collect(fromAiSdk(model, fast))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "x" })
    expect(calls()).toBe(2)
  })

  it("interrupting the stream aborts the model's abortSignal", async () => {
    const { model, signals } = scripted("v3", [[{ type: "text-delta", id: "t", delta: "first" }]], { hang: true })
    const exit = await Effect.runPromiseExit(Stream.runCollect(fromAiSdk(model, { ...fast, idleTimeout: "1 minute" }).stream!(request).pipe(Stream.take(1))))
    expect(Exit.isSuccess(exit) && exit.value).toEqual([{ _tag: "TextDelta", delta: "first" }])
    expect(signals[0]?.aborted).toBe(true)
  })

  it("a model without doStream has no stream of its own: streamed runs adapt doGenerate", async () => {
    const { doStream: _, ...withoutStream } = scripted("v3", []).model
    const client = fromAiSdk({ ...withoutStream, doGenerate: () => Promise.resolve({ content: [{ type: "text", text: "whole" }], finishReason: "stop", usage: {} }) })
    expect(client.stream).toBeUndefined()
    const events = await Effect.runPromise(Stream.runCollect(agent("a").model(client).runStream("hi")))
    expect(events.at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Success", output: "whole" } })
  })
})
