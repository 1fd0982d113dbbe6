/**
 * The provider's response id and model (`responseId`, `responseModel`) beside the answer: the
 * `ResponseInfo` part folds into the response and back (`partsOf`) for any strings, hostile parts
 * never break the fold nor change the content, the part is no content (a stream cut after it alone is
 * retried, and the retry's id wins), a client answering ids that are not strings gets a `ModelError`,
 * and scripted models pass them through, plain and streamed.
 */
import { fc, test } from "@fast-check/vitest"
import { Cause, Effect, Exit, Result, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { chunksOf, type LlmResponse, ModelClient, ModelError, type ModelRequest, openai, PartsAssembler, partsOf, type ResponsePart, text } from "../../src/index.ts"
import { isContent } from "../../src/providers/resilient-stream.ts"
import { responseInfoParts } from "../../src/model/response-part.ts"
import { scriptedModel, streamed } from "../../src/testing/index.ts"
import { openAiChunk, openAiUsageChunk, type Reply, sseBody, streamedCompletionId, tear, useLoopback } from "./loopback.ts"
import { quietLogs } from "../support/quiet-logs.ts"

quietLogs()

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }
const assemble = (parts: ReadonlyArray<ResponsePart>): LlmResponse => {
  const assembler = new PartsAssembler(1)
  parts.forEach((p) => assembler.add(p))
  return Result.getOrThrow(assembler.response())
}
const errorOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined)

/** Any non-empty string, including lone surrogates, control characters and JSON-looking text. */
const anyName = fc.oneof(fc.string({ minLength: 1, unit: "binary" }), fc.constantFrom("chatcmpl-B9MH", "msg_01", "{\"id\":1}", "\u0000", "\ud800", "gemini-2.5-flash"))
const hostile = fc.oneof(fc.anything(), fc.constant(""), fc.constant(null), anyName)

describe("ResponseInfo parts", () => {
  test.prop([fc.string({ unit: "binary" }), fc.option(anyName, { nil: undefined }), fc.option(anyName, { nil: undefined }), fc.integer({ min: 1, max: 9 })], { numRuns })(
    "a response with any id and model comes back equal from its parts, however torn",
    (content, responseId, responseModel, size) => {
      const response: LlmResponse = {
        _tag: "Text",
        content,
        ...(responseId === undefined ? {} : { responseId }),
        ...(responseModel === undefined ? {} : { responseModel })
      }
      expect(assemble(partsOf(response, chunksOf(size)))).toEqual(response)
    }
  )

  test.prop([fc.string(), fc.array(fc.record({ id: hostile, model: hostile }), { maxLength: 5 }), fc.nat()], { numRuns })(
    "hostile info parts anywhere never throw nor change the content; the last string of each kind is kept",
    (content, infos, at) => {
      const parts = partsOf({ _tag: "Text", content }, chunksOf(2))
      const position = at % (parts.length + 1)
      const hostileParts = infos.map((info) => ({ _tag: "ResponseInfo", ...info }) as unknown as ResponsePart)
      const response = assemble([...parts.slice(0, position), ...hostileParts, ...parts.slice(position)])
      const last = (key: "id" | "model") => infos.map((i) => i[key]).filter((v): v is string => typeof v === "string" && v !== "").at(-1)
      expect(response.content).toBe(content)
      expect(response.responseId).toBe(last("id"))
      expect(response.responseModel).toBe(last("model"))
    }
  )

  it("is no content, and responseInfoParts says nothing for missing, empty or non-string values", () => {
    expect(isContent({ _tag: "ResponseInfo", id: "x", model: "m" })).toBe(false)
    expect(isContent({ _tag: "TextDelta", delta: "x" })).toBe(true)
    expect(responseInfoParts(undefined, "")).toEqual([])
    expect(responseInfoParts(42, { model: "m" })).toEqual([])
    expect(responseInfoParts("r1", 7)).toEqual([{ _tag: "ResponseInfo", id: "r1", model: undefined }])
  })
})

describe("a stream cut after only the response's id and model", () => {
  const serve = useLoopback()
  const sse = (body: string, then: "end" | "cut" = "end"): Reply => ({ pieces: tear(body), contentType: "text/event-stream", then })

  it("is retried (nothing reached the caller), and the retry's id and model win", async () => {
    const server = await serve([
      sse(sseBody([openAiChunk({ role: "assistant", content: "" }, null, { id: "chatcmpl-lost", model: "gpt-4o-lost" })], false), "cut"),
      sse(sseBody([openAiChunk({ role: "assistant", content: "ok" }), openAiChunk({}, "stop"), openAiUsageChunk(3, 1)]))
    ])
    const client = openai("gpt-4o-mini", { baseURL: `${server.url}/v1`, apiKey: "k", retry: { times: 2, base: "5 millis" }, idleTimeout: "5 seconds" })
    const exit = await Effect.runPromiseExit(Stream.runCollect(client.stream!(request)))
    if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
    expect(server.requests).toHaveLength(2)
    expect(assemble(exit.value)).toMatchObject({ content: "ok", responseId: streamedCompletionId, responseModel: "gpt-4o-mini-2024-07-18" })
  })
})

describe("clients written by users", () => {
  it("a fromFunction answer whose responseId or responseModel is not a string is a ModelError", async () => {
    for (const bad of [{ responseId: 42 }, { responseModel: { name: "m" } }]) {
      const client = ModelClient.fromFunction(() => ({ ...text("hi"), ...bad }) as never)
      const exit = await Effect.runPromiseExit(client.chat(request))
      expect(errorOf(exit)).toBeInstanceOf(ModelError)
      expect(String((errorOf(exit) as ModelError).reason)).toMatch(/responseId|responseModel/)
    }
  })

  it("scripted models pass a step's responseId and responseModel through, plain and streamed", async () => {
    const step = { ...text("hello"), responseId: "resp-7", responseModel: "scripted-1" }
    const plain = await Effect.runPromise(scriptedModel([step]).chat(request))
    expect(plain).toMatchObject({ content: "hello", responseId: "resp-7", responseModel: "scripted-1" })
    const parts = await Effect.runPromise(Stream.runCollect(scriptedModel([streamed({ _tag: "ToolCalls", calls: [{ name: "add", arguments: { a: 1 } }], responseId: "resp-8" }, 2)]).stream!(request)))
    expect(assemble(parts)).toMatchObject({ _tag: "ToolCalls", responseId: "resp-8" })
    expect(assemble(parts)).not.toHaveProperty("responseModel")
  })
})

describe("chunksOf", () => {
  it("refuses a size that is not a positive whole number, and never splits a surrogate pair", () => {
    for (const size of [0, -1, 0.5, Number.NaN]) expect(() => chunksOf(size)).toThrow(/positive whole number/)
    expect(chunksOf(1)("a😀b")).toEqual(["a", "😀", "b"])
    expect(chunksOf(Number.POSITIVE_INFINITY)("a😀b")).toEqual(["a😀b"])
  })
})
