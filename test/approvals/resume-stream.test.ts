/** `resumeStream`: the streaming twin of `resume`, on agents and composites (issue 29). */
import { Effect, Stream } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { type AgentError, agent, Decision, eventStreamResponse, inMemoryResumeLedger, parallel, ResumeLedger, type RunStreamEvent, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank } from "./bank.ts"
import { reorderKeys } from "./reorder-keys.ts"

const pay = (id: string, amount: number) => toolCalls([{ id, name: "transfer", arguments: { to: "bob", amount } }])

const collect = <A, E>(stream: Stream.Stream<A, E>) => Effect.runPromise(Stream.runCollect(stream)).then((chunk) => [...chunk])

const suspendedBank = async () => {
  const first = await makeBank(scriptedModel([pay("k1", 500), text("paid")])).bank.run("pay bob")
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  return first
}

describe("agent.resumeStream", () => {
  it("streams the resumed run from reordered JSON: ApprovalDecided, the call, the model's deltas, RunEnd last; the tool runs once", async () => {
    const first = await suspendedBank()
    const { bank, executed } = makeBank(scriptedModel([text("paid")]))
    const events = await collect(bank.resumeStream(reorderKeys(JSON.parse(JSON.stringify(first.snapshot))), { k1: Decision.approve }))
    const tags = events.map((e) => e._tag)
    expect(tags[0]).toBe("ApprovalDecided")
    expect(tags).toContain("ToolUse")
    expect(tags).toContain("TextDelta")
    expect(tags.at(-1)).toBe("RunEnd")
    expect(tags.filter((t) => t === "RunEnd")).toHaveLength(1)
    expect(events.at(-1)).toMatchObject({ _tag: "RunEnd", agent: "bank", outcome: { _tag: "Success", output: "paid" } })
    expect(executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
    expectTypeOf(bank.resumeStream).returns.toEqualTypeOf<Stream.Stream<RunStreamEvent, AgentError, never>>()
  })

  it("a further suspension ends the stream with RunEnd carrying Suspended and a snapshot that resumes", async () => {
    const first = await suspendedBank()
    const { bank, executed } = makeBank(scriptedModel([pay("k2", 900), text("paid twice")]))
    const events = await collect(bank.resumeStream(first.snapshot, { k1: Decision.approve }))
    expect(events.map((e) => e._tag).slice(-2)).toEqual(["ApprovalRequested", "RunEnd"])
    const end = events.at(-1)
    if (end?._tag !== "RunEnd" || end.outcome._tag !== "Suspended") throw new Error("expected RunEnd with Suspended")
    expect(end.outcome.pending.map((p) => p.id)).toEqual(["k2"])
    const last = await collect(bank.resumeStream(JSON.stringify(end.outcome.snapshot), { k2: Decision.deny("no") }))
    expect(last.at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Success", output: "paid twice" } })
    expect(executed.map((e) => e.args)).toEqual([{ to: "bob", amount: 500 }])
  })

  it("a refused decision fails the stream before anything runs; with a ledger a second stream is refused; SSE serves it", async () => {
    const first = await suspendedBank()
    const { bank, executed } = makeBank(scriptedModel([text("paid")]))
    const refused = await runExit(Stream.runCollect(bank.resumeStream(first.snapshot, { k1: Decision.edit({ to: "bob", amount: "all" }) })))
    expect(failureOf(refused)).toMatchObject({ _tag: "DecisionsInvalid" })
    const ledger = inMemoryResumeLedger()
    const once = () => bank.resumeStream(first.snapshot, { k1: Decision.deny("no") }).pipe(Stream.provideService(ResumeLedger, ledger))
    expect((await collect(once())).at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Success" } })
    expect(failureOf(await runExit(Stream.runCollect(once())))).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect(executed).toEqual([])
    const served = await eventStreamResponse(makeBank(scriptedModel([text("paid")])).bank.resumeStream(first.snapshot, { k1: Decision.approve })).text()
    expect(served).toContain("event: ApprovalDecided\n")
    expect(served).toContain("event: RunEnd\n")
  })

  it("streams what runStream would: the runs of agents called as tools are not part of it (one RunEnd, the run's own)", async () => {
    const helper = agent("helper").model(scriptedModel(() => text("helped")))
    const make = (script: ReturnType<typeof scriptedModel>) => {
      const { tools, executed } = makeBank(scriptedModel([]))
      return { executed, bank: agent("bank").model(script).tools({ transfer: tools.transfer, helper: helper.asTool({ name: "helper" }) }) }
    }
    const first = await make(scriptedModel([pay("k1", 500), text("paid")])).bank.run("pay bob")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const helped = toolCalls([{ id: "h1", name: "helper", arguments: { input: "check" } }])
    const { bank, executed } = make(scriptedModel([helped, text("paid")]))
    const events = await collect(bank.resumeStream(first.snapshot, { k1: Decision.approve }))
    const streamed = await collect(make(scriptedModel([helped, text("paid")])).bank.runStream("go"))
    expect(streamed.filter((e) => e._tag === "RunEnd")).toHaveLength(1)
    expect(events.filter((e) => e._tag === "RunEnd")).toHaveLength(1)
    expect(new Set(events.map((e) => e.runId))).toEqual(new Set([first.snapshot.state.runId]))
    expect(events.filter((e) => e._tag === "ToolUse").map((e) => e._tag === "ToolUse" && e.tool)).toEqual(["transfer", "helper"])
    expect(executed).toHaveLength(1)
  })
})

describe("composite.resumeStream", () => {
  it("streams every resumed member's events and ends with CompositeEnd carrying the result", async () => {
    const a = makeBank(scriptedModel([pay("k1", 500), text("a paid")]))
    const reader = agent("reader").model(scriptedModel(() => text("read")))
    const first = await parallel("payments", [a.bank, reader]).run("pay")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const again = makeBank(scriptedModel([text("a paid")]))
    const flow = parallel("payments", [again.bank, agent("reader").model(scriptedModel(() => text("read")))])
    const events = await collect(flow.resumeStream(first.snapshot, { "0/k1": Decision.approve }))
    const tags = events.map((e) => e._tag)
    expect(tags).toContain("ApprovalDecided")
    expect(tags.filter((t) => t === "RunEnd")).toHaveLength(1)
    expect(events.at(-1)).toMatchObject({ _tag: "CompositeEnd", name: "payments", outcome: { _tag: "Success", output: { _tag: "Completed", output: ["a paid", "read"] } } })
    expect(again.executed).toHaveLength(1)
  })
})
