/**
 * The fold behind the run views (`src/studio/ui/public/run-view.js`): stored events and the live
 * stream become turns, streamed text and tool calls. It must take any event sequence a server sends
 * (hostile fields, unknown tags, events out of place) without throwing, and show each tool call once.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { applyEvent, emptyRunView, isRunEnd, type RunView, tokensOf } from "./browser-modules.ts"
import { calculatorScript } from "./fixture-server.ts"

const fold = (events: ReadonlyArray<unknown>) => events.reduce((view: RunView, event, index) => applyEvent(view, event, index), emptyRunView())

const tags = ["RunStart", "SkillChosen", "Turn", "ModelCall", "ModelResponse", "Retrying", "ToolUse", "ToolError", "InvalidArgs", "ToolHallucinated", "ArgsRepaired", "KnowledgeUsed", "Handoff", "ApprovalRequested", "ApprovalDecided", "BudgetThreshold", "BudgetExceeded", "RunEnd", "HookFailed", "TextDelta", "ReasoningDelta", "ToolCallStart", "ToolCallDelta", "CompositeStart", "CompositeEnd", "StudioDecision", "SomethingNew"]
const anyValue = fc.anything({ maxDepth: 2 })
const hostileEvent = fc.record(
  {
    _tag: fc.constantFrom(...tags),
    runId: fc.oneof(fc.constant("r1"), anyValue),
    turn: fc.oneof(fc.integer({ min: 0, max: 4 }), anyValue),
    index: fc.oneof(fc.integer({ min: 0, max: 2 }), anyValue),
    toolCallId: fc.oneof(fc.constantFrom("c1", "c2"), anyValue),
    tool: fc.oneof(fc.constantFrom("add", "transfer"), anyValue),
    delta: fc.oneof(fc.string(), anyValue),
    response: fc.oneof(fc.record({ _tag: fc.constantFrom("Text", "ToolCalls"), content: fc.string(), calls: fc.array(fc.record({ id: fc.constantFrom("c1", "c2", "c3"), name: fc.string(), arguments: anyValue }), { maxLength: 3 }) }), anyValue),
    calls: fc.oneof(fc.array(fc.record({ id: fc.constantFrom("c1", "c2"), tool: fc.string(), args: anyValue }), { maxLength: 2 }), anyValue),
    outcome: fc.oneof(fc.record({ _tag: fc.constantFrom("Success", "Failure", "Interrupted", "Suspended"), output: anyValue, error: anyValue, pending: anyValue }), anyValue),
    decision: fc.oneof(fc.constantFrom("approve", "deny", "edit"), anyValue)
  },
  { requiredKeys: ["_tag"] }
)

describe("run view fold", () => {
  test.prop([fc.array(fc.oneof(hostileEvent, anyValue), { maxLength: 60 })])("takes any event sequence without throwing; every tool call appears once", (events) => {
    const view = fold(events)
    expect(view.eventCount).toBe(events.length)
    const ids = view.turns.flatMap((turn) => turn.calls.map((call) => call.id)).filter((id): id is string => id !== undefined)
    expect(new Set(ids).size).toBe(ids.length)
    expect(view.turns.map((turn) => turn.turn)).toEqual([...view.turns.map((turn) => turn.turn)].sort((a, b) => a - b))
  })

  it("folds a streamed run: reasoning, tool-call arguments, text deltas, result and outcome", () => {
    const events = calculatorScript("r1", "What is 3 + 5?")
    const partial = fold(events.slice(0, 9))
    expect(partial.turns[0]?.reasoning).toBe("I should add the numbers.")
    expect(partial.turns[0]?.calls).toMatchObject([{ tool: "add", status: "streaming", argsText: "{\"a\":3,\"b\":5}" }])
    const view = fold(events)
    expect(view.skill).toBe("compute")
    expect(view.skillHow).toBe("model")
    expect(view.turns.map((turn) => turn.turn)).toEqual([1, 2])
    expect(view.turns[0]?.calls).toMatchObject([{ id: "call-add-1", tool: "add", status: "ok", args: { a: 3, b: 5 }, result: 8 }])
    expect(view.turns[1]?.text).toBe("The answer is 16.")
    expect(view.turns[1]?.durationMs).toBe(310)
    expect(view).toMatchObject({ ended: true, outcome: "Success", output: "The answer is 16." })
  })

  it("shows a waiting call, then the decision taken on resume", () => {
    const base = { agent: "a", runId: "r1", skill: "pay" }
    const view = fold([
      { _tag: "RunStart", ...base, input: "pay" },
      { _tag: "ApprovalRequested", ...base, turn: 1, calls: [{ id: "c1", tool: "transfer", args: { amount: 5 } }] },
      { _tag: "RunEnd", ...base, outcome: { _tag: "Suspended", pending: [{ id: "c1" }], snapshot: {} }, turns: 1, toolCalls: 0, durationMs: 1 }
    ])
    expect(view.turns[0]?.calls[0]).toMatchObject({ status: "waiting", args: { amount: 5 } })
    expect(view.outcome).toBe("Suspended")
    applyEvent(view, { _tag: "RunStart", ...base, input: "pay" })
    expect(view.ended).toBe(false)
    applyEvent(view, { _tag: "ApprovalDecided", ...base, turn: 1, toolCallId: "c1", tool: "transfer", decision: "deny", reason: "too much" }, 5)
    expect(view.turns[0]?.calls[0]).toMatchObject({ status: "denied", decision: { decision: "deny", reason: "too much", at: 5 } })
  })

  it("ends a stream on its own run's end only", () => {
    expect(isRunEnd({ _tag: "RunEnd", runId: "r1" }, "r1")).toBe(true)
    expect(isRunEnd({ _tag: "CompositeEnd", runId: "r1" }, "r1")).toBe(true)
    expect(isRunEnd({ _tag: "RunEnd", runId: "child" }, "r1")).toBe(false)
    expect(isRunEnd({ _tag: "TextDelta", runId: "r1" }, "r1")).toBe(false)
  })

  it("reads token usage whatever the provider called it", () => {
    expect(tokensOf({ inputTokens: 3, outputTokens: 4 })).toEqual({ input: 3, output: 4, total: 7 })
    expect(tokensOf({ input: 1, output: 2, total: 9 })).toEqual({ input: 1, output: 2, total: 9 })
    expect(tokensOf(undefined)).toEqual({ input: undefined, output: undefined, total: undefined })
  })
})
