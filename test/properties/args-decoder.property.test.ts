/**
 * Law of the argument decoder's fast path (`JSON.parse` + the object decoder): for any raw text, valid
 * JSON or not, it answers exactly what Schema's JSON-text decoder answers (value, or report text).
 */
import { fc, test } from "@fast-check/vitest"
import { Option, Result, Schema } from "effect"
import { describe, expect } from "vitest"
import { argsDecoder } from "../../src/dsl/tool-parameters.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

const Args = Schema.Struct({
  a: Schema.Finite,
  name: Schema.String,
  tags: Schema.optionalKey(Schema.Array(Schema.Literals(["x", "y"]))),
  nested: Schema.optionalKey(Schema.Struct({ n: Schema.Int }))
})
const codec = Schema.toCodecJson(Args) as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>
const reference = Schema.decodeUnknownResult(Schema.fromJsonString(codec))
const parseOptions = { errors: "all", onExcessProperty: "error" } as const

const nearlyValid = fc.record(
  {
    a: fc.oneof(fc.double(), fc.string(), fc.constant(null)),
    name: fc.oneof(fc.string(), fc.integer()),
    tags: fc.array(fc.oneof(fc.constantFrom("x", "y", "z"), fc.integer())),
    nested: fc.oneof(fc.record({ n: fc.oneof(fc.integer(), fc.double()) }), fc.string()),
    __proto__: fc.string(),
    extra: fc.anything()
  },
  { requiredKeys: [] }
).map((value) => JSON.stringify(value))
const valid = fc.record(
  {
    a: fc.double({ noNaN: true, noDefaultInfinity: true }),
    name: fc.string({ unit: "grapheme" }),
    tags: fc.array(fc.constantFrom("x", "y")),
    nested: fc.record({ n: fc.integer() })
  },
  { requiredKeys: ["a", "name"] }
).map((value) => JSON.stringify(value))
const raw = fc.oneof(valid, valid, nearlyValid, fc.json(), fc.string(), nearlyValid.map((text) => text.slice(0, -1)))

describe("argsDecoder", () => {
  test.prop([raw], { numRuns })("answers exactly what the JSON-text decoder answers", (text) => {
    fc.pre(text.trim() !== "")
    const fast = argsDecoder(codec)(text)
    const slow = Result.mapError(reference(text, parseOptions), (error) => error.message)
    expect(fast).toEqual(slow)

  })
})

// Keys named like members of `Object.prototype` are read from the arguments' own keys only: an absent
// `constructor` is absent (Effect's parser alone reads `key in input` and found Object's constructor).
const Named = Schema.Struct({
  constructor: Schema.optionalKey(Schema.String),
  toString: Schema.optionalKey(Schema.Finite),
  valueOf: Schema.Finite,
  nested: Schema.optionalKey(Schema.Struct({ hasOwnProperty: Schema.optionalKey(Schema.Boolean) }))
})
const namedCodec = Schema.toCodecJson(Named) as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>
const namedArgs = fc.record(
  {
    constructor: fc.oneof(fc.string(), fc.integer()),
    toString: fc.oneof(fc.integer(), fc.string()),
    valueOf: fc.oneof(fc.integer(), fc.string()),
    nested: fc.record({ hasOwnProperty: fc.oneof(fc.boolean(), fc.integer()) }, { requiredKeys: [] }),
    extra: fc.jsonValue()
  },
  { requiredKeys: [] }
)

describe("argsDecoder on keys named like Object.prototype's members", () => {
  test.prop([namedArgs], { numRuns })("accepts exactly the arguments whose own keys fit, and hands on exactly those keys", (args) => {
    const a = args as Record<string, unknown>
    const nested = a["nested"] as Record<string, unknown> | undefined
    const fits = !Object.hasOwn(a, "extra") &&
      typeof a["valueOf"] === "number" &&
      (!Object.hasOwn(a, "constructor") || typeof a["constructor"] === "string") &&
      (!Object.hasOwn(a, "toString") || typeof a["toString"] === "number") &&
      (nested === undefined || !Object.hasOwn(nested, "hasOwnProperty") || typeof nested["hasOwnProperty"] === "boolean")
    const decoded = argsDecoder(namedCodec)(JSON.stringify(args))
    expect(Result.isSuccess(decoded), JSON.stringify(decoded)).toBe(fits)
    if (Result.isSuccess(decoded)) {
      expect(decoded.success).toEqual(args)
      expect(Object.keys(decoded.success as object).sort()).toEqual(Object.keys(args).sort())
      expect(Object.getPrototypeOf(decoded.success)).toBe(Object.prototype)
    }
  })

  test("an absent optional constructor is absent; a missing required valueOf is a missing key", () => {
    expect(argsDecoder(namedCodec)('{"valueOf":1}')).toEqual(Result.succeed({ valueOf: 1 }))
    expect(argsDecoder(namedCodec)({ valueOf: 1 })).toEqual(Result.succeed({ valueOf: 1 }))
    expect(argsDecoder(namedCodec)("{}")).toEqual(Result.fail('Missing key\n  at ["valueOf"]'))
  })
})

describe("argsDecoder on a Schema with such keys that wraps values", () => {
  class Box extends Schema.Class<Box>("Box")({ content: Schema.Unknown }) {}
  const Wrapping = Schema.Struct({
    constructor: Schema.optionalKey(Schema.String),
    maybe: Schema.OptionFromNullOr(Schema.Unknown),
    box: Box
  })
  const wrappingCodec = Schema.toCodecJson(Wrapping) as unknown as Schema.ConstraintCodec<{ readonly maybe: Option.Option<unknown>; readonly box: Box }, unknown, never, never>

  test.prop([fc.jsonValue(), fc.jsonValue()], { numRuns })("hands on every object as a plain one, also inside an Option or a Class instance", (inOption, inBox) => {
    const decoded = argsDecoder(wrappingCodec)(JSON.stringify({ maybe: { value: inOption }, box: { content: [inBox] } }))
    expect(Result.isSuccess(decoded), JSON.stringify(decoded)).toBe(true)
    if (Result.isFailure(decoded)) return
    const objects: Array<unknown> = []
    const walk = (u: unknown): void => {
      if (typeof u !== "object" || u === null) return
      objects.push(u)
      for (const v of Object.values(u)) walk(v)
    }
    walk(Option.getOrThrow(decoded.success.maybe))
    walk(decoded.success.box.content)
    expect(objects.every((o) => Array.isArray(o) || Object.getPrototypeOf(o) === Object.prototype)).toBe(true)
    expect(typeof (Option.getOrThrow(decoded.success.maybe) as { hasOwnProperty: unknown }).hasOwnProperty).toBe("function")
  })
})
