/**
 * Failures at the web border (found by review): a run that fails before it ends (a stored suspension
 * that does not decode, no model) still tells a `useChat` client what went wrong (`error`, `finish`,
 * `[DONE]`), and a suspension `onSuspended` cannot store fails the stream instead of asking the client
 * for an approval nobody could answer.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { chatStream, eventStreamResponse } from "../../src/web/index.ts"

const teller = () => {
  const ran: Array<unknown> = []
  const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String }), needsApproval: true, run: (args) => void ran.push(args) })
  const model = scriptedModel([toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob" } }]), text("done")])
  return { ran, teller: agent("teller").model(model).tools({ transfer }) }
}

const chunksOf = async (response: Response) =>
  (await response.text()).split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).map((data) => (data === "[DONE]" ? data : JSON.parse(data)))

describe("the UI message stream's failures", () => {
  it("a run that fails before it ends (a snapshot that does not decode) sends error, finish and [DONE]", async () => {
    const { teller: bank } = teller()
    const chunks = await chunksOf(eventStreamResponse(bank.resumeStream({ bogus: true }, {}), { format: "ui-message-stream" }))
    expect(chunks.map((c) => (typeof c === "string" ? c : c.type))).toEqual(["start", "error", "finish", "[DONE]"])
    expect(chunks[1].errorText).toMatch(/snapshot/i)
  })

  it("a suspension onSuspended cannot store fails the stream: no approval is asked, nothing runs", async () => {
    const { teller: bank, ran } = teller()
    const stream = chatStream(bank, [], "pay bob", { onSuspended: async () => { throw new Error("db down") } })
    const chunks = await chunksOf(eventStreamResponse(stream, { format: "ui-message-stream" }))
    const types = chunks.map((c) => (typeof c === "string" ? c : c.type))
    expect(types).not.toContain("tool-approval-request")
    expect(types.slice(-3)).toEqual(["error", "finish", "[DONE]"])
    expect(chunks.at(-3).errorText).toContain("db down")
    expect(ran).toEqual([])
  })
})
