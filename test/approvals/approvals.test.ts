import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import {
  agent,
  Decision,
  DecisionsInvalid,
  DefinitionChanged,
  type RunSnapshot,
  signSnapshot,
  SnapshotRejected,
  text,
  tool,
  toolCalls,
  type ToolUseEvent,
  traceLine,
  unsafeNoSchema
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { Schema } from "effect"
import { captureSpans, failureOf, runExit } from "../fixtures.ts"
import { makeBank, secret } from "./bank.ts"

const threeCalls = toolCalls([
  { id: "c1", name: "balance", arguments: {} },
  { id: "c2", name: "transfer", arguments: { to: "bob", amount: 500 } },
  { id: "c3", name: "balance", arguments: {} }
])

const suspendedBank = async (options: { readonly sign?: string } = {}) => {
  const model = scriptedModel([threeCalls, text("done")])
  const made = makeBank(model, options)
  const first = await Effect.runPromise(made.bank.runEffect("pay bob 500"))
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  return { ...made, model, first }
}

describe("a call that needs approval", () => {
  it("suspends the run after the calls before it, with the pending call and a JSON snapshot", async () => {
    const { first, executed } = await suspendedBank()
    expect(first.pending).toEqual([{ id: "c2", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(executed).toEqual([{ tool: "balance", args: {} }])
    const json = JSON.stringify(first.snapshot)
    expect(JSON.parse(json)).toEqual(first.snapshot)
    expect(first.snapshot.state.awaiting).toEqual([{ id: "c2", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(first.snapshot.state.pending.map((c) => c.id)).toEqual(["c2", "c3"])
  })

  it("runs on approve, then the calls after it, and completes", async () => {
    const { bank, first, executed, model } = await suspendedBank()
    const rest = await Effect.runPromise(bank.resume(JSON.parse(JSON.stringify(first.snapshot)), { c2: Decision.approve }))
    expect(rest).toEqual({ _tag: "Completed", output: "done" })
    expect(executed).toEqual([
      { tool: "balance", args: {} },
      { tool: "transfer", args: { to: "bob", amount: 500 } },
      { tool: "balance", args: {} }
    ])
    const last = model.requests.at(-1)!.messages
    expect(last.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["1000", "sent 500 to bob", "1000"])
  })

  it("never runs on deny: the model is told the reason and goes on", async () => {
    const { bank, first, executed, model } = await suspendedBank()
    const rest = await Effect.runPromise(bank.resume(first.snapshot, { c2: Decision.deny("over the daily limit") }))
    expect(rest).toEqual({ _tag: "Completed", output: "done" })
    expect(executed.map((e) => e.tool)).toEqual(["balance", "balance"])
    const denied = model.requests.at(-1)!.messages.find((m) => m.role === "tool" && m.toolCallId === "c2")
    expect(denied?.content).toContain("denied by a human reviewer")
    expect(denied?.content).toContain("over the daily limit")
  })

  it("runs with edited arguments, decoded again with the tool's Schema", async () => {
    const { bank, first, executed } = await suspendedBank()
    const rest = await Effect.runPromise(bank.resume(encode(first.snapshot), { c2: Decision.edit({ to: "bob", amount: 50 }) }))
    expect(rest).toEqual({ _tag: "Completed", output: "done" })
    expect(executed[1]).toEqual({ tool: "transfer", args: { to: "bob", amount: 50 } })
  })

  it("refuses an invalid edit, a missing decision and a decision for another call with DecisionsInvalid; nothing runs", async () => {
    const { bank, first, executed } = await suspendedBank()
    const invalid = failureOf(await runExit(bank.resume(first.snapshot, { c2: Decision.edit({ to: "bob", amount: "lots" }) })))
    expect(invalid).toBeInstanceOf(DecisionsInvalid)
    expect(invalid.message).toContain('the edited arguments of "transfer" do not decode with its Schema')
    expect(invalid.message).toContain("amount")
    const missing = failureOf(await runExit(bank.resume(first.snapshot, {})))
    expect(missing).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c2" })
    const unknown = failureOf(await runExit(bank.resume(first.snapshot, { c2: Decision.approve, c9: Decision.approve })))
    expect(unknown).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c9" })
    expect(unknown.message).toContain('waiting: "c2"')
    expect(executed).toEqual([{ tool: "balance", args: {} }])
  })

  it("runs without a pause when the predicate says no approval is needed", async () => {
    const model = scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "ann", amount: 20 } }]), text("ok")])
    const { bank, executed } = makeBank(model)
    expect(await bank.run("pay ann 20")).toEqual({ _tag: "Completed", output: "ok" })
    expect(executed).toEqual([{ tool: "transfer", args: { to: "ann", amount: 20 } }])
  })

  it("lists every later call of the answer that needs approval too, and runs none of them unasked", async () => {
    const model = scriptedModel([
      toolCalls([
        { id: "a", name: "transfer", arguments: { to: "x", amount: 200 } },
        { id: "b", name: "transfer", arguments: { to: "y", amount: 5 } },
        { id: "c", name: "wipe", arguments: { all: true } }
      ]),
      text("fine")
    ])
    const { bank, executed } = makeBank(model)
    const first = await bank.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending.map((p) => p.id)).toEqual(["a", "c"])
    expect(executed).toEqual([])
    const rest = await Effect.runPromise(bank.resume(first.snapshot, { a: Decision.deny("no"), c: Decision.approve }))
    expect(rest).toEqual({ _tag: "Completed", output: "fine" })
    expect(executed).toEqual([{ tool: "transfer", args: { to: "y", amount: 5 } }, { tool: "wipe", args: { all: true } }])
  })
})

describe("tools without a Schema", () => {
  it("with mode human-approval always wait, are unsafe, and report validated: false with their mode", async () => {
    const model = scriptedModel([toolCalls([{ id: "w", name: "wipe", arguments: "{}" }]), text("wiped")])
    const uses: Array<ToolUseEvent> = []
    const { bank, tools } = makeBank(model)
    expect(tools.wipe.safe).toBe(false)
    expect(tools.wipe.mayNeedApproval).toBe(true)
    expect(tools.balance.mayNeedApproval).toBe(false)
    const observed = bank.onToolUse((e) => {
      uses.push(e as ToolUseEvent)
    })
    const first = await observed.run("wipe it")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const { spans, tracer } = captureSpans()
    await Effect.runPromise(observed.resume(first.snapshot, { w: Decision.approve }).pipe(Effect.withTracer(tracer)))
    expect(uses).toMatchObject([{ tool: "wipe", validated: false, mode: "human-approval" }])
    expect(traceLine(uses[0]!, 0)).toMatchObject({ validated: false, mode: "human-approval" })
    const span = spans.find((s) => s.name === "execute_tool wipe")!
    expect(Object.fromEntries(span.attributes)).toMatchObject({ "tool.validated": false, "tool.unsafe_mode": "human-approval", "tool.approval": "approved" })
  })

  it("are unsafe unless declared safe; read-only ones do not wait", () => {
    const log = tool("log", { args: unsafeNoSchema({ mode: "read-only" }), run: () => "ok" })
    const declared = tool("peek", { args: unsafeNoSchema({ mode: "full" }), safe: true, run: () => "ok" })
    expect(log.safe).toBe(false)
    expect(log.mayNeedApproval).toBe(false)
    expect(declared.safe).toBe(true)
  })
})

describe("snapshots of an agent that signs them", () => {
  it("are signed, and resume when untouched", async () => {
    const { bank, first } = await suspendedBank({ sign: secret })
    expect(first.snapshot.signature).toMatch(/^v2\.[0-9a-f]{16}\.[0-9a-f]{64}$/)
    expect(await Effect.runPromise(bank.resume(encode(first.snapshot), { c2: Decision.approve }))).toEqual({ _tag: "Completed", output: "done" })
  })

  it("refuse tampered, foreign and unsigned snapshots with SnapshotRejected, and stale ones with DefinitionChanged", async () => {
    const { bank, first, executed } = await suspendedBank({ sign: secret })
    const tampered: RunSnapshot = {
      ...first.snapshot,
      state: { ...first.snapshot.state, awaiting: [{ id: "c2", tool: "transfer", args: { to: "mallory", amount: 500 } }] }
    }
    expect(failureOf(await runExit(bank.resume(tampered, { c2: Decision.approve })))).toMatchObject({ _tag: "SnapshotRejected", reason: "tampered" })
    const foreign = signSnapshot(first.snapshot, "another-secret-of-enough-length")
    expect(failureOf(await runExit(bank.resume(foreign, { c2: Decision.approve })))).toMatchObject({ _tag: "SnapshotRejected", reason: "foreign" })
    const { signature: _, ...unsigned } = first.snapshot
    const refused = failureOf(await runExit(bank.resume(unsigned, { c2: Decision.approve })))
    expect(refused).toBeInstanceOf(SnapshotRejected)
    expect(refused.message).toContain("not signed")
    const changed = agent("bank").model(scriptedModel([])).tools({ transfer: tool("transfer", {
      args: Schema.Struct({ to: Schema.String, amount: Schema.Finite, memo: Schema.String }),
      needsApproval: true,
      run: () => "sent"
    }) }).signSnapshots(secret)
    expect(failureOf(await runExit(changed.resume(first.snapshot, { c2: Decision.approve })))).toBeInstanceOf(DefinitionChanged)
    expect(executed).toEqual([{ tool: "balance", args: {} }])
  })
})

describe("resume in another process", () => {
  const child = fileURLToPath(new URL("./resume-child.ts", import.meta.url))
  const resumeElsewhere = (json: string, decision: "approve" | "deny") => {
    const out = spawnSync(process.execPath, ["--import", "tsx", child, decision], { input: json, encoding: "utf8", timeout: 60_000 })
    if (out.status !== 0) throw new Error(`child failed: ${out.stderr}`)
    return JSON.parse(out.stdout) as { result?: unknown; executed?: unknown; error?: { _tag: string } }
  }

  it("continues from the JSON text alone: approved, the transfer runs there and the run completes", async () => {
    const { first, executed } = await suspendedBank({ sign: secret })
    const out = resumeElsewhere(JSON.stringify(first.snapshot), "approve")
    expect(out.result).toEqual({ _tag: "Completed", output: "all done" })
    expect(out.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }, { tool: "balance", args: {} }])
    expect(executed).toEqual([{ tool: "balance", args: {} }])
  }, 60_000)

  it("refuses there a snapshot changed on the way", async () => {
    const { first } = await suspendedBank({ sign: secret })
    const json = JSON.stringify(first.snapshot).replace('"amount":500', '"amount":5')
    const out = resumeElsewhere(json, "approve")
    expect(out.error).toMatchObject({ _tag: "SnapshotRejected" })
  }, 60_000)
})

const encode = (snapshot: RunSnapshot) => JSON.stringify(snapshot)
