/**
 * Claims of mutating calls with owners and leases, in one process: a claim held by another worker
 * that still works (its lease renewed) is waited for, and its outcome used, never reconciled; an
 * expired lease (the owner stopped renewing) goes to reconciliation; an interrupted call that ignores
 * its signal is waited for and its outcome still written beside the claim.
 */
import { Context, Effect, Fiber, Layer, Option, Schema } from "effect"
import * as WorkflowEngines from "effect/workflow/WorkflowEngine"
import { describe, expect, it } from "vitest"
import { agent, AgentConfigError, text, tool, toolCalls } from "../../src/index.ts"
import { ApprovalInbox, durable, Reconciled, RunJournal, ToolIntents } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

/** Another worker's id: another host, so only its lease says whether it still works. */
const other = "elsewhere|pid:[1]|4242|x"

const payAgent = (pays: Array<string>, options: { readonly slowMs?: number } = {}) => {
  const pay = tool("pay", {
    args: Schema.Struct({ to: Schema.String }),
    // A Promise that ignores its signal, as a `fetch` without one.
    run: async ({ to }) => {
      if (options.slowMs !== undefined) await new Promise((r) => setTimeout(r, options.slowMs))
      pays.push(to)
      return `paid ${to}`
    }
  })
  const model = scriptedModel([toolCalls([{ id: "c1", name: "pay", arguments: { to: "bob" } }]), text("done")])
  return agent("payer").model(model).tools({ pay })
}

const key = (runId: string) => `tool/${runId}/1/c1`

const withStores = <A, E>(program: (intents: ToolIntents["Service"], layer: Layer.Layer<any>) => Effect.Effect<A, E, any>): Promise<A> =>
  Effect.gen(function*() {
    const stores = yield* Layer.build(Layer.mergeAll(ToolIntents.memory, ApprovalInbox.memory, RunJournal.memory))
    const layer = Layer.mergeAll(WorkflowEngines.layerMemory, Layer.succeedContext(stores))
    return yield* program(Context.get(stores, ToolIntents), layer)
  }).pipe(Effect.scoped, Effect.timeout("20 seconds"), (effect) => Effect.runPromise(effect as Effect.Effect<A, unknown>))

describe("mutating calls: owners and leases", () => {
  it("a claim whose owner still renews its lease is waited for; its outcome is used and the tool never runs here", async () => {
    const pays: Array<string> = []
    let reconciled = 0
    const d = durable(payAgent(pays), { reconcile: () => Effect.sync(() => (reconciled++, Reconciled.runAgain)) })
    const out = await withStores((intents, layer) =>
      Effect.gen(function*() {
        // The other worker claimed the call and is still in it (its lease renewed every 100 ms).
        yield* intents.claim({ key: key("r1"), runId: "r1", tool: "pay", toolCallId: "c1" }, { owner: other, ms: 300 })
        const renewing = yield* Effect.forkDetach(Effect.forever(Effect.andThen(Effect.sleep("100 millis"), intents.renew(key("r1"), { owner: other, ms: 300 }))))
        const run = yield* Effect.forkChild(d.run("pay bob", { runId: "r1" }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(layer)))))
        yield* Effect.sleep("1200 millis")
        const stillWaiting = run.pollUnsafe() === undefined
        // The other worker's call ends: it writes its outcome, and stops renewing.
        yield* intents.finish(key("r1"), { _tag: "Succeeded", value: "paid bob (elsewhere)" })
        yield* Fiber.interrupt(renewing)
        const result = yield* Fiber.join(run)
        return { stillWaiting, result }
      })
    )
    expect(out.stillWaiting).toBe(true)
    expect(out.result).toEqual({ _tag: "Completed", output: "done" })
    expect(pays).toEqual([])
    expect(reconciled).toBe(0)
  })

  it("a claim whose lease expired (its owner stopped renewing) is taken over and reconciled", async () => {
    const pays: Array<string> = []
    let reconciled = 0
    const d = durable(payAgent(pays), { reconcile: () => Effect.sync(() => (reconciled++, Reconciled.runAgain)) })
    const result = await withStores((intents, layer) =>
      Effect.gen(function*() {
        yield* intents.claim({ key: key("r2"), runId: "r2", tool: "pay", toolCallId: "c1" }, { owner: other, ms: 300 })
        const result = yield* d.run("pay bob", { runId: "r2" }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(layer))))
        const claim = yield* intents.read(key("r2"))
        return { result, claim: Option.getOrThrow(claim) }
      })
    )
    expect(result.result).toEqual({ _tag: "Completed", output: "done" })
    expect(reconciled).toBe(1)
    expect(pays).toEqual(["bob"])
    expect(result.claim._tag).toBe("Finished")
  })

  it("an interrupted call that ignores its signal is waited for, and what it ended with is written beside its claim", async () => {
    const pays: Array<string> = []
    const d = durable(payAgent(pays, { slowMs: 600 }))
    const out = await withStores((intents, layer) =>
      Effect.gen(function*() {
        const run = yield* Effect.forkChild(d.run("pay bob", { runId: "r3" }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(layer)))))
        yield* Effect.sleep("200 millis")
        const during = Option.getOrThrow(yield* intents.read(key("r3")))
        const started = Date.now()
        yield* Fiber.interrupt(run)
        const waitedMs = Date.now() - started
        const after = Option.getOrThrow(yield* intents.read(key("r3")))
        return { during, waitedMs, after }
      })
    )
    expect(out.during).toMatchObject({ _tag: "Claimed", leaseLive: true })
    expect(out.waitedMs).toBeGreaterThan(250)
    expect(pays).toEqual(["bob"])
    expect(out.after).toMatchObject({ _tag: "Finished", outcome: { _tag: "Succeeded", value: "paid bob" } })
  })

  it("a lease that is not a positive finite duration is refused when the durable agent is made", () => {
    for (const lease of [-1, 0, Number.NaN, "soon" as never, Infinity]) {
      expect(() => durable(payAgent([]), { lease })).toThrow(AgentConfigError)
    }
    expect(() => durable(payAgent([]), { lease: "2 seconds" })).not.toThrow()
  })
})

