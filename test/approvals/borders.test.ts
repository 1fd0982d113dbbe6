/**
 * Approvals across the borders a run crosses (issue 29): an edited unsigned snapshot, a second
 * suspension after decisions, signed snapshots whose keys were reordered (PostgreSQL `jsonb`).
 */
import { createHmac } from "node:crypto"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Decision, encodeSnapshot, Intercept, type RunSnapshot, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank, secret } from "./bank.ts"
import { reorderKeys } from "./reorder-keys.ts"

const suspended = async (options: { readonly sign?: string } = {}) => {
  const model = scriptedModel([
    toolCalls([{ id: "c1", name: "balance", arguments: {} }, { id: "c2", name: "transfer", arguments: { to: "bob", amount: 500 } }]),
    text("done")
  ])
  const made = makeBank(model, options)
  const first = await Effect.runPromise(made.bank.runEffect("pay bob 500"))
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  return { ...made, model, first }
}

const withState = (snapshot: RunSnapshot, state: Partial<RunSnapshot["state"]>): RunSnapshot => ({ ...snapshot, state: { ...snapshot.state, ...state } })

describe("an unsigned snapshot edited on the way (item 1)", () => {
  it("whose waiting entry names a harmless tool is refused: the pending call's tool never runs", async () => {
    const { bank, first, executed } = await suspended()
    const swapped = withState(first.snapshot, { awaiting: [{ id: "c2", tool: "balance", args: {} }] })
    const error = failureOf(await runExit(bank.resume(JSON.parse(JSON.stringify(swapped)), { c2: Decision.approve })))
    expect(error).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c2" })
    expect(error.message).toContain("does not match")
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  })

  it("whose waiting arguments differ from the pending call's is refused: an approval binds to the exact call", async () => {
    const { bank, first, executed } = await suspended()
    const swapped = withState(first.snapshot, { awaiting: [{ id: "c2", tool: "transfer", args: { to: "mallory", amount: 500 } }] })
    const error = failureOf(await runExit(bank.resume(swapped, { c2: Decision.approve })))
    expect(error).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c2" })
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  })

  it("whose pending call and waiting entry were both changed is refused: the pending calls are the model's, in the transcript", async () => {
    const { bank, first, executed } = await suspended()
    const call = { id: "c2", name: "transfer", arguments: JSON.stringify({ to: "mallory", amount: 500 }) }
    const edited = withState(first.snapshot, { pending: [call], awaiting: [{ id: "c2", tool: "transfer", args: { to: "mallory", amount: 500 } }] })
    const error = failureOf(await runExit(bank.resume(edited, { c2: Decision.approve })))
    expect(error).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c2" })
    expect(error.message).toContain("state.pending")
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  })

  it("whose transcript, pending call and waiting entry were all changed still runs only arguments the tool's Schema decoded", async () => {
    const { bank, first, executed } = await suspended()
    const call = { id: "c2", name: "transfer", arguments: JSON.stringify({ to: "bob", amount: "everything" }) }
    const transcript = first.snapshot.state.transcript.map((m) =>
      m.role === "assistant" && m.toolCalls !== undefined ? { ...m, toolCalls: m.toolCalls.map((c) => (c.id === "c2" ? call : c)) } : m
    )
    const edited = withState(first.snapshot, { transcript, pending: [call], awaiting: [{ id: "c2", tool: "transfer", args: { to: "bob", amount: "everything" }, reason: "x" }] })
    const error = failureOf(await runExit(bank.resume(edited, { c2: Decision.edit({ to: "bob", amount: "everything" }) })))
    expect(error).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c2" })
    expect(error.message).toContain("Schema")
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  })

  it("whose waiting entry has no pending call is refused", async () => {
    const { bank, first, executed } = await suspended()
    const orphan = withState(first.snapshot, { pending: [] })
    expect(failureOf(await runExit(bank.resume(orphan, { c2: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c2" })
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  })
})

describe("decisions across a second suspension (item 2)", () => {
  const setup = () => {
    const model = scriptedModel([
      toolCalls([
        { id: "t1", name: "transfer", arguments: { to: "bob", amount: 500 } },
        { id: "t2", name: "transfer", arguments: { to: "carol", amount: 50 } },
        { id: "t3", name: "transfer", arguments: { to: "dave", amount: 700 } }
      ]),
      text("done")
    ])
    const made = makeBank(model)
    const bank = made.bank.intercept("transfer", (args) => (args.to === "carol" ? Intercept.suspend("carol is new") : Intercept.proceed))
    return { ...made, bank, model }
  }

  it("are part of the snapshot: a denied call is not asked about again and never runs", async () => {
    const { bank, executed, model } = setup()
    const first = await bank.run("pay")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending.map((p) => p.id)).toEqual(["t1", "t3"])
    const second = await Effect.runPromise(bank.resume(JSON.stringify(first.snapshot), { t1: Decision.approve, t3: Decision.deny("too much") }))
    if (second._tag !== "Suspended") throw new Error("expected a second suspension")
    expect(second.pending.map((p) => p.id)).toEqual(["t2"])
    expect(second.snapshot.state.decided).toEqual([{ id: "t3", tool: "transfer", decision: "deny", reason: "too much" }])
    const again = failureOf(await runExit(bank.resume(second.snapshot, { t2: Decision.approve, t3: Decision.approve })))
    expect(again).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "t3" })
    const rest = await Effect.runPromise(bank.resume(JSON.parse(JSON.stringify(second.snapshot)), { t2: Decision.approve }))
    expect(rest).toEqual({ _tag: "Completed", output: "done" })
    expect(executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }, { tool: "transfer", args: { to: "carol", amount: 50 } }])
    const results = model.requests.at(-1)!.messages.filter((m) => m.role === "tool")
    expect(results.map((m) => (m.role === "tool" ? m.toolCallId : ""))).toEqual(["t1", "t2", "t3"])
    expect(results[2]!.content).toContain("too much")
  })

  it("an edit carried across a suspension is decoded again with the tool's Schema when resumed", async () => {
    const { bank, executed } = setup()
    const first = await bank.run("pay")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const second = await Effect.runPromise(bank.resume(first.snapshot, { t1: Decision.deny("no"), t3: Decision.edit({ to: "dave", amount: 70 }) }))
    if (second._tag !== "Suspended") throw new Error("expected a second suspension")
    const forged = withState(second.snapshot, { decided: [{ id: "t3", tool: "transfer", decision: "edit", args: { to: "dave", amount: "all" } }] })
    expect(failureOf(await runExit(bank.resume(forged, { t2: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "t3" })
    await Effect.runPromise(bank.resume(second.snapshot, { t2: Decision.approve }))
    expect(executed).toEqual([{ tool: "transfer", args: { to: "carol", amount: 50 } }, { tool: "transfer", args: { to: "dave", amount: 70 } }])
  })
})

describe("a signed snapshot stored where keys are reordered (item 3)", () => {
  it("resumes after its keys were reordered at every level, as PostgreSQL jsonb does", async () => {
    const { bank, first } = await suspended({ sign: secret })
    expect(first.snapshot.signature).toMatch(/^v2\.[0-9a-f]{16}\.[0-9a-f]{64}$/)
    const stored = reorderKeys(JSON.parse(JSON.stringify(first.snapshot)))
    expect(Object.keys(stored)).not.toEqual(Object.keys(first.snapshot))
    expect(await Effect.runPromise(bank.resume(stored, { c2: Decision.approve }))).toEqual({ _tag: "Completed", output: "done" })
  })

  it("signed before canonicalisation (v1) still verify as they were made", async () => {
    const { bank, first } = await suspended({ sign: secret })
    const { signature, ...rest } = first.snapshot
    const keyId = signature!.split(".")[1]
    const v1 = { ...rest, signature: `v1.${keyId}.${createHmac("sha256", secret).update(encodeSnapshot(rest)).digest("hex")}` }
    expect(await Effect.runPromise(bank.resume(v1, { c2: Decision.approve }))).toEqual({ _tag: "Completed", output: "done" })
  })

  it("is still refused when a value changed, whatever the key order", async () => {
    const { bank, first, executed } = await suspended({ sign: secret })
    const changed = reorderKeys(JSON.parse(JSON.stringify(first.snapshot).replace('"amount":500', '"amount":5')))
    expect(failureOf(await runExit(bank.resume(changed, { c2: Decision.approve })))).toMatchObject({ _tag: "SnapshotRejected", reason: "tampered" })
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  })
})
