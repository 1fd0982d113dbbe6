/**
 * Issue #28 item 9: the transcript handed to a handoff's target answers every call of the assistant
 * message that handed off, exactly once (OpenAI-compatible APIs refuse a tool call without a result).
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, skill, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { unansweredCalls } from "./transcript-check.ts"


let noopRuns = 0
const noop = tool("noop", { args: Schema.Struct({}), run: () => (noopRuns++, "ok") })

const setup = (calls: ReadonlyArray<{ id: string; name: string }>) => {
  const bModel = scriptedModel(text("from b"))
  const cModel = scriptedModel(text("from c"))
  const b = agent("b").model(bModel)
  const c = agent("c").model(cModel)
  const front = agent("front")
    .model(scriptedModel(toolCalls(calls.map((call) => ({ ...call, arguments: {} })))))
    .tools({ noop })
    .skills(({ noop }) => [skill("front").tools(noop).handoffs(b, c)])
  return { front, bModel, cModel }
}

describe("a handoff answers every call of its message (item 9)", () => {
  it("two handoffs in one response: the first wins, the second is answered 'not run'", async () => {
    const { front, bModel, cModel } = setup([{ id: "h1", name: "handoff_to_b" }, { id: "h2", name: "handoff_to_c" }])
    expect(await front.run("hi")).toBe("from b")
    expect(cModel.requests).toHaveLength(0)
    const seen = bModel.requests[0]!.messages
    expect(unansweredCalls(seen)).toEqual([])
    expect(seen.find((m) => m.role === "tool" && m.toolCallId === "h2")?.content).toMatch(/not run: handed off to agent "b"/)
  })

  it("a handoff before an ordinary call: the call is answered 'not run' and never runs", async () => {
    const { front, bModel } = setup([{ id: "h1", name: "handoff_to_b" }, { id: "n1", name: "noop" }])
    const before = noopRuns
    expect(await front.run("hi")).toBe("from b")
    expect(noopRuns).toBe(before)
    expect(unansweredCalls(bModel.requests[0]!.messages)).toEqual([])
  })

  it("an ordinary call before a handoff keeps its own result", async () => {
    const { front, bModel } = setup([{ id: "n1", name: "noop" }, { id: "h1", name: "handoff_to_b" }])
    expect(await front.run("hi")).toBe("from b")
    const seen = bModel.requests[0]!.messages
    expect(unansweredCalls(seen)).toEqual([])
    expect(seen.find((m) => m.role === "tool" && m.toolCallId === "n1")?.content).toBe("ok")
  })
})
