/**
 * scriptedModel and streamed: requests recorded as they were sent, a call past the script's end that
 * says what was asked, chunk sizes checked, every streamed delta a well-formed string, and each call
 * streamed with its own step's chunking when runs share one model.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, AgentConfigError, type LlmResponseInit, type ModelRequest, type ResponsePart, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel, streamed } from "../../src/testing/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)
const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const calculator = agent("calculator").tools({ add })
const request: ModelRequest = { messages: [{ role: "user", content: "3 + 5?" }], tools: [] }
const partsOf = (model: ReturnType<typeof scriptedModel>, req: ModelRequest = request) =>
  Effect.runPromise(Stream.runCollect(model.stream!(req))).then((parts): Array<ResponsePart> => [...parts])
const deltas = (parts: ReadonlyArray<ResponsePart>) => parts.flatMap((p) => (p._tag === "TextDelta" || p._tag === "ToolCallDelta" ? [p.delta] : []))
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

describe("scriptedModel", () => {
  it("records each request as it was sent: a later mutation does not reach model.requests", async () => {
    const model = scriptedModel((req) => {
      // A careless answer function (or a wrapped client) that edits the request it was given.
      ;(req.messages as Array<unknown>).push({ role: "user", content: "added afterwards" })
      return text("8")
    })
    expect(await calculator.model(model).run("3 + 5?")).toBe("8")
    expect(model.requests[0]?.messages.map((m) => m.content)).toEqual([expect.any(String), "3 + 5?"])
    expect(Object.isFrozen(model.requests[0]?.messages)).toBe(true)
  })

  it("a call past the end of the script names the call, the script's length and what was asked", async () => {
    const model = scriptedModel([toolCalls([{ id: "1", name: "add", arguments: { a: 3, b: 5 } }])])
    const error = await calculator.model(model).run("3 + 5?").catch((e: unknown) => e)
    expect(error).toMatchObject({ _tag: "ModelError", retryable: false })
    expect((error as Error).message).toContain(`the script has no response for call 2 (it has 1); the request's last message: tool "add": "8"`)
  })

  it("an undefined step inside the script is named as such, not as the script's end", async () => {
    const model = scriptedModel([toolCalls([{ id: "1", name: "add", arguments: { a: 3, b: 5 } }]), undefined as unknown as LlmResponseInit, text("8")])
    const error = await calculator.model(model).run("3 + 5?").catch((e: unknown) => e)
    expect((error as Error).message).toContain("the script's step 2 is undefined")
    expect((error as Error).message).not.toContain("has no response")
  })

  it("runScript refuses what is not an agent builder (a composite, from plain JavaScript) with an AgentConfigError", async () => {
    const { runScript } = await import("../../src/testing/index.ts")
    const { parallel } = await import("../../src/index.ts")
    const composite = parallel("p", [calculator, agent("b")])
    await expect(runScript(composite as never, [text("x")], "q")).rejects.toThrow(AgentConfigError)
    await expect(runScript(composite as never, [text("x")], "q")).rejects.toThrow("runScript runs an agent builder")
    await expect(runScript(null as never, [text("x")], "q")).rejects.toThrow("got null")
  })

  it("refuses a chunk size that is not a positive whole number, naming it", () => {
    for (const size of [0, -1, 0.5, 2.5, Number.NaN]) {
      expect(() => streamed(text("hello"), size)).toThrow(AgentConfigError)
      expect(() => scriptedModel([text("hello")], { chunk: size })).toThrow(`chunk must be a positive whole number of characters (or Infinity), got ${size}`)
    }
    expect(() => streamed(text("hello"), Number.POSITIVE_INFINITY)).not.toThrow()
  })

  test.prop([fc.string({ unit: "grapheme", maxLength: 30 }), fc.integer({ min: 1, max: 8 })], { numRuns })(
    "streams every text in well-formed pieces that join back to it (a surrogate pair is never split)",
    async (content, size) => {
      const response: LlmResponseInit = toolCalls([{ id: "1", name: "add", arguments: JSON.stringify({ note: content }) }])
      const parts = await partsOf(scriptedModel([streamed({ ...response, content }, size)]))
      const pieces = deltas(parts)
      expect(pieces.filter((p) => loneSurrogate.test(p))).toEqual([])
      expect(parts.filter((p) => p._tag === "TextDelta").map((p) => (p as { delta: string }).delta).join("")).toBe(content)
      expect([...parts.flatMap((p) => (p._tag === "TextDelta" ? [...p.delta] : []))].length).toBe([...content].length)
    }
  )

  it("a chunker whose pieces do not join back to the text fails the call with a ModelError", async () => {
    const model = scriptedModel([streamed(text("hello"), (t) => [t.slice(1)])])
    const exit = await Effect.runPromiseExit(Stream.runCollect(model.stream!(request)))
    expect(exit).toMatchObject({ _tag: "Failure" })
    expect(String(exit._tag === "Failure" ? exit.cause : "")).toContain('the chunker\'s pieces of "hello" join to "ello"')
  })

  it("each call streams with its own step's chunking when concurrent runs share the model", async () => {
    const slow = async () => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      return text("abcdef")
    }
    const model = scriptedModel([slow, streamed(text("uvwxyz"), 1)])
    const [first, second] = await Promise.all([partsOf(model), partsOf(model)])
    expect(deltas(first!)).toEqual(["abcdef"])
    expect(deltas(second!)).toEqual(["u", "v", "w", "x", "y", "z"])
  })
})
