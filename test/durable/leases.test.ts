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


describe("the hand-over wait for a mutating call in flight is bounded (handOverWait)", () => {
  /** Another worker holds the claim and renews it for ever: its call hangs. */
  const hung = (intents: ToolIntents["Service"], runId: string) =>
    Effect.gen(function*() {
      yield* intents.claim({ key: key(runId), runId, tool: "pay", toolCallId: "c1" }, { owner: other, ms: 300 })
      return yield* Effect.forkDetach(Effect.forever(Effect.andThen(Effect.sleep("100 millis"), intents.renew(key(runId), { owner: other, ms: 300 }))))
    })

  it("after the bound, the call's outcome is unknown: OutcomeUnknown without a handler, the tool never runs here, and the claim is fenced (the old owner can no longer renew it)", async () => {
    const pays: Array<string> = []
    const d = durable(payAgent(pays), { handOverWait: "600 millis" })
    const out = await withStores((intents, layer) =>
      Effect.gen(function*() {
        const renewing = yield* hung(intents, "h1")
        const started = Date.now()
        const exit = yield* Effect.exit(d.run("pay bob", { runId: "h1" }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(layer)))))
        const tookMs = Date.now() - started
        yield* Fiber.interrupt(renewing)
        const renewByOld = yield* intents.renew(key("h1"), { owner: other, ms: 300 })
        return { exit, tookMs, renewByOld }
      })
    )
    expect(out.exit._tag).toBe("Failure")
    expect(String(out.exit._tag === "Failure" ? out.exit.cause : "")).toMatch(/OutcomeUnknown[\s\S]*still running it after/)
    expect(out.tookMs).toBeGreaterThanOrEqual(550)
    expect(out.tookMs).toBeLessThan(5000)
    expect(pays).toEqual([])
    expect(out.renewByOld).toBe(false)
  })

  it("the reconcile handler decides after the bound; its runAgain is refused while the old owner may still run the call", async () => {
    for (const answer of ["result", "runAgain"] as const) {
      const pays: Array<string> = []
      const seen: Array<string> = []
      const reconcile = (u: { readonly reason: string }) =>
        Effect.sync(() => (seen.push(u.reason), answer === "result" ? Reconciled.result("paid bob (found at the provider)") : Reconciled.runAgain))
      const d = durable(payAgent(pays), { handOverWait: "400 millis", reconcile: reconcile as never })
      const exit = await withStores((intents, layer) =>
        Effect.gen(function*() {
          const renewing = yield* hung(intents, `h-${answer}`)
          const exit = yield* Effect.exit(d.run("pay bob", { runId: `h-${answer}` }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(layer)))))
          yield* Fiber.interrupt(renewing)
          return exit
        })
      )
      expect(seen).toHaveLength(1)
      expect(seen[0]).toMatch(/still running it after/)
      expect(pays).toEqual([])
      if (answer === "result") expect(exit).toMatchObject({ _tag: "Success", value: { _tag: "Completed", output: "done" } })
      else expect(String(exit._tag === "Failure" ? exit.cause : "")).toMatch(/OutcomeUnknown[\s\S]*runAgain is refused/)
    }
  })

  it("on the old owner: an interrupted call that hangs past handOverWait no longer holds the step; it goes on with its lease renewed and writes its outcome when it ends", async () => {
    const pays: Array<string> = []
    const d = durable(payAgent(pays, { slowMs: 1500 }), { handOverWait: "300 millis", lease: "300 millis" })
    const out = await withStores((intents, layer) =>
      Effect.gen(function*() {
        const run = yield* Effect.forkChild(d.run("pay bob", { runId: "h-old" }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(layer)))))
        yield* Effect.sleep("200 millis")
        const started = Date.now()
        yield* Fiber.interrupt(run)
        const releasedMs = Date.now() - started
        yield* Effect.sleep("600 millis") // past two leases: still renewed by the call going on
        const meanwhile = Option.getOrThrow(yield* intents.read(key("h-old")))
        yield* Effect.sleep("1200 millis")
        const after = Option.getOrThrow(yield* intents.read(key("h-old")))
        return { releasedMs, meanwhile, after }
      })
    )
    expect(out.releasedMs).toBeGreaterThanOrEqual(250)
    expect(out.releasedMs).toBeLessThan(1000)
    expect(out.meanwhile).toMatchObject({ _tag: "Claimed", leaseLive: true })
    expect(pays).toEqual(["bob"])
    expect(out.after).toMatchObject({ _tag: "Finished", outcome: { _tag: "Succeeded", value: "paid bob" } })
  })

  it("a handOverWait that is not a positive finite duration is refused when the durable agent is made", () => {
    for (const handOverWait of [-1, 0, Number.NaN, "soon" as never, Infinity]) {
      expect(() => durable(payAgent([]), { handOverWait })).toThrow(AgentConfigError)
    }
  })
})
