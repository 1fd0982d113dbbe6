/**
 * `DecisionsInvalid.toolCallId` for a member's or a child's call is the id the pending list gave
 * (outside tester, s26/s27): `1/k1` for a parallel's member, `p/k` for an agent used as a tool, at
 * every depth, so a client can find the refused call in the list it answered.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, type Decisions, forum, parallel, pipeline, text, type Tool, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

/** An agent named `name` whose model asks to transfer once (call `id`), then answers. */
const bank = (name: string, id = "k1") => {
  const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String }), needsApproval: true, run: ({ to }) => `sent to ${to}` })
  return agent(name).model(scriptedModel((request) => request.messages.at(-1)?.role === "user" ? toolCalls([{ id, name: "transfer", arguments: { to: "bob" } }]) : text(`${name} done`)))
    .tools({ transfer })
}

/** An agent that runs a child agent as its tool `sub` (call `callId`). */
const caller = (name: string, sub: Tool<"sub", { readonly input: string }, string, never, true>, callId: string) =>
  agent(name).model(scriptedModel((request) => request.messages.at(-1)?.role === "user" ? toolCalls([{ id: callId, name: "sub", arguments: { input: "x" } }]) : text(`${name} done`)))
    .tools({ sub })

interface Resumable {
  run(input: string): Promise<any>
  resume(snapshot: unknown, decisions: Decisions): Effect.Effect<any, any>
}

/** Each waiting call approved but `bad`, given an edit its tool's Schema refuses: the refusal names `bad` as listed. */
const refusedAs = async (flow: Resumable, bad: string) => {
  const first = await flow.run("go")
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  const ids: ReadonlyArray<string> = first.pending.map((p: { readonly id: string }) => p.id)
  expect(ids).toContain(bad)
  const decisions = Object.fromEntries(ids.map((id) => [id, id === bad ? Decision.edit({ to: 42 }) : Decision.approve]))
  const error = failureOf(await runExit(flow.resume(first.snapshot, decisions)))
  expect(error).toMatchObject({ _tag: "DecisionsInvalid" })
  return { ids, toolCallId: (error as { readonly toolCallId: string }).toolCallId }
}

describe("a refused decision names the call as the pending list does", () => {
  it("a parallel's member: 1/k1, the tester's case (s27)", async () => {
    const { toolCallId } = await refusedAs(parallel("par", [bank("bank"), bank("bank")]), "1/k1")
    expect(toolCallId).toBe("1/k1")
  })

  it("an agent used as a tool: p/k (s26), and two levels down: p/q/k", async () => {
    expect((await refusedAs(caller("parent", bank("child", "k").asTool({ name: "sub" }), "p"), "p/k")).toolCallId).toBe("p/k")
    expect((await refusedAs(caller("top", caller("middle", bank("child", "k").asTool({ name: "sub" }), "q").asTool({ name: "sub" }), "p"), "p/q/k")).toolCallId).toBe("p/q/k")
  })

  it("nested composites and children in members: 0/1/k1, 1/p/k, and through a pipeline and a forum", async () => {
    expect((await refusedAs(parallel("outer", [parallel("inner", [bank("a"), bank("b")]), bank("c")]), "0/1/k1")).toolCallId).toBe("0/1/k1")
    expect((await refusedAs(parallel("par", [bank("a"), caller("parent", bank("child", "k").asTool({ name: "sub" }), "p")]), "1/p/k")).toolCallId).toBe("1/p/k")
    const echo = agent("echo", { input: Schema.Tuple([Schema.String, Schema.String]) }).model(scriptedModel(() => text("echo")))
    expect((await refusedAs(pipeline("flow", parallel("par", [bank("a"), bank("b")]), echo), "0/k1")).toolCallId).toBe("0/k1")
    expect((await refusedAs(forum("panel", [bank("a"), bank("b")], () => "decided"), "1/k1")).toolCallId).toBe("1/k1")
  })

  it("a child's id that collides with the caller's own is refused under its listed id (p/x#2)", async () => {
    const child = bank("child", "x")
    const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String }), needsApproval: true, run: ({ to }) => `sent to ${to}` })
    const parent = agent("parent")
      .model(scriptedModel((request) =>
        request.messages.at(-1)?.role === "user"
          ? toolCalls([{ id: "p", name: "sub", arguments: { input: "x" } }, { id: "p/x", name: "transfer", arguments: { to: "eve" } }])
          : text("done")
      ))
      .tools({ sub: child.asTool({ name: "sub" }), transfer })
    const { ids, toolCallId } = await refusedAs(parent, "p/x#2")
    expect(ids).toEqual(["p/x#2", "p/x"])
    expect(toolCallId).toBe("p/x#2")
  })
})
