/** A pipeline whose stage waits for a human decision suspends as a whole (issue 29, composites). */
import { Effect } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import {
  agent,
  type Completed,
  type CompositeSuspended,
  Decision,
  inMemoryResumeLedger,
  pipeline,
  ResumeLedger,
  text,
  toolCalls
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank, secret } from "./bank.ts"
import { reorderKeys } from "./reorder-keys.ts"

const pay = () => scriptedModel([toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("child paid")])

/** prep → bank (may suspend) → after. `fresh`: the bank's model starts after its tool call, as in another process. */
const build = (options: { readonly sign?: string; readonly fresh?: boolean } = {}) => {
  const bank = makeBank(options.fresh === true ? scriptedModel([text("child paid")]) : pay(), options)
  const seen: Array<string> = []
  const prep = agent("prep").model(scriptedModel(() => text("pay bob 500"))).onRunEnd(() => void seen.push("prep"))
  const after = agent("after").model(scriptedModel((request) => text(`after: ${request.messages.at(-1)?.content}`)))
    .onRunEnd(() => void seen.push("after"))
  return { bank, seen, flow: pipeline("payments", prep, bank.bank, after) }
}

const suspendedRun = async (options: { readonly sign?: string } = {}) => {
  const made = build(options)
  const first = await made.flow.run("go")
  if (first._tag !== "Suspended") throw new Error("expected the pipeline to suspend")
  return { ...made, first }
}

describe("a pipeline whose stage waits for approval", () => {
  it("suspends where it stopped, with the stage's snapshot; a fresh pipeline resumes it from reordered JSON: the tool runs once, then the rest", async () => {
    const { bank, seen, first } = await suspendedRun()
    expect(first.pending).toEqual([{ id: "k1", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(first.snapshot).toMatchObject({ version: 1, composite: "payments", kind: "pipeline", state: { stage: 1 } })
    expect((first.snapshot.state.member as { agent: string }).agent).toBe("bank")
    expect(bank.executed).toEqual([])
    expect(seen).toEqual(["prep"])
    const stored = reorderKeys(JSON.parse(JSON.stringify(first.snapshot)))
    const again = build({ fresh: true })
    const rest = await Effect.runPromise(again.flow.resume(stored, { k1: Decision.approve }))
    expect(rest).toEqual({ _tag: "Completed", output: "after: child paid" })
    expect(again.bank.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(again.seen).toEqual(["after"])
  })

  it("a denial never runs the tool; the pipeline still completes", async () => {
    const { bank, first } = await suspendedRun()
    const rest = await Effect.runPromise(build({ fresh: true }).flow.resume(JSON.stringify(first.snapshot), { k1: Decision.deny("no") }))
    expect(rest._tag).toBe("Completed")
    expect(bank.executed).toEqual([])
  })

  it("refuses missing or foreign decisions before anything runs", async () => {
    const { first } = await suspendedRun()
    const again = build({ fresh: true })
    expect(failureOf(await runExit(again.flow.resume(first.snapshot, {})))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(failureOf(await runExit(again.flow.resume(first.snapshot, { other: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(again.bank.executed).toEqual([])
    expect(again.seen).toEqual([])
  })

  it("with a ResumeLedger, a second resume of the same snapshot is refused and the tool ran once", async () => {
    const { first } = await suspendedRun()
    const ledger = inMemoryResumeLedger()
    const again = build({ fresh: true })
    const json = JSON.stringify(first.snapshot)
    const once = (s: unknown) => again.flow.resume(s, { k1: Decision.approve }).pipe(Effect.provideService(ResumeLedger, ledger))
    expect((await Effect.runPromise(once(json)))._tag).toBe("Completed")
    expect(failureOf(await runExit(once(reorderKeys(JSON.parse(json)))))).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect(again.bank.executed).toHaveLength(1)
    expect(again.seen).toEqual(["after"])
  })

  it("is signed when its stage signs: a changed, unsigned or foreign snapshot is refused before anything runs", async () => {
    const { first } = await suspendedRun({ sign: secret })
    expect(first.snapshot.signature).toMatch(/^v2\./)
    const again = build({ sign: secret, fresh: true })
    const moved = { ...first.snapshot, state: { ...first.snapshot.state, stage: 0 } }
    expect(failureOf(await runExit(again.flow.resume(moved, { k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotRejected", reason: "tampered" })
    const { signature: _, ...unsigned } = first.snapshot
    expect(failureOf(await runExit(again.flow.resume(unsigned, { k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotRejected", reason: "unsigned" })
    const foreign = build({ sign: "another-secret-of-enough-length", fresh: true })
    expect(failureOf(await runExit(foreign.flow.resume(first.snapshot, { k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotRejected", reason: "foreign" })
    expect(again.bank.executed).toEqual([])
    expect(foreign.bank.executed).toEqual([])
    expect((await Effect.runPromise(again.flow.resume(first.snapshot, { k1: Decision.approve })))._tag).toBe("Completed")
  })

  it("signs with its own secret when given one (.signSnapshots)", async () => {
    const made = build()
    const signed = made.flow.signSnapshots(secret)
    const first = await signed.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.snapshot.signature).toMatch(/^v2\./)
    expect(failureOf(await runExit(build({ fresh: true }).flow.signSnapshots("another-secret-of-enough-length").resume(first.snapshot, { k1: Decision.approve }))))
      .toMatchObject({ _tag: "SnapshotRejected", reason: "foreign" })
    expect(() => made.flow.signSnapshots("short")).toThrow(/16 characters/)
  })

  it("refuses a snapshot taken by another composite or another shape of it (DefinitionChanged), and garbage (SnapshotInvalid)", async () => {
    const { first } = await suspendedRun()
    const bank = makeBank(scriptedModel([text("child paid")]))
    const other = pipeline("payments", agent("prep2").model(scriptedModel(() => text("x"))), bank.bank)
    expect(failureOf(await runExit(other.resume(first.snapshot, { k1: Decision.approve })))).toMatchObject({ _tag: "DefinitionChanged" })
    const renamed = pipeline("elsewhere", agent("prep").model(scriptedModel(() => text("x"))), bank.bank, agent("after").model(scriptedModel(() => text("y"))))
    expect(failureOf(await runExit(renamed.resume(first.snapshot, { k1: Decision.approve })))).toMatchObject({ _tag: "DefinitionChanged" })
    for (const garbage of [null, 42, "{not json", { version: 2 }, { ...first.snapshot, extra: 1 }]) {
      expect(failureOf(await runExit(build({ fresh: true }).flow.resume(garbage, { k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotInvalid" })
    }
    // a forged stage index that names a stage that cannot suspend
    const forged = { ...first.snapshot, state: { ...first.snapshot.state, stage: 0 } }
    expect(failureOf(await runExit(build({ fresh: true }).flow.resume(forged, { k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotInvalid" })
    expect(bank.executed).toEqual([])
  })

  it("a nested pipeline and .andThen carry the suspension through every level", async () => {
    const bank = makeBank(pay())
    const prep = agent("prep").model(scriptedModel(() => text("pay bob 500")))
    const after = agent("after").model(scriptedModel((request) => text(`after: ${request.messages.at(-1)?.content}`)))
    const flow = pipeline("outer", pipeline("inner", prep, bank.bank), after)
    const chained = pipeline("inner", prep, bank.bank).andThen(after)
    const first = await flow.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending.map((p) => p.id)).toEqual(["k1"])
    expect((first.snapshot.state.member as { composite: string }).composite).toBe("inner")
    expect(await Effect.runPromise(flow.resume(JSON.stringify(first.snapshot), { k1: Decision.approve }))).toEqual({ _tag: "Completed", output: "after: child paid" })
    expect(bank.executed).toHaveLength(1)
    const bank2 = makeBank(pay())
    const chained2 = pipeline("inner", prep, bank2.bank).andThen(after)
    const second = await chained2.run("go")
    if (second._tag !== "Suspended") throw new Error("expected a suspension")
    expect(await Effect.runPromise(chained2.resume(second.snapshot, { k1: Decision.deny("no") }))).toMatchObject({ _tag: "Completed" })
    expect(bank2.executed).toEqual([])
    expectTypeOf<Awaited<ReturnType<typeof chained.run>>>().toEqualTypeOf<Completed<string> | CompositeSuspended>()
  })

  it("types: Completed | Suspended when a stage may need approval, the plain output otherwise", () => {
    const { flow } = build()
    expectTypeOf<Awaited<ReturnType<typeof flow.run>>>().toEqualTypeOf<Completed<string> | CompositeSuspended>()
    const plain = pipeline("plain", agent("a").model(scriptedModel(() => text("x"))), agent("b").model(scriptedModel(() => text("y"))))
    expectTypeOf<Awaited<ReturnType<typeof plain.run>>>().toEqualTypeOf<string>()
    // @ts-expect-error the run may be Suspended: narrow on _tag before reading the output
    void ((r: Awaited<ReturnType<typeof flow.run>>) => r.output)
  })

  it("a pipeline without such a stage is unchanged and has nothing to resume", async () => {
    const plain = pipeline("plain", agent("a").model(scriptedModel(() => text("x"))), agent("b").model(scriptedModel(() => text("y"))))
    expect(await plain.run("go")).toBe("y")
    expect(failureOf(await runExit(plain.resume({}, {})))).toMatchObject({ _tag: "SnapshotInvalid" })
  })
})
