/**
 * A child agent's approvals seen from its caller (found by an outside tester): the caller announced the
 * child's request (`ApprovalRequested`, `p1/c1`), so its resume announces the decisions the same way
 * (`ApprovalDecided`, approve, edit with the arguments that run, deny with the reason), to its hooks
 * and in `resumeStream`, before the child runs the call. A grandchild's decisions reach both runs above it.
 */
import { Effect, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type AgentEvent, Decision, type LlmResponseInit, type RunStreamEvent, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const setup = () => {
  const executed: Array<unknown> = []
  const heard: Array<AgentEvent> = []
  const transfer = tool("transfer", {
    args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
    needsApproval: true,
    run: (args) => {
      executed.push(args)
      return "sent"
    }
  })
  const make = (parentScript: ReadonlyArray<LlmResponseInit>, childScript: ReadonlyArray<LlmResponseInit>) => {
    const child = agent("child").model(scriptedModel(childScript)).tools({ transfer })
    return agent("parent")
      .model(scriptedModel(parentScript))
      .tools({ sub: child.asTool({ name: "sub" }) })
      .onApprovalRequested((event) => void heard.push(event))
      .onApprovalDecided((event) => void heard.push(event))
  }
  const first = make(
    [toolCalls([{ id: "p1", name: "sub", arguments: { input: "x" } }]), text("parent done")],
    [toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("child done")]
  )
  const fresh = () => make([text("parent done")], [text("child done")])
  return { first, fresh, executed, heard }
}

const decidedOf = (events: ReadonlyArray<AgentEvent | RunStreamEvent>) =>
  events.flatMap((e) => (e._tag === "ApprovalDecided" ? [{ agent: e.agent, toolCallId: e.toolCallId, tool: e.tool, decision: e.decision, args: e.args, reason: e.reason }] : []))

describe("a child agent's decisions in its caller's events", () => {
  it("reach the caller's onApprovalDecided, approved, edited or denied, with the caller's id", async () => {
    const cases = [
      [Decision.approve, { decision: "approve", args: { to: "bob", amount: 500 }, reason: undefined }, [{ to: "bob", amount: 500 }]],
      [Decision.edit({ to: "bob", amount: 50 }), { decision: "edit", args: { to: "bob", amount: 50 }, reason: undefined }, [{ to: "bob", amount: 50 }]],
      [Decision.deny("not today"), { decision: "deny", args: undefined, reason: "not today" }, []]
    ] as const
    for (const [decision, expected, ran] of cases) {
      const { first, fresh, executed, heard } = setup()
      const suspended = await first.run("go")
      if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
      expect(heard.map((e) => e._tag)).toEqual(["ApprovalRequested"])
      expect(await Effect.runPromise(fresh().resume(JSON.stringify(suspended.snapshot), { "p1/c1": decision }))).toEqual({ _tag: "Completed", output: "parent done" })
      expect(decidedOf(heard)).toEqual([{ agent: "parent", toolCallId: "p1/c1", tool: "transfer", ...expected }])
      expect(executed).toEqual(ran)
    }
  })

  it("are in the caller's resumeStream, before the call that resumes the child", async () => {
    const { first, fresh } = setup()
    const suspended = await first.run("go")
    if (suspended._tag !== "Suspended") throw new Error("expected a suspension")
    const events = await Effect.runPromise(Stream.runCollect(fresh().resumeStream(suspended.snapshot, { "p1/c1": Decision.approve })))
    const tags = events.map((e) => e._tag)
    expect(decidedOf(events)).toEqual([{ agent: "parent", toolCallId: "p1/c1", tool: "transfer", decision: "approve", args: { to: "bob", amount: 500 }, reason: undefined }])
    expect(tags.indexOf("ApprovalDecided")).toBeLessThan(tags.indexOf("ToolUse"))
    expect(tags.at(-1)).toBe("RunEnd")
  })

  it("a grandchild's decision is announced by each run above it, under its own ids", async () => {
    const executed: Array<unknown> = []
    const heard: Array<AgentEvent> = []
    const transfer = tool("transfer", {
      args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
      needsApproval: true,
      run: (args) => void executed.push(args)
    })
    const make = (scripts: { readonly top: ReadonlyArray<LlmResponseInit>; readonly mid: ReadonlyArray<LlmResponseInit>; readonly low: ReadonlyArray<LlmResponseInit> }) => {
      const low = agent("low").model(scriptedModel(scripts.low)).tools({ transfer })
      const mid = agent("mid").model(scriptedModel(scripts.mid)).tools({ deeper: low.asTool({ name: "deeper" }) }).onApprovalDecided((e) => void heard.push(e))
      return agent("top").model(scriptedModel(scripts.top)).tools({ sub: mid.asTool({ name: "sub" }) }).onApprovalDecided((e) => void heard.push(e))
    }
    const first = await make({
      top: [toolCalls([{ id: "p1", name: "sub", arguments: { input: "x" } }])],
      mid: [toolCalls([{ id: "m1", name: "deeper", arguments: { input: "y" } }])],
      low: [toolCalls([{ id: "g1", name: "transfer", arguments: { to: "bob", amount: 500 } }])]
    }).run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending.map((p) => p.id)).toEqual(["p1/m1/g1"])
    const resumed = make({ top: [text("top done")], mid: [text("mid done")], low: [text("low done")] })
    expect(await Effect.runPromise(resumed.resume(first.snapshot, { "p1/m1/g1": Decision.deny("no") }))).toEqual({ _tag: "Completed", output: "top done" })
    expect(decidedOf(heard).map((d) => [d.agent, d.toolCallId, d.decision])).toEqual([["top", "p1/m1/g1", "deny"], ["mid", "m1/g1", "deny"]])
    expect(executed).toEqual([])
  })
})
