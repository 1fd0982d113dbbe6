/**
 * Every budget reason, with Effect's TestClock for time (no real sleeps).
 */
import { type Duration, Effect, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { agent, type BudgetThresholdEvent, Decision, ModelClient, skill, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"

const call = (name: string, args: unknown, id = `call_${name}`) => ({ id, name, arguments: args })

/** Runs `effect` under a TestClock, advancing it by `by` once the run is waiting. */
const withTestClock = <A, E>(effect: Effect.Effect<A, E>, by: Duration.Input) =>
  runExit(
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(effect)
      yield* TestClock.adjust(by)
      return yield* Fiber.join(fiber)
    }).pipe(Effect.provide(TestClock.layer()))
  )

describe("budget dimensions", () => {
  it("turns: stops before a model call past maxTurns", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel(toolCalls([call("add", { a: 1, b: 1 })]))
    const error = failureOf(await runExit(agent("a").model(model).tools({ add }).budget({ maxTurns: 2 }).runEffect("x")))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "turns", limit: 2, used: 2 })
    expect(model.requests).toHaveLength(2)
  })

  it("toolCalls: 32 by default, checked before each execution", async () => {
    const { add, addSpy } = makeCalculatorTools()
    const model = scriptedModel(toolCalls(Array.from({ length: 10 }, (_, i) => call("add", { a: i, b: 1 }, `c${i}`))))
    const error = failureOf(await runExit(agent("a").model(model).tools({ add }).budget({ maxTurns: 8 }).runEffect("x")))
    expect(error).toMatchObject({ reason: "toolCalls", limit: 32, used: 32 })
    expect(addSpy.calls).toHaveLength(32)
  })

  it("duration: bounds a model call that hangs, while it runs, and aborts it", async () => {
    let aborted = false
    const hanging = ModelClient.fromFunction(() =>
      Effect.callback<never>((_, signal) => {
        signal.addEventListener("abort", () => {
          aborted = true
        })
      })
    )
    const a = agent("a").model(hanging).budget({ maxDuration: "5 minutes" })
    const error = failureOf(await withTestClock(a.runEffect("x"), "5 minutes"))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "duration", limit: 300_000, used: 300_000 })
    expect(aborted).toBe(true)
  })

  it("duration: bounds a hung tool too, aborting its signal", async () => {
    let signal: AbortSignal | undefined
    const stuck = tool("stuck", {
      args: Schema.Struct({}),
      run: (_, context) => {
        signal = context.signal
        return new Promise<never>(() => {})
      }
    })
    const a = agent("a").model(scriptedModel([toolCalls([call("stuck", {})])])).tools({ stuck }).budget({ maxDuration: "1 minute" })
    const error = failureOf(await withTestClock(a.runEffect("x"), "1 minute"))
    expect(error).toMatchObject({ reason: "duration", limit: 60_000 })
    expect(signal?.aborted).toBe(true)
  })

  it("perToolTimeout: interrupts one slow tool while it runs and keeps the transcript", async () => {
    let signal: AbortSignal | undefined
    const slow = tool("slow", {
      args: Schema.Struct({}),
      run: (_, context) => {
        signal = context.signal
        return Effect.sleep("10 seconds").pipe(Effect.as("late"))
      }
    })
    const a = agent("a").model(scriptedModel([toolCalls([call("slow", {})])])).tools({ slow }).budget({ perToolTimeout: "2 seconds" })
    const error = failureOf(await withTestClock(a.runEffect("x"), "2 seconds"))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "perToolTimeout", limit: 2000 })
    if (error._tag !== "BudgetExceeded") throw error
    expect(error.transcript.at(-1)).toMatchObject({ role: "assistant", toolCalls: [{ name: "slow" }] })
    expect(signal?.aborted).toBe(true)
  })

  it("tokens: a response past the limit ends the run before its tool calls run", async () => {
    const { add, addSpy } = makeCalculatorTools()
    const model = scriptedModel([
      { _tag: "ToolCalls", calls: [call("add", { a: 1, b: 1 })], usage: { inputTokens: 60, outputTokens: 10 } },
      { _tag: "ToolCalls", calls: [call("add", { a: 2, b: 2 })], usage: { inputTokens: 80, outputTokens: 10 } }
    ])
    const error = failureOf(await runExit(agent("a").model(model).tools({ add }).budget({ maxTokens: 100 }).runEffect("x")))
    expect(error).toMatchObject({ reason: "tokens", limit: 100, used: 160 })
    expect(addSpy.calls).toEqual([{ a: 1, b: 1 }])
  })

  it("tokens: no call is made once the budget is used up exactly", async () => {
    const model = scriptedModel([{ _tag: "ToolCalls", calls: [], usage: { inputTokens: 90, outputTokens: 10 } }, text("never")])
    const error = failureOf(await runExit(agent("a").model(model).budget({ maxTokens: 100 }).runEffect("x")))
    expect(error).toMatchObject({ reason: "tokens", used: 100 })
    expect(model.requests).toHaveLength(1)
  })

  it("consecutiveTool: counts across turns and resets on a different tool", async () => {
    const { add, multiply, addSpy } = makeCalculatorTools()
    const model = scriptedModel([
      toolCalls([call("add", { a: 1, b: 1 }, "1"), call("add", { a: 1, b: 1 }, "2")]),
      toolCalls([call("multiply", { a: 1, b: 1 }, "3")]),
      toolCalls([call("add", { a: 1, b: 1 }, "4")]),
      toolCalls([call("add", { a: 1, b: 1 }, "5"), call("add", { a: 1, b: 1 }, "6")])
    ])
    const a = agent("a").model(model).tools({ add, multiply }).budget({ maxConsecutiveSameTool: 2 })
    const error = failureOf(await runExit(a.runEffect("x")))
    expect(error).toMatchObject({ reason: "consecutiveTool", limit: 2, used: 2 })
    expect(addSpy.calls).toHaveLength(4)
  })

  it("a model-routed skill choice counts as a turn", async () => {
    const { add, multiply } = makeCalculatorTools()
    const model = scriptedModel([toolCalls([call("choose_skill", { skill: "a" })])])
    const routed = agent("r")
      .model(model)
      .budget({ maxTurns: 1 })
      .tools({ add, multiply })
      .skills(({ add, multiply }) => [skill("a").tools(add), skill("m").tools(multiply)])
    const error = failureOf(await runExit(routed.runEffect("x")))
    expect(error).toMatchObject({ reason: "turns", limit: 1, used: 1 })
  })
})

describe("usage reported absurdly high", () => {
  // Finite counts whose sum is not (a provider's or a remote agent's report): spent in full, saturated,
  // never an `Infinity` that exhausts an unlimited budget or reads back from a snapshot as `null`.
  const huge = { inputTokens: 1e308, outputTokens: 1e308 }
  const approved = tool("approved", { args: Schema.Struct({}), needsApproval: true, run: () => "ok" })

  it("leaves an unlimited token budget unexhausted, through a snapshot and its resume", async () => {
    const model = scriptedModel([
      { ...toolCalls([{ id: "c1", name: "approved", arguments: {} }]), usage: huge },
      text("done", huge)
    ])
    const a = agent("a").model(model).tools({ approved })
    const first = await Effect.runPromise(a.runEffect("x"))
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const json = JSON.parse(JSON.stringify(first.snapshot))
    expect(json).toEqual(first.snapshot)
    expect(json.state.ledger.tokens).toBe(Number.MAX_VALUE)
    expect(await Effect.runPromise(a.resume(json, { c1: Decision.approve }))).toEqual({ _tag: "Completed", output: "done" })
  })

  it("still exceeds a finite token budget", async () => {
    const model = scriptedModel([{ ...toolCalls([{ id: "c1", name: "approved", arguments: {} }]), usage: huge }, text("done")])
    const error = failureOf(await runExit(agent("a").model(model).tools({ approved }).budget({ maxTokens: 1e6 }).runEffect("x")))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "tokens", limit: 1e6, used: Number.MAX_VALUE })
  })
})

describe("onBudgetThreshold", () => {
  it("fires once per reason when usage first reaches the threshold", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([...Array.from({ length: 4 }, (_, i) => toolCalls([call("add", { a: i, b: 1 }, `c${i}`)])), text("done")])
    const seen: Array<BudgetThresholdEvent> = []
    const a = agent("a")
      .model(model)
      .tools({ add })
      .budget({ maxTurns: 5, maxToolCalls: 5 })
      .onBudgetThreshold({}, (e) => {
        seen.push(e)
      })
    expect(await a.run("x")).toBe("done")
    expect(seen.map((e) => [e.reason, e.used, e.limit, e.usedPercent, e.threshold])).toEqual([
      ["turns", 4, 5, 80, 0.8],
      ["toolCalls", 4, 5, 80, 0.8]
    ])
  })

  it("supports several thresholds, each once", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([toolCalls([call("add", { a: 1, b: 1 })]), toolCalls([call("add", { a: 1, b: 1 })]), text("done")])
    const seen: Array<string> = []
    await agent("a")
      .model(model)
      .tools({ add })
      .budget({ maxTurns: 4 })
      .onBudgetThreshold({ threshold: 0.5 }, (e) => {
        seen.push(`${e.threshold}:${e.reason}:${e.used}`)
      })
      .onBudgetThreshold({ threshold: 0.75 }, (e) => {
        seen.push(`${e.threshold}:${e.reason}:${e.used}`)
      })
      .run("x")
    expect(seen).toEqual(["0.5:turns:2", "0.75:turns:3"])
  })

  it("refuses thresholds outside (0, 1]", () => {
    expect(() => agent("a").onBudgetThreshold({ threshold: 1.5 }, () => {})).toThrow(/threshold/)
  })
})
