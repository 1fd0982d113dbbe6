/**
 * evaluate with `repetitions`: each case runs N times under the same concurrency limit as the other
 * cases' runs; its row keeps every run and each scorer's mean, pass rate, min, max and standard
 * deviation; a failed run is that run's failure; progress counts runs; the option is checked; reports
 * with repetitions compare by their means. A property checks the statistics against a direct
 * computation over generated per-run scores.
 */
import { test } from "@fast-check/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { agent, AgentConfigError, ModelError, type ModelRequest, text } from "../../src/index.ts"
import {
  compareReports,
  dataset,
  evaluate,
  type EvalProgress,
  exactMatch,
  exitCodeOf,
  formatComparison,
  formatTable,
  parseReport,
  reportJson,
  scorer,
  terminalProgress
} from "../../src/evals/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const sum = dataset("sum", [{ id: "sum", input: "3 + 5", expected: "8" }])
const two = dataset("two", [{ id: "sum", input: "3 + 5", expected: "8" }, { id: "greet", input: "hello", expected: "hi" }])

/** A model that greets reliably and answers the sum right, then wrong, then right... (or always right when not `flaky`). */
const model = (flaky: boolean) => {
  let sums = 0
  return scriptedModel((request: ModelRequest) => {
    const asked = request.messages.at(-1)?.content ?? ""
    if (asked !== "3 + 5") return text("hi")
    sums += 1
    return text(flaky && sums % 2 === 0 ? "9" : "8")
  })
}

describe("evaluate with repetitions", () => {
  it("an answer right every other run passes half its runs, and every run is kept", async () => {
    const report = await Effect.runPromise(Effect.flatMap(sum, (data) => evaluate(agent("flaky").model(model(true)), data, [exactMatch()], { repetitions: 4 })))
    const row = report.cases[0]!
    expect(row.repetitions?.map((r) => [r.status, r.output])).toEqual([["passed", "8"], ["failed", "9"], ["passed", "8"], ["failed", "9"]])
    expect(row.repetitions?.[1]?.scores.exact).toEqual({ score: 0, pass: false, reason: 'expected "8", got "9"' })
    expect(row.repetitions?.every((r) => r.durationMs >= 0 && r.toolCalls.length === 0 && r.error === undefined)).toBe(true)
    expect(row.stats?.exact).toEqual({ mean: 0.5, passRate: 0.5, min: 0, max: 1, stdDev: 0.5 })
    // The case passes only when every run does; its score is the mean.
    expect(row.status).toBe("failed")
    expect(row.scores.exact).toEqual({ score: 0.5, pass: false, reason: "passed 2 of 4 repetitions" })
    expect(row.output).toBeUndefined()
    expect(report.summary).toMatchObject({ cases: 1, passed: 0, failed: 1, errored: 0, skipped: 0, repetitions: { perCase: 4, runs: 4, passed: 2, failed: 2, errored: 0 } })
    expect(report.summary.scorers.exact).toEqual({ mean: 0.5, passRate: 0.5, min: 0, max: 1, stdDev: 0.5 })
    const table = formatTable(report)
    expect(table).toContain("sum: 0 passed, 1 failed, 0 errored, 0 skipped; 4 runs (4 per case): 2 passed, 2 failed, 0 errored")
    expect(table).toMatch(/sum\s+FAIL 2\/4\s+0\.50✗/)
    expect(table).toContain("spread over runs: exact 0.00–1.00 (sd 0.50)")
    expect(table).toContain('sum #2 exact: expected "8", got "9"')
    expect(table).not.toContain("sum #1 exact")
  })

  it("runs repetitions concurrently, never more at once than the concurrency limit", async () => {
    const data = await Effect.runPromise(dataset("slow", [{ input: "a", expected: "a" }, { input: "b", expected: "b" }]))
    const measure = async (concurrency: number) => {
      let running = 0
      let most = 0
      let calls = 0
      const slow = (input: string) =>
        Effect.sync(() => {
          calls += 1
          running += 1
          most = Math.max(most, running)
        }).pipe(Effect.andThen(Effect.sleep("20 millis")), Effect.as(input), Effect.ensuring(Effect.sync(() => (running -= 1))))
      const report = await Effect.runPromise(evaluate(slow, data, [exactMatch()], { repetitions: 4, concurrency }))
      expect(report.summary.repetitions?.runs).toBe(8)
      return { calls, most }
    }
    expect(await measure(3)).toEqual({ calls: 8, most: 3 })
    expect(await measure(1)).toEqual({ calls: 8, most: 1 })
    expect(await measure(Number.POSITIVE_INFINITY)).toEqual({ calls: 8, most: 8 })
  })

  it("a run that fails is kept as that run's failure while the others score; the evaluation goes on", async () => {
    const down = new ModelError({ provider: "scripted", reason: "HTTP 503", status: 503, retryable: false })
    const once = scriptedModel([text("8"), down, text("8")])
    const report = await Effect.runPromise(Effect.flatMap(sum, (data) => evaluate(agent("a").model(once), data, [exactMatch()], { repetitions: 3 })))
    const row = report.cases[0]!
    expect(row.repetitions?.map((r) => r.status)).toEqual(["passed", "errored", "passed"])
    expect(row.repetitions?.[1]?.error).toContain("HTTP 503")
    expect(row.repetitions?.[1]?.output).toBeUndefined()
    expect(row.repetitions?.[1]?.scores.exact).toMatchObject({ score: 0, pass: false })
    expect(row.stats?.exact).toMatchObject({ mean: 2 / 3, passRate: 2 / 3, min: 0, max: 1 })
    expect(row.status).toBe("failed")
    expect(row.error).toBeUndefined()
    expect(report.summary.repetitions).toEqual({ perCase: 3, runs: 3, passed: 2, failed: 0, errored: 1 })
    expect(formatTable(report)).toContain("sum #2: ModelError")
    // Every run failing makes the case errored, with the first run's reason.
    const never = await Effect.runPromise(Effect.flatMap(sum, (data) => evaluate(agent("a").model(scriptedModel(down)), data, [exactMatch()], { repetitions: 2 })))
    expect(never.cases[0]!.status).toBe("errored")
    expect(never.cases[0]!.error).toMatch(/^all 2 repetitions errored; #1: ModelError.*HTTP 503/)
    expect(never.summary).toMatchObject({ errored: 1, repetitions: { runs: 2, errored: 2 } })
  })

  it("refuses repetitions that are not a whole number ≥ 1, plain JavaScript callers included; 1 is the report without repetitions", async () => {
    const data = await Effect.runPromise(sum)
    const upper = (input: string) => Effect.succeed(input === "3 + 5" ? "8" : input)
    for (const [repetitions, shown] of [[0, "0"], [-1, "-1"], [1.5, "1.5"], [Number.NaN, "NaN"], [Number.POSITIVE_INFINITY, "Infinity"], ["3", 'string "3"']] as const) {
      const call = () => evaluate(upper, data, [exactMatch()], { repetitions: repetitions as number })
      expect(call).toThrow(AgentConfigError)
      expect(call).toThrow(`Invalid evaluate(...): repetitions must be a whole number ≥ 1, got ${shown}`)
    }
    const once = await Effect.runPromise(evaluate(upper, data, [exactMatch()], { repetitions: 1 }))
    const plain = await Effect.runPromise(evaluate(upper, data, [exactMatch()]))
    const timeless = (r: typeof once) => ({ ...r, cases: r.cases.map((c) => ({ ...c, durationMs: 0 })), summary: { ...r.summary, durationMs: 0 } })
    expect(timeless(once)).toEqual(timeless(plain))
    expect(Object.keys(once.cases[0]!).sort()).toEqual(["durationMs", "expected", "id", "input", "output", "scores", "status", "toolCalls", "usage"])
    expect(once.summary.scorers.exact).toEqual({ mean: 1, passRate: 1 })
    expect("repetitions" in once.summary).toBe(false)
  })

  it("progress counts runs and names each one", async () => {
    const progress: Array<EvalProgress> = []
    const lines: Array<string> = []
    const terminal = terminalProgress({ write: (line) => lines.push(line) })
    await Effect.runPromise(Effect.flatMap(two, (data) =>
      evaluate(agent("flaky").model(model(true)), data, [exactMatch()], {
        repetitions: 2,
        onProgress: (p) => {
          progress.push(p)
          terminal(p)
        }
      })
    ))
    expect(progress.map((p) => [p.done, p.total, p.result.id, p.repetition, p.result.status])).toEqual([
      [1, 4, "sum", 1, "passed"],
      [2, 4, "sum", 2, "failed"],
      [3, 4, "greet", 1, "passed"],
      [4, 4, "greet", 2, "passed"]
    ])
    expect(lines).toEqual([
      "[1/4] 1 passed, 0 failed, 0 errored, 0 skipped  sum #1\n",
      "[2/4] 1 passed, 1 failed, 0 errored, 0 skipped  sum #2\n",
      "[3/4] 2 passed, 1 failed, 0 errored, 0 skipped  greet #1\n",
      "[4/4] 3 passed, 1 failed, 0 errored, 0 skipped  greet #2\n"
    ])
  })

  it("asks the budget once per case: a case that started runs all its repetitions, one past the limit runs none", async () => {
    const report = await Effect.runPromise(Effect.flatMap(two, (data) => evaluate(agent("a").model(model(false)), data, [exactMatch()], { repetitions: 3, budget: { maxCases: 1 } })))
    expect(report.cases.map((c) => [c.id, c.status, c.repetitions?.length])).toEqual([["sum", "passed", 3], ["greet", "skipped", undefined]])
    expect(report.cases[1]!.error).toBe("budget: maxCases 1")
    expect(report.summary).toMatchObject({ passed: 1, skipped: 1, repetitions: { perCase: 3, runs: 3, passed: 3 } })
  })

  it("compares reports with repetitions by their means (over every run) and case statuses (passed: every run passed)", async () => {
    const run = (flaky: boolean, repetitions: number) => Effect.runPromise(Effect.flatMap(two, (data) => evaluate(agent("a").model(model(flaky)), data, [exactMatch()], { repetitions })))
    const flaky = await run(true, 4)
    const steady = await run(false, 4)
    expect(flaky.summary.scorers.exact!.mean).toBe(0.75)
    const worse = compareReports(steady, flaky)
    expect(worse.regressions).toEqual([{ _tag: "Scorer", scorer: "exact", baseline: 1, current: 0.75 }, { _tag: "Case", id: "sum", baseline: "passed", current: "failed" }])
    expect(exitCodeOf(worse)).toBe(1)
    expect(formatComparison(worse)).toContain("REGRESSION exact: mean 1.000 → 0.750")
    const better = compareReports(flaky, steady)
    expect(better).toMatchObject({ ok: true, regressions: [], improvements: [{ _tag: "Scorer", scorer: "exact", baseline: 0.75, current: 1 }, { _tag: "Case", id: "sum" }] })
    // A baseline kept as JSON reads back with its runs, and different repetition counts compare too.
    const baseline = parseReport(reportJson(flaky))
    expect(baseline.cases[0]!.repetitions).toHaveLength(4)
    expect(compareReports(baseline, flaky).ok).toBe(true)
    const single = await run(false, 1)
    expect(compareReports(single, flaky).regressions).toEqual(worse.regressions)
  })
})

describe("repetition statistics", () => {
  const scores = fc.integer({ min: 2, max: 5 }).chain((n) =>
    fc.record({
      n: fc.constant(n),
      threshold: fc.double({ min: 0, max: 1, noNaN: true }),
      concurrency: fc.constantFrom(1, 3, Number.POSITIVE_INFINITY),
      matrix: fc.array(fc.array(fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 0.5, 1)), { minLength: n, maxLength: n }), { minLength: 1, maxLength: 4 })
    })
  )
  const direct = (values: ReadonlyArray<number>, threshold: number) => {
    const mean = values.reduce((a, b) => a + b, 0) / values.length
    return {
      mean,
      min: Math.min(...values),
      max: Math.max(...values),
      passRate: values.filter((v) => v >= threshold).length / values.length,
      stdDev: Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length)
    }
  }
  const expectStats = (got: unknown, want: ReturnType<typeof direct>) => {
    const stats = got as typeof want
    expect(stats.mean).toBeCloseTo(want.mean, 12)
    expect(stats.stdDev).toBeCloseTo(want.stdDev, 12)
    expect([stats.min, stats.max, stats.passRate]).toEqual([want.min, want.max, want.passRate])
  }

  test.prop([scores], { numRuns: Number(process.env.PROPERTY_RUNS ?? 100) })(
    "per case and overall, mean, min, max, standard deviation and pass rate are those of the runs' scores; every run is kept",
    async ({ concurrency, matrix, n, threshold }) => {
      const data = await Effect.runPromise(dataset("generated", matrix.map((_, i) => ({ input: i }))))
      const started = matrix.map(() => 0)
      // Each run answers its own number, and the scorer gives that run its generated score.
      const subject = (i: number) => Effect.sync(() => started[i]!++)
      const generated = scorer<number, number>("gen", ({ case: c, output }) => matrix[c.input]![output!]!, { threshold })
      const report = await Effect.runPromise(evaluate(subject, data, [generated], { repetitions: n, concurrency }))
      report.cases.forEach((c, i) => {
        const row = matrix[i]!
        expect(c.repetitions?.map((r) => r.scores.gen!.score)).toEqual(c.repetitions?.map((r) => row[r.output as number]))
        expect([...(c.repetitions ?? [])].map((r) => r.output).sort()).toEqual(row.map((_, k) => k))
        const want = direct(row, threshold)
        expectStats(c.stats?.gen, want)
        expect(c.scores.gen!.score).toBeCloseTo(want.mean, 12)
        expect(c.scores.gen!.pass).toBe(want.passRate === 1)
        expect(c.status).toBe(want.passRate === 1 ? "passed" : "failed")
      })
      expectStats(report.summary.scorers.gen, direct(matrix.flat(), threshold))
      expect(report.summary.repetitions).toMatchObject({ perCase: n, runs: matrix.length * n })
    }
  )
})
