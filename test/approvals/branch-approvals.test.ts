/** A branch whose source or case waits for a human decision suspends as a whole (issue 29, composites). */
import { Effect, Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, branch, type Completed, type CompositeSuspended, Decision, inMemoryResumeLedger, ResumeLedger, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank, secret } from "./bank.ts"
import { reorderKeys } from "./reorder-keys.ts"

const Refund = Schema.TaggedStruct("Refund", { orderId: Schema.String })
const Ticket = Schema.Union([Refund, Schema.TaggedStruct("Question", { topic: Schema.String })])
const transferCall = toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }])

/** triage → Refund: refunds (its transfer needs approval), Question: a function. `fresh`: models start after the tool call. */
const caseSuspends = (options: { readonly fresh?: boolean; readonly sign?: string } = {}) => {
  const { tools, executed } = makeBank(scriptedModel([]))
  const triage = agent("triage", { output: Ticket }).model(scriptedModel(() => text('{"_tag":"Refund","orderId":"o-1"}')))
  const base = agent("refunds", { input: Refund }).model(scriptedModel(options.fresh === true ? [text("refunded")] : [transferCall, text("refunded")]))
    .tools({ transfer: tools.transfer })
  const refunds = options.sign === undefined ? base : base.signSnapshots(options.sign)
  return { executed, support: branch("support", triage, { Refund: refunds, Question: (q: { readonly topic: string }) => `faq ${q.topic}` }) }
}

/** The source itself asks for approval before it classifies. */
const sourceSuspends = (options: { readonly fresh?: boolean } = {}) => {
  const { tools, executed } = makeBank(scriptedModel([]))
  const answer = text('{"_tag":"Question","topic":"billing"}')
  const triage = agent("triage", { output: Ticket }).model(scriptedModel(options.fresh === true ? [answer] : [transferCall, answer]))
    .tools({ transfer: tools.transfer })
  const refunds = agent("refunds", { input: Refund }).model(scriptedModel(() => text("refunded")))
  return { executed, support: branch("support", triage, { Refund: refunds, Question: (q: { readonly topic: string }) => `faq ${q.topic}` }) }
}

describe("a branch whose case waits for approval", () => {
  it("suspends at that case; a fresh branch resumes it from reordered JSON: approve runs the tool once", async () => {
    const first = await caseSuspends().support.run("money back")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending).toEqual([{ id: "k1", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(first.snapshot).toMatchObject({ composite: "support", kind: "branch", state: { stage: 1 } })
    const again = caseSuspends({ fresh: true })
    const stored = reorderKeys(JSON.parse(JSON.stringify(first.snapshot)))
    expect(await Effect.runPromise(again.support.resume(stored, { k1: Decision.approve }))).toEqual({ _tag: "Completed", output: "refunded" })
    expect(again.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
  })

  it("deny never runs the tool; a second resume with a ResumeLedger is refused", async () => {
    const first = await caseSuspends().support.run("money back")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const again = caseSuspends({ fresh: true })
    const ledger = inMemoryResumeLedger()
    const once = (d: Parameters<typeof again.support.resume>[1]) => again.support.resume(first.snapshot, d).pipe(Effect.provideService(ResumeLedger, ledger))
    expect(await Effect.runPromise(once({ k1: Decision.deny("no") }))).toMatchObject({ _tag: "Completed" })
    expect(failureOf(await runExit(once({ k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect(again.executed).toEqual([])
  })

  it("is signed when its case signs; a changed snapshot is refused", async () => {
    const first = await caseSuspends({ sign: secret }).support.run("money back")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.snapshot.signature).toMatch(/^v2\./)
    const again = caseSuspends({ sign: secret, fresh: true })
    const moved = { ...first.snapshot, state: { ...first.snapshot.state, stage: 0 } }
    expect(failureOf(await runExit(again.support.resume(moved, { k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotRejected" })
    expect(again.executed).toEqual([])
  })

  it("types: Completed | Suspended", () => {
    const { support } = caseSuspends()
    expectTypeOf<Awaited<ReturnType<typeof support.run>>>().toEqualTypeOf<Completed<string> | CompositeSuspended>()
  })
})

describe("a branch whose source waits for approval", () => {
  it("suspends at the source; resume continues the source, then routes", async () => {
    const first = await sourceSuspends().support.run("how?")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.snapshot.state.stage).toBe(0)
    const again = sourceSuspends({ fresh: true })
    expect(await Effect.runPromise(again.support.resume(JSON.stringify(first.snapshot), { k1: Decision.approve }))).toEqual({ _tag: "Completed", output: "faq billing" })
    expect(again.executed).toHaveLength(1)
    const denied = sourceSuspends({ fresh: true })
    expect(await Effect.runPromise(denied.support.resume(first.snapshot, { k1: Decision.deny("no") }))).toEqual({ _tag: "Completed", output: "faq billing" })
    expect(denied.executed).toEqual([])
  })
})
