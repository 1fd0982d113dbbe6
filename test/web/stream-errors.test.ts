/**
 * Failures at the web border (found by review): a run that fails before it ends (a stored suspension
 * that does not decode, no model) still tells a `useChat` client what went wrong (`error`, `finish`,
 * `[DONE]`), and a suspension `onSuspended` cannot store fails the stream instead of asking the client
 * for an approval nobody could answer. Found by a probe with the AI SDK's readers: a tool result JSON
 * cannot hold no longer replaces the default SSE stream with one `error`; `onError` masks the call
 * errors a failed run's `error` chunk masks; a run stopped by the response's `signal` still ends its
 * calls and its message (`finish` `other`).
 */
import { Effect, Schema } from "effect"
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

describe("what a probe with the AI SDK's readers found", () => {
  it("a tool result JSON cannot hold (a cycle) is the text the model got, in the default SSE format too: every event is sent", async () => {
    const cyclic: Record<string, unknown> = { name: "loop" }
    cyclic.self = cyclic
    const loop = tool("loop", { args: Schema.Struct({}), run: () => cyclic })
    const a = agent("a").model(scriptedModel([toolCalls([{ id: "c1", name: "loop", arguments: {} }]), text("fine")])).tools({ loop })
    const body = await eventStreamResponse(a.runStream("hi")).text()
    const events = body.split("\n").filter((line) => line.startsWith("event: ")).map((line) => line.slice(7))
    expect(events).not.toContain("error")
    expect(events).toContain("ToolUse")
    expect(events.at(-1)).toBe("RunEnd")
    const toolUse = body.split("\n\n").find((frame) => frame.startsWith("event: ToolUse"))!
    expect(JSON.parse(toolUse.split("data: ")[1]!).result).toMatch(/^\(unserialisable result: Converting circular structure/)
  })

  it("onError masks a call's error as it masks the run's: a tool outside the skill, invalid arguments", async () => {
    const secretTool = tool("internalAdminTool", { args: Schema.Struct({}), run: () => "x" })
    const typed = tool("typed", { args: Schema.Struct({ n: Schema.Finite }), run: ({ n }) => n })
    // Invalid arguments (told to the model, which then calls a tool outside the skill: the run fails).
    const script = [toolCalls([{ id: "c1", name: "typed", arguments: { n: "not a number" } }]), toolCalls([{ id: "c2", name: "ghost", arguments: {} }])]
    const a = agent("a").model(scriptedModel(script)).tools({ internalAdminTool: secretTool, typed })
    const masked = await chunksOf(eventStreamResponse(a.runStream("hi"), { format: "ui-message-stream", onError: () => "An error occurred." }))
    const errors = masked.filter((c) => typeof c !== "string" && (c.type === "tool-output-error" || c.type === "error")).map((c) => c.errorText)
    expect(errors).toEqual(["An error occurred.", "An error occurred.", "An error occurred."])
    expect(JSON.stringify(masked)).not.toContain("internalAdminTool")
    // Without onError, what the model was told.
    const plain = await chunksOf(eventStreamResponse(agent("a").model(scriptedModel(script)).tools({ internalAdminTool: secretTool, typed }).runStream("hi"), { format: "ui-message-stream" }))
    const texts = plain.filter((c) => typeof c !== "string" && c.type === "tool-output-error").map((c) => c.errorText)
    expect(texts[0]).toContain('["n"]')
    expect(texts[1]).toContain('Tool "ghost" is not available')
  })

  it("a run stopped by the response's signal ends its running call and its message (finish: other), then [DONE]", async () => {
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    let interrupted = false
    const slow = tool("slow", {
      args: Schema.Struct({}),
      run: () => Effect.callback<string>(() => {
        started()
        return Effect.sync(() => void (interrupted = true))
      })
    })
    const a = agent("a").model(scriptedModel([toolCalls([{ id: "c1", name: "slow", arguments: {} }]), text("done")])).tools({ slow })
    const controller = new AbortController()
    const response = eventStreamResponse(a.runStream("hi"), { format: "ui-message-stream", signal: controller.signal })
    const reading = chunksOf(response)
    await running
    controller.abort()
    const chunks = await reading
    const types = chunks.map((c) => (typeof c === "string" ? c : c.type))
    expect(types.slice(-4)).toEqual(["tool-output-error", "finish-step", "finish", "[DONE]"])
    expect(chunks.at(-4).errorText).toMatch(/^no result: the run was stopped/)
    expect(chunks.at(-2).finishReason).toBe("other")
    expect(interrupted).toBe(true)
  })
})
