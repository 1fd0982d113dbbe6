/**
 * Arguments whose decode would try a schema's alternatives exponentially many times (a recursive
 * union whose members both descend before they differ, as an MCP server's JSON Schema may hold) are
 * refused before Effect's decoder runs, in a fraction of a millisecond, with a reason the model can
 * act on; the tool never runs. What such a schema decodes in reasonable time is decoded as before
 * (property: for values within the limit, the verdict is the one of the decoder alone), and a flat
 * schema is not checked at all (the hot path pays nothing).
 */
import { fc, it as fcIt } from "@fast-check/vitest"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { compileJsonSchema } from "../../src/dsl/json-schema-tool.ts"
import { argsDecoder } from "../../src/dsl/tool-parameters.ts"
import { agent, text, tool, toolCalls } from "../../src/index.ts"
import { costGuard, decodeCost, mayBacktrack } from "../../src/internal/decode-cost.ts"
import { inputFromParts } from "../../src/protocols/a2a/index.ts"
import { agUiState } from "../../src/protocols/ag-ui/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { chainOf, Link } from "../support/backtracking-schema.ts"

// Both members read `next` (the recursion) before the property that tells them apart.
const chain = {
  type: "object",
  properties: { root: { $ref: "#/$defs/N" } },
  required: ["root"],
  $defs: {
    N: {
      anyOf: [
        { type: "object", properties: { next: { $ref: "#/$defs/N" }, a: { type: "string" } }, required: ["a"] },
        { type: "object", properties: { next: { $ref: "#/$defs/N" }, b: { type: "string" } }, required: ["b"] }
      ]
    }
  }
}
const nested = (depth: number) => ({ root: chainOf(depth) })

describe("JSON Schema tools: arguments too costly to check", () => {
  it("refuses, at once and saying why, arguments whose check would take 2^depth tries (30 levels: years)", () => {
    const contract = compileJsonSchema(chain, { strict: false })
    const refused = contract.decode(JSON.stringify(nested(30)))
    expect(refused._tag).toBe("Failure")
    expect(Result(refused)).toMatch(/the arguments could not be checked: checking them would try this tool's alternatives \(anyOf\/oneOf\) over their parts more than \d+ times: send them less nested or split the call/)
    // The same as an object (a provider that hands arguments parsed).
    expect(contract.decode(nested(30))._tag).toBe("Failure")
    // Shallow, the same schema decodes as before.
    expect(contract.decode(JSON.stringify(nested(5)))._tag).toBe("Success")
  })

  it("end to end: the tool does not run, the model is told, and the run goes on", async () => {
    let ran = 0
    const walk = tool("walk", { parameters: chain, run: () => ++ran })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "walk", arguments: nested(40) }]), text("ok")])
    const result = await agent("a").model(model).tools({ walk }).run("go")
    expect(result).toBe("ok")
    expect(ran).toBe(0)
    const toolMessage = model.requests[1]!.messages.find((m) => m.role === "tool")
    expect(toolMessage?.content).toMatch(/alternatives \(anyOf\/oneOf\)/)
  })

  it("a flat schema, or one whose unions hold only leaves, is not checked (the hot path pays nothing)", () => {
    expect(mayBacktrack(Schema.toCodecJson(Schema.Struct({ a: Schema.Finite, b: Schema.Finite })).ast)).toBe(false)
    expect(mayBacktrack(Schema.toCodecJson(Schema.Struct({ op: Schema.Literals(["add", "mul"]), n: Schema.Union([Schema.String, Schema.Finite]) })).ast)).toBe(false)
    expect(costGuard(Schema.toCodecJson(Schema.Struct({ j: Schema.Json })).ast, String)).toBeUndefined()
    expect(mayBacktrack(compileJsonSchema(chain, { strict: false }).codec.ast)).toBe(true)
  })

  it("reads a Schema as the decoder does, through its JSON form: an Option of a union of structs is a union of objects there", () => {
    const A = Schema.Struct({ a: Schema.String })
    const B = Schema.Struct({ b: Schema.String })
    expect(costGuard(Schema.toCodecJson(Schema.Struct({ o: Schema.Option(Schema.Union([A, B])) })).ast, String)).toBeDefined()
    expect(costGuard(Schema.toCodecJson(Schema.Struct({ at: Schema.Date, n: Schema.Finite })).ast, String)).toBeUndefined()
  })

  it("counts what a full try of every candidate visits: each (member, value) pair once, its count reused", () => {
    const ast = compileJsonSchema(chain, { strict: false }).codec.ast
    // Two members a level, each visiting the level below in full: doubling, computed in linear time.
    const at = (depth: number) => decodeCost(ast, nested(depth), Number.MAX_SAFE_INTEGER)
    expect(at(11) / at(10)).toBeGreaterThan(1.9)
    expect(at(200)).toBe(Number.POSITIVE_INFINITY)
    expect(decodeCost(ast, nested(200), 1_000)).toBe(Number.POSITIVE_INFINITY)
  })

  it("a discriminated union over a large array is decoded, not refused (its cost grows with its size only)", () => {
    const contract = compileJsonSchema({
      type: "object",
      properties: {
        items: { type: "array", items: { oneOf: Array.from({ length: 10 }, (_, k) => ({ type: "object", properties: { kind: { const: `k${k}` }, x: { type: "number" } }, required: ["kind"] })) } }
      }
    }, { strict: false })
    const items = Array.from({ length: 20_000 }, (_, i) => ({ kind: `k${i % 10}`, x: i }))
    expect(contract.decode(JSON.stringify({ items }))._tag).toBe("Success")
  })

  fcIt.prop([fc.integer({ min: 0, max: 9 }), fc.constantFrom({ a: "x" }, { b: "x" }, { c: "x" }, { b: 1 }, {}), fc.array(fc.constantFrom("a", "b"), { maxLength: 9 })], { numRuns: 60 })(
    "within the limit the verdict is the decoder's own (the guard refuses nothing it could decode in time)",
    (depth, leaf, tags) => {
      const contract = compileJsonSchema(chain, { strict: false })
      let value: Record<string, unknown> = leaf
      for (let i = 0; i < depth; i++) value = { next: value, [tags[i] ?? "b"]: "x" }
      const guarded = contract.decode(JSON.stringify({ root: value }))
      const alone = Effect.runSync(Effect.result(Schema.decodeUnknownEffect(contract.codec)({ root: value })))
      expect(guarded._tag).toBe(alone._tag)
    }
  )

  it("an Effect Schema tool with a recursive union is guarded too (the same decoder)", () => {
    const decode = argsDecoder(Schema.toCodecJson(Schema.Struct({ root: Link })) as never)
    expect(decode(JSON.stringify(nested(40)))._tag).toBe("Failure")
    expect(decode(JSON.stringify(nested(3)))._tag).toBe("Success")
  })
})

describe("the other borders where a value from outside meets the application's Schema", () => {
  const Input = Schema.Struct({ root: Link })

  it("an A2A peer's input (a data part, or text that is JSON) is refused with a reason, shallow input decoded", () => {
    const data = (value: unknown) => [{ content: { $case: "data", value } }]
    const refused = inputFromParts(data(nested(40)), Input)
    expect(refused._tag).toBe("Failure")
    expect(Result(refused)).toMatch(/^the input could not be checked: checking it would try the input Schema's alternatives \(unions\)/)
    expect(inputFromParts([{ content: { $case: "text", value: JSON.stringify(nested(40)) } }], Input)._tag).toBe("Failure")
    expect(inputFromParts(data(nested(3)), Input)._tag).toBe("Success")
  })

  it("an AG-UI client's shared state is refused as invalid input, shallow state taken", () => {
    const state = agUiState("chain", Input)
    expect(() => state.fromInput(nested(40))).toThrow(/the state "chain" could not be checked: checking it would try the Schema's alternatives \(unions\)/)
    expect(state.fromInput(nested(3)).current()).toEqual(nested(3))
  })

  it("a value holding a cycle (from code) is refused, not walked for ever", () => {
    const cycle: Record<string, unknown> = { b: "x" }
    cycle["next"] = cycle
    const guard = costGuard(Input.ast, String)!
    expect(guard({ root: cycle })).toBeDefined()
  })
})

/** The failure's message of a decoded Result. */
const Result = (result: { readonly _tag: string; readonly failure?: unknown }) => String(result.failure)
