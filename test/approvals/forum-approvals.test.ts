/** A forum whose captain waits for a human decision suspends as a whole (issue 29, composites; the captain only). */
import { Effect } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, type Completed, type CompositeSuspended, Decision, forum, inMemoryResumeLedger, pipeline, ResumeLedger, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank } from "./bank.ts"
import { reorderKeys } from "./reorder-keys.ts"

const transferCall = toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }])

const build = (options: { readonly fresh?: boolean } = {}) => {
  const { tools, executed } = makeBank(scriptedModel([]))
  const answered: Array<string> = []
  const participant = (n: string) => agent(n).model(scriptedModel(() => text(`${n} says pay`))).onRunEnd(() => void answered.push(n))
  const judge = agent("judge").model(scriptedModel(options.fresh === true ? [text("paid")] : [transferCall, text("paid")])).tools({ transfer: tools.transfer })
  const panel = forum("panel", [participant("a"), participant("b")], judge)
  return { executed, answered, panel }
}

describe("a forum whose captain waits for approval", () => {
  it("suspends at the captain; a fresh forum resumes from reordered JSON without asking the participants again", async () => {
    const made = build()
    const first = await made.panel.run("pay bob?")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending).toEqual([{ id: "k1", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(first.snapshot).toMatchObject({ composite: "panel", kind: "forum", state: { stage: 2 } })
    expect(made.answered.sort()).toEqual(["a", "b"])
    const again = build({ fresh: true })
    const stored = reorderKeys(JSON.parse(JSON.stringify(first.snapshot)))
    expect(await Effect.runPromise(again.panel.resume(stored, { k1: Decision.approve }))).toEqual({ _tag: "Completed", output: "paid" })
    expect(again.executed).toHaveLength(1)
    expect(again.answered).toEqual([])
  })

  it("deny never runs the tool; a second resume with a ResumeLedger is refused; a forged stage is refused", async () => {
    const first = await build().panel.run("pay bob?")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const again = build({ fresh: true })
    const ledger = inMemoryResumeLedger()
    const once = (d: Parameters<typeof again.panel.resume>[1]) => again.panel.resume(first.snapshot, d).pipe(Effect.provideService(ResumeLedger, ledger))
    expect(await Effect.runPromise(once({ k1: Decision.deny("no") }))).toEqual({ _tag: "Completed", output: "paid" })
    expect(failureOf(await runExit(once({ k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    const forged = { ...first.snapshot, state: { ...first.snapshot.state, stage: 0 } }
    expect(failureOf(await runExit(build({ fresh: true }).panel.resume(forged, { k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotInvalid" })
    expect(again.executed).toEqual([])
  })

  it("nests in a pipeline, and types the result Completed | Suspended", async () => {
    const made = build()
    const after = agent("after").model(scriptedModel((request) => text(`after: ${request.messages.at(-1)?.content}`)))
    const flow = pipeline("flow", made.panel, after)
    const first = await flow.run("pay bob?")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(await Effect.runPromise(flow.resume(first.snapshot, { k1: Decision.approve }))).toEqual({ _tag: "Completed", output: "after: paid" })
    expect(made.executed).toHaveLength(1)
    expectTypeOf<Awaited<ReturnType<typeof made.panel.run>>>().toEqualTypeOf<Completed<string> | CompositeSuspended>()
    const plain = forum("plain", [agent("x").model(scriptedModel(() => text("x")))], (brief) => brief.answers.map((a) => a.answer).join(","))
    expectTypeOf<Awaited<ReturnType<typeof plain.run>>>().toEqualTypeOf<string>()
    expect(await plain.run("q")).toBe("x")
  })
})

/** Participants that wait for approval (a and b banks, c plain) and a judge that may too. `fresh`: models start after the tool calls. */
const buildParticipants = (options: { readonly fresh?: boolean; readonly judgePays?: boolean } = {}) => {
  const fresh = options.fresh === true
  const pay = (to: string, amount: number, answer: string) =>
    scriptedModel(fresh ? [text(answer)] : [toolCalls([{ id: "k1", name: "transfer", arguments: { to, amount } }]), text(answer)])
  const a = makeBank(pay("bob", 500, "a paid"))
  const b = makeBank(pay("eve", 700, "b paid"))
  const answered: Array<string> = []
  const c = agent("c").model(scriptedModel(() => text("c says pay"))).onRunEnd(() => void answered.push("c"))
  const briefs: Array<string> = []
  const judgeModel = scriptedModel((request) => {
    const last = request.messages.at(-1)
    if (last?.role === "user") briefs.push(last.content)
    return options.judgePays === true && last?.role === "user" ? toolCalls([{ id: "j1", name: "transfer", arguments: { to: "zed", amount: 900 } }]) : text("verdict")
  })
  const judgeBank = makeBank(judgeModel)
  const judge = agent("judge").model(judgeModel).tools({ transfer: judgeBank.tools.transfer })
  return { a, b, answered, briefs, judgeBank, panel: forum("panel", [a.bank, b.bank, c], judge) }
}

describe("a forum whose participants wait for approval", () => {
  it("suspends as a whole; resume checks every participant's decisions first, continues them, then the captain decides without asking the others again", async () => {
    const made = buildParticipants()
    const first = await made.panel.run("pay?")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending.map((p) => p.id)).toEqual(["0/k1", "1/k1"])
    expect(first.snapshot).toMatchObject({ kind: "forum", state: { stage: 0, outputs: [{ stage: 2, output: "c says pay" }] } })
    expect(made.briefs).toEqual([])
    const refused = buildParticipants({ fresh: true })
    const bad = await runExit(refused.panel.resume(first.snapshot, { "0/k1": Decision.approve, "1/k1": Decision.edit({ to: 3 }) }))
    expect(failureOf(bad)).toMatchObject({ _tag: "DecisionsInvalid" })
    expect([...refused.a.executed, ...refused.b.executed]).toEqual([])
    expect(refused.briefs).toEqual([])
    const again = buildParticipants({ fresh: true })
    const stored = reorderKeys(JSON.parse(JSON.stringify(first.snapshot)))
    expect(await Effect.runPromise(again.panel.resume(stored, { "0/k1": Decision.approve, "1/k1": Decision.deny("no") })))
      .toEqual({ _tag: "Completed", output: "verdict" })
    expect(again.a.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(again.b.executed).toEqual([])
    expect(again.answered).toEqual([])
    expect(again.briefs).toHaveLength(1)
    expect(again.briefs[0]).toContain("a paid")
    expect(again.briefs[0]).toContain("c says pay")
  })

  it("a captain that then waits suspends the forum again at the captain; a second resume with a ledger is refused", async () => {
    const first = await buildParticipants({ judgePays: true }).panel.run("pay?")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const again = buildParticipants({ fresh: true, judgePays: true })
    const ledger = inMemoryResumeLedger()
    const second = await Effect.runPromise(again.panel.resume(first.snapshot, { "0/k1": Decision.approve, "1/k1": Decision.approve }).pipe(Effect.provideService(ResumeLedger, ledger)))
    if (second._tag !== "Suspended") throw new Error("expected the captain to suspend")
    expect(second.pending.map((p) => p.id)).toEqual(["j1"])
    expect(second.snapshot.state.stage).toBe(3)
    expect(failureOf(await runExit(again.panel.resume(first.snapshot, { "0/k1": Decision.approve, "1/k1": Decision.approve }).pipe(Effect.provideService(ResumeLedger, ledger)))))
      .toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect(again.a.executed).toHaveLength(1)
    expect(again.b.executed).toHaveLength(1)
    expect(await Effect.runPromise(again.panel.resume(second.snapshot, { j1: Decision.deny("no") }))).toEqual({ _tag: "Completed", output: "verdict" })
    expect(again.judgeBank.executed).toEqual([])
    expectTypeOf<Awaited<ReturnType<typeof again.panel.run>>>().toEqualTypeOf<Completed<string> | CompositeSuspended>()
  })

  it("types: a function captain's brief holds each participant's completed answer, and the forum may suspend", async () => {
    const made = buildParticipants()
    const c = agent("c2").model(scriptedModel(() => text("c")))
    const panel = forum("typed", [made.a.bank, c], (brief) => {
      expectTypeOf(brief.answers[0].answer).toEqualTypeOf<string>()
      return brief.answers.map((a) => a.answer).join(" | ")
    })
    expectTypeOf<Awaited<ReturnType<typeof panel.run>>>().toEqualTypeOf<Completed<string> | CompositeSuspended>()
    const first = await panel.run("pay?")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(await Effect.runPromise(panel.resume(first.snapshot, { "0/k1": Decision.approve }))).toEqual({ _tag: "Completed", output: "a paid | c" })
  })
})
