/**
 * Streaming providers against loopback servers that stream as each API documents: Chat Completions
 * SSE (`data:` lines, a usage chunk, `data: [DONE]`) and Ollama `/api/chat` NDJSON; bodies torn at
 * arbitrary byte positions, cut mid-way, or stalled.
 */
import { Cause, Effect, Exit, Result, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type LlmResponse, type ModelClient, ModelError, type ModelRequest, ollama, openai, PartsAssembler, type ResponsePart, type RunStreamEvent, tool } from "../../src/index.ts"
import { Schema } from "effect"
import { ndjsonBody, ollamaLine, openAiChunk, openAiUsageChunk, type Reply, sseBody, tear, useLoopback } from "./loopback.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }

const partsOf = async (client: ModelClient, req: ModelRequest = request) => {
  const exit = await Effect.runPromiseExit(Stream.runCollect(client.stream!(req)))
  return exit
}
const assemble = (parts: ReadonlyArray<ResponsePart>): LlmResponse => {
  const assembler = new PartsAssembler(1)
  parts.forEach((p) => assembler.add(p))
  return Result.getOrThrow(assembler.response())
}
const errorOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined)

const sse = (body: string, then: "end" | "cut" | "stall" = "end", sizes?: ReadonlyArray<number>): Reply => ({
  pieces: tear(body, sizes),
  contentType: "text/event-stream",
  then
})
const ndjson = (body: string, then: "end" | "cut" | "stall" = "end"): Reply => ({ pieces: tear(body), contentType: "application/x-ndjson", then })

const fast = { retry: { times: 2, base: "5 millis" }, idleTimeout: "5 seconds" } as const
/** For the stall tests: a short idle timeout (the others keep a long one, so a loaded machine does not trip it). */
const stalls = { ...fast, idleTimeout: "1 second" } as const

const openAiToolThenText = [
  openAiChunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "add", arguments: "" } }] }),
  openAiChunk({ tool_calls: [{ index: 0, function: { arguments: "{\"a\": 3" } }] }),
  openAiChunk({ tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "add", arguments: "{\"a\":1," } }] }),
  openAiChunk({ tool_calls: [{ index: 0, function: { arguments: ", \"b\": 5}" } }] }),
  openAiChunk({ tool_calls: [{ index: 1, function: { arguments: "\"b\":2}" } }] }),
  openAiChunk({}, "tool_calls"),
  openAiUsageChunk(40, 12)
]
const openAiText = (words: ReadonlyArray<string>) => [
  openAiChunk({ role: "assistant", content: "" }),
  ...words.map((w) => openAiChunk({ content: w })),
  openAiChunk({}, "stop"),
  openAiUsageChunk(50, words.length)
]

describe("openai(...).stream: Chat Completions SSE", () => {
  const serve = useLoopback()

  it("assembles interleaved tool-call deltas by index from a torn SSE body, with usage; asks for include_usage", async () => {
    const server = await serve([sse(sseBody(openAiToolThenText))])
    const exit = await partsOf(openai("gpt-4o-mini", { baseURL: `${server.url}/v1`, apiKey: "k", ...fast }))
    expect(Exit.isSuccess(exit)).toBe(true)
    const response = assemble(Exit.isSuccess(exit) ? exit.value : [])
    expect(response).toEqual({
      _tag: "ToolCalls",
      calls: [{ id: "call_a", name: "add", arguments: "{\"a\": 3, \"b\": 5}" }, { id: "call_b", name: "add", arguments: "{\"a\":1,\"b\":2}" }],
      usage: { inputTokens: 40, outputTokens: 12 },
      finishReason: "tool-calls",
      responseId: "chatcmpl-s1",
      responseModel: "gpt-4o-mini-2024-07-18"
    })
    // Every chunk repeats the id and model; they are said once.
    expect(Exit.isSuccess(exit) && exit.value.filter((p) => p._tag === "ResponseInfo")).toHaveLength(1)
    expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
  })

  it("a second call at an index already in use, or calls without an index, are calls of their own (never merged into the first)", async () => {
    const reused = [
      openAiChunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "a", type: "function", function: { name: "add", arguments: "" } }] }),
      openAiChunk({ tool_calls: [{ index: 0, id: "b", type: "function", function: { name: "mul", arguments: "{\"a\":3,\"b\":4}" } }] }),
      openAiChunk({ tool_calls: [{ id: "c", type: "function", function: { name: "add", arguments: { a: 1, b: 2 } } }] } as never),
      openAiChunk({ tool_calls: [{ id: "d", type: "function", function: { name: "mul", arguments: "{}" } }] } as never),
      openAiChunk({}, "tool_calls")
    ]
    const server = await serve([sse(sseBody(reused))])
    const exit = await partsOf(openai("gpt-4o-mini", { baseURL: `${server.url}/v1`, apiKey: "k", ...fast }))
    const response = assemble(Exit.isSuccess(exit) ? exit.value : [])
    expect(response).toMatchObject({
      _tag: "ToolCalls",
      calls: [
        // No argument text streamed: "{}", as the same call in a whole answer reads (stream-whole-parity.test.ts).
        { id: "a", name: "add", arguments: "{}" },
        { id: "b", name: "mul", arguments: "{\"a\":3,\"b\":4}" },
        { id: "c", name: "add", arguments: "{\"a\":1,\"b\":2}" },
        { id: "d", name: "mul", arguments: "{}" }
      ]
    })
  })

  it("runs an agent over the stream: argument deltas, then text deltas, same output as the SDK answer", async () => {
    const server = await serve([sse(sseBody(openAiToolThenText)), sse(sseBody(openAiText(["The ", "answer ", "is 11."])))])
    const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
    const calc = agent("calc").model(openai("gpt-4o-mini", { baseURL: `${server.url}/v1`, apiKey: "k", ...fast })).tools({ add })
    const events: Array<RunStreamEvent> = []
    await Effect.runPromise(calc.runStream("3+5 and 1+2?").pipe(Stream.runForEach((e) => Effect.sync(() => events.push(e)))))
    expect(events.filter((e) => e._tag === "TextDelta").map((e) => (e as { delta: string }).delta)).toEqual(["The ", "answer ", "is 11."])
    expect(events.filter((e) => e._tag === "ToolCallStart").map((e) => (e as { toolCallId?: string }).toolCallId)).toEqual(["call_a", "call_b"])
    expect(events.filter((e) => e._tag === "ToolUse").map((e) => (e as { result: unknown }).result)).toEqual([8, 3])
    expect(events.at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Success", output: "The answer is 11." } })
    expect(server.requests).toHaveLength(2)
  })

  it("a stream cut after text reached the caller fails with a ModelError and is not retried", async () => {
    const server = await serve([sse(sseBody(openAiText(["partial ", "answer"]).slice(0, 3), false), "cut"), sse(sseBody(openAiText(["again"])))])
    const exit = await partsOf(openai("m", { baseURL: `${server.url}/v1`, apiKey: "k", ...fast }))
    expect(errorOf(exit)).toBeInstanceOf(ModelError)
    expect(server.requests).toHaveLength(1)
  })

  it("a stream that ends without [DONE] or a finish reason counts as cut (retryable), retried when nothing was delivered", async () => {
    const server = await serve([sse(sseBody([openAiChunk({ role: "assistant", content: "" })], false)), sse(sseBody(openAiText(["whole"])))])
    const exit = await partsOf(openai("m", { baseURL: `${server.url}/v1`, apiKey: "k", ...fast }))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "whole" })
    expect(server.requests).toHaveLength(2)
  })

  it("a stall before any delta is a retryable ModelError: retried, and the first HTTP stream is closed", async () => {
    const server = await serve([sse(sseBody([openAiChunk({ role: "assistant", content: "" })], false), "stall"), sse(sseBody(openAiText(["ok"])))])
    const exit = await partsOf(openai("m", { baseURL: `${server.url}/v1`, apiKey: "k", ...stalls }))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "ok" })
    expect(server.requests).toHaveLength(2)
    await server.aborted
  })

  it("a stall after deltas reached the caller fails (stalled) without a retry that would repeat them", async () => {
    const server = await serve([sse(sseBody(openAiText(["seen ", "once"]).slice(0, 3), false), "stall"), sse(sseBody(openAiText(["again"])))])
    const exit = await partsOf(openai("m", { baseURL: `${server.url}/v1`, apiKey: "k", ...stalls }))
    expect(errorOf(exit)).toMatchObject({ _tag: "ModelError", retryable: true })
    expect(String((errorOf(exit) as ModelError).reason)).toMatch(/stalled/)
    expect(server.requests).toHaveLength(1)
  })

  it("interrupting the stream closes the HTTP response", async () => {
    const server = await serve([sse(sseBody([openAiChunk({ role: "assistant", content: "first" })], false), "stall")])
    const client = openai("m", { baseURL: `${server.url}/v1`, apiKey: "k", retry: false, idleTimeout: "1 minute" })
    const exit = await Effect.runPromiseExit(Stream.runCollect(client.stream!(request).pipe(Stream.take(2))))
    expect(Exit.isSuccess(exit) && exit.value).toEqual([
      { _tag: "ResponseInfo", id: "chatcmpl-s1", model: "gpt-4o-mini-2024-07-18" },
      { _tag: "TextDelta", delta: "first" }
    ])
    await server.aborted
  })

  it("finish_reason length becomes a ModelError of kind length with the partial text", async () => {
    const server = await serve([sse(sseBody([openAiChunk({ content: "The answer" }), openAiChunk({}, "length")]))])
    const exit = await partsOf(openai("m", { baseURL: `${server.url}/v1`, apiKey: "k", ...fast }))
    expect(errorOf(exit)).toMatchObject({ _tag: "ModelError", kind: "length", partial: "The answer" })
  })

  it.each([
    ["type server_error", { message: "The server had an error", type: "server_error", param: null, code: null }],
    ["code rate_limit_exceeded", { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" }],
    ["a numeric code (OpenRouter)", { message: "Provider returned error", code: 502 }]
  ])("an error event before any content (%s) is retried, as Gemini's, Anthropic's and the Responses API's are", async (_, error) => {
    const server = await serve([sse(`data: ${JSON.stringify({ error })}\n\n`), sse(sseBody(openAiText(["ok"])))])
    const exit = await partsOf(openai("m", { baseURL: `${server.url}/v1`, apiKey: "k", ...fast }))
    expect(errorOf(exit)).toBeUndefined()
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "ok" })
    expect(server.requests).toHaveLength(2)
  })

  it("an error event of another type is not retried; a server_error event after text fails without a retry", async () => {
    const invalid = await serve([sse(`data: ${JSON.stringify({ error: { message: "bad", type: "invalid_request_error" } })}\n\n`), sse(sseBody(openAiText(["ok"])))])
    expect(errorOf(await partsOf(openai("m", { baseURL: `${invalid.url}/v1`, apiKey: "k", ...fast })))).toMatchObject({ _tag: "ModelError", retryable: false, reason: "bad" })
    expect(invalid.requests).toHaveLength(1)
    const late = await serve([
      sse(sseBody(openAiText(["seen"]).slice(0, 2), false) + `data: ${JSON.stringify({ error: { message: "boom", type: "server_error" } })}\n\n`),
      sse(sseBody(openAiText(["again"])))
    ])
    expect(errorOf(await partsOf(openai("m", { baseURL: `${late.url}/v1`, apiKey: "k", ...fast })))).toMatchObject({ _tag: "ModelError", retryable: true, reason: "boom" })
    expect(late.requests).toHaveLength(1)
  })
})

describe("ollama(...).stream: /api/chat NDJSON", () => {
  const serve = useLoopback()

  it("streams text and thinking deltas from torn NDJSON lines, with usage and done_reason from the last line", async () => {
    const server = await serve([ndjson(ndjsonBody([
      ollamaLine({ thinking: "Let me " }),
      ollamaLine({ thinking: "think." }),
      ollamaLine({ content: "Hello" }),
      ollamaLine({ content: ", world" }),
      ollamaLine({}, true)
    ]))])
    const exit = await partsOf(ollama("qwen", { host: server.url, ...fast }))
    const parts = Exit.isSuccess(exit) ? exit.value : []
    expect(parts.filter((p) => p._tag === "TextDelta")).toEqual([{ _tag: "TextDelta", delta: "Hello" }, { _tag: "TextDelta", delta: ", world" }])
    expect(assemble(parts)).toEqual({
      _tag: "Text",
      content: "Hello, world",
      usage: { inputTokens: 26, outputTokens: 12 },
      finishReason: "stop",
      reasoning: [{ _tag: "Thinking", text: "Let me think." }],
      responseModel: "qwen2.5:7b"
    })
    // Every line names the model; it is said once (Ollama sends no id).
    expect(parts.filter((p) => p._tag === "ResponseInfo")).toEqual([{ _tag: "ResponseInfo", model: "qwen2.5:7b" }])
    expect(server.requests[0]?.body).toMatchObject({ stream: true })
  })

  it("streams whole tool calls (object arguments as JSON text, ids assigned)", async () => {
    const server = await serve([ndjson(ndjsonBody([
      ollamaLine({ tool_calls: [{ function: { name: "add", arguments: { a: 3, b: 5 } } }] }),
      ollamaLine({}, true, { done_reason: "stop" })
    ]))])
    const exit = await partsOf(ollama("qwen", { host: server.url, ...fast }))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({
      _tag: "ToolCalls",
      calls: [{ id: "call_1_0", name: "add", arguments: "{\"a\":3,\"b\":5}" }],
      finishReason: "tool-calls"
    })
  })

  it("a stream cut after text fails with a ModelError, not retried; one cut before any delta is retried", async () => {
    const cutLate = await serve([ndjson(ndjsonBody([ollamaLine({ content: "Hel" }), ollamaLine({ content: "lo" })]), "cut"), ndjson(ndjsonBody([ollamaLine({ content: "x" }), ollamaLine({}, true)]))])
    const late = await partsOf(ollama("qwen", { host: cutLate.url, ...fast }))
    expect(errorOf(late)).toBeInstanceOf(ModelError)
    expect(cutLate.requests).toHaveLength(1)
  })

  it("a line that is not JSON fails the stream with a ModelError (the SDK would skip it and the run go on without it); a clean end without done is retried", async () => {
    const torn = `${JSON.stringify(ollamaLine({ content: "The answer is " }))}\n{"model":"m","message":{"role":"assistant","content":"NOT\n${JSON.stringify(ollamaLine({ content: "42" }))}\n${JSON.stringify(ollamaLine({}, true))}\n`
    const server = await serve([ndjson(torn)])
    const exit = await partsOf(ollama("qwen", { host: server.url, ...fast }))
    expect(errorOf(exit)).toMatchObject({ _tag: "ModelError", retryable: false })
    expect(String((errorOf(exit) as ModelError).reason)).toContain("not JSON")
    const noDone = await serve([ndjson(""), ndjson(ndjsonBody([ollamaLine({ content: "ok" }), ollamaLine({}, true)]))])
    const retried = await partsOf(ollama("qwen", { host: noDone.url, ...fast }))
    expect(Exit.isSuccess(retried) && assemble(retried.value)).toMatchObject({ _tag: "Text", content: "ok" })
    expect(noDone.requests).toHaveLength(2)
  })

  it.each(["text/plain; charset=utf-8", "application/json"])("a line that is not JSON fails the stream whatever the content type says (%s)", async (contentType) => {
    const torn = `${JSON.stringify(ollamaLine({ content: "The answer: " }))}\n{"model":"m","message":{"role":"assistant","content":"42"\n${JSON.stringify(ollamaLine({}, true))}\n`
    const server = await serve([{ pieces: tear(torn), contentType }])
    const exit = await partsOf(ollama("qwen", { host: server.url, ...fast }))
    expect(errorOf(exit)).toMatchObject({ _tag: "ModelError", retryable: false })
    expect(String((errorOf(exit) as ModelError).reason)).toContain("not JSON")
  })

  it("an error line whose error is an object is described by its message, not [object Object]; a string error as it is", async () => {
    const server = await serve([
      ndjson(ndjsonBody([ollamaLine({ content: "hi" }), { error: { message: "runner crashed", code: 500 } }])),
      ndjson(ndjsonBody([{ error: "model runner has unexpectedly stopped" }]))
    ])
    const client = ollama("qwen", { host: server.url, ...fast })
    expect(errorOf(await partsOf(client))).toMatchObject({ _tag: "ModelError", reason: "runner crashed" })
    expect(errorOf(await partsOf(client))).toMatchObject({ _tag: "ModelError", reason: "model runner has unexpectedly stopped" })
  })

  it("a stall before any line is retried; the stalled request is closed", async () => {
    const server = await serve([ndjson("", "stall"), ndjson(ndjsonBody([ollamaLine({ content: "ok" }), ollamaLine({}, true)]))])
    const exit = await partsOf(ollama("qwen", { host: server.url, ...stalls }))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "ok" })
    expect(server.requests).toHaveLength(2)
    await server.aborted
  })
})
