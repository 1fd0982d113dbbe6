/** A parallel whose members wait for human decisions suspends as a whole (issue 29, composites). */
import { Effect, Result } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import {
  agent,
  type Completed,
  type CompositeSuspended,
  Decision,
  inMemoryResumeLedger,
  parallel,
  pipeline,
  ResumeLedger,
  text,
  toolCalls
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank, secret } from "./bank.ts"
import { reorderKeys } from "./reorder-keys.ts"

const transfer = (to: string, amount: number) => toolCalls([{ id: "k1", name: "transfer", arguments: { to, amount } }])

/** Two banks that ask to transfer (both call their call "k1"), and a reader that completes. `fresh`: models start after the tool call, as in another process. */
const members = (options: { readonly fresh?: boolean; readonly smallB?: boolean } = {}) => {
  const a = makeBank(scriptedModel(options.fresh === true ? [text("a paid")] : [transfer("bob", 500), text("a paid")]))
  const b = makeBank(scriptedModel(options.fresh === true ? [text("b paid")] : [transfer("eve", options.smallB === true ? 50 : 700), text("b paid")]))
  const read: Array<string> = []
  const reader = agent("reader").model(scriptedModel(() => text("read"))).onRunEnd(() => void read.push("reader"))
  return { a, b, read, reader }
}

const build = (options: { readonly fresh?: boolean; readonly sign?: string; readonly smallB?: boolean } = {}) => {
  const made = members(options)
  const base = parallel("payments", [made.a.bank, made.b.bank, made.reader])
  return { ...made, flow: options.sign === undefined ? base : base.signSnapshots(options.sign) }
}

const buildCollecting = (options: { readonly fresh?: boolean } = {}) => {
  const made = members(options)
  return { ...made, flow: parallel("payments", [made.a.bank, made.b.bank, made.reader], { onFailure: "collect" }) }
}

const suspended = async (options: Parameters<typeof build>[0] = {}) => {
  const made = build(options)
  const first = await made.flow.run("pay")
  if (first._tag !== "Suspended") throw new Error("expected the parallel to suspend")
  return { ...made, first }
}

describe("a parallel whose members wait for approval", () => {
  it("suspends as a whole: every waiting member's snapshot, the completed member's output, calls named <member>/<call>", async () => {
    const { a, b, read, first } = await suspended()
    expect(first.pending).toEqual([
      { id: "0/k1", tool: "transfer", args: { to: "bob", amount: 500 } },
      { id: "1/k1", tool: "transfer", args: { to: "eve", amount: 700 } }
    ])
    expect(first.snapshot).toMatchObject({ composite: "payments", kind: "parallel", state: { stage: 0, outputs: [{ stage: 2, output: "read" }] } })
    expect(first.snapshot.state.waiting?.map((w) => w.stage)).toEqual([1])
    expect([...a.executed, ...b.executed]).toEqual([])
    expect(read).toEqual(["reader"])
  })

  it("a fresh parallel resumes from reordered JSON: each approved tool runs once, the completed member is not run again", async () => {
    const { first } = await suspended()
    const again = build({ fresh: true })
    const stored = reorderKeys(JSON.parse(JSON.stringify(first.snapshot)))
    const rest = await Effect.runPromise(again.flow.resume(stored, { "0/k1": Decision.approve, "1/k1": Decision.edit({ to: "eve", amount: 70 }) }))
    expect(rest).toEqual({ _tag: "Completed", output: ["a paid", "b paid", "read"] })
    expect(again.a.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(again.b.executed).toEqual([{ tool: "transfer", args: { to: "eve", amount: 70 } }])
    expect(again.read).toEqual([])
  })

  it("checks every member's decisions before any member resumes: one member's bad edit refuses the other's approval, nothing runs", async () => {
    const { first } = await suspended()
    const refusals = [
      { "0/k1": Decision.approve, "1/k1": Decision.edit({ to: "eve", amount: "lots" }) },
      { "0/k1": Decision.approve },
      { "0/k1": Decision.approve, "1/k1": Decision.approve, "2/k1": Decision.approve },
      { "0/k1": Decision.approve, "1/k1": Decision.approve, k1: Decision.approve },
      { "0/k1": Decision.approve, "1/k2": Decision.approve }
    ]
    for (const decisions of refusals) {
      const again = build({ fresh: true })
      const failure = failureOf(await runExit(again.flow.resume(first.snapshot, decisions)))
      expect(failure).toMatchObject({ _tag: "DecisionsInvalid" })
      expect([...again.a.executed, ...again.b.executed]).toEqual([])
    }
  })

  it("a denied call never runs; a second resume with a ResumeLedger is refused; forged snapshots are refused", async () => {
    const { first } = await suspended()
    const again = build({ fresh: true })
    const ledger = inMemoryResumeLedger()
    const once = (d: Parameters<typeof again.flow.resume>[1]) => again.flow.resume(first.snapshot, d).pipe(Effect.provideService(ResumeLedger, ledger))
    expect(await Effect.runPromise(once({ "0/k1": Decision.deny("no"), "1/k1": Decision.approve }))).toEqual({ _tag: "Completed", output: ["a paid", "b paid", "read"] })
    expect(again.a.executed).toEqual([])
    expect(again.b.executed).toHaveLength(1)
    expect(failureOf(await runExit(once({ "0/k1": Decision.approve, "1/k1": Decision.approve })))).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect(again.a.executed).toEqual([])
    expect(again.b.executed).toHaveLength(1)
    const state = first.snapshot.state
    const forgeries = [
      { ...state, outputs: [] },
      { ...state, stage: 2 },
      { ...state, waiting: [...(state.waiting ?? []), { stage: 0, member: state.member }] },
      { ...state, outputs: [{ stage: 7, output: "x" }, ...(state.outputs ?? [])] }
    ]
    for (const forged of forgeries) {
      const fresh = build({ fresh: true })
      expect(failureOf(await runExit(fresh.flow.resume({ ...first.snapshot, state: forged }, { "0/k1": Decision.approve, "1/k1": Decision.approve }))))
        .toMatchObject({ _tag: "SnapshotInvalid" })
      expect([...fresh.a.executed, ...fresh.b.executed]).toEqual([])
    }
  })

  it("one waiting member: the others' outputs come back; signed snapshots refuse tampering", async () => {
    const { first } = await suspended({ smallB: true, sign: secret })
    expect(first.pending.map((p) => p.id)).toEqual(["0/k1"])
    const tampered = { ...first.snapshot, state: { ...first.snapshot.state, outputs: [{ stage: 1, output: "forged" }, { stage: 2, output: "read" }] } }
    expect(failureOf(await runExit(build({ fresh: true, sign: secret }).flow.resume(tampered, { "0/k1": Decision.approve })))).toMatchObject({ _tag: "SnapshotRejected" })
    const again = build({ fresh: true, sign: secret })
    expect(await Effect.runPromise(again.flow.resume(JSON.stringify(first.snapshot), { "0/k1": Decision.approve })))
      .toEqual({ _tag: "Completed", output: ["a paid", "b paid", "read"] })
  })

  it("suspends again when a resumed member waits a second time, keeping what completed", async () => {
    const { first } = await suspended()
    const a = makeBank(scriptedModel([text("a paid")]))
    const b = makeBank(scriptedModel([toolCalls([{ id: "k2", name: "transfer", arguments: { to: "eve", amount: 800 } }]), text("b paid")]))
    const flow = parallel("payments", [a.bank, b.bank, agent("reader").model(scriptedModel(() => text("read again")))])
    const second = await Effect.runPromise(flow.resume(first.snapshot, { "0/k1": Decision.approve, "1/k1": Decision.approve }))
    if (second._tag !== "Suspended") throw new Error("expected a second suspension")
    expect(second.pending.map((p) => p.id)).toEqual(["1/k2"])
    expect(second.snapshot.state.outputs).toEqual([{ stage: 0, output: "a paid" }, { stage: 2, output: "read" }])
    const third = await Effect.runPromise(flow.resume(second.snapshot, { "1/k2": Decision.deny("too much") }))
    expect(third).toEqual({ _tag: "Completed", output: ["a paid", "b paid", "read"] })
    expect(b.executed).toEqual([{ tool: "transfer", args: { to: "eve", amount: 700 } }])
  })

  it("nested parallels: a bad edit deep in the inner one refuses the whole resume before any tool runs; valid decisions reach every level", async () => {
    const nested = (fresh: boolean) => {
      const made = members({ fresh })
      const c = makeBank(scriptedModel(fresh ? [text("c paid")] : [transfer("zed", 300), text("c paid")]))
      return { made, c, flow: parallel("outer", [c.bank, parallel("inner", [made.a.bank, made.b.bank])]) }
    }
    const first = await nested(false).flow.run("pay")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending.map((p) => p.id)).toEqual(["0/k1", "1/0/k1", "1/1/k1"])
    const refused = nested(true)
    const bad = await runExit(refused.flow.resume(first.snapshot, { "0/k1": Decision.approve, "1/0/k1": Decision.approve, "1/1/k1": Decision.edit({ to: "eve" }) }))
    expect(failureOf(bad)).toMatchObject({ _tag: "DecisionsInvalid" })
    expect([...refused.made.a.executed, ...refused.made.b.executed, ...refused.c.executed]).toEqual([])
    const again = nested(true)
    expect(await Effect.runPromise(again.flow.resume(first.snapshot, { "0/k1": Decision.approve, "1/0/k1": Decision.approve, "1/1/k1": Decision.deny("no") })))
      .toEqual({ _tag: "Completed", output: ["c paid", ["a paid", "b paid"]] })
    expect([again.made.a.executed.length, again.made.b.executed.length, again.c.executed.length]).toEqual([1, 0, 1])
  })

  it("a completed member's output that is not JSON cannot be kept: the suspension fails with SnapshotInvalid, never a defect", async () => {
    const a = makeBank(scriptedModel([transfer("bob", 500), text("a paid")]))
    const counter = { name: "counter", runEffect: (_: string) => Effect.succeed(10n) }
    const exit = await runExit(parallel("odd", [a.bank, counter]).runEffect("pay"))
    expect(failureOf(exit)).toMatchObject({ _tag: "SnapshotInvalid" })
    expect(a.executed).toEqual([])
  })

  it("collect mode keeps each member's Result; nests in a pipeline; types the result", async () => {
    const first = await buildCollecting().flow.run("pay")
    if (first._tag !== "Suspended") throw new Error("expected the parallel to suspend")
    const again = buildCollecting({ fresh: true })
    const ledger = inMemoryResumeLedger()
    const once = () => again.flow.resume(first.snapshot, { "0/k1": Decision.approve, "1/k1": Decision.deny("no") }).pipe(Effect.provideService(ResumeLedger, ledger))
    const rest = await Effect.runPromise(once())
    if (rest._tag !== "Completed") throw new Error("expected completion")
    expect(rest.output.map((r) => Result.isSuccess(r) ? r.success : undefined)).toEqual(["a paid", "b paid", "read"])
    // A refusal is the resume's, not a member's failure to collect.
    expect(failureOf(await runExit(once()))).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect(again.a.executed).toHaveLength(1)
    const made = build()
    const flow = pipeline("flow", agent("prep").model(scriptedModel(() => text("pay"))), made.flow)
    const nested = await flow.run("go")
    if (nested._tag !== "Suspended") throw new Error("expected the pipeline to suspend")
    expect(nested.pending.map((p) => p.id)).toEqual(["0/k1", "1/k1"])
    const fresh = build({ fresh: true })
    const flowAgain = pipeline("flow", agent("prep").model(scriptedModel(() => text("pay"))), fresh.flow)
    expect(failureOf(await runExit(flowAgain.resume(nested.snapshot, { "0/k1": Decision.approve, "1/k1": Decision.edit({ amount: 1 }) })))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(fresh.a.executed).toEqual([])
    expect(await Effect.runPromise(flowAgain.resume(nested.snapshot, { "0/k1": Decision.approve, "1/k1": Decision.approve })))
      .toEqual({ _tag: "Completed", output: ["a paid", "b paid", "read"] })
    expectTypeOf<Awaited<ReturnType<typeof made.flow.run>>>().toEqualTypeOf<Completed<readonly [string, string, string]> | CompositeSuspended>()
    const plain = parallel("plain", [agent("x").model(scriptedModel(() => text("x")))])
    expectTypeOf<Awaited<ReturnType<typeof plain.run>>>().toEqualTypeOf<readonly [string]>()
    expect(await plain.run("q")).toEqual(["x"])
  })
})
