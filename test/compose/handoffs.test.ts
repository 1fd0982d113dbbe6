/**
 * Handoffs: a skill hands the conversation to another agent, which continues on the transcript with its
 * own prompt, tools and model, as a child run; its output is the run's output.
 */
import { Effect, Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, AgentConfigError, type AgentEvent, eventStreamResponse, skill, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { captureSpans } from "../fixtures.ts"

const refund = tool("refund", { args: Schema.Struct({ order: Schema.String }), run: ({ order }) => `refunded ${order}` })

const billingAgent = (events: Array<AgentEvent>) => {
  const model = scriptedModel([toolCalls([{ id: "r1", name: "refund", arguments: { order: "A-1" } }]), text("Your order A-1 was refunded.")])
  const billing = agent("billing").model(model).prompt("You handle billing.").tools({ refund }).onEvent((e) => void events.push(e))
  return { billing, model }
}

describe("handoffs", () => {
  it("hands the transcript to the target, which answers for the run, recorded by an event", async () => {
    const events: Array<AgentEvent> = []
    const { billing, model: billingModel } = billingAgent(events)
    const triageModel = scriptedModel([toolCalls([{ id: "h1", name: "handoff_to_billing", arguments: {} }])])
    const triage = agent("triage").model(triageModel).prompt("Route requests.")
      .skills(() => [skill("triage", "Route to the right team").handoffs(billing)])
      .onEvent((e) => void events.push(e))
    const { spans, tracer } = captureSpans()
    const output = await Effect.runPromise(triage.runEffect("I want a refund for A-1").pipe(Effect.withTracer(tracer)))
    expect(output).toBe("Your order A-1 was refunded.")
    expect(triageModel.requests[0]?.tools.map((t) => t.name)).toEqual(["handoff_to_billing"])
    // The target sees its own prompt, then the conversation so far, the handoff call and its result included.
    const seen = billingModel.requests[0]!.messages
    expect(seen[0]).toMatchObject({ role: "system" })
    expect(String(seen[0]!.content)).toContain("You handle billing.")
    expect(String(seen[0]!.content)).not.toContain("Route requests.")
    expect(seen.slice(1).map((m) => m.role)).toEqual(["user", "assistant", "tool"])
    expect(seen[1]).toEqual({ role: "user", content: "I want a refund for A-1" })
    expect(billingModel.requests[0]?.tools.map((t) => t.name)).toEqual(["refund"])
    const triageRun = events.find((e) => e.agent === "triage")!.runId
    expect(events.filter((e) => e._tag === "Handoff")).toEqual([
      expect.objectContaining({ agent: "triage", runId: triageRun, to: "billing", toolCallId: "h1", skill: "triage", turn: 1 })
    ])
    expect(events.filter((e) => e.agent === "billing").every((e) => e.parentRunId === triageRun)).toBe(true)
    const ends = events.filter((e) => e._tag === "RunEnd").map((e) => `${e.agent} ${e._tag === "RunEnd" ? e.outcome._tag : ""}`)
    expect(ends).toEqual(["billing Success", "triage Success"])
    const handoffSpan = spans.find((s) => s.name === "execute_tool handoff_to_billing")
    expect(handoffSpan?.attributes.get("tool.outcome")).toBe("handoff")
  })

  it("uses the caller's model when the target has none, and counts against the caller's budget", async () => {
    const model = scriptedModel([toolCalls([{ id: "h", name: "handoff_to_helper", arguments: {} }]), text("helped")])
    const helper = agent("helper").prompt("Help.")
    const front = agent("front").model(model).skills(() => [skill("front").handoffs(helper)])
    expect(await front.run("hi")).toBe("helped")
    const pingModel = scriptedModel(toolCalls([{ id: "x", name: "handoff_to_pong", arguments: {} }]))
    const pongModel = scriptedModel(toolCalls([{ id: "y", name: "noop", arguments: {} }]))
    const pong = agent("pong").model(pongModel).tools({ noop: tool("noop", { args: Schema.Struct({}), run: () => "ok" }) })
    const ping = agent("ping").model(pingModel).budget({ maxToolCalls: 3 }).skills(() => [skill("ping").handoffs(pong)])
    await expect(ping.run("go")).rejects.toMatchObject({ _tag: "BudgetExceeded", reason: "toolCalls", agent: "pong", scope: "ping" })
  })

  it("types the target's output as the agent's, and refuses a mismatch at compile time", () => {
    const typed = agent("typed", { output: Schema.Struct({ ok: Schema.Boolean }) }).model(scriptedModel([]))
    const textual = agent("textual").model(scriptedModel([]))
    const front = agent("front", { output: Schema.Struct({ ok: Schema.Boolean }) }).model(scriptedModel([]))
      .skills(() => [skill("front").handoffs(typed)])
    expectTypeOf(front.run).returns.toEqualTypeOf<Promise<{ readonly ok: boolean }>>()
    // @ts-expect-error the target answers text, the agent a typed object
    agent("front2", { output: Schema.Struct({ ok: Schema.Boolean }) }).skills(() => [skill("front").handoffs(textual)])
  })

  it("refuses a handoff to itself, to a non-agent, or from a deterministic skill", () => {
    const self = agent("self")
    expect(() => self.skills(() => [skill("s").handoffs(self)])).toThrow(/cannot hand off to itself/)
    expect(() => agent("a").skills(() => [skill("s").handoffs({ name: "x", runEffect: () => Effect.succeed("") } as any) as any])).toThrow(AgentConfigError)
    expect(() => agent("a").skills(() => [skill("s").implementedBy((s: string) => s).handoffs(agent("b")) as any])).toThrow(/agentic skill/)
  })
})

describe("handoffs in a stream", () => {
  it("streams the target's events, and the UI message stream finishes once", async () => {
    const events: Array<AgentEvent> = []
    const { billing } = billingAgent(events)
    const triage = agent("triage").model(scriptedModel([toolCalls([{ id: "h1", name: "handoff_to_billing", arguments: {} }])]))
      .skills(() => [skill("triage").handoffs(billing)])
    const response = eventStreamResponse(triage.runStream("refund A-1"), { format: "ui-message-stream" })
    const body = await response.text()
    expect(body.match(/"type":"finish"/g)).toHaveLength(1)
    expect(body).toContain("Your order A-1 was refunded.")
  })
})
