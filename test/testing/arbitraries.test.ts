import { fc, test } from "@fast-check/vitest"
import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { type AnyTool, tool } from "../../src/index.ts"
import { arbInvalidArgs, arbLlmResponse, arbModelScript, arbToolCall, arbValidArgs } from "../../src/testing/arbitraries.ts"
import { makeCalculatorTools } from "../fixtures.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)
const { add, multiply } = makeCalculatorTools()
const booking = tool("book", {
  args: Schema.Struct({
    city: Schema.NonEmptyString,
    nights: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 30 })),
    class: Schema.Literals(["economy", "business"]),
    guests: Schema.Array(Schema.Struct({ name: Schema.String, age: Schema.optionalKey(Schema.Int) })),
    note: Schema.optionalKey(Schema.String)
  }),
  run: () => "booked"
})
const strictTool = tool("lookup", { args: Schema.Struct({ id: Schema.String, lang: Schema.optionalKey(Schema.String) }), strict: true, run: () => "" })
const decode = (t: AnyTool, raw: unknown): Result.Result<unknown, string> => {
  return t.codec.check(raw)
}

describe("testing arbitraries", () => {
  test.prop([arbValidArgs(booking)], { numRuns })("valid arguments always decode with the tool's Schema", (args) => {
    expect(Result.isSuccess(decode(booking, args))).toBe(true)
  })

  test.prop([arbValidArgs(strictTool)], { numRuns })("valid arguments follow the strict codec (optional keys as null)", (args) => {
    expect(Object.keys(args as object).sort()).toEqual(["id", "lang"])
    expect(Result.isSuccess(decode(strictTool, args))).toBe(true)
  })

  test.prop([fc.oneof(arbInvalidArgs(add), arbInvalidArgs(booking))], { numRuns })("invalid arguments never decode (for tools with required fields)", (args) => {
    expect(Result.isFailure(decode(add, args)) && Result.isFailure(decode(booking, args))).toBe(true)
  })

  test.prop([arbToolCall([add, multiply], { invalidRate: 0, unknownRate: 0 })], { numRuns })("with no invalid or unknown rate, every call is valid", (call) => {
    expect(["add", "multiply"]).toContain(call.name)
    expect(Result.isSuccess(decode(add, call.arguments))).toBe(true)
  })

  it("honours the rates roughly: unknown names, JSON strings, text replies, model errors", () => {
    const calls = fc.sample(arbToolCall([add], { unknownRate: 0.5, jsonStringRate: 1, foreignNames: ["delete_all"] }), { numRuns: 2000, seed: 42 })
    const unknown = calls.filter((c) => c.name !== "add").length / calls.length
    expect(unknown).toBeGreaterThan(0.4)
    expect(unknown).toBeLessThan(0.6)
    expect(calls.every((c) => typeof c.arguments === "string")).toBe(true)
    expect(calls.some((c) => c.name === "delete_all")).toBe(true)
    const responses = fc.sample(arbLlmResponse([add], { textRate: 0.5, emptyRate: 0 }), { numRuns: 2000, seed: 7 })
    const texts = responses.filter((r) => r._tag === "Text").length / responses.length
    expect(texts).toBeGreaterThan(0.4)
    expect(texts).toBeLessThan(0.6)
    const scripts = fc.sample(arbModelScript([add], { modelErrorRate: 0.5, maxLength: 5 }), { numRuns: 500, seed: 3 })
    expect(scripts.every((s) => s.length <= 5)).toBe(true)
    expect(scripts.flat().some((step) => step instanceof Error)).toBe(true)
  })
  it("text replies are not only ASCII: accents, emoji (surrogate pairs) and joined graphemes come up", () => {
    const texts = fc.sample(arbLlmResponse([add], { textRate: 1, emptyRate: 0 }), { numRuns: 2000, seed: 11 })
      .flatMap((r) => (r._tag === "Text" ? [r.content] : []))
    expect(texts.some((t) => /[^\x00-\x7f]/.test(t))).toBe(true)
    expect(texts.some((t) => /[\uD800-\uDBFF][\uDC00-\uDFFF]/.test(t))).toBe(true)
    expect(texts.every((t) => t.trim() !== "")).toBe(true)
  })
})
