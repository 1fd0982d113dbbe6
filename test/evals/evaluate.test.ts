/**
 * evaluate: every case through the agent, graded by every scorer; tool calls and usage from the run's
 * events; concurrency, budget limits, timeouts, progress; a failing run or scorer never fails the
 * evaluation.
 */
import { Effect, References, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, ModelClient, type ModelRequest, text, tool, toolCalls } from "../../src/index.ts"
import { dataset, evaluate, type EvalProgress, exactMatch, latency, type Scorer, scorer, tokenCost, toolTrajectory } from "../../src/evals/index.ts"

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const add = tool("add", { description: "Add two numbers", args: Operands, run: ({ a, b }) => a + b })
const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, run: ({ a, b }) => a * b })

/** A stand-in model: parses "a + b" or "a * b" from the question, calls the tool, then answers the tool's result. */
const arithmetic = (delayMs = 0) =>
  ModelClient.fromFunction(async (request: ModelRequest) => {
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs))
    const last = request.messages.at(-1)!
    const usage = { inputTokens: 10, outputTokens: 5 }
    if (last.role === "tool") return { ...text(last.content), usage }
    const match = /(\d+) ([+*]) (\d+)/.exec(last.content)
    if (match === null) return { ...text("I cannot"), usage }
    const [, a, op, b] = match
    return { ...toolCalls([{ name: op === "+" ? "add" : "multiply", arguments: { a: Number(a), b: Number(b) } }]), usage }
  })

const calculator = agent("calculator").prompt("You are a calculator.").tools({ add, multiply }).budget({ maxTurns: 3 })

const cases = dataset("arithmetic", [
  { id: "sum", input: "3 + 5", expected: "8", tools: [{ tool: "add", args: { a: 3, b: 5 } }] },
  { id: "product", input: "3 * 5", expected: "15", tools: [{ tool: "multiply", args: { a: 3, b: 5 } }] },
  { id: "wrong", input: "2 + 2", expected: "5", tools: [{ tool: "add" }] },
  { id: "prose", input: "hello", expected: "hi", tools: [] }
])

describe("evaluate", () => {
  it("grades each case and summarises; tool calls and usage come from the run's events", async () => {
    const report = await Effect.runPromise(Effect.flatMap(cases, (data) => evaluate(calculator.model(arithmetic()), data, [exactMatch(), toolTrajectory(), tokenCost({ maxTokens: 100 })])))
    expect(report.cases.map((c) => [c.id, c.status])).toEqual([["sum", "passed"], ["product", "passed"], ["wrong", "failed"], ["prose", "failed"]])
    const sum = report.cases[0]!
    expect(sum.output).toBe("8")
    expect(sum.toolCalls).toEqual([{ tool: "add", args: { a: 3, b: 5 }, ok: true }])
    expect(sum.usage).toEqual({ inputTokens: 20, outputTokens: 10 })
    expect(report.cases[2]!.scores.exact).toEqual({ score: 0, pass: false, reason: 'expected "5", got "4"' })
    expect(report.cases[2]!.scores.trajectory!.pass).toBe(true)
    expect(report.summary).toMatchObject({ cases: 4, passed: 2, failed: 2, errored: 0, skipped: 0, usage: { inputTokens: 70, outputTokens: 35 } })
    expect(report.summary.scorers.exact).toEqual({ mean: 0.5, passRate: 0.5 })
    expect(report.name).toBe("arithmetic")
  })

  it("a failing run is an errored row, a throwing scorer a 0 with its reason; the evaluation goes on", async () => {
    const broken = ModelClient.fromFunction(() => {
      throw new Error("provider down")
    })
    const boom = scorer("boom", () => {
      throw new Error("scorer bug")
    })
    const report = await Effect.runPromise(Effect.flatMap(cases, (data) => evaluate(calculator.model(broken), data, [exactMatch(), boom])))
    expect(report.cases.every((c) => c.status === "errored")).toBe(true)
    expect(report.cases[0]!.error).toContain("ModelError")
    expect(report.cases[0]!.error).toContain("provider down")
    expect(report.cases[0]!.scores.boom).toMatchObject({ score: 0, pass: false })
    expect(report.cases[0]!.scores.boom!.reason).toContain("scorer bug")
  })

  it("runs cases concurrently up to the limit, and reports progress once per case", async () => {
    const many = await Effect.runPromise(dataset("many", Array.from({ length: 8 }, (_, i) => ({ input: `${i} + 1`, expected: String(i + 1) }))))
    const progress: Array<EvalProgress> = []
    const time = async (concurrency: number) => {
      const start = Date.now()
      const report = await Effect.runPromise(evaluate(calculator.model(arithmetic(40)), many, [exactMatch()], { concurrency, onProgress: (p) => progress.push(p) }))
      expect(report.summary.passed).toBe(8)
      return Date.now() - start
    }
    const serial = await time(1)
    const parallel = await time(8)
    expect(serial).toBeGreaterThanOrEqual(8 * 2 * 40 - 20)
    expect(parallel).toBeLessThan(serial / 2)
    expect(progress.map((p) => p.done)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8])
    expect(progress.every((p) => p.total === 8)).toBe(true)
  })

  it("refuses a concurrency that is not a whole number of cases (1.5 ran two at once, NaN or 0 one)", async () => {
    const one = await Effect.runPromise(dataset("one", [{ input: "1 + 1", expected: "2" }]))
    for (const concurrency of [1.5, Number.NaN, 0, -2]) {
      expect(() => evaluate(calculator.model(arithmetic(0)), one, [exactMatch()], { concurrency })).toThrow(/concurrency must be a whole number/)
    }
    const report = await Effect.runPromise(evaluate(calculator.model(arithmetic(0)), one, [exactMatch()], { concurrency: Number.POSITIVE_INFINITY }))
    expect(report.summary.passed).toBe(1)
  })

  it("stops starting cases at the budget: maxCases, maxTokens, maxUsd", async () => {
    const run = (budget: Parameters<typeof evaluate>[3]) => Effect.runPromise(Effect.flatMap(cases, (data) => evaluate(calculator.model(arithmetic()), data, [exactMatch()], budget)))
    const byCases = await run({ budget: { maxCases: 1 } })
    expect(byCases.cases.map((c) => c.status)).toEqual(["passed", "skipped", "skipped", "skipped"])
    expect(byCases.cases[1]!.error).toBe("budget: maxCases 1")
    expect(byCases.summary.skipped).toBe(3)
    // Each tool case spends 30 tokens: the third case would start at 60.
    const byTokens = await run({ budget: { maxTokens: 60 } })
    expect(byTokens.cases.map((c) => c.status)).toEqual(["passed", "passed", "skipped", "skipped"])
    expect(byTokens.cases[2]!.error).toBe("budget: 60 tokens spent (maxTokens 60)")
    const byUsd = await run({ budget: { maxUsd: 70e-6, pricing: { inputPerMillion: 1, outputPerMillion: 2 } } })
    // 40 µ$ per tool case: the third would start at 80 µ$.
    expect(byUsd.cases.map((c) => c.status)).toEqual(["passed", "passed", "skipped", "skipped"])
    // Skipped cases do not count in the means.
    expect(byTokens.summary.scorers.exact!.mean).toBe(1)
  })

  it("times out a slow case as errored, and measures latency", async () => {
    const report = await Effect.runPromise(
      Effect.flatMap(cases, (data) => evaluate(calculator.model(arithmetic(60)), data, [latency({ maxMs: 10_000 })], { caseTimeout: "50 millis", budget: { maxCases: 1 } }))
    )
    expect(report.cases[0]!.status).toBe("errored")
    expect(report.cases[0]!.error).toMatch(/timeout|timed out/i)
    const ok = await Effect.runPromise(Effect.flatMap(cases, (data) => evaluate(calculator.model(arithmetic(20)), data, [latency({ maxMs: 1 })], { budget: { maxCases: 1 } })))
    expect(ok.cases[0]!.durationMs).toBeGreaterThanOrEqual(30)
    expect(ok.cases[0]!.scores.latency!.pass).toBe(false)
    expect(ok.cases[0]!.scores.latency!.score).toBeLessThan(0.1)
  })

  it("evaluates a plain function too", async () => {
    const data = await Effect.runPromise(dataset("upper", [{ input: "a", expected: "A" }, { input: "b", expected: "B" }]))
    const report = await Effect.runPromise(evaluate((input: string) => Effect.succeed(input.toUpperCase()), data, [exactMatch()]))
    expect(report.summary.passed).toBe(2)
    expect(report.cases[0]!.toolCalls).toEqual([])
  })
  it("a scorer whose score function throws before returning an Effect is a 0 with its reason, not a crash", async () => {
    // Scorer is an interface: a hand-written one (or a judge given an output JSON cannot hold) may throw.
    const careless: Scorer = {
      name: "careless",
      score: ({ output }) => {
        if (output === "15") throw new Error("careless scorer bug")
        return Effect.succeed({ score: 1, pass: true })
      }
    }
    const report = await Effect.runPromise(Effect.flatMap(cases, (data) => evaluate(calculator.model(arithmetic()), data, [exactMatch(), careless])))
    expect(report.cases.map((c) => c.id)).toEqual(["sum", "product", "wrong", "prose"])
    expect(report.cases[1]!.scores.careless).toMatchObject({ score: 0, pass: false })
    expect(report.cases[1]!.scores.careless!.reason).toContain("careless scorer bug")
    expect(report.cases[1]!.status).toBe("failed")
    expect(report.cases[0]!.scores.careless).toEqual({ score: 1, pass: true })
  })

  it("a throwing onProgress does not stop the evaluation: every case runs and is reported", async () => {
    const report = await Effect.runPromise(Effect.flatMap(cases, (data) =>
      evaluate(calculator.model(arithmetic()), data, [exactMatch()], {
        onProgress: () => {
          throw new Error("progress display bug")
        }
      })
    ).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
    expect(report.cases.map((c) => c.status)).toEqual(["passed", "passed", "failed", "failed"])
  })
})
