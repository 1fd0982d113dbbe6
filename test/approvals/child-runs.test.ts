/** A child run that waits for a decision suspends its caller (issue 29 item 4): agents as tools and handoffs. */
import { Effect, Exit, Layer } from "effect"
import { durable, memoryEngine } from "../../src/durable/index.ts"
import { describe, expect, it } from "vitest"
import { agent, Decision, type RunStreamEvent, skill, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank, secret } from "./bank.ts"
import { reorderKeys } from "./reorder-keys.ts"

const childScript = () =>
  scriptedModel([toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("child paid")])

const caller = (options: { readonly sign?: string } = {}) => {
  const child = makeBank(childScript(), options)
  const model = scriptedModel([
    toolCalls([{ id: "p1", name: "pay", arguments: { input: "pay bob 500" } }, { id: "p2", name: "note", arguments: { input: "x" } }]),
    text("caller done")
  ])
  const noted: Array<string> = []
  const note = agent("note").model(scriptedModel(() => text("noted"))).onRunEnd(() => void noted.push("note"))
  const front = agent("front").model(model).tools({ pay: child.bank.asTool({ name: "pay" }), note: note.asTool({ name: "note" }) })
  return { child, model, front: options.sign === undefined ? front : front.signSnapshots(options.sign), noted }
}

describe("an agent used as a tool whose child suspends", () => {
  it("suspends the caller (never a tool result), holding the child's snapshot; one resume continues both", async () => {
    const { child, model, front, noted } = caller({ sign: secret })
    const first = await front.run("go")
    if (first._tag !== "Suspended") throw new Error("expected the caller to suspend")
    expect(first.pending).toEqual([{ id: "p1/k1", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(first.snapshot.state.children?.map((c) => c.id)).toEqual(["p1"])
    expect(child.executed).toEqual([])
    expect(noted).toEqual([])
    expect(model.requests).toHaveLength(1)
    const stored = reorderKeys(JSON.parse(JSON.stringify(first.snapshot)))
    const rest = await Effect.runPromise(front.resume(stored, { "p1/k1": Decision.approve }))
    expect(rest).toEqual({ _tag: "Completed", output: "caller done" })
    expect(child.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(noted).toEqual(["note"])
    const results = model.requests.at(-1)!.messages.filter((m) => m.role === "tool")
    expect(results.map((m) => m.content)).toEqual(["child paid", "noted"])
  })

  it("a denial reaches the child: its transfer never runs", async () => {
    const { child, front } = caller()
    const first = await front.run("go")
    if (first._tag !== "Suspended") throw new Error("expected the caller to suspend")
    expect(await Effect.runPromise(front.resume(first.snapshot, { "p1/k1": Decision.deny("no") }))).toEqual({ _tag: "Completed", output: "caller done" })
    expect(child.executed).toEqual([])
  })

  it("refuses a missing or invalid child decision before anything runs", async () => {
    const { child, front, noted } = caller()
    const first = await front.run("go")
    if (first._tag !== "Suspended") throw new Error("expected the caller to suspend")
    // The child's refusal names its call as the caller's pending list does.
    expect(failureOf(await runExit(front.resume(first.snapshot, {})))).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "p1/k1" })
    expect(failureOf(await runExit(front.resume(first.snapshot, { "p1/k1": Decision.edit({ to: "bob", amount: "all" }) })))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(failureOf(await runExit(front.resume(first.snapshot, { k1: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "k1" })
    expect(child.executed).toEqual([])
    expect(noted).toEqual([])
  })

  it("a signed caller refuses a snapshot whose child snapshot was changed", async () => {
    const { child, front } = caller({ sign: secret })
    const first = await front.run("go")
    if (first._tag !== "Suspended") throw new Error("expected the caller to suspend")
    const changed = JSON.parse(JSON.stringify(first.snapshot).replaceAll('\\"amount\\":500', '\\"amount\\":5').replaceAll('"amount":500', '"amount":5'))
    expect(failureOf(await runExit(front.resume(changed, { "p1/k1": Decision.approve })))).toMatchObject({ _tag: "SnapshotRejected" })
    expect(child.executed).toEqual([])
  })
})

describe("a handoff target that suspends", () => {
  const setup = () => {
    const child = makeBank(childScript())
    const model = scriptedModel([toolCalls([{ id: "h", name: "handoff_to_bank", arguments: {} }])])
    const front = agent("front").model(model).skills(() => [skill("triage", "route").handoffs(child.bank)])
    return { child, front }
  }

  it("suspends the handing-off run with the target's snapshot inside; its resume continues the target", async () => {
    const { child, front } = setup()
    const events: Array<RunStreamEvent> = []
    const first = await Effect.runPromise(front.onEvent((e) => void events.push(e)).runEffect("pay bob"))
    expect(first._tag).toBe("Suspended")
    if (first._tag !== "Suspended") return
    expect(first.pending).toEqual([{ id: "k1", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(first.snapshot.agent).toBe("front")
    expect(first.snapshot.state.handoff?.agent).toBe("bank")
    const rest = await Effect.runPromise(front.resume(JSON.stringify(first.snapshot), { k1: Decision.approve }))
    expect(rest).toEqual({ _tag: "Completed", output: "child paid" })
    expect(child.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
  })
})

describe("inside a durable run", () => {
  it("an agent-as-tool whose child suspends suspends the durable run; decided through the inbox, the child resumes once (test/durable/child-approval.test.ts has more)", async () => {
    const { child, front } = caller()
    const d = durable(front)
    const out = await Effect.gen(function*() {
      const first = yield* d.run("go", { runId: "r-child" })
      yield* d.decide("r-child", { "p1/k1": Decision.approve })
      return { first, output: yield* d.join("r-child") }
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.runPromise)
    expect(out.first).toMatchObject({ _tag: "Suspended", pending: [{ id: "p1/k1", tool: "transfer" }] })
    expect(out.output).toBe("caller done")
    expect(child.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
  })
})
