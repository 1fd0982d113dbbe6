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
