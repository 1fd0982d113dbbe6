/**
 * A run that suspends after a reply with reasoning (Anthropic's thinking blocks with their signature,
 * a redacted block, Ollama's thinking) resumes: the snapshot keeps the reasoning (as a value and as
 * JSON text, signed or not) and the resumed request sends it back with the assistant message, as
 * Anthropic requires for a tool use that continues. A session whose history holds such a reply resumes
 * its approvals too.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Decision, type ModelRequest, session, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank, secret } from "./bank.ts"

const reasoning = [{ _tag: "Thinking" as const, text: "Bob is owed 500.", signature: "sig-1" }, { _tag: "Redacted" as const, data: "opaque" }]
const script = () =>
  scriptedModel((request: ModelRequest) =>
    request.messages.some((m) => m.role === "tool")
      ? text("paid")
      : { ...toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), reasoning }
  )

describe("a run that suspended after a reply with reasoning", () => {
  for (const [label, sign] of [["unsigned", undefined], ["signed", secret]] as const) {
    it(`resumes from its snapshot, as a value and as JSON text (${label}), and sends the reasoning back`, async () => {
      for (const asText of [false, true]) {
        const model = script()
        const { bank, executed } = makeBank(model, sign === undefined ? {} : { sign })
        const first = await bank.run("pay bob")
        expect(first._tag).toBe("Suspended")
        if (first._tag !== "Suspended") return
        const snapshot = asText ? JSON.stringify(first.snapshot) : first.snapshot
        const resumed = await Effect.runPromise(bank.resume(snapshot, { k1: Decision.approve }))
        expect(resumed).toMatchObject({ _tag: "Completed", output: "paid" })
        expect(executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
        const assistant = model.requests.at(-1)!.messages.find((m) => m.role === "assistant")
        expect(assistant).toMatchObject({ toolCalls: [{ id: "k1" }], reasoning })
      }
    })
  }

  it("in a session: an approval after a reply with reasoning is resumed, and the next turn too", async () => {
    const model = scriptedModel((request: ModelRequest) => {
      const last = request.messages.at(-1)!
      if (last.role === "tool") return text("paid")
      return { ...toolCalls([{ id: `k${request.messages.length}`, name: "transfer", arguments: { to: "bob", amount: 500 } }]), reasoning }
    })
    const { bank } = makeBank(model)
    const chat = session(bank, "s-reasoning")
    for (const turn of ["pay bob", "pay bob again"]) {
      const sent = await chat.send(turn)
      expect(sent._tag, turn).toBe("Suspended")
      if (sent._tag !== "Suspended") return
      const id = sent.pending[0]!.id
      expect(await chat.resume({ [id]: Decision.approve }), turn).toMatchObject({ _tag: "Completed", output: "paid" })
    }
  })
})
