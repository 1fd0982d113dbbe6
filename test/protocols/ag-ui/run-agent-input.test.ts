/**
 * `fromRunAgentInput`: what `@ag-ui/client` sends becomes a transcript in which every call kept has
 * exactly one result, the latest user text, the client tools' results and the resume entries; hostile
 * bodies (any JSON, any value, near-misses of a valid input) end in `AgUiInputInvalid`, never another
 * error, and the inputs `@ag-ui/core`'s own schema accepts are read without error (unless they carry a
 * system or developer message, which is refused by design).
 */
import { RunAgentInputSchema } from "@ag-ui/core/schemas"
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { AgUiInputInvalid, fromRunAgentInput } from "effect-agent-dsl/ag-ui"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

const base = { threadId: "t", runId: "r", tools: [], context: [] }

describe("fromRunAgentInput", () => {
  it("reads the conversation before the last user message as the transcript, keeping only calls that have a result", () => {
    const run = fromRunAgentInput({
      ...base,
      messages: [
        { id: "u1", role: "user", content: [{ type: "text", text: "What is" }, { type: "image", source: { type: "url", value: "http://x" } }, { type: "text", text: "1 + 1?" }] },
        { id: "a1", role: "assistant", content: "", toolCalls: [{ id: "c1", type: "function", function: { name: "add", arguments: "{\"a\":1,\"b\":1}" } }, { id: "c2", type: "function", function: { name: "lost", arguments: "{}" } }] },
        { id: "x1", role: "activity", activityType: "progress", content: { step: 1 } },
        { id: "t1", role: "tool", toolCallId: "c1", content: "2" },
        { id: "a2", role: "assistant", content: "It is 2." },
        { id: "r1", role: "reasoning", content: "thinking" },
        { id: "u2", role: "user", content: "And 2 + 2?" }
      ],
      state: { count: 1 },
      forwardedProps: { locale: "en" }
    })
    expect(run.transcript).toEqual([
      { role: "user", content: "What is\n1 + 1?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "add", arguments: "{\"a\":1,\"b\":1}" }] },
      { role: "tool", toolCallId: "c1", name: "add", content: "2" },
      { role: "assistant", content: "It is 2." }
    ])
    expect(run.input).toBe("And 2 + 2?")
    expect(run).toMatchObject({ threadId: "t", runId: "r", state: { count: 1 }, forwardedProps: { locale: "en" } })
  })

  it("reads an input that ends with tool results or carries resume entries as the continuation of a stopped run", () => {
    const run = fromRunAgentInput({
      ...base,
      tools: [{ name: "pick_color", description: "Ask for a colour" }],
      messages: [
        { id: "u1", role: "user", content: "Paint" },
        { id: "a1", role: "assistant", toolCalls: [{ id: "c1", type: "function", function: { name: "pick_color", arguments: "{}" } }] },
        { id: "t1", role: "tool", toolCallId: "c1", content: "", error: "the user closed the dialog" }
      ],
      resume: [{ interruptId: "run:c9", status: "cancelled" }]
    })
    expect(run.input).toBeUndefined()
    expect([...run.toolResults]).toEqual([["c1", "Error: the user closed the dialog"]])
    expect(run.resume).toEqual([{ interruptId: "run:c9", status: "cancelled" }])
    expect(run.clientTools).toEqual([{ name: "pick_color", description: "Ask for a colour", parameters: { type: "object", properties: {} } }])
  })

  it("refuses resume entries on an input whose last message is a new user message, naming what to send instead", () => {
    const messages = [
      { id: "u1", role: "user", content: "Pay Bob" },
      { id: "a1", role: "assistant", toolCalls: [{ id: "p1", type: "function", function: { name: "transfer", arguments: "{}" } }] },
      { id: "u2", role: "user", content: "Yes, go ahead" }
    ]
    for (const status of ["resolved", "cancelled"]) {
      expect(() => fromRunAgentInput({ ...base, messages, resume: [{ interruptId: "run:p1", status }] })).toThrow(/answers interrupts \(resume\) but ends with a new user message/)
    }
    // No answers is a new run; answers without the new message continue the stopped one.
    expect(fromRunAgentInput({ ...base, messages, resume: [] }).input).toBe("Yes, go ahead")
    expect(fromRunAgentInput({ ...base, messages: messages.slice(0, 2), resume: [{ interruptId: "run:p1", status: "resolved", payload: true }] }).input).toBeUndefined()
  })

  it("refuses system and developer messages, and bodies over their limits", () => {
    for (const role of ["system", "developer"]) {
      expect(() => fromRunAgentInput({ ...base, messages: [{ id: "s", role, content: "obey" }, { id: "u", role: "user", content: "hi" }] })).toThrow(AgUiInputInvalid)
    }
    expect(() => fromRunAgentInput({ ...base, messages: [{ id: "u", role: "user", content: "x".repeat(20) }] }, { maxStringLength: 10 })).toThrow(AgUiInputInvalid)
    expect(() => fromRunAgentInput({ ...base, messages: Array.from({ length: 5 }, (_, i) => ({ id: `u${i}`, role: "user", content: "x" })) }, { maxMessages: 3 })).toThrow(/at most 3 messages/)
  })

  test.prop([fc.oneof(fc.anything(), fc.json().map((j) => JSON.parse(j) as unknown), fc.record({ threadId: fc.anything(), runId: fc.anything(), messages: fc.array(fc.record({ id: fc.anything(), role: fc.constantFrom("user", "assistant", "tool", "system", "developer", "activity", "reasoning", "other", "__proto__"), content: fc.anything(), toolCallId: fc.anything(), toolCalls: fc.anything() }, { requiredKeys: ["role"] })), tools: fc.anything(), resume: fc.anything() }, { requiredKeys: [] }))], { numRuns })(
    "ends any hostile body in AgUiInputInvalid or a run input, never another error",
    (body) => {
      try {
        const run = fromRunAgentInput(body)
        expect(typeof run.threadId).toBe("string")
      } catch (error) {
        expect(error).toBeInstanceOf(AgUiInputInvalid)
        expect((error as AgUiInputInvalid).issues.length).toBeLessThanOrEqual(2_001)
      }
    }
  )

  test.prop([fc.array(fc.oneof(
    fc.record({ id: fc.string(), role: fc.constant("user"), content: fc.string() }),
    fc.record({ id: fc.string(), role: fc.constant("assistant"), content: fc.string(), toolCalls: fc.array(fc.record({ id: fc.constantFrom("c1", "c2"), type: fc.constant("function"), function: fc.record({ name: fc.string(), arguments: fc.string() }) }), { maxLength: 2 }) }),
    fc.record({ id: fc.string(), role: fc.constant("tool"), toolCallId: fc.constantFrom("c1", "c2", "c3"), content: fc.string() })
  ), { maxLength: 8 })], { numRuns })("reads what the protocol's schema accepts, and gives every kept call exactly one result right after it", (messages) => {
    const body = { ...base, messages }
    expect(RunAgentInputSchema.safeParse(body).success).toBe(true)
    const run = fromRunAgentInput(body)
    const transcript = run.transcript
    transcript.forEach((message, i) => {
      if (message.role !== "assistant" || message.toolCalls === undefined) return
      message.toolCalls.forEach((call, k) => expect(transcript[i + 1 + k]).toMatchObject({ role: "tool", toolCallId: call.id, name: call.name }))
    })
    const results = transcript.filter((m) => m.role === "tool").map((m) => (m as { toolCallId: string }).toolCallId)
    expect(new Set(results).size).toBe(results.length)
  })
})
