/**
 * Reports: the terminal table, stable JSON and its reading back, the comparison with a baseline (with
 * the exit code CI uses), progress lines, and the vitest matchers. A property checks the summary and
 * the JSON round trip on arbitrary rows, hostile scores and values included.
 */
import { test } from "@fast-check/vitest"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type CaseResult,
  type CaseStatus,
  compareReports,
  type EvalReport,
  evalMatchers,
  exitCodeOf,
  formatComparison,
  formatTable,
  parseReport,
  ReportError,
  reportJson,
  scoresOf,
  summarize,
  terminalProgress
} from "../../src/evals/index.ts"

expect.extend(evalMatchers)
declare module "vitest" {
  interface Assertion<T> {
    toMeetScores(bars: Readonly<Record<string, number>>, options?: { readonly allowErrored?: boolean }): T
  }
}

const row = (id: string, status: CaseStatus, scores: Record<string, number>, extra: Partial<CaseResult> = {}): CaseResult => ({
  id,
  status,
  input: `q ${id}`,
  scores: Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, v === 1 ? { score: 1, pass: true } : { score: v, pass: false, reason: `${k} was ${v}` }])),
  durationMs: 10,
  usage: { inputTokens: 3, outputTokens: 2 },
  toolCalls: [],
  ...extra
})
const report = (cases: ReadonlyArray<CaseResult>, name = "calc"): EvalReport => ({ version: 1, name, cases, summary: summarize(cases, 42) })

const baseline = report([row("sum", "passed", { exact: 1, trajectory: 1 }), row("product", "passed", { exact: 1, trajectory: 1 }), row("prose", "failed", { exact: 0, trajectory: 1 })])

describe("reports", () => {
  it("prints a table with a row per case, the means, pass rates and why cases failed", () => {
    const table = formatTable(report([...baseline.cases, row("boom", "errored", { exact: 0, trajectory: 0 }, { error: "ModelError: down" }), row("later", "skipped", {}, { error: "budget: maxCases 4" })]))
    expect(table).toContain("calc: 2 passed, 1 failed, 1 errored, 1 skipped")
    expect(table).toMatch(/case\s+status\s+exact\s+trajectory\s+ms\s+tokens/)
    expect(table).toMatch(/sum\s+pass\s+1\.00\s+1\.00\s+10\s+5/)
    expect(table).toMatch(/prose\s+FAIL\s+0\.00✗\s+1\.00/)
    expect(table).toMatch(/mean\s+2\/5\s+0\.50\s+0\.75/)
    expect(table).toContain("pass rates: exact 50%, trajectory 75%")
    expect(table).toContain("prose exact: exact was 0")
    expect(table).toContain("boom: ModelError: down")
  })

  it("writes stable JSON (sorted keys) and reads it back; refuses other versions", () => {
    const text = reportJson(baseline)
    expect(text.endsWith("}\n")).toBe(true)
    expect(text.indexOf('"cases"')).toBeLessThan(text.indexOf('"name"'))
    expect(parseReport(text)).toEqual(JSON.parse(text))
    expect(reportJson(parseReport(text))).toBe(text)
    for (const [bad, reason] of [["{", "not JSON"], ["3", "not a JSON object"], ['{"version":9}', "unsupported report version 9"], ['{"version":1}', "not an evaluation report"]] as const) {
      expect(() => parseReport(bad)).toThrow(ReportError)
      expect(() => parseReport(bad)).toThrow(reason)
    }
  })

  it("flags regressions against a baseline (scorer means and cases), with exit code 1", () => {
    const same = compareReports(baseline, baseline)
    expect(same).toMatchObject({ ok: true, regressions: [], improvements: [] })
    expect(exitCodeOf(same)).toBe(0)
    const worse = report([row("sum", "passed", { exact: 1, trajectory: 1 }), row("product", "failed", { exact: 0, trajectory: 1 }), row("prose", "passed", { exact: 1, trajectory: 1 }), row("new", "passed", { exact: 1, trajectory: 1 })])
    const comparison = compareReports(baseline, report(worse.cases.slice(0, 3)))
    expect(comparison.regressions).toEqual([{ _tag: "Case", id: "product", baseline: "passed", current: "failed" }])
    expect(comparison.improvements).toEqual([{ _tag: "Case", id: "prose", baseline: "failed", current: "passed" }])
    expect(exitCodeOf(comparison)).toBe(1)
    const dropped = compareReports(baseline, report([row("sum", "passed", { exact: 1, trajectory: 0.5 }), row("product", "passed", { exact: 1, trajectory: 1 }), row("prose", "failed", { exact: 0, trajectory: 1 })]))
    expect(dropped.regressions).toEqual([{ _tag: "Scorer", scorer: "trajectory", baseline: 1, current: 2.5 / 3 }])
    const text = formatComparison(compareReports(baseline, report([...worse.cases.slice(0, 2)])))
    expect(text).toContain("2 regression(s) against the baseline:")
    expect(text).toContain("REGRESSION exact: mean 0.667 → 0.500")
    expect(text).toContain("REGRESSION case product: passed → failed")
    expect(text).toContain("not in this run: prose")
    expect(compareReports(baseline, worse).newCases).toEqual(["new"])
    // Within tolerance: no regression.
    expect(compareReports(baseline, report([row("sum", "passed", { exact: 1, trajectory: 1 }), row("product", "passed", { exact: 1, trajectory: 1 }), row("prose", "failed", { exact: 0, trajectory: 0.99 })]), { tolerance: 0.01 }).ok).toBe(true)
  })

  it("writes progress in place on a TTY and a line per case otherwise", () => {
    const lines: Array<string> = []
    const progress = terminalProgress({ write: (t) => lines.push(t) })
    progress({ done: 1, total: 2, result: baseline.cases[0]! })
    progress({ done: 2, total: 2, result: baseline.cases[2]! })
    expect(lines).toEqual(["[1/2] 1 passed, 0 failed, 0 errored, 0 skipped  sum\n", "[2/2] 1 passed, 1 failed, 0 errored, 0 skipped  prose\n"])
    const tty: Array<string> = []
    const inPlace = terminalProgress({ write: (t) => tty.push(t), isTTY: true })
    inPlace({ done: 1, total: 1, result: baseline.cases[0]! })
    expect(tty).toEqual(["\r\x1b[2K[1/1] 1 passed, 0 failed, 0 errored, 0 skipped  sum\n"])
  })

  it("vitest: scoresOf for plain expects, toMeetScores as a matcher", () => {
    expect(scoresOf(baseline)).toEqual({ exact: 2 / 3, trajectory: 1 })
    expect(baseline).toMeetScores({ exact: 0.6, trajectory: 1 })
    expect(baseline).not.toMeetScores({ exact: 0.9 })
    expect(() => expect(baseline).toMeetScores({ exact: 0.9, judge: 0.5 })).toThrow(/exact: mean 0\.667 < 0\.9\n\s+judge: no such scorer \(have exact, trajectory\)/)
    const errored = report([...baseline.cases, row("boom", "errored", { exact: 1, trajectory: 1 }, { error: "down" })])
    expect(() => expect(errored).toMeetScores({ exact: 0.5 })).toThrow("case boom errored: down")
    expect(errored).toMeetScores({ exact: 0.5 }, { allowErrored: true })
    expect(() => expect({}).toMeetScores({})).toThrow("expected an evaluation report")
  })
})

describe("report properties", () => {
  const hostileNumber = fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 1e308))
  const anyValue = fc.oneof(fc.string(), fc.integer(), fc.constant(undefined), fc.constant(null), fc.dictionary(fc.string(), fc.jsonValue()), fc.constant(() => 1))
  const caseResult = fc.record({
    id: fc.string(),
    status: fc.constantFrom<CaseStatus>("passed", "failed", "errored", "skipped"),
    input: anyValue,
    output: anyValue,
    scores: fc.dictionary(fc.constantFrom("exact", "judge", "__proto__", "constructor", "a\u0000b"), fc.record({ score: hostileNumber, pass: fc.boolean() })),
    durationMs: fc.nat(),
    usage: fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat() }),
    toolCalls: fc.array(fc.record({ tool: fc.string(), args: fc.jsonValue(), ok: fc.boolean() }), { maxLength: 3 })
  }) as fc.Arbitrary<CaseResult>

  test.prop([fc.array(caseResult, { maxLength: 12 })], { numRuns: Number(process.env.PROPERTY_RUNS ?? 200) })(
    "counts add up, JSON round-trips stably, a report never regresses against itself, the table always prints",
    (cases) => {
      const r = report(cases)
      const s = r.summary
      expect(s.passed + s.failed + s.errored + s.skipped).toBe(cases.length)
      const text = reportJson(r)
      const back = parseReport(text)
      expect(reportJson(back)).toBe(text)
      for (const scorer of Object.values(back.summary.scorers)) {
        expect(scorer.passRate).toBeGreaterThanOrEqual(0)
        expect(scorer.passRate).toBeLessThanOrEqual(1)
      }
      expect(compareReports(back, back).ok).toBe(true)
      expect(typeof formatTable(back)).toBe("string")
    }
  )
})
