// The search evaluation in CI: the 40 questions replayed from the recorded cassette, scored for slot
// precision, recall and gap accuracy; the scorers themselves on hand-made cases.
import { Effect } from "effect"
import { scoresOf } from "effect-agent-dsl/evals"
import { describe, expect, it } from "vitest"
import { correctSlots } from "../../../examples/ontology-search/corrections.ts"
import { evalModel, runSearchEval } from "../../../examples/ontology-search/eval.ts"
import { gapAccuracy, slotItems, slotPrecision, slotRecall } from "../../../examples/ontology-search/slot-scorers.ts"
import { loadCatalogue } from "../../../examples/ontology-search/store.ts"

describe("search evaluation", () => {
  it("replays 40 recorded answers and keeps the recorded scores", async () => {
    const model = evalModel(undefined)
    const report = await Effect.runPromise(runSearchEval(model))
    expect(report.cases).toHaveLength(40)
    expect(report.cases.filter((c) => c.status === "errored")).toEqual([])
    const scores = scoresOf(report)
    // The committed cassette comes from the scripted stand-in (see the example's README).
    expect(scores.slotPrecision).toBeGreaterThanOrEqual(0.98)
    expect(scores.slotRecall).toBeGreaterThanOrEqual(0.76)
    expect(scores.gapAccuracy).toBeGreaterThanOrEqual(0.97)
  })

  it("scorers grade slots as items and gaps as terms", async () => {
    const { vocabulary } = loadCatalogue()
    const output = correctSlots(vocabulary, { slots: { domains: ["hdmap"], filters: { roadTypes: "motoway", colour: "red" }, ranges: {} }, interpretation: "", gaps: [] })
    expect(slotItems(output)).toEqual(["domain:hdmap", "filter:roadTypes=motorway"])
    const context = (expected: object) => ({ case: { id: "x", input: "q", expected: expected as never }, output, error: undefined, trace: { toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 }, durationMs: 0, modelCalls: 1 } })
    const expected = { domains: ["hdmap"], filters: { roadTypes: ["motorway"], country: ["DE"] }, ranges: {}, gaps: ["colour"] }
    const grade = (s: typeof slotPrecision, e: object) => Effect.runPromise(s.score(context(e)))
    expect((await grade(slotPrecision, expected)).score).toBe(1)
    expect((await grade(slotRecall, expected)).score).toBeCloseTo(2 / 3)
    expect((await grade(gapAccuracy, expected)).score).toBe(1)
    expect((await grade(gapAccuracy, { ...expected, gaps: [] })).score).toBe(0)
  })
})
