import { afterEach, describe, expect, it } from "vitest"
import { type Studio, startStudio } from "../../../src/studio/index.ts"
import { call, eventually, testAgents } from "./support.ts"

let studio: Studio | undefined
afterEach(async () => {
  await studio?.close()
  studio = undefined
})

/** A teller run waiting for a decision on its transfer. */
const suspendedTransfer = async (input = "pay bob 500") => {
  const { agents, ran } = testAgents()
  studio = await startStudio({ agents, port: 0 })
  const s = studio
  const runId: string = (await call(s, "POST", "/api/agents/teller/runs", { input })).body.runId
  const item = await eventually(async () => (await call(s, "GET", "/api/approvals")).body.find((a: any) => a.runId === runId))
  return { studio: s, runId, item, ran }
}

const summaryOf = async (studio: Studio, runId: string) => (await call(studio, "GET", `/api/runs/${runId}`)).body

describe("approvals inbox", () => {
  it("lists a suspended run's pending call with its arguments and the tool's JSON Schema", async () => {
    const { studio, runId, item, ran } = await suspendedTransfer()
    expect(item).toMatchObject({ runId, agent: "teller", source: "studio" })
    expect(item.calls).toHaveLength(1)
    expect(item.calls[0]).toMatchObject({ tool: "transfer", arguments: { to: "bob", amount: 500 }, jsonSchema: { type: "object", required: ["to", "amount"] } })
    expect(typeof item.since).toBe("number")
    expect((await summaryOf(studio, runId)).summary.status).toBe("suspended")
    expect(ran).toEqual([])
  })

  it("approve: the run resumes under its id, the tool runs once, and the detail records who decided", async () => {
    const { studio, runId, item, ran } = await suspendedTransfer()
    const callId = item.calls[0].callId
    const answer = await call(studio, "POST", `/api/approvals/${runId}`, { decisions: [{ callId, decision: "approve" }], decidedBy: "alice" })
    expect(answer).toEqual({ status: 200, body: { runId } })
    const detail = await eventually(async () => {
      const d = await summaryOf(studio, runId)
      return d.summary.status === "completed" ? d : undefined
    })
    expect(ran).toEqual([{ to: "bob", amount: 500 }])
    expect(detail.decisions).toEqual([{ callId, tool: "transfer", decision: "approve", decidedBy: "alice", at: expect.any(Number) }])
    expect(detail.events.map((e: any) => e.event._tag)).toEqual(expect.arrayContaining(["ApprovalRequested", "StudioDecision", "ApprovalDecided", "ToolUse"]))
    expect((await call(studio, "GET", "/api/approvals")).body).toEqual([])
    // Decided once: the same decision again finds nothing waiting.
    expect((await call(studio, "POST", `/api/approvals/${runId}`, { decisions: [{ callId, decision: "approve" }] })).status).toBe(404)
    expect(ran).toHaveLength(1)
  })

  it("deny with a reason: the tool never runs, the model is told, the run completes", async () => {
    const { studio, runId, item, ran } = await suspendedTransfer()
    const callId = item.calls[0].callId
    expect((await call(studio, "POST", `/api/approvals/${runId}`, { decisions: [{ callId, decision: "deny", reason: "not today" }] })).status).toBe(200)
    const detail = await eventually(async () => {
      const d = await summaryOf(studio, runId)
      return d.summary.status === "completed" ? d : undefined
    })
    expect(ran).toEqual([])
    expect(detail.decisions[0]).toMatchObject({ decision: "deny", reason: "not today", decidedBy: "studio" })
    expect(detail.output).toContain("not today")
  })

  it("edit with arguments the Schema refuses: 400 DecisionsInvalid, nothing ran, the run still waits; a valid edit then runs those arguments", async () => {
    const { studio, runId, item, ran } = await suspendedTransfer()
    const callId = item.calls[0].callId
    const refused = await call(studio, "POST", `/api/approvals/${runId}`, { decisions: [{ callId, decision: "edit", arguments: { to: "bob", amount: "lots" } }] })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe("DecisionsInvalid")
    expect(refused.body.message).toContain("amount")
    expect(refused.body.details).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: callId })
    expect(ran).toEqual([])
    expect((await call(studio, "GET", "/api/approvals")).body.map((a: any) => a.runId)).toEqual([runId])
    expect((await summaryOf(studio, runId)).summary.status).toBe("suspended")

    const edited = await call(studio, "POST", `/api/approvals/${runId}`, { decisions: [{ callId, decision: "edit", arguments: { to: "carol", amount: 50 } }], decidedBy: "bob" })
    expect(edited.status).toBe(200)
    const detail = await eventually(async () => {
      const d = await summaryOf(studio, runId)
      return d.summary.status === "completed" ? d : undefined
    })
    expect(ran).toEqual([{ to: "carol", amount: 50 }])
    expect(detail.decisions).toEqual([expect.objectContaining({ decision: "edit", arguments: { to: "carol", amount: 50 }, decidedBy: "bob" })])
  })

  it("refuses malformed decision bodies and unknown call ids without resuming", async () => {
    const { studio, runId, ran } = await suspendedTransfer()
    for (const body of [{}, { decisions: [] }, { decisions: [{ callId: 1, decision: "approve" }] }, { decisions: [{ callId: "x", decision: "maybe" }] }, { decisions: [{ callId: "x", decision: "edit" }] }]) {
      const answer = await call(studio, "POST", `/api/approvals/${runId}`, body)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toBe("InvalidBody")
    }
    const unknown = await call(studio, "POST", `/api/approvals/${runId}`, { decisions: [{ callId: "no-such-call", decision: "approve" }] })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error).toBe("DecisionsInvalid")
    expect(ran).toEqual([])
    expect((await call(studio, "POST", "/api/approvals/run_unknown", { decisions: [{ callId: "c", decision: "approve" }] })).status).toBe(404)
  })

  it("a stopped waiting run leaves the inbox as cancelled and cannot be approved", async () => {
    const { studio, runId, item, ran } = await suspendedTransfer()
    expect((await call(studio, "POST", `/api/runs/${runId}/stop`)).status).toBe(202)
    expect((await summaryOf(studio, runId)).summary.status).toBe("cancelled")
    expect((await call(studio, "GET", "/api/approvals")).body).toEqual([])
    expect((await call(studio, "POST", `/api/approvals/${runId}`, { decisions: [{ callId: item.calls[0].callId, decision: "approve" }] })).status).toBe(404)
    expect(ran).toEqual([])
  })
})

describe("approvals across a studio restart", () => {
  it("a run waiting when the studio stopped waits again after it restarts, and can be approved", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs")
    const { tmpdir } = await import("node:os")
    const { join } = await import("node:path")
    const dir = mkdtempSync(join(tmpdir(), "studio-restart-"))
    try {
      const storeFile = join(dir, "runs.jsonl")
      const first = testAgents()
      studio = await startStudio({ agents: first.agents, port: 0, storeFile })
      const s1 = studio
      const runId: string = (await call(s1, "POST", "/api/agents/teller/runs", { input: "pay dan 700" })).body.runId
      await eventually(async () => (await call(s1, "GET", "/api/approvals")).body.length === 1 || undefined)
      await studio.close()
      const second = testAgents()
      studio = await startStudio({ agents: second.agents, port: 0, storeFile })
      const s2 = studio
      const [item] = (await call(s2, "GET", "/api/approvals")).body
      expect(item).toMatchObject({ runId, agent: "teller", source: "studio", calls: [{ tool: "transfer", arguments: { to: "dan", amount: 700 } }] })
      expect((await call(s2, "POST", `/api/approvals/${runId}`, { decisions: [{ callId: item.calls[0].callId, decision: "approve" }] })).status).toBe(200)
      await eventually(async () => (await summaryOf(s2, runId)).summary.status === "completed" || undefined)
      expect(second.ran).toEqual([{ to: "dan", amount: 700 }])
      expect(first.ran).toEqual([])
    } finally {
      await studio?.close()
      studio = undefined
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("a waiting run and the store's bounds", () => {
  it("newer runs past maxRuns never evict a run waiting for a decision: it stays listed, opens, and waits again after a restart", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs")
    const { tmpdir } = await import("node:os")
    const { join } = await import("node:path")
    const dir = mkdtempSync(join(tmpdir(), "studio-evict-"))
    try {
      const storeFile = join(dir, "runs.jsonl")
      const first = testAgents()
      studio = await startStudio({ agents: first.agents, port: 0, storeFile, maxRuns: 5 })
      const s1 = studio
      const runId: string = (await call(s1, "POST", "/api/agents/teller/runs", { input: "pay dan 700" })).body.runId
      await eventually(async () => (await call(s1, "GET", "/api/approvals")).body.length === 1 || undefined)
      // An application reports more runs than the store keeps: the waiting run is the quietest.
      const events = Array.from({ length: 8 }, (_, i) => [
        { at: Date.now(), event: { _tag: "RunStart", runId: `app_${i}`, agent: "support", input: "q" } },
        { at: Date.now(), event: { _tag: "RunEnd", runId: `app_${i}`, agent: "support", outcome: { _tag: "Success", output: "a" } } }
      ]).flat()
      expect((await call(s1, "POST", "/api/ingest", { events })).status).toBe(202)
      expect((await call(s1, "GET", "/api/approvals")).body.map((a: any) => a.runId)).toEqual([runId])
      expect((await summaryOf(s1, runId)).summary.status).toBe("suspended")
      // The others are still bounded: the waiting run and the four newest.
      expect((await call(s1, "GET", "/api/runs")).body.map((r: any) => r.runId).sort()).toEqual([runId, "app_4", "app_5", "app_6", "app_7"].sort())
      await studio.close()
      const second = testAgents()
      studio = await startStudio({ agents: second.agents, port: 0, storeFile, maxRuns: 5 })
      const s2 = studio
      const [item] = (await call(s2, "GET", "/api/approvals")).body
      expect(item).toMatchObject({ runId, calls: [{ tool: "transfer", arguments: { to: "dan", amount: 700 } }] })
      expect((await call(s2, "POST", `/api/approvals/${runId}`, { decisions: [{ callId: item.calls[0].callId, decision: "approve" }] })).status).toBe(200)
      await eventually(async () => (await summaryOf(s2, runId)).summary.status === "completed" || undefined)
      expect(second.ran).toEqual([{ to: "dan", amount: 700 }])
    } finally {
      await studio?.close()
      studio = undefined
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("approvals of a composite", () => {
  it("a pipeline whose stage waits is listed under the pipeline's run and resumes through it", async () => {
    const { pipeline, agent, text } = await import("../../../src/index.ts")
    const { scriptedModel } = await import("../../../src/testing/index.ts")
    const { agents, ran } = testAgents()
    const notify = agent("notify").model(scriptedModel((r) => text(`notified: ${String(r.messages.at(-1)?.content)}`)))
    studio = await startStudio({ agents: { flow: pipeline("pay-flow", agents.teller, notify) }, port: 0 })
    const s = studio
    const runId: string = (await call(s, "POST", "/api/agents/flow/runs", { input: "pay eve 900" })).body.runId
    const item = await eventually(async () => (await call(s, "GET", "/api/approvals")).body[0])
    expect(item).toMatchObject({ runId, agent: "pay-flow", calls: [{ tool: "transfer", arguments: { to: "eve", amount: 900 } }] })
    expect(item.calls[0].jsonSchema).toMatchObject({ type: "object" })
    expect((await summaryOf(s, runId)).summary).toMatchObject({ status: "suspended", kind: "composite" })
    expect((await call(s, "POST", `/api/approvals/${runId}`, { decisions: [{ callId: item.calls[0].callId, decision: "approve" }] })).status).toBe(200)
    const detail = await eventually(async () => {
      const d = await summaryOf(s, runId)
      return d.summary.status === "completed" ? d : undefined
    })
    expect(ran).toEqual([{ to: "eve", amount: 900 }])
    expect(detail.output).toContain("notified: Done: sent 900 to eve")
  })
})
