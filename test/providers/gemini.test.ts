/**
 * gemini(...) against a loopback server speaking Google's Gemini API as documented
 * (`/v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse`): function declarations
 * converted from the tools' JSON Schema, tool choice, thinking budget, thought summaries and
 * signatures sent back, ids given to calls without one, safety blocks and MAX_TOKENS, usage; the
 * stream torn at byte offsets; fromEnv and the Layer; the schema conversion on its own.
 */
import { Cause, Effect, Exit, Result, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, fromEnv, gemini, geminiLayer, type LlmResponse, type ModelRequest, PartsAssembler, type ResponsePart, tool } from "../../src/index.ts"
import { GeminiSchemaError, toGeminiSchema } from "../../src/providers/gemini-schema.ts"
import { quietLogs } from "../support/quiet-logs.ts"
import { type Reply, useLoopback } from "./loopback.ts"
import { geminiEvents, geminiJson, sse, tearBytes, type WireReply } from "./wire.ts"

quietLogs()

const fast = { retry: { times: 2, base: "5 millis" }, timeout: "5 seconds", idleTimeout: "5 seconds" } as const
const assemble = (parts: ReadonlyArray<ResponsePart>): LlmResponse => {
  const assembler = new PartsAssembler(1)
  parts.forEach((p) => assembler.add(p))
  return Result.getOrThrow(assembler.response())
}
const errorOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined)
const streamed = (body: string, sizes?: ReadonlyArray<number>, then: "end" | "cut" | "stall" = "end"): Reply => ({ pieces: tearBytes(body, sizes), contentType: "text/event-stream", then })

const add = tool("add", {
  description: "Add two numbers",
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite, mode: Schema.optional(Schema.Literals(["exact", "rounded"])), note: Schema.NullOr(Schema.String) }),
  run: ({ a, b }) => a + b
})
const request: ModelRequest = { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "3+5?" }], tools: [add.definition], toolChoice: { tool: "add" } }

const thoughtful: WireReply = {
  thinking: { text: "Add — 思考 🤔", signature: "CiQB0e2Kb+signature==" },
  text: "",
  calls: [{ id: "x", name: "add", input: { a: 3, b: 5, note: null } }, { id: "y", name: "add", input: { a: 1, b: 2, note: "é😀" } }],
  usage: { input: 30, output: 20 }
}

describe("gemini(...): the Gemini API", () => {
  const serve = useLoopback()
  const client = (url: string, extra: Record<string, unknown> = {}) => gemini("gemini-2.5-flash", { apiKey: "k", baseURL: url, ...fast, ...extra })

  it("sends contents, the system instruction, converted function declarations, tool choice and thinking config", async () => {
    const server = await serve([{ json: geminiJson({ text: "8", calls: [], usage: { input: 1, output: 1 } }) }])
    await Effect.runPromise(client(server.url, { thinkingBudget: 1024, maxTokens: 300 }).chat(request))
    const { url, body, headers } = server.requests[0]!
    expect(url).toBe("/v1beta/models/gemini-2.5-flash:generateContent")
    expect(headers["x-goog-api-key"]).toBe("k")
    expect(body.contents).toEqual([{ role: "user", parts: [{ text: "3+5?" }] }])
    expect(body.systemInstruction).toMatchObject({ parts: [{ text: "Be brief." }] })
    expect(body.tools).toEqual([{
      functionDeclarations: [{
        name: "add",
        description: "Add two numbers",
        // The SDK writes the types in upper case, as the REST reference spells them.
        parameters: {
          type: "OBJECT",
          properties: { a: { type: "NUMBER" }, b: { type: "NUMBER" }, mode: { type: "STRING", enum: ["exact", "rounded"], nullable: true }, note: { type: "STRING", nullable: true } },
          required: ["a", "b", "note"]
        }
      }]
    }])
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["add"] } })
    expect(body.generationConfig).toMatchObject({ maxOutputTokens: 300, thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } })
  })

  it("reads thoughts and calls without ids (given stable ids), usage with thoughts; sends signatures back on the same parts, responses by name", async () => {
    const server = await serve([{ json: geminiJson(thoughtful) }, { json: geminiJson({ text: "8 and 3", calls: [], usage: { input: 1, output: 1 } }) }])
    const seen: Array<unknown> = []
    const tracked = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite, note: Schema.NullOr(Schema.String) }), run: (x) => (seen.push(x), x.a + x.b) })
    expect(await agent("calc").model(client(server.url)).tools({ add: tracked }).run("3+5 and 1+2?")).toBe("8 and 3")
    expect(seen).toEqual([{ a: 3, b: 5, note: null }, { a: 1, b: 2, note: "é😀" }])
    const contents = server.requests[1]!.body.contents
    expect(contents.slice(-2)).toEqual([
      {
        role: "model",
        parts: [
          { functionCall: { name: "add", args: { a: 3, b: 5, note: null } }, thoughtSignature: "CiQB0e2Kb+signature==" },
          { functionCall: { name: "add", args: { a: 1, b: 2, note: "é😀" } } }
        ]
      },
      { role: "user", parts: [{ functionResponse: { name: "add", response: { output: "8" } } }, { functionResponse: { name: "add", response: { output: "3" } } }] }
    ])
  })

  it("maps usage (thoughts are output) and keeps ids Gemini gave", async () => {
    const withIds = { ...geminiJson(thoughtful), candidates: [{ content: { role: "model", parts: [{ functionCall: { id: "fc-1", name: "add", args: { a: 1, b: 1, note: null } } }] }, finishReason: "STOP" }] }
    const server = await serve([{ json: geminiJson(thoughtful) }, { json: withIds }])
    const c = client(server.url)
    const first = await Effect.runPromise(c.chat(request))
    expect(first).toMatchObject({
      _tag: "ToolCalls",
      calls: [{ id: "gemini_call_1_0", name: "add" }, { id: "gemini_call_1_1", name: "add" }],
      usage: { inputTokens: 30, outputTokens: 27, reasoningTokens: 7 },
      finishReason: "tool-calls",
      reasoning: [{ _tag: "Thinking", text: "Add — 思考 🤔" }]
    })
    expect((await Effect.runPromise(c.chat(request)))).toMatchObject({ calls: [{ id: "fc-1" }] })
  })

  it("maps a blocked prompt and SAFETY to content-filter, MAX_TOKENS to length; a 503 is retried, a 400 is not", async () => {
    const blocked = { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 3 } }
    const safety = geminiJson({ text: "", calls: [], usage: { input: 1, output: 0 } }, { finishReason: "SAFETY" })
    const long = geminiJson({ text: "The answ", calls: [], usage: { input: 1, output: 1 } }, { finishReason: "MAX_TOKENS" })
    const server = await serve([
      { json: blocked },
      { json: safety },
      { json: long },
      { status: 503, json: { error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } } },
      { json: geminiJson({ text: "ok", calls: [], usage: { input: 1, output: 1 } }) },
      { status: 400, json: { error: { code: 400, message: "bad schema", status: "INVALID_ARGUMENT" } } }
    ])
    const chat = () => Effect.runPromiseExit(client(server.url).chat({ messages: [{ role: "user", content: "x" }], tools: [] }))
    expect(errorOf(await chat())).toMatchObject({ kind: "content-filter" })
    expect(errorOf(await chat())).toMatchObject({ kind: "content-filter" })
    expect(errorOf(await chat())).toMatchObject({ kind: "length", partial: "The answ" })
    expect(await Effect.runPromise(client(server.url).chat({ messages: [{ role: "user", content: "x" }], tools: [] }))).toMatchObject({ content: "ok" })
    expect(server.requests).toHaveLength(5)
    expect(errorOf(await chat())).toMatchObject({ _tag: "ModelError", status: 400, retryable: false })
    expect(server.requests).toHaveLength(6)
  })

  it("a MALFORMED_FUNCTION_CALL (no text, no call) is a ModelError of kind malformed, never an empty answer that spends the turns", async () => {
    const malformed = geminiJson({ text: "", calls: [], usage: { input: 1, output: 0 } }, { finishReason: "MALFORMED_FUNCTION_CALL" })
    const server = await serve([{ json: malformed }])
    const exit = await Effect.runPromiseExit(client(server.url).chat({ messages: [{ role: "user", content: "x" }], tools: [] }))
    expect(errorOf(exit)).toMatchObject({ _tag: "ModelError", kind: "malformed", retryable: false })
    expect(server.requests).toHaveLength(1)
  })

  it.each([[[1, 5, 2, 9]], [[80]]])("streams (%j byte tearing, CRLF, keep-alive): the assembled answer equals the non-streamed one", async (sizes) => {
    const reply: WireReply = { ...thoughtful, text: "Let me add — ✓" }
    const server = await serve([{ json: geminiJson(reply) }, streamed(sse(geminiEvents(reply, [3, 1]), { crlf: true, keepAlive: true }), sizes)])
    const plain = await Effect.runPromise(client(server.url).chat(request))
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
    expect(assemble(exit.value)).toEqual(plain)
    expect(plain).toMatchObject({ responseId: "resp-1", responseModel: "gemini-2.5-flash" })
    // Every chunk repeats responseId and modelVersion; they are said once.
    expect(exit.value.filter((p) => p._tag === "ResponseInfo")).toEqual([{ _tag: "ResponseInfo", id: "resp-1", model: "gemini-2.5-flash" }])
    expect(server.requests[1]?.url).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    expect(exit.value.filter((p) => p._tag === "ReasoningDelta").length).toBeGreaterThan(1)
  })

  it("a stream cut before its finish reason is retried when nothing was delivered; after text it fails", async () => {
    const reply: WireReply = { text: "whole answer", calls: [], usage: { input: 1, output: 1 } }
    const events = geminiEvents(reply, [5])
    const server = await serve([streamed(sse(events.slice(0, 0)) + ""), streamed(sse(events)), streamed(sse(events.slice(0, 2)), undefined, "cut")])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "whole answer" })
    expect(server.requests).toHaveLength(2)
    expect(errorOf(await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request))))).toBeDefined()
    expect(server.requests).toHaveLength(3)
  })

  it("a body that ends cleanly inside an event (before any content) was cut: retried, as the other providers' cut streams are; after text it fails", async () => {
    const reply: WireReply = { text: "whole answer", calls: [], usage: { input: 1, output: 1 } }
    const events = geminiEvents(reply, [5])
    const body = sse(events)
    const inFirst = body.slice(0, body.indexOf("\"text\"") + 12) // inside the first event, no delimiter after it
    const afterText = sse(events.slice(0, 1)) + body.slice(sse(events.slice(0, 1)).length, sse(events.slice(0, 2)).length - 10)
    const server = await serve([streamed(inFirst), streamed(body), streamed(afterText)])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request)))
    expect(Exit.isSuccess(exit) && assemble(exit.value)).toMatchObject({ _tag: "Text", content: "whole answer" })
    expect(server.requests).toHaveLength(2)
    const late = errorOf(await Effect.runPromiseExit(Stream.runCollect(client(server.url).stream!(request))))
    expect(late).toMatchObject({ _tag: "ModelError", retryable: true, reason: "the stream ended before the answer finished (inside an event)" })
    expect(server.requests).toHaveLength(3)
  })

  it("interrupting the stream closes the HTTP response", async () => {
    const events = geminiEvents({ text: "first words", calls: [], usage: { input: 1, output: 1 } }, [6])
    const server = await serve([streamed(sse(events.slice(0, 1)), undefined, "stall")])
    const exit = await Effect.runPromiseExit(Stream.runCollect(client(server.url, { idleTimeout: "1 minute" }).stream!(request).pipe(Stream.take(2))))
    expect(Exit.isSuccess(exit) && exit.value).toEqual([
      { _tag: "ResponseInfo", id: "resp-1", model: "gemini-2.5-flash" },
      { _tag: "TextDelta", delta: "first " }
    ])
    await server.aborted
  })

  it("GEMINI_API_KEY / GOOGLE_API_KEY and LLM_THINKING_BUDGET from the environment; geminiLayer provides a client", async () => {
    const server = await serve([{ json: geminiJson({ text: "env", calls: [], usage: { input: 1, output: 1 } }) }])
    const env = fromEnv({ AI_PROVIDER: "gemini", AI_MODEL: "gemini-2.5-flash", GOOGLE_API_KEY: "g-key", GOOGLE_GEMINI_BASE_URL: server.url, LLM_THINKING_BUDGET: "0" })
    expect(env.provider).toBe("gemini")
    expect(await Effect.runPromise(env.client.chat({ messages: [{ role: "user", content: "x" }], tools: [] }))).toMatchObject({ content: "env" })
    expect(server.requests[0]?.headers["x-goog-api-key"]).toBe("g-key")
    expect(server.requests[0]?.body.generationConfig).toMatchObject({ thinkingConfig: { thinkingBudget: 0 } })
    await Effect.runPromise(fromEnv({ AI_PROVIDER: "gemini", AI_MODEL: "m", GEMINI_API_KEY: "first", GOOGLE_API_KEY: "second", GOOGLE_GEMINI_BASE_URL: server.url }).client.chat({ messages: [{ role: "user", content: "x" }], tools: [] }))
    expect(server.requests[1]?.headers["x-goog-api-key"]).toBe("first")
    expect(() => fromEnv({ AI_PROVIDER: "gemini", AI_MODEL: "m" })).toThrow(/GEMINI_API_KEY \(or GOOGLE_API_KEY\) is required/)
    expect(await agent("a").provide(geminiLayer("gemini-2.5-flash", { apiKey: "k", baseURL: server.url })).run("x")).toBe("env")
  })
})

describe("toGeminiSchema: a tool's JSON Schema in Gemini's subset", () => {
  it("inlines $ref, turns null unions into nullable, oneOf into anyOf, const into enum, drops what Gemini refuses", () => {
    expect(toGeminiSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { Point: { type: "object", properties: { x: { type: "integer", format: "int64" } }, required: ["x"], additionalProperties: false } },
      properties: {
        p: { $ref: "#/$defs/Point" },
        maybe: { anyOf: [{ type: "string", format: "email" }, { type: "null" }] },
        either: { oneOf: [{ type: "string" }, { type: "number", exclusiveMinimum: 0 }] },
        fixed: { const: "yes" },
        level: { enum: [1, 2, 3], description: "How loud" },
        list: { type: "array", items: { type: ["boolean", "null"] }, prefixItems: [{ type: "string" }], minItems: 1 }
      },
      required: ["p"],
      additionalProperties: false
    })).toEqual({
      type: "object",
      properties: {
        p: { type: "object", properties: { x: { type: "integer", format: "int64" } }, required: ["x"] },
        maybe: { type: "string", nullable: true },
        either: { anyOf: [{ type: "string" }, { type: "number" }] },
        fixed: { type: "string", enum: ["yes"] },
        level: { description: "How loud (one of: 1, 2, 3)" },
        list: { type: "array", items: { type: "boolean", nullable: true }, minItems: 1 }
      },
      required: ["p"]
    })
  })

  it("an object without properties loses its empty properties; a tool without parameters is declared without any", async () => {
    expect(toGeminiSchema({ type: "object", properties: { inner: { type: "object", properties: {} } }, additionalProperties: false })).toEqual({
      type: "object",
      properties: { inner: { type: "object" } }
    })
    const ping = tool("ping", { args: Schema.Struct({}), run: () => "pong" })
    const server = await (async () => {
      const { startLoopback } = await import("./loopback.ts")
      return startLoopback([{ json: geminiJson({ text: "ok", calls: [], usage: { input: 1, output: 1 } }) }])
    })()
    try {
      await Effect.runPromise(gemini("m", { apiKey: "k", baseURL: server.url }).chat({ messages: [{ role: "user", content: "x" }], tools: [ping.definition] }))
      expect(server.requests[0]?.body.tools).toEqual([{ functionDeclarations: [{ name: "ping" }] }])
    } finally {
      await server.close()
    }
  })

  it("refuses allOf and recursive references with a typed error naming the place; the provider turns it into a ModelError before any call", async () => {
    expect(() => toGeminiSchema({ type: "object", properties: { a: { allOf: [{ type: "string" }] } } })).toThrow(GeminiSchemaError)
    expect(() => toGeminiSchema({ $defs: { T: { type: "object", properties: { next: { $ref: "#/$defs/T" } } } }, $ref: "#/$defs/T" })).toThrow(/recursive reference #\/\$defs\/T cannot be inlined at \/properties\/next/)
    const exit = await Effect.runPromiseExit(gemini("m", { apiKey: "k", baseURL: "http://127.0.0.1:1" }).chat({
      messages: [{ role: "user", content: "x" }],
      tools: [{ type: "function", name: "bad", parameters: { type: "object", properties: { a: { allOf: [] } } } }]
    }))
    expect(errorOf(exit)).toMatchObject({ _tag: "ModelError", kind: "unsupported", retryable: false, reason: expect.stringMatching(/tool "bad" cannot be declared to Gemini: allOf/) })
  })
})
