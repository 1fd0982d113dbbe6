/**
 * The studio's client-side check of edited tool arguments (`src/studio/ui/public/schema-validate.js`)
 * against the JSON Schemas Effect generates for tools: it must never refuse arguments the tool's own
 * Schema accepts (the server stays the authority), and it must refuse the plain mistakes a person makes
 * in a form (a missing field, a wrong type, a value outside an enum or a bound, an unknown key).
 */
import { fc, test } from "@fast-check/vitest"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { validate } from "./browser-modules.ts"

const Transfer = Schema.Struct({
  to: Schema.String.check(Schema.isMinLength(1)),
  amount: Schema.Finite.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(10_000)),
  currency: Schema.Literals(["EUR", "USD"]),
  note: Schema.optional(Schema.String),
  tags: Schema.Array(Schema.String),
  retries: Schema.NullOr(Schema.Int)
})
const jsonSchema = Schema.toJsonSchemaDocument(Transfer, { onExcessProperty: "error" }).schema
const decodes = (value: unknown) => Schema.decodeUnknownResult(Transfer)(value, { errors: "all", onExcessProperty: "error" })._tag === "Success"

/** Arguments close to valid: every field sometimes right, sometimes of another type, sometimes absent. */
const hostileValue = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }))
const nearlyValid = fc.record(
  {
    to: fc.oneof(fc.string(), hostileValue),
    amount: fc.oneof(fc.double({ min: -10, max: 20_000, noNaN: true }), hostileValue),
    currency: fc.oneof(fc.constantFrom("EUR", "USD", "GBP"), hostileValue),
    note: fc.oneof(fc.string(), hostileValue),
    tags: fc.oneof(fc.array(fc.string(), { maxLength: 4 }), hostileValue),
    retries: fc.oneof(fc.integer(), fc.constant(null), hostileValue),
    extra: hostileValue
  },
  { requiredKeys: [] }
)

describe("validate (edited arguments, before they are sent)", () => {
  test.prop([nearlyValid])("never refuses arguments the tool's Schema accepts", (value) => {
    if (decodes(value)) expect(validate(jsonSchema, value)).toEqual([])
  })

  test.prop([nearlyValid])("refuses any arguments whose fields have the wrong JSON type", (value) => {
    const wrongType = (key: string, ok: (field: unknown) => boolean) => key in value && !ok((value as Record<string, unknown>)[key])
    const broken = wrongType("to", (field) => typeof field === "string") ||
      wrongType("amount", (field) => typeof field === "number") ||
      wrongType("tags", (field) => Array.isArray(field) && field.every((tag) => typeof tag === "string")) ||
      "extra" in value
    if (broken) expect(validate(jsonSchema, value).length).toBeGreaterThan(0)
  })

  it("names the field of each mistake", () => {
    const issues = validate(jsonSchema, { to: "", amount: -5, currency: "GBP", tags: "x", retries: 1.5, extra: 1 })
    expect(issues.map((issue) => issue.path).sort()).toEqual(["amount", "currency", "extra", "retries", "tags", "to"])
    expect(validate(jsonSchema, {}).filter((issue) => issue.message === "is required").map((issue) => issue.path).sort()).toEqual(["amount", "currency", "retries", "tags", "to"])
  })

  it("follows $ref into $defs and checks nested arrays", () => {
    const schema = { $defs: { Item: { type: "object", properties: { n: { type: "integer", minimum: 1 } }, required: ["n"] } }, type: "array", items: { $ref: "#/$defs/Item" }, maxItems: 2 }
    expect(validate(schema, [{ n: 1 }])).toEqual([])
    expect(validate(schema, [{ n: 0 }, {}, { n: 2 }]).map((issue) => `${issue.path} ${issue.message}`)).toEqual([
      " must have at most 2 items",
      "[0].n must be ≥ 1",
      "[1].n is required"
    ])
  })

  it("treats unknown keywords and uncompilable patterns as the server's to check", () => {
    expect(validate({ type: "string", format: "email", pattern: "(?<" }, "not an email")).toEqual([])
  })
})
