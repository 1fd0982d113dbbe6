/**
 * Resume borders found by review: a resume without decisions never starts a suspended child again; a
 * handoff suspended twice resumes under a ledger; arguments an interceptor changed are approved as
 * shown; decisions of the wrong shape, a child call id `__proto__` and a forged entry nested too
 * deep for any key all end in a typed error, never a defect or a second run of anything.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, inMemoryResumeLedger, Intercept, ResumeLedger, resume, skill, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank } from "./bank.ts"

/** A child that logs (no approval) and then asks to transfer; its caller uses it as the tool `pay`. */
const childCaller = (transferId = "k1") => {
  const logged: Array<string> = []
  const log = tool("log", { args: Schema.Struct({}), run: () => void logged.push("log") })
  const child = makeBank(scriptedModel([
    toolCalls([{ id: "l1", name: "log", arguments: {} }]),
    toolCalls([{ id: transferId, name: "transfer", arguments: { to: "bob", amount: 500 } }]),
    text("child paid")
  ]))
  const front = agent("front")
    .model(scriptedModel([toolCalls([{ id: "p1", name: "pay", arguments: { input: "pay bob 500" } }]), text("front done")]))
    .tools({ pay: child.bank.tools({ log }).asTool({ name: "pay" }) })
  return { front, child, logged }
}

describe("resume borders", () => {
  it("a resume without decisions of a snapshot that waits for them is refused: the suspended child is not run again from its start", async () => {
    const { front, child, logged } = childCaller()
    const first = await front.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(logged).toEqual(["log"])
    expect(failureOf(await runExit(front.resume(first.snapshot, undefined as never)))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(failureOf(await runExit(resume(front, first.snapshot) as Effect.Effect<unknown, unknown>))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(logged).toEqual(["log"])
    expect(await Effect.runPromise(front.resume(first.snapshot, { "p1/k1": Decision.approve }))).toEqual({ _tag: "Completed", output: "front done" })
    expect(logged).toEqual(["log"])
    expect(child.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
  })

  it("decisions of the wrong shape, and a denial whose reason is not text, are refused with DecisionsInvalid", async () => {
    const bank = makeBank(scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("done")]))
    const first = await bank.bank.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    for (const decisions of [null, ["c1"], "approve"]) {
      expect(failureOf(await runExit(bank.bank.resume(first.snapshot, decisions as never)))).toMatchObject({ _tag: "DecisionsInvalid" })
    }
    const odd = { _tag: "Deny", reason: Object.create(null) }
    expect(failureOf(await runExit(bank.bank.resume(first.snapshot, { c1: odd as never })))).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c1" })
    expect(bank.executed).toEqual([])
  })

  it("a child's call id `__proto__` is decided through its caller", async () => {
    const { front, child } = childCaller("__proto__")
    const first = await front.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending.map((p) => p.id)).toEqual(["p1/__proto__"])
    const decisions = JSON.parse('{"p1/__proto__":{"_tag":"Approve"}}')
    expect(await Effect.runPromise(front.resume(first.snapshot, decisions))).toEqual({ _tag: "Completed", output: "front done" })
    expect(child.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
  })

  it("arguments an interceptor changed are approved as shown: the changed ones run, once", async () => {
    const bank = makeBank(scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "BOB", amount: 500 } }]), text("done")]))
    const desk = bank.bank.intercept("transfer", (args) => Intercept.proceedWith({ ...args, to: args.to.toLowerCase() }))
    const first = await desk.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending[0]).toMatchObject({ id: "c1", args: { to: "bob", amount: 500 } })
    expect(await Effect.runPromise(desk.resume(JSON.parse(JSON.stringify(first.snapshot)), { c1: Decision.approve }))).toEqual({ _tag: "Completed", output: "done" })
    expect(bank.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
  })

  it("a handoff target that suspends twice resumes under a resume ledger each time", async () => {
    const desk = makeBank(scriptedModel([
      toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }]),
      toolCalls([{ id: "k2", name: "transfer", arguments: { to: "eve", amount: 700 } }]),
      text("desk done")
    ]))
    const front = agent("front")
      .model(scriptedModel([toolCalls([{ id: "h", name: "handoff_to_bank", arguments: {} }])]))
      .skills(() => [skill("triage", "route").handoffs(desk.bank)])
    const ledger = inMemoryResumeLedger()
    const withLedger = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, ResumeLedger, ledger)
    const first = await Effect.runPromise(front.runEffect("pay"))
    expect(first._tag).toBe("Suspended")
    if (first._tag !== "Suspended") return
    const second = await Effect.runPromise(withLedger(front.resume(first.snapshot, { k1: Decision.deny("no") })))
    expect(second._tag).toBe("Suspended")
    if (second._tag !== "Suspended") return
    expect(second.pending.map((p) => p.id)).toEqual(["k2"])
    expect(await Effect.runPromise(withLedger(front.resume(second.snapshot, { k2: Decision.approve })))).toEqual({ _tag: "Completed", output: "desk done" })
    expect(desk.executed).toEqual([{ tool: "transfer", args: { to: "eve", amount: 700 } }])
  })

  it("a snapshot nested deeper than the ledger's key can go is a typed error, not a defect, and nothing runs", async () => {
    const { front, child, logged } = childCaller()
    const first = await front.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    let deep: unknown = 1
    for (let i = 0; i < 20_000; i++) deep = [deep]
    // An entry under the child's call id that the child does not list: refused before the ledger keys the snapshot.
    const state = first.snapshot.state as { readonly awaiting: ReadonlyArray<unknown> }
    const forged = { ...first.snapshot, state: { ...first.snapshot.state, awaiting: [...state.awaiting, { id: "p1/zz", tool: "transfer", args: deep }] } }
    const exit = await runExit(Effect.provideService(front.resume(forged, { "p1/k1": Decision.approve }), ResumeLedger, inMemoryResumeLedger()))
    expect(failureOf(exit)).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "p1/zz" })
    expect(logged).toEqual(["log"])
    expect(child.executed).toEqual([])
  })
})
