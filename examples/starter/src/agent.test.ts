/**
 * Tests of the assistant without a real model: a scripted model plays the model's part, so each test
 * says exactly what the model does and checks what the agent makes of it.
 */
import { Effect } from "effect"
import { Decision, text, toolCalls } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"
import { describe, expect, it } from "vitest"
import { makeAssistant } from "./agent.ts"

describe("the support assistant", () => {
  it("looks an order up without asking anyone", async () => {
    const model = scriptedModel([toolCalls([{ name: "lookupOrder", arguments: { orderId: "A-1002" } }]), text("It arrives Friday.")])
    const result = await makeAssistant(model).run("Where is A-1002?")
    expect(result).toEqual({ _tag: "Completed", output: "It arrives Friday." })
    expect(model.requests[1]?.messages.at(-1)?.content).toContain("arriving Friday")
  })

  it("refunds only after a person approves, and not at all when denied", async () => {
    const refund = toolCalls([{ name: "refundOrder", arguments: { orderId: "A-1002", reason: "broken" } }])
    const model = scriptedModel([refund, (request) => text(request.messages.at(-1)?.content ?? ""), refund, (request) => text(request.messages.at(-1)?.content ?? "")])
    const assistant = makeAssistant(model)

    const denied = await assistant.run("Refund A-1002")
    if (denied._tag !== "Suspended") throw new Error("expected the refund to wait for approval")
    const afterDeny = await Effect.runPromise(assistant.resume(denied.snapshot, { [denied.pending[0]!.id]: Decision.deny("no") }))
    expect(afterDeny).toMatchObject({ _tag: "Completed", output: expect.stringContaining("denied") })

    const approved = await assistant.run("Refund A-1002")
    if (approved._tag !== "Suspended") throw new Error("expected the refund to wait for approval")
    expect(approved.pending[0]).toMatchObject({ tool: "refundOrder", args: { orderId: "A-1002", reason: "broken" } })
    const afterApprove = await Effect.runPromise(assistant.resume(approved.snapshot, { [approved.pending[0]!.id]: Decision.approve }))
    expect(afterApprove).toEqual({ _tag: "Completed", output: "refunded 89 EUR for A-1002 (broken)" })
  })
})
