/**
 * Hostile parts: whatever a client sends as a message's parts (any JSON-ish value, parts with missing,
 * wrong or unknown content), decoding the input or the decisions never throws: it gives a value or a
 * reason. Decisions always name exactly the waiting calls.
 */
import { Schema } from "effect"
import * as Result from "effect/Result"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decisionsFromParts, inputFromParts } from "../../../src/protocols/a2a/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

const arbContent = fc.oneof(
  fc.record({ $case: fc.constant("text"), value: fc.oneof(fc.string(), fc.anything({ withBigInt: true, withMap: true, withSet: true })) }),
  fc.record({ $case: fc.constant("data"), value: fc.anything({ withBigInt: true, withMap: true, withSet: true }) }),
  fc.record({ $case: fc.constantFrom("raw", "url", "file", "__proto__"), value: fc.anything({ withBigInt: true, withMap: true, withSet: true }) }),
  fc.anything({ withBigInt: true, withMap: true, withSet: true })
)
const arbPart = fc.oneof(fc.record({ content: arbContent }, { requiredKeys: [] }), fc.anything({ withBigInt: true, withMap: true, withSet: true }))
const arbParts = fc.oneof(fc.array(arbPart, { maxLength: 4 }), fc.anything({ withBigInt: true, withMap: true, withSet: true }))
const pending = [{ id: "c1", tool: "transfer", args: { amount: 1 } }, { id: "c2", tool: "wipe", args: {} }]
const schemas = [undefined, Schema.String, Schema.Struct({ a: Schema.Finite }), Schema.Array(Schema.String)]

describe("hostile parts end in a reason, never a throw", () => {
  it("inputFromParts", () => {
    fc.assert(
      fc.property(arbParts, fc.constantFrom(...schemas), (parts, schema) => {
        const result = inputFromParts(parts, schema)
        if (Result.isFailure(result)) expect(typeof result.failure).toBe("string")
        else if (schema === undefined) expect(typeof result.success).toBe("string")
      }),
      { numRuns }
    )
  })

  it("decisionsFromParts: a decision for every waiting call and no other, or a reason", () => {
    fc.assert(
      fc.property(arbParts, (parts) => {
        const result = decisionsFromParts(parts, pending)
        if (Result.isFailure(result)) expect(typeof result.failure).toBe("string")
        else expect(Object.keys(result.success).sort()).toEqual(["c1", "c2"])
      }),
      { numRuns }
    )
  })

  it("data that is not JSON (a BigInt, a cycle) is a reason for an untyped agent", () => {
    const cycle: Record<string, unknown> = {}
    cycle["self"] = cycle
    expect(Result.isFailure(inputFromParts([{ content: { $case: "data", value: 1n } }], undefined))).toBe(true)
    expect(Result.isFailure(inputFromParts([{ content: { $case: "data", value: cycle } }], undefined))).toBe(true)
    expect(inputFromParts([{ content: { $case: "text", value: "a" } }, { content: { $case: "data", value: { b: 1 } } }], undefined)).toEqual(Result.succeed('a\n{"b":1}'))
  })

  it("well-formed decisions decode, and an unknown call id is refused", () => {
    const data = (decisions: unknown) => [{ content: { $case: "data", value: { decisions } } }]
    const ok = decisionsFromParts(data({ c1: "approve", c2: { deny: "no" } }), pending)
    expect(Result.isSuccess(ok) && ok.success.c2).toMatchObject({ _tag: "Deny", reason: "no" })
    expect(Result.isFailure(decisionsFromParts(data({ c1: "approve", c2: "approve", c3: "approve" }), pending))).toBe(true)
    expect(Result.isFailure(decisionsFromParts(data({ c1: "approve" }), pending))).toBe(true)
    expect(Result.isSuccess(decisionsFromParts([{ content: { $case: "text", value: "No: too much" } }], pending))).toBe(true)
  })
})
