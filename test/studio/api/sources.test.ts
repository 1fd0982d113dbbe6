import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { agent, inMemorySessionStore, session, text, tool, toolCalls } from "../../../src/index.ts"
import { durable, memoryEngine } from "../../../src/durable/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import { type Studio, startStudio, trackedSessionStore } from "../../../src/studio/index.ts"
import { call, eventually } from "./support.ts"

let studio: Studio | undefined
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await studio?.close()
  studio = undefined
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

describe("sessions", () => {
  it("lists a tracked store's conversations and shows one's messages", async () => {
    const store = trackedSessionStore(inMemorySessionStore())
    const chat = session(agent("helper").model(scriptedModel((r) => text(`echo ${String(r.messages.at(-1)?.content)}`))), "user-7", { store })
    await chat.send("hello")
    await chat.send("again")
    studio = await startStudio({ port: 0, sessions: store })
    const list = await call(studio, "GET", "/api/sessions")
    expect(list.body).toEqual([{ id: "user-7", updatedAt: expect.any(Number), messages: 4, waiting: false }])
    const one = await call(studio, "GET", "/api/sessions/user-7")
    expect(one.body.messages.map((m: any) => [m.role, m.content])).toEqual([["user", "hello"], ["assistant", "echo hello"], ["user", "again"], ["assistant", "echo again"]])
    // Looking up a session that does not exist does not add it to the list.
    await call(studio, "GET", "/api/sessions/nobody")
    expect((await call(studio, "GET", "/api/sessions")).body.map((s: any) => s.id)).toEqual(["user-7"])
  })

  it("answers an empty list without a store, and 404 for a session", async () => {
    studio = await startStudio({ port: 0 })
    expect((await call(studio, "GET", "/api/sessions")).body).toEqual([])
    expect((await call(studio, "GET", "/api/sessions/x")).status).toBe(404)
  })
})

describe("durable runs", () => {
  it("lists a durable agent's runs with their status, and decides its approval inbox from the studio", async () => {
    const ran: Array<string> = []
    const transfer = tool("transfer", {
      args: Schema.Struct({ to: Schema.String }),
      needsApproval: true,
      run: ({ to }) => {
        ran.push(to)
        return `sent to ${to}`
      }
    })
    const model = scriptedModel((request) => {
      const input = request.messages.find((m) => m.role === "user")?.content ?? ""
      const answered = request.messages.some((m) => m.role === "tool")
      return input === "wait" && !answered ? toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob" } }]) : text("ok")
    })
    const d = durable(agent("payer").model(model).tools({ transfer }))
    const runtime = ManagedRuntime.make(d.layer.pipe(Layer.provideMerge(memoryEngine)))
    cleanups.push(() => runtime.dispose())
    await runtime.runPromise(d.run("ok", { runId: "d-ok" }))
    await runtime.runPromise(d.run("wait", { runId: "d-wait" }))
    studio = await startStudio({ port: 0, durable: { agents: [d], layer: Layer.succeedContext(await runtime.context()), pollMs: 100 } })
    const s = studio
    const runs = await eventually(async () => {
      const list = (await call(s, "GET", "/api/runs?source=durable")).body
      return list.length === 2 ? list : undefined
    })
    expect(runs.map((r: any) => [r.runId, r.agent, r.status])).toEqual([["d-wait", "payer", "suspended"], ["d-ok", "payer", "completed"]])
    const inbox = (await call(s, "GET", "/api/approvals")).body
    expect(inbox).toEqual([expect.objectContaining({ runId: "d-wait", source: "durable", calls: [expect.objectContaining({ callId: "t1", tool: "transfer", arguments: { to: "bob" } })] })])
    const refused = await call(s, "POST", "/api/approvals/d-wait", { decisions: [{ callId: "t1", decision: "edit", arguments: { to: 5 } }] })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe("DecisionsInvalid")
    expect(ran).toEqual([])
    expect((await call(s, "POST", "/api/approvals/d-wait", { decisions: [{ callId: "t1", decision: "approve" }], decidedBy: "carol" })).status).toBe(200)
    expect(await runtime.runPromise(d.join("d-wait"))).toBe("ok")
    expect(ran).toEqual(["bob"])
    await eventually(async () => (await call(s, "GET", "/api/runs/d-wait")).body.summary.status === "completed" || undefined)
    const detail = (await call(s, "GET", "/api/runs/d-wait")).body
    expect(detail.decisions).toEqual([expect.objectContaining({ callId: "t1", decision: "approve", decidedBy: "carol" })])
    // The engine's journal gives the run's steps: its model calls, the approval, the tool call.
    await eventually(async () => (await call(s, "GET", "/api/runs/d-wait")).body.events.some((e: any) => e.event._tag === "ToolUse") || undefined)
    const steps = (await call(s, "GET", "/api/runs/d-wait")).body
    expect(steps.events.map((e: any) => e.event._tag)).toEqual(expect.arrayContaining(["RunStart", "ModelResponse", "ApprovalRequested", "ApprovalDecided", "ToolUse", "RunEnd", "StudioDecision"]))
    expect(steps.events.find((e: any) => e.event._tag === "ToolUse").event).toMatchObject({ tool: "transfer", args: { to: "bob" }, result: "sent to bob" })
    expect(steps.summary).toMatchObject({ status: "completed", turns: 2 })
    expect(steps.output).toBe("ok")
    expect((await call(s, "GET", "/api/approvals")).body).toEqual([])
  })

  it("two reviewers deciding one durable wait at once: one decision is taken, the other is refused; one is recorded", async () => {
    const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String }), needsApproval: true, run: ({ to }) => `sent to ${to}` })
    const model = scriptedModel((request) => (request.messages.some((m) => m.role === "tool") ? text("ok") : toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob" } }])))
    const d = durable(agent("payer").model(model).tools({ transfer }))
    const runtime = ManagedRuntime.make(d.layer.pipe(Layer.provideMerge(memoryEngine)))
    cleanups.push(() => runtime.dispose())
    await runtime.runPromise(d.run("wait", { runId: "d-twice" }))
    // The engine takes a while to record a decision, as a database does: both requests arrive meanwhile.
    const slow: typeof d = Object.assign(Object.create(d), { decide: (...args: Parameters<typeof d.decide>) => Effect.delay(d.decide(...args), "150 millis") })
    studio = await startStudio({ port: 0, durable: { agents: [slow], layer: Layer.succeedContext(await runtime.context()), pollMs: 100 } })
    const s = studio
    await eventually(async () => (await call(s, "GET", "/api/approvals")).body.length === 1 || undefined)
    const [approve, deny] = await Promise.all([
      call(s, "POST", "/api/approvals/d-twice", { decisions: [{ callId: "t1", decision: "approve" }], decidedBy: "ann" }),
      call(s, "POST", "/api/approvals/d-twice", { decisions: [{ callId: "t1", decision: "deny", reason: "no" }], decidedBy: "bo" })
    ])
    expect([approve.status, deny.status].sort()).toEqual([200, 404])
    await eventually(async () => (await call(s, "GET", "/api/runs/d-twice")).body.summary.status === "completed" || undefined)
    expect((await call(s, "GET", "/api/runs/d-twice")).body.decisions).toHaveLength(1)
  })
})
