/**
 * The result type of a run that hands off to a target which may wait for a decision is what comes
 * back: `Suspended` with the target's waiting calls, typed, without a cast; `resume` on the agent that
 * handed off completes it, through a chain of handoffs too. A target that never waits leaves the output.
 */
import { Effect } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, type Completed, Decision, session, skill, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank } from "./bank.ts"

const bankScript = () => scriptedModel([toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("paid bob")])
const handOff = (to: string) => scriptedModel([toolCalls([{ id: `h-${to}`, name: `handoff_to_${to}`, arguments: {} }])])

describe("a run that hands off to a target that may wait for approval", () => {
  it("returns the typed Suspended, with the target's calls; resume on the caller completes it", async () => {
    const desk = makeBank(bankScript())
    const front = agent("front").model(handOff("bank")).skills(() => [skill("triage", "route").handoffs(desk.bank)])
    const first = await front.run("pay bob 500")
    expectTypeOf(first._tag).toEqualTypeOf<"Completed" | "Suspended">()
    expect(first._tag).toBe("Suspended")
    if (first._tag !== "Suspended") return
    expectTypeOf<(typeof first.pending)[number]["tool"]>().toEqualTypeOf<"transfer" | "wipe">()
    expect(first.pending).toEqual([{ id: "k1", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(first.snapshot.agent).toBe("front")
    expect(first.snapshot.state.handoff?.agent).toBe("bank")
    expect(desk.executed).toEqual([])
    const rest = await Effect.runPromise(front.resume(JSON.stringify(first.snapshot), { [first.pending[0]!.id]: Decision.approve }))
    expect(rest).toEqual({ _tag: "Completed", output: "paid bob" })
    if (rest._tag === "Completed") expectTypeOf(rest).toEqualTypeOf<Completed<string>>()
    expect(desk.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
  })

  it("through a chain A → B → C where only C may wait: A suspends on C's call, and A's resume completes", async () => {
    const c = makeBank(bankScript())
    const b = agent("b").model(handOff("bank")).skills(() => [skill("b").handoffs(c.bank)])
    const a = agent("a").model(handOff("b")).skills(() => [skill("a").handoffs(b)])
    const first = await Effect.runPromise(a.runEffect("pay bob 500"))
    expect(first._tag).toBe("Suspended")
    if (first._tag !== "Suspended") return
    expect(first.pending).toEqual([{ id: "k1", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(first.snapshot.state.handoff?.agent).toBe("b")
    const rest = await Effect.runPromise(a.resume(first.snapshot, { k1: Decision.deny("not today") }))
    expect(rest).toEqual({ _tag: "Completed", output: "paid bob" })
    expect(c.executed).toEqual([])
  })

  it("a session's send is the typed Suspended too, and the session's resume completes it", async () => {
    const desk = makeBank(bankScript())
    const chat = session(agent("front").model(handOff("bank")).skills(() => [skill("triage").handoffs(desk.bank)]), "s")
    const first = await chat.send("pay bob 500")
    expect(first._tag).toBe("Suspended")
    if (first._tag === "Suspended") expect(first.pending.map((p) => p.tool)).toEqual(["transfer"])
    expect(await chat.resume({ k1: Decision.approve })).toEqual({ _tag: "Completed", output: "paid bob" })
  })
})

describe("a run that hands off to a target that never waits", () => {
  it("returns the plain output its type says", async () => {
    const clerk = agent("clerk").model(scriptedModel([text("balance: 1000")]))
    const front = agent("front").model(handOff("clerk")).skills(() => [skill("triage").handoffs(clerk)])
    const output = await front.run("balance?")
    expectTypeOf(output).toEqualTypeOf<string>()
    expect(output).toBe("balance: 1000")
  })
})
