/**
 * Law of the argument decoder's fast path (`JSON.parse` + the object decoder): for any raw text, valid
 * JSON or not, it answers exactly what Schema's JSON-text decoder answers (value, or report text).
 */
import { fc, test } from "@fast-check/vitest"
import { Result, Schema } from "effect"
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
