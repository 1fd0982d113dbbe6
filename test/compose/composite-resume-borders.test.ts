/**
 * Composite snapshots crossing the JSON border and resumed: what the tree spent travels with them,
 * every refusal comes before any member's approved tool runs, decisions bind to exactly the ids the
 * composite listed, and what a loop keeps is JSON.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type CompositeBudget, Decision, forum, loop, type ModelClient, parallel, pipeline, text, tool, toolCalls } from "../../src/index.ts"
import type { AnyRunnable } from "../../src/compose/runnable.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank, secret } from "../approvals/bank.ts"

const pay = (id = "k1", to = "bob") => toolCalls([{ id, name: "transfer", arguments: { to, amount: 500 } }])
const balance = (id: string) => toolCalls([{ id, name: "balance", arguments: {} }])

/** `runEffect` of a composite whose members are typed loosely here (the tests build them untyped). */
const loose = (composite: unknown) => composite as { runEffect(input: unknown): Effect.Effect<any, any>; resume(s: unknown, d: object): Effect.Effect<any, any> }

const suspendedSnapshot = async (composite: unknown): Promise<unknown> => {
  const first = await Effect.runPromise(loose(composite).runEffect("go"))
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  return JSON.parse(JSON.stringify(first.snapshot))
}

describe("a bounded composite resumed from its snapshot", () => {
  /** bank (its tools and `sleepy`, 60 ms) → after, under `limits`; `model` scripts the bank. */
  const flow = (model: ModelClient, limits: CompositeBudget) => {
    const bank = makeBank(model)
    const sleepy = tool("sleepy", { args: Schema.Struct({}), run: () => Effect.as(Effect.sleep("60 millis"), "slept") })
    return { bank, composite: pipeline("payments", bank.bank.tools({ sleepy }), agent("after").model(scriptedModel(() => text("ok")))).budget(limits) }
  }

  it("keeps the tool calls its tree spent before the suspension: maxToolCalls bounds the whole run", async () => {
    const before = flow(scriptedModel([balance("b1"), pay()]), { maxToolCalls: 3 })
    const snapshot = await suspendedSnapshot(before.composite)
    const after = flow(scriptedModel([balance("b2"), balance("b3"), text("done")]), { maxToolCalls: 3 })
    const exit = await runExit(loose(after.composite).resume(snapshot, { k1: Decision.approve }))
    expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded", reason: "toolCalls", scope: "payments" })
    // balance before the suspension, then the transfer and one more balance: three in all.
    expect([...before.bank.executed, ...after.bank.executed].map((e) => e.tool)).toEqual(["balance", "transfer", "balance"])
  })

  it("keeps the wall time spent before the suspension: maxDuration bounds the whole run", async () => {
    const before = flow(scriptedModel([toolCalls([{ id: "s1", name: "sleepy", arguments: {} }]), pay()]), { maxDuration: 100 })
    const snapshot = await suspendedSnapshot(before.composite)
    const after = flow(scriptedModel([toolCalls([{ id: "s2", name: "sleepy", arguments: {} }]), text("done")]), { maxDuration: 100 })
    const exit = await runExit(loose(after.composite).resume(snapshot, { k1: Decision.approve }))
    expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded", reason: "duration" })
  })

  it("a signed snapshot covers what was spent: lowering it is refused", async () => {
    const before = flow(scriptedModel([balance("b1"), pay()]), { maxToolCalls: 3 })
    const signed = await suspendedSnapshot(before.composite.signSnapshots(secret)) as { state: { spent: { toolCalls: number } } }
    expect(signed.state.spent.toolCalls).toBe(1)
    signed.state.spent.toolCalls = 0
    const after = flow(scriptedModel([text("done")]), { maxToolCalls: 3 }).composite.signSnapshots(secret)
    expect(failureOf(await runExit(loose(after).resume(signed, { k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotRejected" })
  })
})

describe("members resumed at once", () => {
  const twoBanks = () => {
    const a = makeBank(scriptedModel([pay(), text("a paid")]))
    const b = makeBank(scriptedModel([pay("k1", "eve"), text("b paid")]))
    return { a, b }
  }

  it("a nested loop whose snapshot the loop refuses is refused before the other member's approved tool runs", async () => {
    const { a, b } = twoBanks()
    const composite = parallel("payments", [a.bank, loop("retry", b.bank, { until: () => true, maxIterations: 2 })])
    const snapshot = await suspendedSnapshot(composite) as { state: { waiting: Array<{ member: { state: { iterations?: Array<unknown> } } }> } }
    snapshot.state.waiting[0]!.member.state.iterations = ["x", "y"]
    const exit = await runExit(loose(composite).resume(snapshot, { "0/k1": Decision.approve, "1/k1": Decision.approve }))
    expect(failureOf(exit)).toMatchObject({ _tag: "SnapshotInvalid" })
    expect([...a.executed, ...b.executed]).toEqual([])
  })

  it("a nested forum whose snapshot lost its input is refused before the other member's approved tool runs", async () => {
    const { a, b } = twoBanks()
    const panel = forum("panel", [b.bank, agent("reader").model(scriptedModel(() => text("read")))], (brief) => brief.answers.length)
    const composite = parallel("payments", [a.bank, panel as AnyRunnable])
    const snapshot = await suspendedSnapshot(composite) as { state: { waiting: Array<{ member: { state: { input?: unknown } } }> } }
    delete snapshot.state.waiting[0]!.member.state.input
    const exit = await runExit(loose(composite).resume(snapshot, { "0/k1": Decision.approve, "1/0/k1": Decision.approve }))
    expect(failureOf(exit)).toMatchObject({ _tag: "SnapshotInvalid" })
    expect([...a.executed, ...b.executed]).toEqual([])
  })

  it("a decision naming a member in another spelling (`01/k1` for `1/k1`) is refused, never taken for that member's call", async () => {
    const { a, b } = twoBanks()
    const composite = parallel("payments", [a.bank, b.bank])
    const snapshot = await suspendedSnapshot(composite)
    const exit = await runExit(loose(composite).resume(snapshot, { "0/k1": Decision.deny("no"), "1/k1": Decision.deny("no"), "01/k1": Decision.approve }))
    expect(failureOf(exit)).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "01/k1" })
    expect([...a.executed, ...b.executed]).toEqual([])
  })

  it("a member's call id `__proto__` is decided through the composite", async () => {
    const a = makeBank(scriptedModel([pay("__proto__"), text("a paid")]))
    const b = makeBank(scriptedModel([pay("k1", "eve"), text("b paid")]))
    const composite = parallel("payments", [a.bank, b.bank])
    const snapshot = await suspendedSnapshot(composite)
    const decisions = JSON.parse('{"0/__proto__":{"_tag":"Approve"},"1/k1":{"_tag":"Deny","reason":"no"}}')
    expect(await Effect.runPromise(loose(composite).resume(snapshot, decisions))).toEqual({ _tag: "Completed", output: ["a paid", "b paid"] })
    expect(a.executed.map((e) => e.tool)).toEqual(["transfer"])
    expect(b.executed).toEqual([])
  })
})

describe("a loop that suspends after iterations", () => {
  /** The bank's answer, then a stamp: each iteration outputs `stamp(answer)` (and the next asks the bank again). */
  const stamped = (model: ModelClient, stamp: (answer: string) => unknown, sign?: string) => {
    const bank = makeBank(model, sign === undefined ? {} : { sign })
    const ask = { name: "ask", runEffect: (_: unknown) => Effect.succeed("pay bob") }
    const stamper = { name: "stamp", runEffect: (answer: string) => Effect.succeed(stamp(answer)) }
    const body = (pipeline as (name: string, ...stages: ReadonlyArray<AnyRunnable>) => AnyRunnable)("draft", ask, bank.bank, stamper)
    return loop("drafts", body as never, { until: (_: unknown, i: number) => i >= 2, maxIterations: 3 })
  }

  it("keeps its outputs as JSON: a signed loop whose outputs hold a Date resumes its own snapshot", async () => {
    const first = await Effect.runPromise(loose(stamped(scriptedModel([text("one"), pay()]), () => ({ at: new Date(0) }), secret)).runEffect("go"))
    const again = stamped(scriptedModel([text("two")]), (answer) => answer, secret)
    const exit = await runExit(loose(again).resume(JSON.parse(JSON.stringify(first.snapshot)), { k1: Decision.approve }))
    expect(exit).toMatchObject({ _tag: "Success", value: { _tag: "Completed", output: "two" } })
    expect(first.snapshot.state.iterations).toEqual([{ at: "1970-01-01T00:00:00.000Z" }])
  })

  it("an output that is not JSON fails the suspension with SnapshotInvalid, never a defect", async () => {
    const exit = await runExit(loose(stamped(scriptedModel([text("one"), pay()]), () => ({ big: 1n }))).runEffect("go"))
    expect(failureOf(exit)).toMatchObject({ _tag: "SnapshotInvalid" })
  })
})
