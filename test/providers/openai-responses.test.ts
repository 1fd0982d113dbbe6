/**
 * openaiResponses(...) against a loopback server speaking the Responses API as documented: the
 * request body (input items, function tools with `strict`, tool choice, reasoning, store/include,
 * previous_response_id), replies with reasoning items, function calls, refusals, `incomplete` and
 * `failed` statuses, usage details; and the stream (named SSE events torn at byte offsets).
 */
import { Cause, Effect, Exit, Result, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, fromEnv, type LlmResponse, type ModelRequest, openaiResponses, openaiResponsesLayer, PartsAssembler, type ResponsePart, tool } from "../../src/index.ts"
import { quietLogs } from "../support/quiet-logs.ts"
import { type Reply, useLoopback } from "./loopback.ts"
import { responsesEvents, responsesJson, sse, tearBytes, type WireReply } from "./wire.ts"

quietLogs()

const fast = { retry: { times: 2, base: "5 millis" }, timeout: "5 seconds", idleTimeout: "5 seconds" } as const
const assemble = (parts: ReadonlyArray<ResponsePart>): LlmResponse => {
  const assembler = new PartsAssembler(1)
  parts.forEach((p) => assembler.add(p))
  return Result.getOrThrow(assembler.response())
}
const errorOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined)
const streamed = (body: string, sizes?: ReadonlyArray<number>, then: "end" | "cut" | "stall" = "end"): Reply => ({ pieces: tearBytes(body, sizes), contentType: "text/event-stream", then })

const add = tool("add", { description: "Add", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const strictAdd = tool("strict_add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), strict: true, run: ({ a, b }) => a + b })
const request: ModelRequest = { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "3+5?" }], tools: [add.definition, strictAdd.definition], toolChoice: { tool: "add" } }

const reasoned: WireReply = {
  thinking: { text: "Add them — 思考 🤔", signature: "gAAAAABencrypted==" },
  text: "",
  calls: [{ id: "1", name: "add", input: { a: 3, b: 5 } }],
  usage: { input: 30, output: 20 }
}

describe("openaiResponses(...): the Responses API", () => {
  const serve = useLoopback()
  const client = (url: string, extra: Record<string, unknown> = {}) => openaiResponses("gpt-5-mini", { apiKey: "k", baseURL: `${url}/v1`, ...fast, ...extra })

  it("sends input items, function tools with strict stated (the API defaults to strict), tool choice, reasoning, store/include and previous_response_id", async () => {
    const server = await serve([{ json: responsesJson({ text: "8", calls: [], usage: { input: 1, output: 1 } }, 0) }])
    await Effect.runPromise(client(server.url, { store: false, reasoningEffort: "low", reasoningSummary: "auto", previousResponseId: "resp_prev", maxTokens: 500 }).chat(request))
    expect(server.requests[0]?.url).toBe("/v1/responses")
    expect(server.requests[0]?.body).toEqual({
      model: "gpt-5-mini",
      input: [{ role: "system", content: "Be brief." }, { role: "user", content: "3+5?" }],
      tools: [
        { type: "function", name: "add", description: "Add", parameters: add.definition.parameters, strict: false },
        { type: "function", name: "strict_add", parameters: strictAdd.definition.parameters, strict: true }
      ],
      tool_choice: { type: "function", name: "add" },
      max_output_tokens: 500,
      reasoning: { effort: "low", summary: "auto" },
      store: false,
      include: ["reasoning.encrypted_content"],
      previous_response_id: "resp_prev"
    })
  })

  it("reads reasoning items, calls and usage with cached and reasoning tokens; sends the reasoning item (encrypted_content included) back unchanged on the next turn", async () => {
    const first = responsesJson(reasoned, 0, { usage: { input_tokens: 30, input_tokens_details: { cached_tokens: 12 }, output_tokens: 20, output_tokens_details: { reasoning_tokens: 16 }, total_tokens: 50 } })
    const final = { json: responsesJson({ text: "8", calls: [], usage: { input: 1, output: 1 } }, 1) }
    const server = await serve([{ json: first }, { json: first }, final])
    const response = await Effect.runPromise(client(server.url).chat(request))
    expect(response).toMatchObject({
      _tag: "ToolCalls",
      calls: [{ id: "call_0_1", name: "add", arguments: "{\"a\":3,\"b\":5}" }],
      usage: { inputTokens: 30, outputTokens: 20, cachedInputTokens: 12, reasoningTokens: 16 },
      reasoning: [{ _tag: "Thinking", text: "Add them — 思考 🤔" }]
    })
    expect(await agent("calc").model(client(server.url, { store: false })).tools({ add }).run("3+5?")).toBe("8")
    expect(server.requests[2]?.body.input.slice(-3)).toEqual([
      { type: "reasoning", id: "rs_0", summary: [{ type: "summary_text", text: "Add them — 思考 🤔" }], encrypted_content: "gAAAAABencrypted==" },
      { type: "function_call", call_id: "call_0_1", name: "add", arguments: "{\"a\":3,\"b\":5}" },
      { type: "function_call_output", call_id: "call_0_1", output: "8" }
    ])
  })

  it("maps a refusal, incomplete (max_output_tokens, content_filter) and failed statuses to ModelError kinds and retry verdicts", async () => {
    const refusal = { ...responsesJson({ text: "", calls: [], usage: { input: 1, output: 1 } }, 0), output: [{ type: "message", id: "m", role: "assistant", content: [{ type: "refusal", refusal: "I can't help with that." }] }] }
    const long = responsesJson({ text: "The answ", calls: [], usage: { input: 1, output: 1 } }, 0, { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } })
    const filtered = responsesJson({ text: "", calls: [], usage: { input: 1, output: 1 } }, 0, { status: "incomplete", incomplete_details: { reason: "content_filter" } })
    const failed = responsesJson({ text: "", calls: [], usage: { input: 1, output: 1 } }, 0, { status: "failed", error: { code: "server_error", message: "boom" } })
    const ok = responsesJson({ text: "ok", calls: [], usage: { input: 1, output: 1 } }, 0)
    const server = await serve([{ json: refusal }, { json: long }, { json: filtered }, { json: failed }, { json: ok }])
    const chat = () => Effect.runPromiseExit(client(server.url).chat({ messages: [{ role: "user", content: "x" }], tools: [] }))
    expect(errorOf(await chat())).toMatchObject({ kind: "refusal", partial: "I can't help with that." })
    expect(errorOf(await chat())).toMatchObject({ kind: "length", partial: "The answ" })
    expect(errorOf(await chat())).toMatchObject({ kind: "content-filter" })
    // failed with server_error is retryable: the next reply answers.
    expect(await Effect.runPromise(client(server.url).chat({ messages: [{ role: "user", content: "x" }], tools: [] }))).toMatchObject({ content: "ok" })
    expect(server.requests).toHaveLength(5)
  })

  it.each([[[1, 5, 2, 9]], [[64]]])("streams (%j byte tearing, CRLF, keep-alive): the assembled answer equals the non-streamed one", async (sizes) => {
    const reply: WireReply = { ...reasoned, text: "Let me add — ✓", calls: [...reasoned.calls, { id: "2", name: "add", input: { a: 1, b: 2 } }] }
    const server = await serve([{ json: responsesJson(reply, 0) }, streamed(sse(responsesEvents(reply, 0, [3, 1]), { crlf: true, keepAlive: true }), sizes)])
    const plain = await Effect.runPromise(client(server.url).chat(request))
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
    expect(assemble(exit.value)).toEqual(plain)
    expect(plain).toMatchObject({ responseId: "resp_0", responseModel: "gpt-5-mini" })
    expect(server.requests[1]?.body).toMatchObject({ stream: true })
    expect(exit.value.filter((p) => p._tag === "ReasoningDelta").length).toBeGreaterThan(1)
  })

  it("stream: response.incomplete becomes a ModelError of kind length with the partial text", async () => {
    const text: WireReply = { text: "The answer", calls: [], usage: { input: 1, output: 1 } }
    const incomplete = responsesEvents(text, 0, [4], "response.incomplete", { status: "incomplete", incomplete_details: { reason: "max_output_tokens" } })
    const server = await serve([streamed(sse(incomplete))])
    expect(errorOf(await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request))))).toMatchObject({ kind: "length", partial: "The answer" })
  })

  it("stream: response.failed before content is retried; an error event after text is not", async () => {
    const text: WireReply = { text: "The answer", calls: [], usage: { input: 1, output: 1 } }
    const failedEvents: Array<readonly [string, unknown]> = [
      ["response.created", { type: "response.created", response: {} }],
      ["response.failed", { type: "response.failed", response: { status: "failed", output: [], error: { code: "server_error", message: "boom" } } }]
    ]
    const late = [...responsesEvents(text, 0).slice(0, 3), ["error", { type: "error", code: "server_error", message: "boom", param: null }] as const]
    const server = await serve([streamed(sse(failedEvents)), streamed(sse(responsesEvents(text, 0))), streamed(sse(late)), streamed(sse(responsesEvents(text, 0)))])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "The answer" })
    expect(server.requests).toHaveLength(2)
    expect(errorOf(await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request))))).toMatchObject({ _tag: "ModelError", retryable: true })
    expect(server.requests).toHaveLength(3)
  })

  it("stream: an error event in OpenAI's nested shape for a 429 (too_many_requests) is retried", async () => {
    const text: WireReply = { text: "The answer", calls: [], usage: { input: 1, output: 1 } }
    // openai/openai-dotnet#881: `event: error` with the error nested, its type and code `too_many_requests`.
    const tooMany = { type: "error", sequence_number: 1, error: { type: "too_many_requests", code: "too_many_requests", message: "Too Many Requests", param: null } }
    const server = await serve([streamed(sse([...responsesEvents(text, 0).slice(0, 1), ["error", tooMany]])), streamed(sse(responsesEvents(text, 0)))])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "The answer" })
    expect(server.requests).toHaveLength(2)
  })

  it("interrupting the stream closes the HTTP response", async () => {
    const text: WireReply = { text: "first words", calls: [], usage: { input: 1, output: 1 } }
    const server = await serve([streamed(sse(responsesEvents(text, 0, [6]).slice(0, 3)), undefined, "stall")])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url, { idleTimeout: "1 minute" }).stream!(request).pipe(Stream.take(2))))
    // The id and model come first, from response.created.
    expect(Exit.isSuccess(exit) && exit.value).toEqual([{ _tag: "ResponseInfo", id: "resp_0", model: "gpt-5-mini" }, { _tag: "TextDelta", delta: "first " }])
    await server.aborted
  })

  it("a strict option refuses a non-strict tool before any HTTP call", async () => {
    const server = await serve([{ json: responsesJson({ text: "x", calls: [], usage: { input: 1, output: 1 } }, 0) }])
    expect(errorOf(await Effect.runPromiseExit(client(server.url, { strict: true }).chat(request)))).toMatchObject({ reason: expect.stringMatching(/not strict-compatible/) })
    expect(server.requests).toHaveLength(0)
  })
})

describe("openaiResponses from the environment and as a Layer", () => {
  const serve = useLoopback()

  it("AI_PROVIDER=openai-responses builds a Responses client; openaiResponsesLayer provides one", async () => {
    const server = await serve([{ json: responsesJson({ text: "env", calls: [], usage: { input: 1, output: 1 } }, 0) }])
    const env = fromEnv({ AI_PROVIDER: "openai-responses", AI_MODEL: "gpt-5-mini", OPENAI_API_KEY: "sk", OPENAI_BASE_URL: `${server.url}/v1` })
    expect(env.provider).toBe("openai-responses")
    expect(await Effect.runPromise(env.client.chat({ messages: [{ role: "user", content: "x" }], tools: [] }))).toMatchObject({ content: "env" })
    expect(server.requests[0]?.url).toBe("/v1/responses")
    expect(await agent("a").provide(openaiResponsesLayer("gpt-5-mini", { apiKey: "k", baseURL: `${server.url}/v1` })).run("x")).toBe("env")
    expect(server.requests[1]?.url).toBe("/v1/responses")
    expect(() => fromEnv({ AI_PROVIDER: "openai-responses", AI_MODEL: "m" })).toThrow(/OPENAI_API_KEY is required when AI_PROVIDER=openai-responses/)
  })
})
