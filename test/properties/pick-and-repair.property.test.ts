/**
 * Laws of tool pre-selection and argument repair over arbitrary tools, inputs and values.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Result, Schema } from "effect"
import { describe, expect } from "vitest"
import { type AnyTool, closestLiteral, pickTools, tool } from "../../src/index.ts"

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

/** The keyword scorer as first written (input and tool tokenised on every call): the reference for the fast path. */
const referenceStopWords = new Set([
  "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "in", "is", "it", "me", "my",
  "of", "on", "or", "please", "the", "this", "to", "what", "with", "you", "your"
])
// Words in any script, compared without accents (issue 28 item 14).
const referenceTokens = (text: string): ReadonlyArray<string> =>
  text.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2").normalize("NFD").replace(/\p{M}+/gu, "").toLowerCase().split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 1 && !referenceStopWords.has(t) && !/^\p{N}+$/u.test(t))
const referenceSimilar = (a: string, b: string): boolean =>
  a === b || (a.length >= 4 && b.length >= 4 && (a.startsWith(b.slice(0, 4)) && b.startsWith(a.slice(0, 4))))
const referenceScorer = (input: string, t: AnyTool) => {
  const words = [...new Set(referenceTokens(input))]
  if (words.length === 0) return { score: 0, reason: "no keywords in the input" }
  const fields = [
    { label: "name", weight: 3, words: referenceTokens(t.name) },
    { label: "tags", weight: 2, words: t.tags.flatMap(referenceTokens) },
    { label: "description", weight: 1, words: referenceTokens(t.description ?? "") }
  ]
  let total = 0
  const matched = new Map<string, Array<string>>()
  for (const w of words) {
    const field = fields.find((f) => f.words.some((x) => referenceSimilar(x, w)))
    if (field === undefined) continue
    total += field.weight
    matched.set(field.label, [...(matched.get(field.label) ?? []), w])
  }
  const reason = matched.size === 0 ? "no keyword matched" : [...matched].map(([label, ws]) => `${label}: ${ws.join(", ")}`).join("; ")
  return { score: total / (words.length * 3), reason }
}

describe("pickTools fast path", () => {
  // A small vocabulary shared by inputs and tools, so that words match (and repeat) often.
  const vocabulary = ["add", "adding", "sum", "multiply", "multiplying", "convert", "celsius", "weatherForecast", "temp", "the", "42", "Ünïcode", "__proto__", "météo", "meteo", "Météo", "me\u0301te\u0301o", "погода", "天気", "٤٢"]
  const vocab = fc.constantFrom(...vocabulary)
  const hostileInput = fc.tuple(
    fc.array(fc.oneof(vocab, vocab, fc.string(), fc.string({ unit: "grapheme" }), fc.stringMatching(/^[a-z]+[A-Z][a-z]+$/)), { maxLength: 10 }),
    fc.constantFrom(" ", "_", "-", ", ")
  ).map(([ws, separator]) => ws.join(separator))
  const vocabTools = fc.uniqueArray(
    fc.record({ name: fc.stringMatching(/^[a-z]{1,10}$/), nameWord: vocab, description: fc.array(vocab, { maxLength: 5 }), tags: fc.array(vocab, { maxLength: 2 }), safe: fc.boolean() }),
    { selector: (t) => t.name, maxLength: 12 }
  ).map((specs) =>
    specs.map((s) =>
      tool(`${s.name}_${s.nameWord.replace(/[^A-Za-z0-9]/g, "")}`.slice(0, 64), {
        description: s.description.join(" "),
        tags: s.tags,
        safe: s.safe,
        args: Schema.Struct({}),
        run: () => s.name
      })
    )
  )
  test.prop([hostileInput, vocabTools, arbOptions], { numRuns })(
    "returns exactly what the reference keyword scorer returns (tools, scores, reasons, order)",
    async (input, tools, options) => {
      const fast = await Effect.runPromise(pickTools(input, tools, options))
      const reference = await Effect.runPromise(pickTools(input, tools, { ...options, scorer: referenceScorer }))
      expect(fast).toEqual(reference)
      // Twice: the per-tool cache changes nothing.
      expect(await Effect.runPromise(pickTools(input, tools, options))).toEqual(reference)
    }
  )
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
