/**
 * Law: a tool defined by a JSON Schema runs exactly on the arguments its schema accepts. Schemas are
 * generated from a grammar (objects, required keys, closed objects, $defs/$ref, enums, integer and
 * number bounds, string lengths, arrays with maxItems); arguments are generated from each schema
 * (valid) and then mutated (mostly invalid). An independent oracle written here, not the library,
 * decides validity; the tool is driven through the agent loop with a scripted model.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect } from "vitest"
import { agent, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

type Node =
  | { readonly type: "string"; readonly minLength: number; readonly maxLength: number }
  | { readonly enum: ReadonlyArray<string> }
  | { readonly type: "integer" | "number"; readonly minimum: number; readonly maximum: number }
  | { readonly type: "boolean" }
  | { readonly type: "array"; readonly items: Node; readonly maxItems: number }
  | {
    readonly type: "object"
    readonly properties: Record<string, Node>
    readonly required: ReadonlyArray<string>
    readonly additionalProperties: false
  }
  | { readonly $ref: "#/$defs/Shared" }

const key = fc.constantFrom("a", "b", "c", "d")
const leaf: fc.Arbitrary<Node> = fc.oneof(
  fc.tuple(fc.nat(3), fc.nat(4)).map(([min, extra]) => ({ type: "string" as const, minLength: min, maxLength: min + extra })),
  fc.uniqueArray(fc.constantFrom("red", "green", "blue", "Red"), { minLength: 1, maxLength: 3 }).map((values) => ({ enum: values })),
  fc.tuple(fc.constantFrom("integer" as const, "number" as const), fc.integer({ min: -5, max: 5 }), fc.nat(10)).map(([type, min, extra]) => ({
    type,
    minimum: min,
    maximum: min + extra
  })),
  fc.constant({ type: "boolean" as const }),
  fc.constant({ $ref: "#/$defs/Shared" as const })
)
const node: fc.Arbitrary<Node> = fc.letrec<{ node: Node; object: Node }>((tie) => ({
  node: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, tie("object"), fc.tuple(tie("node"), fc.nat(3)).map(([items, maxItems]) => ({ type: "array" as const, items, maxItems }))),
  object: fc.dictionary(key, tie("node"), { maxKeys: 3 }).chain((properties) =>
    fc.subarray(Object.keys(properties)).map((required) => ({ type: "object" as const, properties, required, additionalProperties: false as const }))
  )
})).node
const rootSchema = fc.tuple(
  fc.dictionary(key, node, { minKeys: 1, maxKeys: 3 }),
  leaf.filter((l) => !("$ref" in l))
).chain(([properties, shared]) =>
  fc.subarray(Object.keys(properties)).map((required) => ({
    type: "object" as const,
    $defs: { Shared: shared },
    properties,
    required,
    additionalProperties: false as const
  }))
)
type Root = { readonly $defs: { readonly Shared: Node } } & Extract<Node, { type: "object" }>

/** The oracle: JSON Schema semantics for the grammar above. */
const valid = (schema: Node, value: unknown, root: Root): boolean => {
  if ("$ref" in schema) return valid(root.$defs.Shared, value, root)
  if ("enum" in schema) return schema.enum.includes(value as string)
  switch (schema.type) {
    case "string": {
      if (typeof value !== "string") return false
      const length = [...value].length
      return length >= schema.minLength && length <= schema.maxLength
    }
    case "integer":
    case "number":
      return typeof value === "number" && Number.isFinite(value) && (schema.type === "number" || Number.isInteger(value)) &&
        value >= schema.minimum && value <= schema.maximum
    case "boolean":
      return typeof value === "boolean"
    case "array":
      return Array.isArray(value) && value.length <= schema.maxItems && value.every((item) => valid(schema.items, item, root))
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return false
      const record = value as Record<string, unknown>
      return Object.keys(record).every((k) => k in schema.properties) && schema.required.every((k) => k in record) &&
        Object.entries(schema.properties).every(([k, s]) => !(k in record) || valid(s, record[k], root))
    }
  }
}

/** Values generated from a schema: valid by construction. */
const instance = (schema: Node, root: Root): fc.Arbitrary<unknown> => {
  if ("$ref" in schema) return instance(root.$defs.Shared, root)
  if ("enum" in schema) return fc.constantFrom(...schema.enum)
  switch (schema.type) {
    case "string":
      return fc.string({ unit: fc.constantFrom("x", "y", "é"), minLength: schema.minLength, maxLength: schema.maxLength })
    case "integer":
      return fc.integer({ min: schema.minimum, max: schema.maximum })
    case "number":
      return fc.double({ min: schema.minimum, max: schema.maximum, noNaN: true, noDefaultInfinity: true })
    case "boolean":
      return fc.boolean()
    case "array":
      return fc.array(instance(schema.items, root), { maxLength: schema.maxItems })
    case "object": {
      const entries = Object.entries(schema.properties).map(([k, s]) => fc.option(instance(s, root), { nil: undefined }).map((v) => [k, v] as const))
      return fc.tuple(...entries).map((pairs) =>
        Object.fromEntries(pairs.filter(([k, v]) => v !== undefined || schema.required.includes(k)).map(([k, v]) => [k, v ?? defaultFor(schema.properties[k]!, root)]))
      )
    }
  }
}
const defaultFor = (schema: Node, root: Root): unknown => fc.sample(instance(schema, root), { numRuns: 1, seed: 1 })[0]

/** A mutation somewhere in the value: a wrong type, an extra key, a dropped key, a number off by a little. */
const mutate = (value: unknown): fc.Arbitrary<unknown> => {
  const replacement = fc.oneof(fc.constant(null), fc.string({ maxLength: 3 }), fc.integer({ min: -20, max: 20 }), fc.double({ noNaN: true }), fc.boolean(), fc.constant([]), fc.constant({}))
  if (Array.isArray(value)) {
    return value.length === 0
      ? fc.oneof(replacement, fc.constant([1]))
      : fc.oneof(
        fc.constant([...value, value[0]]),
        fc.nat(value.length - 1).chain((i) => mutate(value[i]).map((v) => value.map((item, j) => (j === i ? v : item))))
      )
  }
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value)
    const record = value as Record<string, unknown>
    if (keys.length === 0) return fc.oneof(replacement, fc.constant({ z: 1 }))
    return fc.oneof(
      { arbitrary: fc.constant({ ...record, z: 1 }), weight: 1 },
      { arbitrary: fc.constantFrom(...keys).map((k) => Object.fromEntries(Object.entries(record).filter(([kk]) => kk !== k))), weight: 1 },
      { arbitrary: fc.constantFrom(...keys).chain((k) => mutate(record[k]).map((v) => ({ ...record, [k]: v }))), weight: 4 }
    )
  }
  if (typeof value === "number") return fc.oneof(replacement, fc.constantFrom(value + 0.5, value + 1, value - 1, value * 100, value - 20))
  if (typeof value === "string") return fc.oneof(replacement, fc.constantFrom(value + "xxxxx", value.toUpperCase(), "", value + "é"))
  return replacement
}

const case_ = rootSchema.chain((schema) =>
  instance(schema, schema).chain((good) => fc.tuple(fc.constant(schema), fc.oneof({ arbitrary: fc.constant(good), weight: 1 }, { arbitrary: mutate(good), weight: 2 })))
)

describe("JSON Schema tools", () => {
  test.prop([case_, fc.boolean()], { numRuns })("run exactly on the arguments their schema accepts", async ([schema, args], asText) => {
    const seen: Array<unknown> = []
    const t = tool("probe", { parameters: schema, run: (a) => seen.push(a) })
    // A string is the raw JSON text of the arguments (and "" means none, by the OpenAI convention).
    const raw = asText || typeof args === "string" ? JSON.stringify(args) : args
    await agent("a").model(scriptedModel([toolCalls([{ id: "c1", name: "probe", arguments: raw }]), text("done")])).tools({ probe: t }).run("go")
    const expected = valid(schema, args, schema)
    expect(seen.length, `schema ${JSON.stringify(schema)} args ${JSON.stringify(args)}`).toBe(expected ? 1 : 0)
    // Compared as JSON: -0 travels as 0 in text.
    if (expected) expect(JSON.stringify(seen[0])).toBe(JSON.stringify(args))
  }, 60_000)
})
