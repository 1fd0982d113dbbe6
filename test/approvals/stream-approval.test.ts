import { Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { Decision, eventStreamResponse, type RunStreamEvent, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank } from "./bank.ts"

const script = () =>
  scriptedModel([
    toolCalls([{ id: "c1", name: "balance", arguments: {} }, { id: "c2", name: "transfer", arguments: { to: "bob", amount: 500 } }]),
    text("done")
  ])

const collect = (stream: Stream.Stream<RunStreamEvent, unknown>) => Effect.runPromise(Stream.runCollect(stream)).then((chunk) => [...chunk])

describe("a streamed run that suspends (item 5)", () => {
  it("names the waiting calls in ApprovalRequested and ends with RunEnd carrying Suspended and its snapshot", async () => {
    const { bank, executed } = makeBank(script())
    const events = await collect(bank.runStream("pay bob 500"))
    const tags = events.map((e) => e._tag)
    expect(tags.slice(-2)).toEqual(["ApprovalRequested", "RunEnd"])
    const requested = events.at(-2)
    expect(requested).toMatchObject({ _tag: "ApprovalRequested", agent: "bank", calls: [{ id: "c2", tool: "transfer", args: { to: "bob", amount: 500 } }] })
    const end = events.at(-1)
    if (end?._tag !== "RunEnd" || end.outcome._tag !== "Suspended") throw new Error("expected RunEnd with Suspended")
    expect(end.outcome.pending).toEqual([{ id: "c2", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
    // The snapshot in the stream resumes the run; the resume reports the decision, then ends once.
    const decided: Array<RunStreamEvent> = []
    const rest = await Effect.runPromise(bank.onEvent((e) => void decided.push(e)).resume(JSON.stringify(end.outcome.snapshot), { c2: Decision.deny("no") }))
    expect(rest).toEqual({ _tag: "Completed", output: "done" })
    expect(decided.filter((e) => e._tag === "ApprovalDecided")).toMatchObject([{ toolCallId: "c2", tool: "transfer", decision: "deny", reason: "no" }])
    expect(decided.filter((e) => e._tag === "RunEnd")).toMatchObject([{ outcome: { _tag: "Success", output: "done" } }])
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  })

  it("hooks hear ApprovalRequested and ApprovalDecided (with the arguments that run)", async () => {
    const { bank } = makeBank(script())
    const heard: Array<string> = []
    const hooked = bank
      .onApprovalRequested((e) => void heard.push(`requested ${e.calls.map((c) => c.id).join(",")}`))
      .onApprovalDecided((e) => void heard.push(`decided ${e.toolCallId} ${e.decision} ${JSON.stringify(e.args)}`))
      .onRunEnd((e) => void heard.push(`end ${e.outcome._tag}`))
    const first = await hooked.run("pay")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    await Effect.runPromise(hooked.resume(first.snapshot, { c2: Decision.edit({ to: "bob", amount: 50 }) }))
    expect(heard).toEqual(["requested c2", "end Suspended", 'decided c2 edit {"to":"bob","amount":50}', "end Success"])
  })

  it("the SSE events format carries ApprovalRequested and the suspended RunEnd with its snapshot", async () => {
    const { bank } = makeBank(script())
    const body = await eventStreamResponse(bank.runStream("pay")).text()
    expect(body).toContain("event: ApprovalRequested\n")
    const end = body.split("\n\n").find((f) => f.startsWith("event: RunEnd"))!
    const data = JSON.parse(end.split("data: ")[1]!) as { outcome: { _tag: string; snapshot: { state: { awaiting: Array<{ id: string }> } } } }
    expect(data.outcome._tag).toBe("Suspended")
    expect(data.outcome.snapshot.state.awaiting.map((a) => a.id)).toEqual(["c2"])
  })
})
