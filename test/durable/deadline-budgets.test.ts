/**
 * `maxDuration` as a durable deadline (a wait for decisions bounded by it, a deadline passed while no
 * runner ran), approvals across a runner restart, and token and tool-call budgets holding across
 * replays (the replay reads back the usage it recorded).
 */
import { Deferred, Effect, Exit, Layer, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, BudgetExceeded, Decision, type LlmResponseInit, text, tool, toolCalls } from "../../src/index.ts"
import { durable, memoryEngine } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank } from "../approvals/bank.ts"
import { engineKinds, sharedStorage, sharedStores, startRunner } from "./harness.ts"

const transferCall = toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }])

const errorOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined => (Exit.isFailure(exit) ? Option.getOrUndefined(Exit.findErrorOption(exit)) : undefined)

describe.each(engineKinds)("maxDuration: a durable deadline (%s engine)", (engine) => {
  it("bounds a wait for decisions: nobody decides, the run ends with BudgetExceeded(duration) at the deadline", async () => {
    const { bank, executed } = makeBank(scriptedModel([transferCall, text("paid")]))
    const d = durable(bank.budget({ maxDuration: 300 }))
    const started = Date.now()
    const exit = await Effect.runPromise(Effect.exit(Effect.gen(function*() {
      const waiting = yield* d.run("pay bob", { runId: "late" })
      expect(waiting._tag).toBe("Suspended")
      return yield* d.join("late")
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))))))
    const error = errorOf(exit)
    expect(error).toBeInstanceOf(BudgetExceeded)
    expect(error).toMatchObject({ reason: "duration", limit: 300 })
    expect((error as BudgetExceeded).used).toBeGreaterThanOrEqual(300)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(executed).toEqual([])
  })

  it("a decision before the deadline: the run goes on", async () => {
    const { bank } = makeBank(scriptedModel([transferCall, text("paid")]))
    const d = durable(bank.budget({ maxDuration: 5000 }))
    const exit = await Effect.runPromise(Effect.exit(Effect.gen(function*() {
      yield* d.run("pay bob", { runId: "in-time" })
      yield* d.decide("in-time", { c1: Decision.approve })
      return yield* d.result("in-time")
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))))))
    expect(exit).toEqual(Exit.succeed({ _tag: "Completed", output: "paid" }))
  })

  it("a deadline passed while no runner ran: the next runner ends the run with BudgetExceeded(duration)", async () => {
    const { bank, executed } = makeBank(scriptedModel([transferCall, text("paid")]))
    // A budget a busy machine's first runner still suspends within (it must wait, not run out).
    const d = durable(bank.budget({ maxDuration: 2000 }))
    const exit = await Effect.runPromise(Effect.gen(function*() {
      const driver = yield* sharedStorage(engine)
      const stores = yield* sharedStores()
      const runner = () => d.layer.pipe(Layer.provideMerge(driver.engine()), Layer.provideMerge(Layer.succeedContext(stores)))
      const first = yield* startRunner(runner())
      const waiting = yield* d.run("pay bob", { runId: "down" }).pipe(Effect.provide(first.context))
      expect(waiting._tag).toBe("Suspended")
      yield* first.stop
      yield* Effect.sleep("2300 millis")
      const second = yield* startRunner(runner())
      const result = yield* Effect.exit(d.join("down").pipe(Effect.provide(second.context)))
      yield* second.stop
      return result
    }).pipe(Effect.timeout("20 seconds")))
    expect(errorOf(exit)).toMatchObject({ _tag: "BudgetExceeded", reason: "duration", limit: 2000 })
    expect(executed).toEqual([])
  }, 30_000)

  it("spans a restart from its recorded start: a run replayed after its deadline ends at once, without running its steps again", async () => {
    let runs = 0
    const entered = Deferred.makeUnsafe<void>()
    const look = tool("look", {
      args: Schema.Struct({}),
      effect: "readOnly",
      run: () => Effect.andThen(Effect.sync(() => ++runs), runs === 0 ? Effect.andThen(Deferred.succeed(entered, undefined), Effect.never) : Effect.succeed("seen"))
    })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "look", arguments: {} }]), text("done")])
    const d = durable(agent("looker").model(model).tools({ look }).budget({ maxDuration: 2000 }))
    const exit = await Effect.runPromise(Effect.gen(function*() {
      const driver = yield* sharedStorage(engine)
      const stores = yield* sharedStores()
      const runner = () => d.layer.pipe(Layer.provideMerge(driver.engine()), Layer.provideMerge(Layer.succeedContext(stores)))
      const first = yield* startRunner(runner())
      yield* d.start("look", { runId: "span" }).pipe(Effect.provide(first.context))
      yield* Deferred.await(entered)
      yield* first.stop
      yield* Effect.sleep("2300 millis")
      const second = yield* startRunner(runner())
      const result = yield* Effect.exit(d.result("span").pipe(Effect.provide(second.context)))
      yield* second.stop
      return result
    }).pipe(Effect.timeout("20 seconds")))
    expect(errorOf(exit)).toMatchObject({ _tag: "BudgetExceeded", reason: "duration", limit: 2000 })
    expect(runs).toBe(1)
    expect(model.requests).toHaveLength(1)
  }, 30_000)
})

describe.each(engineKinds)("approvals across a restart (%s engine)", (engine) => {
  it("a run waiting on runner A is decided through runner B and finishes there", async () => {
    const model = scriptedModel([transferCall, text("paid")])
    const { bank, executed } = makeBank(model)
    const d = durable(bank)
    const exit = await Effect.runPromise(Effect.gen(function*() {
      const driver = yield* sharedStorage(engine)
      const stores = yield* sharedStores()
      const runner = () => d.layer.pipe(Layer.provideMerge(driver.engine()), Layer.provideMerge(Layer.succeedContext(stores)))
      const first = yield* startRunner(runner())
      yield* d.run("pay bob", { runId: "restart" }).pipe(Effect.provide(first.context))
      yield* first.stop
      const second = yield* startRunner(runner())
      const waiting = yield* d.poll("restart").pipe(Effect.provide(second.context))
      yield* d.decide("restart", { c1: Decision.approve }).pipe(Effect.provide(second.context))
      const result = yield* d.result("restart").pipe(Effect.provide(second.context))
      yield* second.stop
      return { waiting, result }
    }).pipe(Effect.timeout("20 seconds"), Effect.exit))
    expect(exit).toEqual(Exit.succeed({
      waiting: Option.some({ _tag: "Suspended", runId: "restart", pending: [{ id: "c1", tool: "transfer", args: { to: "bob", amount: 500 } }] }),
      result: { _tag: "Completed", output: "paid" }
    }))
    expect(executed).toHaveLength(1)
    expect(model.requests).toHaveLength(2)
  }, 30_000)
})

/** Three turns of 100 tokens each, a tool call in each of the first two. */
const spending = (): ReadonlyArray<LlmResponseInit> => [
  { _tag: "ToolCalls", calls: [{ id: "c1", name: "look", arguments: {} }], usage: { inputTokens: 60, outputTokens: 40 } },
  { _tag: "ToolCalls", calls: [{ id: "c2", name: "look", arguments: {} }], usage: { inputTokens: 60, outputTokens: 40 } },
  { _tag: "Text", content: "done", usage: { inputTokens: 60, outputTokens: 40 } }
]

describe.each(engineKinds)("budgets across replays (%s engine)", (engine) => {
  it("maxTokens holds across a restart: the replay reads back the usage it recorded", async () => {
    let runs = 0
    const entered = Deferred.makeUnsafe<void>()
    const look = tool("look", {
      args: Schema.Struct({}),
      effect: "readOnly",
      run: () => Effect.suspend(() => (++runs === 2 ? Effect.andThen(Deferred.succeed(entered, undefined), Effect.never) : Effect.succeed("seen")))
    })
    const model = scriptedModel(spending())
    const limited = agent("spender").model(model).tools({ look }).budget({ maxTokens: 250 })
    const d = durable(limited)
    const exit = await Effect.runPromise(Effect.gen(function*() {
      const driver = yield* sharedStorage(engine)
      const stores = yield* sharedStores()
      const runner = () => d.layer.pipe(Layer.provideMerge(driver.engine()), Layer.provideMerge(Layer.succeedContext(stores)))
      const first = yield* startRunner(runner())
      yield* d.start("spend", { runId: "tokens" }).pipe(Effect.provide(first.context))
      yield* Deferred.await(entered)
      yield* first.stop
      const second = yield* startRunner(runner())
      const result = yield* Effect.exit(d.result("tokens").pipe(Effect.provide(second.context)))
      yield* second.stop
      return result
    }).pipe(Effect.timeout("20 seconds")))
    const plain = await Effect.runPromise(Effect.exit(agent("spender").model(scriptedModel(spending())).tools({ look: tool("look", { args: Schema.Struct({}), run: () => "seen" }) }).budget({ maxTokens: 250 }).runEffect("spend")))
    expect(errorOf(exit)).toMatchObject({ _tag: "BudgetExceeded", reason: "tokens", used: 300, limit: 250 })
    expect((errorOf(exit) as BudgetExceeded).transcript).toEqual((errorOf(plain) as BudgetExceeded).transcript)
    expect(model.requests).toHaveLength(3)
  }, 30_000)

  it("maxToolCalls holds across the replay a decision causes, as in the same run resumed in memory", async () => {
    const script = () =>
      scriptedModel([
        toolCalls([{ id: "c1", name: "balance", arguments: {} }]),
        toolCalls([{ id: "c2", name: "transfer", arguments: { to: "bob", amount: 500 } }]),
        toolCalls([{ id: "c3", name: "balance", arguments: {} }]),
        text("done")
      ])
    const { bank } = makeBank(script())
    const d = durable(bank.budget({ maxToolCalls: 2 }))
    const durableExit = await Effect.runPromise(Effect.exit(Effect.gen(function*() {
      yield* d.run("pay", { runId: "calls" })
      yield* d.decide("calls", { c2: Decision.approve })
      return yield* d.result("calls")
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))))))
    const plainBank = makeBank(script()).bank.budget({ maxToolCalls: 2 })
    const plainExit = await Effect.runPromise(Effect.exit(Effect.gen(function*() {
      const first = yield* plainBank.runEffect("pay")
      if (first._tag !== "Suspended") throw new Error("expected a suspension")
      return yield* plainBank.resume(first.snapshot, { c2: Decision.approve })
    })))
    const error = errorOf(durableExit) as BudgetExceeded
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "toolCalls", limit: 2 })
    const plain = errorOf(plainExit) as BudgetExceeded
    expect({ used: error.used, transcript: error.transcript }).toEqual({ used: plain.used, transcript: plain.transcript })
  })
})
