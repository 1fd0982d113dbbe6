/**
 * Laws of tool pre-selection and argument repair over arbitrary tools, inputs and values.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Result, Schema } from "effect"
import { describe, expect } from "vitest"
import { closestLiteral, pickTools, tool } from "../../src/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

const word = fc.stringMatching(/^[a-z]{2,8}$/)
const arbTools = fc.uniqueArray(
  fc.record({ name: fc.stringMatching(/^[a-z]{1,10}(_[a-z]{1,8})?$/), description: fc.array(word, { maxLength: 6 }), tags: fc.array(word, { maxLength: 2 }), safe: fc.boolean() }),
  { selector: (t) => t.name, maxLength: 12 }
).map((specs) =>
  specs.map((s) => tool(s.name, { description: s.description.join(" "), tags: s.tags, safe: s.safe, args: Schema.Struct({}), run: () => s.name }))
)
const arbOptions = fc.record(
  { maxCandidates: fc.integer({ min: 0, max: 6 }), minScore: fc.double({ min: 0, max: 1, noNaN: true }), allowUnsafe: fc.boolean() },
  { requiredKeys: [] }
)
const arbInput = fc.array(fc.oneof(word, fc.string()), { maxLength: 8 }).map((ws) => ws.join(" "))

describe("pickTools laws", () => {
  test.prop([arbInput, arbTools, arbOptions], { numRuns })(
    "never an unsafe tool without allowUnsafe, never more than maxCandidates, scores in [0, 1] descending",
    async (input, tools, options) => {
      const picked = await Effect.runPromise(pickTools(input, tools, options))
      expect(picked.length).toBeLessThanOrEqual(options.maxCandidates ?? 3)
      if (options.allowUnsafe !== true) for (const p of picked) expect(p.tool.safe).toBe(true)
      for (const p of picked) {
        expect(p.score).toBeGreaterThanOrEqual(0)
        expect(p.score).toBeLessThanOrEqual(1)
        expect(p.score).toBeGreaterThanOrEqual(options.minScore ?? 0.05)
        expect(tools).toContain(p.tool)
      }
      for (let i = 1; i < picked.length; i++) expect(picked[i - 1]!.score).toBeGreaterThanOrEqual(picked[i]!.score)
    }
  )

  test.prop([arbInput, arbTools, arbOptions], { numRuns })("the fallback obeys the same limits", async (input, tools, options) => {
    const picked = await Effect.runPromise(pickTools(input, tools, { ...options, scorer: () => Promise.reject(new Error("down")) }))
    expect(picked.length).toBeLessThanOrEqual(options.maxCandidates ?? 3)
    if (options.allowUnsafe !== true) for (const p of picked) expect(p.tool.safe).toBe(true)
    for (const p of picked) expect(p.provenance).toBe("fallback")
  })
})

describe("argument repair laws", () => {
  const arbLiterals = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 6 })

  test.prop([fc.string({ maxLength: 16 }), arbLiterals], { numRuns })(
    "a literal correction is always one of the literals",
    (value, literals) => {
      const match = closestLiteral(value, literals)
      if (match !== undefined) expect(literals).toContain(match)
    }
  )

  test.prop([fc.anything(), arbLiterals], { numRuns })(
    "a repaired call never reaches run with a value outside the literal set",
    async (value, literals) => {
      const seen: Array<unknown> = []
      const t = tool("pick", {
        args: Schema.Struct({ choice: Schema.Literals(literals as [string, ...Array<string>]) }),
        repair: true,
        run: ({ choice }) => {
          seen.push(choice)
          return choice
        }
      })
      const { repairArguments } = await import("../../src/dsl/repair-arguments.ts")
      const repaired = repairArguments(t.codec.schema!.ast, { choice: value }, t.codec.repair!)
      const decoded = t.codec.check(repaired.value)
      if (Result.isSuccess(decoded)) expect(literals).toContain(decoded.success.choice)
      for (const c of repaired.corrections) if (c.kind === "literal") expect(literals).toContain(c.to)
    }
  )
})
