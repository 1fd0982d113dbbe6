/**
 * anthropic(...).stream against a loopback server speaking the Messages stream as documented: named
 * SSE events torn at byte offsets (inside UTF-8 characters, SSE lines, JSON), CRLF line ends,
 * keep-alive comments and `ping` events; thinking with its signature; an `error` event mid-stream;
 * usage from `message_delta` ending a run at its token budget; cuts and stalls.
 */
import { Cause, Effect, Exit, Result, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, anthropic, type LlmResponse, ModelError, type ModelRequest, PartsAssembler, type ResponsePart, tool } from "../../src/index.ts"
import { fromAnthropicResponse, toAnthropicRequest } from "../../src/providers/anthropic.ts"
import { type Reply, useLoopback } from "./loopback.ts"
import { anthropicEvents, anthropicJson, sse, tearBytes, type WireReply } from "./wire.ts"
import { quietLogs } from "../support/quiet-logs.ts"

quietLogs()

const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }
const fast = { retry: { times: 2, base: "5 millis" }, idleTimeout: "5 seconds" } as const
const assemble = (parts: ReadonlyArray<ResponsePart>): LlmResponse => {
  const assembler = new PartsAssembler(1)
  parts.forEach((p) => assembler.add(p))
  return Result.getOrThrow(assembler.response())
}
const errorOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined)
const streamed = (body: string, then: "end" | "cut" | "stall" = "end", sizes?: ReadonlyArray<number>): Reply => ({
  pieces: tearBytes(body, sizes),
  contentType: "text/event-stream",
  then
})

const thinkingToolUse: WireReply = {
  thinking: { text: "Adding 3 and 5 — ünïcödé 🧮 思考", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" },
  text: "Let me compute 🙂.",
  calls: [{ id: "toolu_01", name: "add", input: { a: 3, b: 5, note: "é😀\"\\" } }, { id: "toolu_02", name: "add", input: {} }],
  usage: { input: 120, output: 48 }
}

describe("anthropic(...).stream: the Messages stream", () => {
  const serve = useLoopback()
  const client = (url: string, extra: Record<string, unknown> = {}) => anthropic("claude-sonnet-4-6", { apiKey: "k", baseURL: url, ...fast, ...extra })

  it.each([
    ["LF, torn every few bytes", {}, [7, 3, 11, 1, 5]],
    ["CRLF with keep-alive comments, torn at 1 to 4 bytes", { crlf: true, keepAlive: true }, [1, 4, 2, 3]],
    ["LF with keep-alive comments, torn at 2 bytes (inside every multi-byte character)", { keepAlive: true }, [2]]
  ] as const)("%s: the assembled answer equals the non-streamed one (signature kept), asked with stream: true", async (_, style, sizes) => {
    const server = await serve([streamed(sse(anthropicEvents(thinkingToolUse, [4, 1, 9]), style), "end", sizes)])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
    const expected = await Effect.runPromise(fromAnthropicResponse(anthropicJson(thinkingToolUse) as never))
    expect(assemble(exit.value)).toEqual(expected)
    expect(expected).toMatchObject({ responseId: "msg_01wire", responseModel: "claude-sonnet-4-6" })
    expect(exit.value.filter((p) => p._tag === "ResponseInfo")).toEqual([{ _tag: "ResponseInfo", id: "msg_01wire", model: "claude-sonnet-4-6" }])
    expect(expected.reasoning).toEqual([{ _tag: "Thinking", text: thinkingToolUse.thinking!.text, signature: thinkingToolUse.thinking!.signature }])
    expect(server.requests[0]?.body).toMatchObject({ stream: true })
    // Usage arrives twice: input at message_start, output at message_delta.
    expect(exit.value.filter((p) => p._tag === "Usage")).toEqual([
      { _tag: "Usage", usage: { inputTokens: 120, outputTokens: 1, cachedInputTokens: 0 } },
      { _tag: "Usage", usage: { inputTokens: 120, outputTokens: 48, cachedInputTokens: 0 } }
    ])
  })

  it("redacted thinking comes whole and is sent back unchanged, with the signed thinking, on the next turn of a streamed run", async () => {
    const first: WireReply = { ...thinkingToolUse, redacted: "EmwKAhgBEgy3va3pzix/LafPsn4a", calls: [thinkingToolUse.calls[0]!] }
    const second: WireReply = { text: "8", calls: [], usage: { input: 10, output: 1 } }
    const server = await serve([streamed(sse(anthropicEvents(first))), streamed(sse(anthropicEvents(second)))])
    const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite, note: Schema.optional(Schema.String) }), run: ({ a, b }) => a + b })
    const calc = agent("calc").model(client(server.url, { thinkingBudget: 2000 })).tools({ add })
    const events = await Effect.runPromise(Stream.runCollect(calc.runStream("3+5?")))
    expect(events.at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Success", output: "8" } })
    const assistant = server.requests[1]?.body.messages[1]
    expect(assistant.content.slice(0, 2)).toEqual([
      { type: "thinking", thinking: first.thinking!.text, signature: first.thinking!.signature },
      { type: "redacted_thinking", data: first.redacted }
    ])
    expect(events.filter((e) => e._tag === "ReasoningDelta").map((e) => (e as { delta: string }).delta).join("")).toBe(first.thinking!.text)
  })

  it("an overloaded_error event after message_start (usage only) is retried; the second attempt's answer is the one", async () => {
    const events = anthropicEvents({ text: "late", calls: [], usage: { input: 5, output: 2 } })
    const overloaded: Array<readonly [string, unknown]> = [events[0]!, ["error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]]
    const server = await serve([streamed(sse(overloaded)), streamed(sse(anthropicEvents({ text: "ok", calls: [], usage: { input: 5, output: 1 } })))])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "ok", usage: { inputTokens: 5, outputTokens: 1 } })
    expect(server.requests).toHaveLength(2)
  })

  it("an overloaded_error event after text reached the caller fails with a retryable ModelError and is not retried", async () => {
    const events = anthropicEvents({ text: "seen once", calls: [], usage: { input: 5, output: 2 } })
    const overloaded: Array<readonly [string, unknown]> = [...events.slice(0, 4), ["error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }]]
    const server = await serve([streamed(sse(overloaded)), streamed(sse(anthropicEvents({ text: "again", calls: [], usage: { input: 5, output: 1 } })))])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    expect(errorOf(exit)).toMatchObject({ _tag: "ModelError", retryable: true })
    expect((errorOf(exit) as ModelError).reason).toMatch(/overloaded_error/)
    expect(server.requests).toHaveLength(1)
  })

  it("an invalid_request_error event is not retried", async () => {
    const server = await serve([streamed(sse([["error", { type: "error", error: { type: "invalid_request_error", message: "bad" } }]]))])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    expect(errorOf(exit)).toMatchObject({ _tag: "ModelError", retryable: false })
    expect(server.requests).toHaveLength(1)
  })

  it("a stream cut before message_delta (no stop reason) is retried when nothing was delivered", async () => {
    const events = anthropicEvents({ text: "", calls: [], usage: { input: 5, output: 2 } }).slice(0, 2)
    const server = await serve([streamed(sse(events)), streamed(sse(anthropicEvents({ text: "whole", calls: [], usage: { input: 5, output: 1 } })))])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "whole" })
    expect(server.requests).toHaveLength(2)
  })

  it("a stall (idleTimeout) before any content is retried and the stalled response closed", async () => {
    const events = anthropicEvents({ text: "x", calls: [], usage: { input: 5, output: 1 } })
    const server = await serve([streamed(sse(events.slice(0, 1)), "stall"), streamed(sse(events))])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url, { idleTimeout: "300 millis" }).stream!(request)))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "x" })
    expect(server.requests).toHaveLength(2)
    await server.aborted
  })

  it("output usage in message_delta ends a run at maxTokens mid-answer, and the request is closed", async () => {
    const events = anthropicEvents({ text: "a very long answer", calls: [], usage: { input: 10, output: 5000 } })
    const upToDelta = events.slice(0, events.findIndex(([name]) => name === "message_delta") + 1)
    const server = await serve([streamed(sse(upToDelta), "stall")])
    const talker = agent("talker").model(client(server.url, { idleTimeout: "1 minute" })).budget({ maxTokens: 1000 })
    const seen: Array<{ _tag: string }> = []
    const exit = await Effect.runPromiseExit(talker.runStream("talk").pipe(Stream.runForEach((e) => Effect.sync(() => seen.push(e)))))
    expect(errorOf(exit)).toMatchObject({ _tag: "BudgetExceeded", limit: 1000 })
    expect(seen.at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Failure", error: { _tag: "BudgetExceeded" } } })
    await server.aborted
  })

  it("stop_reason max_tokens is a ModelError of kind length with the partial text; refusal of kind refusal", async () => {
    const cut = anthropicEvents({ text: "The answer", calls: [], usage: { input: 5, output: 2 } }).map(([n, d]): readonly [string, unknown] =>
      n === "message_delta" ? [n, { ...(d as object), delta: { stop_reason: "max_tokens", stop_sequence: null } }] : [n, d]
    )
    const refused = cut.map(([n, d]): readonly [string, unknown] => n === "message_delta" ? [n, { ...(d as object), delta: { stop_reason: "refusal" } }] : [n, d])
    const server = await serve([streamed(sse(cut)), streamed(sse(refused))])
    const first = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    expect(errorOf(first)).toMatchObject({ _tag: "ModelError", kind: "length", partial: "The answer" })
    const second = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    expect(errorOf(second)).toMatchObject({ _tag: "ModelError", kind: "refusal" })
  })
})

describe("reasoning of other providers in the transcript", () => {
  it("is not sent to Anthropic (after a fallback its signature would be refused); Anthropic's own is", () => {
    const body = toAnthropicRequest("claude-sonnet-4-6", {
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "c1", name: "add", arguments: "{}" }],
          reasoning: [
            { _tag: "Thinking", text: "gemini thoughts", signature: "gemini:{\"calls\":[\"sig\"]}" },
            { _tag: "Thinking", text: "summary", signature: "openai-responses:{\"id\":\"rs_1\"}" },
            { _tag: "Thinking", text: "mine", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h+/=" }
          ]
        },
        { role: "tool", toolCallId: "c1", name: "add", content: "2" }
      ],
      tools: []
    })
    expect((body.messages[1]?.content as Array<{ type: string }>).map((b) => b.type)).toEqual(["thinking", "tool_use"])
    expect(body.messages[1]?.content).toContainEqual({ type: "thinking", thinking: "mine", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h+/=" })
  })
})
