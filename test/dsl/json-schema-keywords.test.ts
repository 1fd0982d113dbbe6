/**
 * A validation keyword whose value is not of its form is refused at registration: Effect's importer
 * would drop it, and the tool's arguments would no longer be held to it (an MCP server's schema reached
 * the server with `{x: 5}` under a draft-04 `exclusiveMinimum: true`). Schemas Effect itself writes,
 * and the draft-07 forms under a draft-07 `$schema`, are accepted.
 */
import { fc, it as fcIt } from "@fast-check/vitest"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { AgentConfigError, tool } from "../../src/index.ts"
import { malformedKeyword } from "../../src/dsl/json-schema-keywords.ts"

const refusal = (parameters: Record<string, unknown>): string | undefined => {
  try {
    tool("t", { parameters, run: () => "ok" })
    return undefined
  } catch (error) {
    expect(error).toBeInstanceOf(AgentConfigError)
    return (error as AgentConfigError).message
  }
}

const withProperty = (schema: unknown) => ({ type: "object", properties: { x: schema } })

describe("JSON Schema keyword forms", () => {
  it("refuses the values the importer would drop, naming the keyword, where it is and what it must be", () => {
    const cases: ReadonlyArray<readonly [unknown, RegExp]> = [
      [{ type: "integer", minimum: 5, exclusiveMinimum: true }, /`exclusiveMinimum` at #\/properties\/x must be a number \(draft-04's boolean form/],
      [{ type: "strng" }, /`type` at #\/properties\/x must be one of null, boolean, object/],
      [{ type: [] }, /`type` at #\/properties\/x/],
      [{ type: ["string", "string"] }, /without repeats/],
      [{ enum: "a" }, /`enum` at #\/properties\/x must be an array/],
      [{ type: "string", minLength: "5" }, /`minLength` at #\/properties\/x must be a whole number/],
      [{ type: "string", maxLength: -1 }, /`maxLength`/],
      [{ type: "number", multipleOf: 0 }, /`multipleOf` at #\/properties\/x must be a number above 0/],
      [{ type: "array", items: [{ type: "string" }] }, /`items` at #\/properties\/x must be a schema in JSON Schema 2020-12 \(an array is draft-07's tuple form/],
      [{ type: "array", items: 3 }, /`items`/],
      [{ type: "string", pattern: 7 }, /`pattern`/],
      [{ anyOf: [] }, /`anyOf` at #\/properties\/x must be a non-empty array/],
      [{ type: "object", properties: [] }, /`properties` at #\/properties\/x must be an object of schemas/],
      [{ type: "object", required: "a" }, /`required`/],
      [{ type: "array", uniqueItems: "yes" }, /`uniqueItems`/],
      [{ not: 1 }, /`not`/],
      [1, /the schema at #\/properties\/x must be an object or a boolean/],
      // Below other keywords: in a union's member, a definition, an array's items.
      [{ anyOf: [{ type: "string" }, { type: "number", maximum: "9" }] }, /`maximum` at #\/properties\/x\/anyOf\/1/],
      [{ type: "array", items: { type: "object", properties: { "a/b": { type: "bogus" } } } }, /`type` at #\/properties\/x\/items\/properties\/a~1b/]
    ]
    for (const [schema, reason] of cases) expect(refusal(withProperty(schema))).toMatch(reason)
    expect(refusal({ type: "object", $defs: { N: { type: "integer", minimum: "0" } }, properties: { n: { $ref: "#/$defs/N" } } })).toMatch(/`minimum` at #\/\$defs\/N/)
  })

  it("takes the draft-07 forms under a draft-07 $schema, and enforces them", () => {
    const draft07 = "http://json-schema.org/draft-07/schema#"
    const t = tool("t", {
      parameters: { $schema: draft07, type: "object", properties: { pair: { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false } } },
      run: () => "ok"
    })
    expect(t.codec.check({ pair: ["a", 1] })._tag).toBe("Success")
    expect(t.codec.check({ pair: [1, "a"] })._tag).toBe("Failure")
    expect(refusal({ $schema: draft07, type: "object", properties: { n: { type: "number", exclusiveMinimum: true } } })).toMatch(/draft-04's boolean form/)
  })

  it("accepts booleans as schemas and leaves annotations and unknown keywords alone", () => {
    expect(refusal({ type: "object", properties: { a: true, b: false, c: { description: 3, title: [], examples: "x", "x-vendor": {} } } })).toBeUndefined()
  })

  const schemas: ReadonlyArray<Schema.Top> = [
    Schema.Struct({ a: Schema.String.check(Schema.isMinLength(2), Schema.isPattern(/^a/)), b: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 9 }))) }),
    Schema.Struct({ tags: Schema.Array(Schema.Literals(["x", "y"])).check(Schema.isMaxLength(3)), pair: Schema.Tuple([Schema.String, Schema.Number]) }),
    Schema.Struct({ u: Schema.Union([Schema.Struct({ k: Schema.Literal("a") }), Schema.Struct({ k: Schema.Literal("b"), n: Schema.Finite })]), r: Schema.Record(Schema.String, Schema.Boolean) }),
    Schema.Struct({ n: Schema.NullOr(Schema.Number.check(Schema.isGreaterThan(0), Schema.isMultipleOf(5))) })
  ]
  it("accepts every schema Effect writes for its own Schemas", () => {
    for (const schema of schemas) {
      const document = Schema.toJsonSchemaDocument(schema)
      expect(malformedKeyword({ ...document.schema, $defs: document.definitions }, "2020-12")).toBeUndefined()
    }
  })

  const keywordForms: ReadonlyArray<readonly [string, (value: unknown) => boolean]> = [
    ["minimum", (v) => typeof v === "number" && Number.isFinite(v)],
    ["minLength", (v) => Number.isSafeInteger(v) && (v as number) >= 0],
    ["enum", Array.isArray],
    ["required", (v) => Array.isArray(v) && v.every((s) => typeof s === "string")],
    ["pattern", (v) => typeof v === "string"],
    ["uniqueItems", (v) => typeof v === "boolean"],
    ["additionalProperties", (v) => typeof v === "boolean" || (typeof v === "object" && v !== null && !Array.isArray(v))]
  ]
  fcIt.prop([fc.constantFrom(...keywordForms), fc.jsonValue(), fc.nat({ max: 4 })])(
    "any value of a keyword is taken exactly when it has the keyword's form, at any depth",
    ([keyword, fits], value, depth) => {
      let schema: unknown = { [keyword]: value }
      for (let i = 0; i < depth; i++) schema = { type: "object", properties: { p: schema } }
      const found = malformedKeyword({ type: "object", properties: { x: schema } }, "2020-12")
      if (fits(value) && (keyword !== "additionalProperties" || malformedKeyword(value, "2020-12") === undefined)) expect(found).toBeUndefined()
      else if (!fits(value)) expect(found).toContain(`\`${keyword}\` at #/properties/x${"/properties/p".repeat(depth)}`)
    }
  )

  it("walks a schema nested deeper than the stack goes without overflowing", () => {
    let schema: unknown = { type: "string", minLength: "1" }
    for (let i = 0; i < 20_000; i++) schema = { type: "array", items: schema }
    expect(malformedKeyword(schema, "2020-12")).toMatch(/^`minLength` at #(\/items){20000} must be/)
  })
})
