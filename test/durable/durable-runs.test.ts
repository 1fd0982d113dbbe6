/**
 * Durable runs on the in-memory engine: one run per run id, polling, approvals decided by id (checked
 * as `resume` checks them), and the replays a decision causes reproducing the run.
 */
import { Effect, Exit, Layer, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, DecisionsInvalid, text, tool, toolCalls } from "../../src/index.ts"
import { ApprovalInbox, durable, memoryEngine, RunJournal, ToolIntents, ToolIntentsFailed } from "../../src/durable/index.ts"
import * as WorkflowEngines from "effect/workflow/WorkflowEngine"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf } from "../fixtures.ts"
import { makeBank } from "../approvals/bank.ts"

/** Runs `program` with `d`'s handler on a fresh in-memory engine. */
const onMemory = <A, E>(d: { readonly layer: Layer.Layer<never, never, any> }, program: Effect.Effect<A, E, any>): Promise<Exit.Exit<A, E>> =>
  Effect.runPromise(Effect.exit(program.pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine)))) as Effect.Effect<A, E>))

const counted = () => {
  let runs = 0
  const add = tool("add", {
    args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
    effect: "readOnly",
    run: ({ a, b }) => {
      runs++
      return a + b
    }
  })
  return { add, runs: () => runs }
}

const addScript = () => scriptedModel([toolCalls([{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }]), text("3")])

describe("durable(agent): one run per run id", () => {
  it("runs to the end; the same run id started again (or concurrently) is the same run", async () => {
    const { add, runs } = counted()
    const model = addScript()
    const d = durable(agent("calc").model(model).tools({ add }))
    const exit = await onMemory(d, Effect.gen(function*() {
      const [a, b] = yield* Effect.all([d.start("1+2?", { runId: "r1" }), d.start("1+2?", { runId: "r1" })], { concurrency: 2 })
      const first = yield* d.result(a)
      const again = yield* d.run("1+2?", { runId: "r1" })
      return { ids: [a, b], first, again }
    }))
    expect(exit).toEqual(Exit.succeed({ ids: ["r1", "r1"], first: { _tag: "Completed", output: "3" }, again: { _tag: "Completed", output: "3" } }))
    expect(runs()).toBe(1)
    expect(model.requests).toHaveLength(2)
  })

  it("generates distinct run ids when none is given, each its own run", async () => {
    const { add, runs } = counted()
    const model = scriptedModel((_) => text("ok"))
    const d = durable(agent("calc").model(model).tools({ add }))
    const exit = await onMemory(d, Effect.gen(function*() {
      const ids = yield* Effect.all([d.start("a"), d.start("b"), d.start("c")])
      yield* Effect.forEach(ids, d.result)
      return ids
    }))
    expect(Exit.isSuccess(exit) && new Set(exit.value).size).toBe(3)
    expect(model.requests).toHaveLength(3)
    expect(runs()).toBe(0)
  })

  it("poll: nothing for an unknown run, the output once done; a failed run's poll fails with its error", async () => {
    const { add } = counted()
    const d = durable(agent("calc").model(addScript()).tools({ add }))
    const exit = await onMemory(d, Effect.gen(function*() {
      const unknown = yield* d.poll("nope")
      yield* d.run("1+2?", { runId: "p1" })
      return { unknown, done: yield* d.poll("p1") }
    }))
    expect(exit).toEqual(Exit.succeed({ unknown: Option.none(), done: Option.some({ _tag: "Completed", output: "3" }) }))

    const broken = durable(agent("broken").model(scriptedModel([])))
    const failed = await onMemory(broken, Effect.gen(function*() {
      yield* Effect.exit(broken.run("hi", { runId: "f1" }))
      return yield* broken.poll("f1")
    }))
    expect(failureOf(failed)).toMatchObject({ _tag: "ModelError" })
  })

  it("a typed agent: the input and output go through its Schemas", async () => {
    const model = scriptedModel([toolCalls([{ name: "submit", arguments: { total: 7 } }])])
    const typed = agent("typed", { input: Schema.Struct({ items: Schema.Array(Schema.Finite) }), output: Schema.Struct({ total: Schema.Finite }) }).model(model)
    const d = durable(typed)
    const exit = await onMemory(d, d.run({ items: [3, 4] }, { runId: "t1" }))
    expect(exit).toEqual(Exit.succeed({ _tag: "Completed", output: { total: 7 } }))
    expect(model.requests[0]!.messages.at(-1)).toEqual({ role: "user", content: JSON.stringify({ items: [3, 4] }) })
  })
})

const pay = toolCalls([
  { id: "c1", name: "balance", arguments: {} },
  { id: "c2", name: "transfer", arguments: { to: "bob", amount: 500 } },
  { id: "c3", name: "balance", arguments: {} }
])

describe("durable approvals: decide(runId, decisions) from any process", () => {
  it("the run waits with its pending calls; an approval runs the call once and the run goes on", async () => {
    const model = scriptedModel([pay, text("paid")])
    const { bank, executed } = makeBank(model)
    const d = durable(bank)
    const exit = await onMemory(d, Effect.gen(function*() {
      const waiting = yield* d.run("pay bob 500", { runId: "a1" })
      const polled = yield* d.poll("a1")
      yield* d.decide("a1", { c2: Decision.approve })
      return { waiting, polled, done: yield* d.result("a1") }
    }))
    const waiting = { _tag: "Suspended", runId: "a1", pending: [{ id: "c2", tool: "transfer", args: { to: "bob", amount: 500 } }] }
    expect(exit).toEqual(Exit.succeed({ waiting, polled: Option.some(waiting), done: { _tag: "Completed", output: "paid" } }))
    // The replay after the decision read the first balance back instead of running it again.
    expect(executed).toEqual([
      { tool: "balance", args: {} },
      { tool: "transfer", args: { to: "bob", amount: 500 } },
      { tool: "balance", args: {} }
    ])
    expect(model.requests).toHaveLength(2)
  })

  it("its transcript is the one of the same run suspended and resumed in memory", async () => {
    const durableModel = scriptedModel([pay, text("paid")])
    const d = durable(makeBank(durableModel).bank)
    await onMemory(d, Effect.gen(function*() {
      yield* d.run("pay bob 500", { runId: "a2" })
      yield* d.decide("a2", { c2: Decision.edit({ to: "bob", amount: 250 }) })
      return yield* d.result("a2")
    }))
    const plainModel = scriptedModel([pay, text("paid")])
    const { bank } = makeBank(plainModel)
    await Effect.runPromise(Effect.gen(function*() {
      const first = yield* bank.runEffect("pay bob 500")
      if (first._tag !== "Suspended") throw new Error("expected a suspension")
      return yield* bank.resume(first.snapshot, { c2: Decision.edit({ to: "bob", amount: 250 }) })
    }))
    expect(durableModel.requests).toEqual(plainModel.requests)
  })

  it("a denial: the call never runs and the model is told", async () => {
    const model = scriptedModel([pay, text("not paid")])
    const { bank, executed } = makeBank(model)
    const d = durable(bank)
    const exit = await onMemory(d, Effect.gen(function*() {
      yield* d.run("pay bob 500", { runId: "a3" })
      yield* d.decide("a3", { c2: Decision.deny("too much") })
      return yield* d.result("a3")
    }))
    expect(exit).toEqual(Exit.succeed({ _tag: "Completed", output: "not paid" }))
    expect(executed.map((e) => e.tool)).toEqual(["balance", "balance"])
    expect(JSON.stringify(model.requests[1]!.messages)).toContain("too much")
  })

  it("decisions that do not fit are refused with DecisionsInvalid and leave the run waiting", async () => {
    const model = scriptedModel([pay, text("paid")])
    const { bank, executed } = makeBank(model)
    const d = durable(bank)
    const exit = await onMemory(d, Effect.gen(function*() {
      const none = yield* Effect.flip(d.decide("nobody", { c2: Decision.approve }))
      yield* d.run("pay bob 500", { runId: "a4" })
      const unknownCall = yield* Effect.flip(d.decide("a4", { c9: Decision.approve }))
      const missing = yield* Effect.flip(d.decide("a4", {}))
      const badEdit = yield* Effect.flip(d.decide("a4", { c2: Decision.edit({ to: "bob", amount: "lots" }) }))
      const still = yield* d.poll("a4")
      return { errors: [none, unknownCall, missing, badEdit], still }
    }))
    expect(Exit.isSuccess(exit)).toBe(true)
    if (!Exit.isSuccess(exit)) return
    for (const error of exit.value.errors) expect(error).toBeInstanceOf(DecisionsInvalid)
    expect(exit.value.errors[0]!.reason).toContain("waits for no decisions")
    expect(exit.value.errors[1]!.toolCallId).toBe("c9")
    expect(Option.getOrUndefined(exit.value.still)).toMatchObject({ _tag: "Suspended", pending: [{ id: "c2" }] })
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  })

  it("a second wait in the same run: each wait is decided on its own", async () => {
    const model = scriptedModel([
      toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]),
      toolCalls([{ id: "c2", name: "transfer", arguments: { to: "eve", amount: 700 } }]),
      text("both")
    ])
    const { bank, executed } = makeBank(model)
    const d = durable(bank)
    const exit = await onMemory(d, Effect.gen(function*() {
      yield* d.run("pay twice", { runId: "a5" })
      yield* d.decide("a5", { c1: Decision.approve })
      const second = yield* d.result("a5")
      yield* d.decide("a5", { c2: Decision.approve })
      return { second, done: yield* d.result("a5") }
    }))
    expect(exit).toEqual(Exit.succeed({
      second: { _tag: "Suspended", runId: "a5", pending: [{ id: "c2", tool: "transfer", args: { to: "eve", amount: 700 } }] },
      done: { _tag: "Completed", output: "both" }
    }))
    expect(executed.map((e) => e.args)).toEqual([{ to: "bob", amount: 500 }, { to: "eve", amount: 700 }])
  })
})

describe("the stores failing", () => {
  const flaky = (failures: number) =>
    Layer.effect(ToolIntents)(Effect.gen(function*() {
      const intents = yield* ToolIntents
      let left = failures
      return ToolIntents.of({
        ...intents,
        claim: (intent) =>
          Effect.suspend(() => (left-- > 0 ? Effect.fail(new ToolIntentsFailed({ operation: "claim", reason: "connection reset" })) : intents.claim(intent)))
      })
    })).pipe(Layer.provide(ToolIntents.memory))

  const payOnce = () => {
    let runs = 0
    const pay = tool("pay", { args: Schema.Struct({}), run: () => ++runs })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "pay", arguments: {} }]), text("paid")])
    return { d: durable(agent("payer").model(model).tools({ pay })), runs: () => runs }
  }

  const on = (d: { readonly layer: Layer.Layer<never, never, any> }, failures: number) =>
    d.layer.pipe(Layer.provideMerge(Layer.mergeAll(WorkflowEngines.layerMemory, flaky(failures), ApprovalInbox.memory, RunJournal.memory)))

  it("a store operation that fails a few times is retried, and the run goes on", async () => {
    const { d, runs } = payOnce()
    const exit = await Effect.runPromise(Effect.exit(d.run("pay", { runId: "flaky" }).pipe(Effect.provide(on(d, 2))) as Effect.Effect<unknown, unknown>))
    expect(exit).toEqual(Exit.succeed({ _tag: "Completed", output: "paid" }))
    expect(runs()).toBe(1)
  })

  it("a store that stays down fails the step (the tool never ran)", async () => {
    const { d, runs } = payOnce()
    const exit = await Effect.runPromise(Effect.exit(d.run("pay", { runId: "down" }).pipe(Effect.provide(on(d, 100))) as Effect.Effect<unknown, unknown>))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(runs()).toBe(0)
  }, 10_000)
})
