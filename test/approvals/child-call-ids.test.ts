/**
 * Which run a waiting call belongs to (found by an outside tester): a model may choose a call id with a
 * `/` in it, such as `p1/x` beside a call `p1` that runs a child agent which suspends. The run's own
 * pending ids take precedence, a child's call is listed under an id no own call has, and the pending
 * list can always be answered exactly as listed.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, type LlmResponseInit, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const setup = (childCallId: string) => {
  const executed: Array<string> = []
  const transfer = (owner: string) =>
    tool("transfer", {
      args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
      needsApproval: true,
      run: ({ to, amount }) => {
        executed.push(`${owner} ${to} ${amount}`)
        return "sent"
      }
    })
  const make = (parentScript: ReadonlyArray<LlmResponseInit>, childScript: ReadonlyArray<LlmResponseInit>) => {
    const child = agent("child").model(scriptedModel(childScript)).tools({ transfer: transfer("child") })
    return agent("parent").model(scriptedModel(parentScript)).tools({ sub: child.asTool({ name: "sub" }), transfer: transfer("parent") })
  }
  const first = make(
    [toolCalls([{ id: "p1", name: "sub", arguments: { input: "x" } }, { id: "p1/x", name: "transfer", arguments: { to: "mallory", amount: 7 } }]), text("parent done")],
    [toolCalls([{ id: childCallId, name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("child done")]
  )
  const fresh = () => make([text("parent done")], [text("child done")])
  return { first, fresh, executed }
}

describe("a parent's own call id that starts with a child's call id", () => {
  it("is the parent's: every listed call answered as listed resumes both runs", async () => {
    const { first, fresh, executed } = setup("c1")
    const suspended = await first.run("go")
    if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
    expect(suspended.pending.map((p) => p.id)).toEqual(["p1/c1", "p1/x"])
    const snapshot = JSON.stringify(suspended.snapshot)
    expect(await Effect.runPromise(fresh().resume(snapshot, { "p1/c1": Decision.approve, "p1/x": Decision.deny("no") }))).toEqual({ _tag: "Completed", output: "parent done" })
    expect(executed).toEqual(["child bob 500"])
    expect(await Effect.runPromise(fresh().resume(snapshot, { "p1/c1": Decision.deny("no"), "p1/x": Decision.approve }))).toEqual({ _tag: "Completed", output: "parent done" })
    expect(executed).toEqual(["child bob 500", "parent mallory 7"])
  })

  it("must be answered: leaving it out is refused before anything runs", async () => {
    const { first, fresh, executed } = setup("c1")
    const suspended = await first.run("go")
    if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
    expect(failureOf(await runExit(fresh().resume(suspended.snapshot, { "p1/c1": Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "p1/x" })
    expect(executed).toEqual([])
  })

  it("when the child's own call would be listed under the same id, the child's is listed with #2 and each answer reaches its call", async () => {
    const { first, fresh, executed } = setup("x")
    const suspended = await first.run("go")
    if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
    expect(suspended.pending.map((p) => [p.id, p.args])).toEqual([
      ["p1/x#2", { to: "bob", amount: 500 }],
      ["p1/x", { to: "mallory", amount: 7 }]
    ])
    const decisions = { "p1/x#2": Decision.approve, "p1/x": Decision.deny("no") }
    expect(await Effect.runPromise(fresh().resume(JSON.stringify(suspended.snapshot), decisions))).toEqual({ _tag: "Completed", output: "parent done" })
    expect(executed).toEqual(["child bob 500"])
  })

  it("a decision under the child's prefix for no call the child waits on is refused", async () => {
    const { first, fresh, executed } = setup("c1")
    const suspended = await first.run("go")
    if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
    const decisions = { "p1/c1": Decision.approve, "p1/x": Decision.approve, "p1/zz": Decision.approve }
    expect(failureOf(await runExit(fresh().resume(suspended.snapshot, decisions)))).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "p1/zz" })
    expect(executed).toEqual([])
  })
})
