/**
 * `d.journal(runId)`: a durable run's recorded steps as typed values — model calls, tool calls with
 * their effect class and outcome, a mutating call's claim (owner, lease, outcome written), approvals
 * asked for and decided, the wait, the end — and its claims in flight and its cancellation.
 */
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, text, tool, toolCalls } from "../../src/index.ts"
import { durable, memoryEngine, RunJournal } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { encodeJournalEventText } from "../../src/durable/journal-events.ts"

describe("d.journal", () => {
  it("shows model calls, tool calls by effect class with a mutating call's claim, approvals, the wait and the end", async () => {
    const lookup = tool("lookup", { args: Schema.Struct({}), effect: "readOnly", run: () => "30 EUR" })
    const pay = tool("pay", { args: Schema.Struct({ amount: Schema.Finite }), needsApproval: true, run: ({ amount }) => `paid ${amount}` })
    const model = scriptedModel([
      toolCalls([{ id: "c1", name: "lookup", arguments: {} }]),
      toolCalls([{ id: "c2", name: "pay", arguments: { amount: 30 } }]),
      text("bought")
    ])
    const d = durable(agent("shopper").model(model).tools({ lookup, pay }))
    const journal = await Effect.gen(function*() {
      const waiting = yield* d.run("buy", { runId: "j1" })
      expect(waiting._tag).toBe("Suspended")
      const during = yield* d.journal("j1")
      expect(during.entries.at(-1)).toMatchObject({ _tag: "Suspended", pending: [{ id: "c2", tool: "pay" }] })
      yield* d.decide("j1", { c2: Decision.approve })
      yield* d.join("j1")
      return yield* d.journal("j1")
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("10 seconds"), Effect.runPromise)
    const steps = journal.entries.filter((e) => e._tag !== "Event")
    expect(steps.map((e) => e._tag)).toEqual([
      "Started", "ModelCalled", "ToolCalled", "ModelCalled", "ApprovalRequested", "Suspended", "ApprovalDecided", "ToolCalled", "ModelCalled", "Ended"
    ])
    expect(steps[0]).toMatchObject({ _tag: "Started", runId: "j1", input: "buy" })
    expect(steps[2]).toMatchObject({ _tag: "ToolCalled", tool: "lookup", effect: "readOnly", outcome: { _tag: "Succeeded", value: "30 EUR" } })
    expect(steps[2]).not.toHaveProperty("claim")
    expect(steps[6]).toMatchObject({ _tag: "ApprovalDecided", toolCallId: "c2", decision: "approve" })
    expect(steps[7]).toMatchObject({
      _tag: "ToolCalled",
      tool: "pay",
      effect: "mutating",
      args: { amount: 30 },
      outcome: { _tag: "Succeeded", value: "paid 30" },
      claim: { toolCallId: "c2", finished: true }
    })
    expect(steps.at(-1)).toMatchObject({ _tag: "Ended", outcome: { _tag: "Success", output: "bought" } })
    expect(journal.claims).toHaveLength(1)
    expect(journal.entries.map((e) => e.id)).toEqual(journal.entries.map((_, i) => i + 1))
    expect(journal).not.toHaveProperty("cancelled")
  })

  it("a mutating call in flight: its claim names the owner and a live lease; a cancelled run says why", async () => {
    const entered = Deferred.makeUnsafe<void>()
    const pay = tool("pay", { args: Schema.Struct({}), run: () => Effect.andThen(Deferred.succeed(entered, undefined), Effect.never) })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "pay", arguments: {} }]), text("paid")])
    const d = durable(agent("payer").model(model).tools({ pay }))
    const { inFlight, after } = await Effect.gen(function*() {
      const run = yield* Effect.forkChild(d.run("pay", { runId: "j2" }))
      yield* Deferred.await(entered)
      const inFlight = yield* d.journal("j2")
      yield* d.cancel("j2", "operator stop")
      yield* Fiber.await(run)
      return { inFlight, after: yield* d.journal("j2") }
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("10 seconds"), Effect.runPromise)
    expect(inFlight.claims).toEqual([expect.objectContaining({ tool: "pay", toolCallId: "c1", finished: false, leaseLive: true, owner: expect.stringContaining(String(process.pid)) })])
    expect(inFlight.entries.some((e) => e._tag === "ToolCalled")).toBe(false)
    expect(after.cancelled).toBe("operator stop")
    expect(after.entries.at(-1)).toMatchObject({ _tag: "Ended", outcome: { _tag: "Failure", error: { _tag: "Cancelled" } } })
  })

  it("an unknown run has an empty journal", async () => {
    const d = durable(agent("x").model(scriptedModel([text("hi")])))
    const journal = await d.journal("nope").pipe(Effect.provide(memoryEngine), Effect.runPromise)
    expect(journal).toEqual({ runId: "nope", entries: [], claims: [] })
  })
})

describe("the journal of a run whose tool answers what JSON cannot hold", () => {
  it("a cyclic result with a bigint: the run completes; the journal holds the result as recorded (the cycle left out, the bigint as text)", async () => {
    const odd = tool("odd", {
      args: Schema.Struct({}),
      effect: "readOnly",
      run: () => {
        const node: Record<string, unknown> = { name: "loop", size: 10n }
        node.self = node
        return node
      }
    })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "odd", arguments: {} }]), text("done")])
    const d = durable(agent("odd").model(model).tools({ odd }))
    const { result, events } = await Effect.gen(function*() {
      const result = yield* d.run("go", { runId: "cyclic" })
      return { result, events: yield* (yield* RunJournal).read("cyclic", 0, 100) }
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("10 seconds"), Effect.runPromise)
    expect(result).toEqual({ _tag: "Completed", output: "done" })
    const toolUse = events.map((e) => e.event as { _tag: string; result?: unknown }).find((e) => e._tag === "ToolUse")
    expect(toolUse?.result).toEqual({ name: "loop", size: "10n" })
  })

  it("an event holding a cycle, a bigint or a getter that throws is written anyway: the cycle as [Circular], the bigint as text, else what could not be", () => {
    const args: Record<string, unknown> = { n: 1n }
    args.me = args
    const event = { _tag: "ToolError", agent: "a", runId: "r", skill: "s", turn: 1, tool: "t", toolCallId: "c", args, error: new Error("boom"), recovery: "Feedback", validated: true } as never
    expect(JSON.parse(encodeJournalEventText(event))).toMatchObject({ _tag: "ToolError", args: { n: "1", me: "[Circular]" }, error: { message: "boom" } })
    const hostile = { _tag: "ToolUse", agent: "a", runId: "r", result: { get x() { throw new Error("no") } } } as never
    expect(JSON.parse(encodeJournalEventText(hostile))).toMatchObject({ _tag: "ToolUse", unserialisable: expect.stringContaining("no") })
  })
})
