/**
 * A durable run calling an agent as a tool whose child needs approval: the run suspends durably (its
 * child's suspension is the call's recorded outcome), is listed as waiting with the child's pending
 * call, is decided through the durable approval inbox, and resumes the child once: across a runner
 * stopped while it waits, too.
 */
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, text, toolCalls } from "../../src/index.ts"
import { durable, memoryEngine } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank } from "../approvals/bank.ts"
import { engineKinds, sharedStorage, sharedStores, startRunner } from "./harness.ts"

const caller = () => {
  const child = makeBank(scriptedModel([toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("child paid")]))
  let childRuns = 0
  const model = scriptedModel([toolCalls([{ id: "p1", name: "pay", arguments: { input: "pay bob 500" } }]), text("caller done")])
  const front = agent("front").model(model).tools({ pay: child.bank.onRunStart(() => void childRuns++).asTool({ name: "pay" }) })
  return { child, front, model, childRuns: () => childRuns }
}

describe.each(engineKinds)("a durable run whose agent-as-tool's child needs approval (%s engine)", (engine) => {
  it("suspends durably, is listed as waiting with the child's call, is decided through the inbox, and resumes the child once", async () => {
    const { child, front, model } = caller()
    const d = durable(front)
    const out = await Effect.gen(function*() {
      const first = yield* d.run("go", { runId: "cr-1" })
      const listed = yield* d.list({ status: "waiting" })
      yield* d.decide("cr-1", { "p1/k1": Decision.approve })
      const output = yield* d.join("cr-1")
      const journal = yield* d.journal("cr-1")
      return { first, listed, output, journal }
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("10 seconds"), Effect.runPromise)
    expect(out.first).toMatchObject({ _tag: "Suspended", runId: "cr-1", pending: [{ id: "p1/k1", tool: "transfer", args: { to: "bob", amount: 500 } }] })
    expect(out.listed).toMatchObject([{ runId: "cr-1", status: "waiting", pending: [{ id: "p1/k1", tool: "transfer" }] }])
    expect(out.output).toBe("caller done")
    expect(child.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(model.requests).toHaveLength(2)
    expect(model.requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["child paid"])
    const called = out.journal.entries.filter((e) => e._tag === "ToolCalled" && e.tool === "pay")
    expect(called).toHaveLength(1)
  })

  it("a denial reaches the child: its transfer never runs; a wrong decision is refused before anything runs", async () => {
    const { child, front } = caller()
    const d = durable(front)
    const out = await Effect.gen(function*() {
      yield* d.run("go", { runId: "cr-2" })
      const wrong = yield* Effect.flip(d.decide("cr-2", { k1: Decision.approve }))
      yield* d.decide("cr-2", { "p1/k1": Decision.deny("no") })
      return { wrong, output: yield* d.join("cr-2") }
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("10 seconds"), Effect.runPromise)
    expect(out.wrong._tag).toBe("DecisionsInvalid")
    expect(out.output).toBe("caller done")
    expect(child.executed).toEqual([])
  })

  it("across a runner stopped while the run waits: a fresh runner resumes the child once with the decision", async () => {
    const { child, front, childRuns } = caller()
    const d = durable(front)
    const output = await Effect.gen(function*() {
      const driver = yield* sharedStorage(engine)
      const stores = yield* sharedStores()
      const runner = () => d.layer.pipe(Layer.provideMerge(driver.engine()), Layer.provideMerge(Layer.succeedContext(stores)))
      const first = yield* startRunner(runner())
      const waiting = yield* d.run("go", { runId: "cr-3" }).pipe(Effect.provide(first.context))
      expect(waiting._tag).toBe("Suspended")
      yield* first.stop
      const second = yield* startRunner(runner())
      yield* d.decide("cr-3", { "p1/k1": Decision.approve }).pipe(Effect.provide(second.context))
      const output = yield* d.join("cr-3").pipe(Effect.provide(second.context))
      yield* second.stop
      return output
    }).pipe(Effect.timeout("20 seconds"), Effect.runPromise)
    expect(output).toBe("caller done")
    expect(child.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
    // The child started once and was resumed once (a resume is no RunStart).
    expect(childRuns()).toBe(1)
  })
})
