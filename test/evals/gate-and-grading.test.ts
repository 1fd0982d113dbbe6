/**
 * What a CI gate and a grade must not hide: a baseline's passing case that did not run today (skipped
 * by a budget, missing) and a scorer that graded nothing are regressions; a plain-JavaScript async
 * scorer is refused with its reason, never a silent 0 nor an unhandled rejection; tokens spent by a
 * failed model call count (in the row, the scorers' trace and the budget); `caseTimeout` bounds a
 * hanging judge; a judge giving two different verdicts is refused, prose before a verdict is read;
 * a report with a cyclic, Map or Date output is written; a duplicate id names its line in the file.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { agent, ModelClient, ModelError, text } from "../../src/index.ts"
import {
  compareReports,
  dataset,
  datasetFromJsonl,
  evaluate,
  exactMatch,
  exitCodeOf,
  formatComparison,
  llmJudge,
  parseReport,
  reportJson,
  scorer,
  tokenCost
} from "../../src/evals/index.ts"
import { parseLenientJson, parseLenientJsonValues } from "../../src/internal/lenient-json.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const three = Effect.runSync(dataset("sums", [{ id: "a", input: "1+1?", expected: "2" }, { id: "b", input: "2+2?", expected: "4" }, { id: "c", input: "3+3?", expected: "6" }]))
const answering = (answers: Record<string, string>) => (input: string) => Effect.succeed(answers[input] ?? "?")
const right = answering({ "1+1?": "2", "2+2?": "4", "3+3?": "6" })

describe("compareReports when cases did not run", () => {
  const baseline = Effect.runSync(evaluate(right, three, [exactMatch()]))

  it("a case that passed and is skipped today is a regression, and so is a scorer that graded nothing", () => {
    const nothing = Effect.runSync(evaluate(right, three, [exactMatch()], { budget: { maxCases: 0 } }))
    const comparison = compareReports(baseline, nothing)
    expect(comparison.ok).toBe(false)
    expect(exitCodeOf(comparison)).toBe(1)
    expect(comparison.regressions).toEqual(expect.arrayContaining([
      { _tag: "Case", id: "a", baseline: "passed", current: "skipped" },
      { _tag: "MissingScorer", scorer: "exact", baseline: 1 }
    ]))
    expect(comparison.missingScorers).toEqual(["exact"])
    expect(formatComparison(comparison)).toContain("REGRESSION case a: passed → skipped")
  })

  it("two of three skipped by the budget fails the gate even though the scorer's mean held", () => {
    const partial = Effect.runSync(evaluate(right, three, [exactMatch()], { budget: { maxCases: 1 } }))
    const comparison = compareReports(baseline, partial)
    expect(comparison.ok).toBe(false)
    expect(comparison.regressions.map((r) => r._tag === "Case" ? `${r.id}:${r.current}` : r._tag)).toEqual(["b:skipped", "c:skipped"])
  })

  it("a passing case missing from today's report is a regression; a new case and a new scorer are only listed", () => {
    const two = Effect.runSync(dataset("sums", [{ id: "a", input: "1+1?", expected: "2" }, { id: "d", input: "4+4?", expected: "8" }]))
    const today = Effect.runSync(evaluate(answering({ "1+1?": "2", "4+4?": "8" }), two, [exactMatch(), scorer("short", () => true)]))
    const comparison = compareReports(baseline, today)
    expect(comparison.regressions).toEqual([{ _tag: "Case", id: "b", baseline: "passed", current: "missing" }, { _tag: "Case", id: "c", baseline: "passed", current: "missing" }])
    expect(comparison.newCases).toEqual(["d"])
    expect(comparison.newScorers).toEqual(["short"])
  })

  it("an unchanged run still passes", () => {
    expect(compareReports(baseline, Effect.runSync(evaluate(right, three, [exactMatch()]))).ok).toBe(true)
  })
})

describe("scorers written in plain JavaScript", () => {
  it("an async scorer is refused with its reason, and its rejection is never unhandled", async () => {
    const unhandled: Array<unknown> = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on("unhandledRejection", onUnhandled)
    try {
      const resolving = scorer("resolving", (async () => true) as never)
      const rejecting = scorer("rejecting", (async () => {
        throw new Error("judge down")
      }) as never)
      const report = await Effect.runPromise(evaluate(right, three, [resolving, rejecting]))
      await new Promise((resolve) => setTimeout(resolve, 20))
      const row = report.cases[0]!
      expect(row.scores.resolving).toMatchObject({ score: 0, pass: false, reason: expect.stringContaining("returned a Promise") })
      expect(row.scores.rejecting).toMatchObject({ score: 0, pass: false, reason: expect.stringContaining("Effect.promise") })
      expect(unhandled).toEqual([])
    } finally {
      process.off("unhandledRejection", onUnhandled)
    }
  })

  it("a scorer returning something that is not a score is refused, not spread into one", async () => {
    const odd = scorer("odd", (() => ({ verdict: "good" })) as never)
    const report = await Effect.runPromise(evaluate(right, three, [odd]))
    expect(report.cases[0]!.scores.odd).toMatchObject({ score: 0, pass: false, reason: expect.stringContaining("not a number, a boolean or a Score") })
  })
})

describe("tokens spent by a failed model call", () => {
  const truncating = agent("t").model({
    chat: () => Effect.fail(new ModelError({ provider: "openai", reason: "cut off", kind: "length", retryable: false, usage: { inputTokens: 96, outputTokens: 4500 } }))
  })

  it("count in the row, the trace scorers see, and the budget", async () => {
    const report = await Effect.runPromise(evaluate(truncating, three, [tokenCost({ maxTokens: 1000 })], { budget: { maxTokens: 1000 } }))
    const [a, b, c] = report.cases
    expect(a).toMatchObject({ status: "errored", usage: { inputTokens: 96, outputTokens: 4500 } })
    expect(a!.scores.cost?.pass).toBe(false)
    expect(b!.status).toBe("skipped")
    expect(c!.status).toBe("skipped")
    expect(report.summary.usage).toEqual({ inputTokens: 96, outputTokens: 4500 })
  })

  it("are counted once when successful calls came before", async () => {
    let calls = 0
    const model = ModelClient.fromFunction(() => {
      if (++calls === 1) return text("thinking", { inputTokens: 10, outputTokens: 5 })
      throw new ModelError({ provider: "p", reason: "cut off", kind: "length", retryable: false, usage: { inputTokens: 20, outputTokens: 7 } })
    })
    const twice = (input: string) => Effect.gen(function*() {
      yield* model.chat({ messages: [{ role: "user", content: input }], tools: [] })
      return yield* model.chat({ messages: [{ role: "user", content: input }], tools: [] })
    })
    const one = Effect.runSync(dataset("one", [{ id: "x", input: "q" }]))
    const report = await Effect.runPromise(evaluate(twice, one, []))
    // A function subject has no events: only the failed call's tokens are known.
    expect(report.cases[0]!.usage).toEqual({ inputTokens: 20, outputTokens: 7 })
    const agentReport = await Effect.runPromise(evaluate(agent("a").model(scriptedModel([text("x", { inputTokens: 10, outputTokens: 5 })])), one, []))
    expect(agentReport.cases[0]!.usage).toEqual({ inputTokens: 10, outputTokens: 5 })
  })
})

describe("caseTimeout", () => {
  it("bounds a scorer that never finishes: it scores 0 with the reason and the evaluation ends", async () => {
    const hanging = scorer("judge", () => Effect.never)
    const report = await Effect.runPromise(evaluate(right, three, [hanging, exactMatch()], { caseTimeout: "50 millis" }))
    expect(report.cases).toHaveLength(3)
    expect(report.cases[0]!.scores.judge).toMatchObject({ score: 0, pass: false, reason: expect.stringContaining("caseTimeout") })
    expect(report.cases[0]!.scores.exact?.pass).toBe(true)
  }, 10_000)
})

describe("llmJudge reading its verdict", () => {
  const one = Effect.runSync(dataset("d", [{ id: "one", input: "2+2?", expected: "4" }]))
  const five = (_: string) => Effect.succeed("5")
  const judged = async (reply: string) => {
    const report = await Effect.runPromise(evaluate(five, one, [llmJudge({ model: scriptedModel(text(reply)), rubric: "The sum is right." })]))
    return report.cases[0]!.scores.judge
  }

  it("refuses a reply with two different verdicts (an example, then the real one)", async () => {
    const score = await judged('A perfect answer would get {"score": 1, "reason": "correct"}. This one says 5, so: {"score": 0, "reason": "wrong sum"}')
    expect(score).toMatchObject({ score: 0, pass: false, reason: expect.stringContaining("2 different verdicts") })
  })

  it("reads a verdict after a bracketed aside that is not JSON", async () => {
    expect(await judged('[Step 1] compare 5 with 4. Verdict: {"score": 0.25, "reason": "wrong sum"}')).toMatchObject({ score: 0.25, reason: "wrong sum" })
  })

  it("accepts the same verdict given twice", async () => {
    expect(await judged('{"score": 1, "reason": "ok"} Again: {"reason": "ok", "score": 1}')).toMatchObject({ score: 1, pass: true })
  })
})

describe("reportJson", () => {
  it("writes a cyclic output, and a Map's entries and a Date's time", () => {
    const cyclic: Record<string, unknown> = { name: "loop" }
    cyclic.self = cyclic
    const outputs: Record<string, unknown> = { "1+1?": cyclic, "2+2?": new Map([["k", 1]]), "3+3?": new Date("2020-01-02T03:04:05.000Z") }
    const report = Effect.runSync(evaluate((input: string) => Effect.succeed(outputs[input]), three, []))
    const text = reportJson(report)
    const parsed = parseReport(text)
    expect(parsed.cases.map((c) => c.output)).toEqual([{ name: "loop", self: "[cycle]" }, { k: 1 }, "2020-01-02T03:04:05.000Z"])
  })
})

describe("datasets from JSON Lines", () => {
  it("a duplicate id names its line in the file, blank lines counted", () => {
    const exit = Effect.runSyncExit(datasetFromJsonl('{"id":"a","input":1}\n\n\n{"id":"b","input":2}\n\n{"id":"a","input":3}\n'))
    expect(exit._tag === "Failure" && exit.cause.reasons[0]).toMatchObject({ error: { _tag: "DatasetError", line: 6, reason: 'duplicate case id "a"' } })
  })
})

describe("lenient JSON stays bounded and keeps its first-value reading", () => {
  it("reads the first value that parses, every value, and gives up fast on unbalanced openings", () => {
    expect(parseLenientJson('Here: {"a": 1,} and {"b": 2}')).toEqual({ value: { a: 1 } })
    expect(parseLenientJsonValues('[note] {"a": 1} then [2, 3]')).toEqual([{ a: 1 }, [2, 3]])
    const started = performance.now()
    expect(parseLenientJson(`${"[".repeat(50_000)} {"a": 1}`)).toBeUndefined()
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})
