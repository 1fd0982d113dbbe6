/**
 * References that come back to the same value without reading deeper into it: through bare `$ref`s,
 * and through `allOf`/`anyOf`/`oneOf`, which apply to the same value. They are refused when the tool is
 * registered (a validator following them would never stop), while recursion below `properties` or
 * `items` is a recursive schema like any other. Property: for schemas drawn from a small grammar of
 * references, a schema that compiles never fails to check a value for want of stack.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compileJsonSchema } from "../../src/dsl/json-schema-tool.ts"
import { tool } from "../../src/index.ts"

const withDefs = (defs: Record<string, unknown>, root: Record<string, unknown> = { v: { $ref: "#/$defs/A" } }) =>
  ({ type: "object", properties: root, $defs: defs })
const compile = (schema: unknown) => () => compileJsonSchema(schema, { strict: false })

describe("JSON Schema tools: reference loops", () => {
  it("refuses a loop through allOf, anyOf or oneOf at registration, naming the chain", () => {
    expect(compile(withDefs({ A: { allOf: [{ $ref: "#/$defs/A" }] } }))).toThrow(/#\/\$defs\/A → #\/\$defs\/A\/allOf\/0 → #\/\$defs\/A comes back to itself/)
    expect(compile(withDefs({ A: { anyOf: [{ type: "string" }, { $ref: "#/$defs/B" }] }, B: { oneOf: [{ $ref: "#/$defs/A" }] } }))).toThrow(/comes back to itself/)
    expect(compile({ type: "object", properties: { a: { type: "string" } }, allOf: [{ $ref: "#" }] })).toThrow(/comes back to itself/)
    expect(() => tool("t", { parameters: withDefs({ A: { anyOf: [{ type: "number" }, { $ref: "#/$defs/A" }] } }), run: () => "x" })).toThrow(/comes back to itself/)
  })

  it("keeps recursion that reads deeper at each turn, through properties and items, with anyOf below", () => {
    const tree = compileJsonSchema(
      withDefs({ A: { type: "object", properties: { kids: { type: "array", items: { anyOf: [{ $ref: "#/$defs/A" }, { type: "null" }] } } } } }),
      { strict: false }
    )
    expect(tree.decode({ v: { kids: [{ kids: [null] }, null] } })._tag).toBe("Success")
    expect(tree.decode({ v: { kids: [{ kids: [1] }] } })._tag).toBe("Failure")
    // The same definition reached twice on one value, without a loop, is fine.
    expect(compile(withDefs({ A: { allOf: [{ $ref: "#/$defs/B" }, { $ref: "#/$defs/B" }] }, B: { type: "string" } }))).not.toThrow()
  })

  it("property: a schema of references that compiles checks any small value without running out of stack", () => {
    const names = ["A", "B", "C"] as const
    const ref = fc.constantFrom(...names).map((n) => ({ $ref: `#/$defs/${n}` }))
    const leaf = fc.constantFrom({ type: "string" }, { type: "number" }, { type: "null" })
    const sub = fc.oneof(ref, leaf)
    const def = fc.oneof(
      ref,
      leaf,
      fc.tuple(fc.constantFrom("allOf", "anyOf", "oneOf"), fc.array(sub, { minLength: 1, maxLength: 3 })).map(([key, list]) => ({ [key]: list })),
      sub.map((s) => ({ type: "object", properties: { a: s } })),
      sub.map((s) => ({ type: "array", items: s }))
    )
    fc.assert(
      fc.property(fc.tuple(def, def, def), fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }), ([a, b, c], values) => {
        let contract: ReturnType<typeof compileJsonSchema>
        try {
          contract = compileJsonSchema(withDefs({ A: a, B: b, C: c }), { strict: false })
        } catch (error) {
          // Refused at registration: a loop, or a schema the importer cannot enforce.
          expect(error).toBeInstanceOf(Error)
          return
        }
        for (const v of values) {
          const decoded = contract.decode({ v })
          if (decoded._tag === "Failure") expect(decoded.failure).not.toMatch(/could not be checked/)
        }
      }),
      { numRuns: 300 }
    )
  })
})
