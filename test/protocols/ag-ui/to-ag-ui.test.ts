/**
 * The mapper `run event → AG-UI events` on chosen runs: reasoning and text blocks, a model that does not
 * stream (whole text and arguments), an agent used as a tool (its turns are steps of their own), a
 * failure, interrupts as AG-UI's `tool_call` (bound to the call, `editedArgs` in the answer's schema,
 * a child agent's attributed by `subagentRunId`), the SSE frames `eventStreamResponse(…, { format:
 * "ag-ui" })` sends, and each event checked against `@ag-ui/core`'s schema.
 */
import { EventSchemas, InterruptSchema } from "@ag-ui/core/schemas"
import type { Event as CoreEvent } from "@ag-ui/core"
import { Effect, Schema, Stream } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, Intercept, ModelError, type RunStreamEvent, text, tool, toolCalls } from "effect-agent-dsl"
import { type AgUiEvent, type AgUiInterrupt, chatStream, eventStreamResponse, toAgUiEvents, toAgUiMessages } from "effect-agent-dsl/ag-ui"
import { scriptedModel, streamed } from "effect-agent-dsl/testing"
import { wellFormedProblems } from "./well-formed.ts"

const collect = async (events: Stream.Stream<RunStreamEvent, any>, threadId = "thread") => {
  const out = [...await Effect.runPromise(Stream.runCollect(toAgUiEvents(events, { threadId, runId: "agui-run" })))]
  for (const event of out) expect(EventSchemas.safeParse(event).success, JSON.stringify(event)).toBe(true)
  expect(wellFormedProblems(out as never)).toEqual([])
  return out
}

const add = tool("add", { description: "Add", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })

describe("toAgUiEvents", () => {
  it("streams reasoning, then text, each in its own block, and finishes with the output", async () => {
    const model = scriptedModel([streamed({ _tag: "Text", content: "It is 4.", reasoning: [{ _tag: "Thinking", text: "2 and 2" }] } as unknown as Parameters<typeof streamed>[0], 2)])
    const out = await collect(agent("a").model(model).runStream("2 + 2?"))
    expect(out.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED",
      "REASONING_START",
      "REASONING_MESSAGE_START",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_END",
      "REASONING_END",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "STEP_FINISHED",
      "RUN_FINISHED"
    ])
    expect(out[0]).toEqual({ type: "RUN_STARTED", threadId: "thread", runId: "agui-run" })
    expect(out.flatMap((e) => (e.type === "REASONING_MESSAGE_CONTENT" ? [e.delta] : [])).join("")).toBe("2 and 2")
    expect(out.at(-1)).toEqual({ type: "RUN_FINISHED", threadId: "thread", runId: "agui-run", result: "It is 4.", outcome: { type: "success" } })
  })

  it("sends a non-streamed answer whole: its text, then each call's start, arguments and end, and their results", async () => {
    const events: Array<RunStreamEvent> = []
    await agent("a").model(scriptedModel([toolCalls([{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }], "Adding."), text("3")])).tools({ add })
      .onEvent((e) => void events.push(e))
      .run("1 + 2?")
    const out = await collect(Stream.fromIterable(events))
    const types = out.map((e) => e.type)
    expect(types.slice(0, 9)).toEqual(["RUN_STARTED", "STEP_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"])
    const start = out.find((e) => e.type === "TEXT_MESSAGE_START") as Extract<AgUiEvent, { type: "TEXT_MESSAGE_START" }>
    expect(out.find((e) => e.type === "TOOL_CALL_START")).toEqual({ type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "add", parentMessageId: start.messageId })
    expect(out.find((e) => e.type === "TOOL_CALL_ARGS")).toMatchObject({ delta: "{\"a\":1,\"b\":2}" })
    expect(out.find((e) => e.type === "TOOL_CALL_RESULT")).toMatchObject({ toolCallId: "c1", content: "3", role: "tool" })
    expect(out.filter((e) => e.type === "STEP_STARTED").map((e) => (e as { stepName: string }).stepName)).toEqual(["turn 1", "turn 2"])
  })

  it("gives a child run (an agent under a composite, a handoff target) steps of its own, and ends only with the parent", async () => {
    const events: Array<RunStreamEvent> = []
    await agent("boss").model(scriptedModel([toolCalls([{ id: "h1", name: "add", arguments: { a: 1, b: 1 } }]), text("done")])).tools({ add })
      .onEvent((e) => void events.push(e))
      .run("go")
    // A child's events, as a composite's StreamSink interleaves them, inside the parent's first turn.
    const scope = { agent: "helper", runId: "child-1", parentRunId: events[0]!.runId, skill: "helper" }
    const child: Array<RunStreamEvent> = [
      { _tag: "Turn", ...scope, turn: 1 },
      { _tag: "TextDelta", ...scope, turn: 1, delta: "helping" },
      { _tag: "ModelResponse", ...scope, turn: 1, response: { _tag: "Text", content: "helping" }, durationMs: 1 },
      { _tag: "RunEnd", agent: "helper", runId: "child-1", parentRunId: events[0]!.runId, outcome: { _tag: "Success", output: "helping" }, turns: 1, toolCalls: 0, durationMs: 1 }
    ]
    const at = events.findIndex((e) => e._tag === "ToolUse")
    const out = await collect(Stream.fromIterable([...events.slice(0, at), ...child, ...events.slice(at)]))
    const steps = out.flatMap((e) => (e.type === "STEP_STARTED" || e.type === "STEP_FINISHED" ? [`${e.type === "STEP_STARTED" ? "+" : "-"}${e.stepName}`] : []))
    expect(steps).toEqual(["+turn 1", "+helper turn 1", "-helper turn 1", "-turn 1", "+turn 2", "-turn 2"])
    expect(out.filter((e) => e.type === "RUN_FINISHED")).toHaveLength(1)
    expect(out.at(-1)).toMatchObject({ type: "RUN_FINISHED", result: "done" })
  })

  it("finishes a run whose output is null without a null result (AG-UI 1.0 refuses one): its metadata says { result: null }", async () => {
    const maybe = agent("maybe", { output: Schema.NullOr(Schema.Struct({ name: Schema.String })) })
    const none = await collect(maybe.model(scriptedModel([text("null")])).runStream("who?"))
    expect(none.at(-1)).toEqual({ type: "RUN_FINISHED", threadId: "thread", runId: "agui-run", metadata: { result: null }, outcome: { type: "success" } })
    const some = await collect(maybe.model(scriptedModel([text("{\"name\":\"Ada\"}")])).runStream("who?"))
    expect(some.at(-1)).toEqual({ type: "RUN_FINISHED", threadId: "thread", runId: "agui-run", result: { name: "Ada" }, outcome: { type: "success" } })
  })

  it("ends a failed run with RUN_ERROR carrying the error's tag, and nothing after it", async () => {
    const failing = scriptedModel([new ModelError({ provider: "scripted", reason: "boom", status: 400 })])
    const out = await collect(agent("a").model(failing).runStream("x"))
    expect(out.at(-1)).toMatchObject({ type: "RUN_ERROR", code: "ModelError" })
    expect(out.filter((e) => e.type === "RUN_ERROR" || e.type === "RUN_FINISHED")).toHaveLength(1)
  })

  it("sends the conversation the server holds as MESSAGES_SNAPSHOT right after RUN_STARTED, each message valid for the protocol", async () => {
    const messagesSnapshot = toAgUiMessages([
      { role: "system", content: "secret prompt" },
      { role: "user", content: "1 + 2?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "add", arguments: "{\"a\":1,\"b\":2}" }] },
      { role: "tool", toolCallId: "c1", name: "add", content: "3" },
      { role: "assistant", content: "3" }
    ], "t1")
    const out = [...await Effect.runPromise(Stream.runCollect(toAgUiEvents(agent("a").model(scriptedModel([text("ok")])).runStream("x"), { threadId: "t1", messagesSnapshot })))]
    expect(out.slice(0, 2).map((e) => e.type)).toEqual(["RUN_STARTED", "MESSAGES_SNAPSHOT"])
    expect(EventSchemas.safeParse(out[1]).success).toBe(true)
    expect(out[1]).toEqual({
      type: "MESSAGES_SNAPSHOT",
      messages: [
        { id: "t1-1", role: "user", content: "1 + 2?" },
        { id: "t1-2", role: "assistant", toolCalls: [{ id: "c1", type: "function", function: { name: "add", arguments: "{\"a\":1,\"b\":2}" } }] },
        { id: "t1-3", role: "tool", toolCallId: "c1", content: "3" },
        { id: "t1-4", role: "assistant", content: "3" }
      ]
    })
  })

  it("names a call waiting for a decision as AG-UI's tool_call interrupt: bound to its call, with editedArgs in its responseSchema", async () => {
    const transfer = tool("transfer", {
      description: "Move money",
      args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
      needsApproval: ({ amount }) => amount > 100,
      run: ({ amount }) => `sent ${amount}`
    })
    const interruptsOf = async (call: { readonly to: string; readonly amount: number }) => {
      // A call its tool's needsApproval stops, or one an interceptor suspends.
      const model = scriptedModel([toolCalls([{ id: "p1", name: "transfer", arguments: call }])])
      const bank = agent("bank").model(model).tools({ transfer }).intercept("transfer", ({ to }) => (to === "carol" ? Intercept.suspend("carol is a new payee") : Intercept.proceed))
      const out = await collect(bank.runStream("pay"))
      const interrupts = ((out.at(-1) as Extract<AgUiEvent, { type: "RUN_FINISHED" }>).outcome as { interrupts: ReadonlyArray<AgUiInterrupt> }).interrupts
      for (const interrupt of interrupts) expect(InterruptSchema.safeParse(interrupt).success, JSON.stringify(interrupt)).toBe(true)
      expect(interrupts.map((i) => i.toolCallId)).toEqual(out.flatMap((e) => (e.type === "TOOL_CALL_START" ? [e.toolCallId] : [])))
      return interrupts
    }
    const [approval] = await interruptsOf({ to: "bob", amount: 400 })
    expect(approval).toMatchObject({ reason: "tool_call", toolCallId: "p1", message: "Approve the call of \"transfer\"?", metadata: { kind: "approval", tool: "transfer", args: { to: "bob", amount: 400 } } })
    const [suspended] = await interruptsOf({ to: "carol", amount: 5 })
    expect(suspended).toMatchObject({ reason: "tool_call", toolCallId: "p1", message: "carol is a new payee", metadata: { kind: "suspended", tool: "transfer", args: { to: "carol", amount: 5 } } })
    // AG-UI's recommended schema for approve-with-edits, and our optional reason for a refusal.
    for (const interrupt of [approval!, suspended!]) {
      expect(interrupt.responseSchema).toEqual({
        type: "object",
        properties: {
          approved: { type: "boolean", description: expect.any(String) },
          editedArgs: { type: "object", description: "Full replacement of the tool args. Not merged." },
          reason: { type: "string", description: expect.any(String) }
        },
        required: ["approved"]
      })
      expect(interrupt).not.toHaveProperty("subagentRunId")
    }
  })

  it("attributes a child agent's interrupt to the child's run (subagentRunId) and binds it to the child's call", async () => {
    const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String }), needsApproval: true, run: ({ to }) => `sent to ${to}` })
    // The child's model reuses its caller's call id: the stream gives the child's call an id of its own.
    const banker = agent("banker").model(scriptedModel(() => toolCalls([{ id: "b1", name: "transfer", arguments: { to: "bob" } }]))).tools({ transfer })
    const boss = agent("boss").model(scriptedModel(() => toolCalls([{ id: "b1", name: "bank", arguments: { input: "Pay Bob" } }])))
      .tools({ bank: banker.asTool({ name: "bank", description: "The bank" }) })
    const events: Array<RunStreamEvent> = []
    await Effect.runPromise(Stream.runForEach(chatStream(boss, [], "pay"), (e) => Effect.sync(() => void events.push(e))))
    const child = events.find((e) => e.parentRunId !== undefined)!
    const out = await collect(Stream.fromIterable(events))
    const [interrupt] = ((out.at(-1) as Extract<AgUiEvent, { type: "RUN_FINISHED" }>).outcome as { interrupts: ReadonlyArray<AgUiInterrupt> }).interrupts
    expect(InterruptSchema.safeParse(interrupt).success).toBe(true)
    expect(interrupt).toMatchObject({ id: `${events[0]!.runId}:b1/b1`, reason: "tool_call", subagentRunId: child.runId, metadata: { kind: "approval", tool: "transfer" } })
    expect(child.runId).not.toBe(events[0]!.runId)
    const started = Object.fromEntries(out.flatMap((e) => (e.type === "TOOL_CALL_START" ? [[e.toolCallName, e.toolCallId]] : [])))
    expect(interrupt!.toolCallId).toBe(started.transfer)
    expect(started.transfer).not.toBe(started.bank)
  })

  it("tells a child's call from the run's own call listed alike (the runtime's `#2`): only the child's is attributed to it", async () => {
    const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String }), needsApproval: true, run: ({ to }) => `sent to ${to}` })
    const banker = agent("banker").model(scriptedModel(() => toolCalls([{ id: "x", name: "transfer", arguments: { to: "bob" } }]))).tools({ transfer })
    // The run's own call is named "b1/x": the child's "x" under "b1" is listed "b1/x#2".
    const boss = agent("boss").model(scriptedModel(() => toolCalls([{ id: "b1", name: "bank", arguments: { input: "Pay Bob" } }, { id: "b1/x", name: "transfer", arguments: { to: "carol" } }])))
      .tools({ bank: banker.asTool({ name: "bank", description: "The bank" }), transfer })
    const events: Array<RunStreamEvent> = []
    await Effect.runPromise(Stream.runForEach(chatStream(boss, [], "pay"), (e) => Effect.sync(() => void events.push(e))))
    const child = events.find((e) => e.parentRunId !== undefined)!
    const out = await collect(Stream.fromIterable(events))
    const interrupts = ((out.at(-1) as Extract<AgUiEvent, { type: "RUN_FINISHED" }>).outcome as { interrupts: ReadonlyArray<AgUiInterrupt> }).interrupts
    const root = events[0]!.runId
    const byId = Object.fromEntries(interrupts.map((i) => [i.id, i]))
    expect(Object.keys(byId).sort()).toEqual([`${root}:b1/x`, `${root}:b1/x#2`])
    expect(byId[`${root}:b1/x#2`]).toMatchObject({ subagentRunId: child.runId, metadata: { args: { to: "bob" } } })
    expect(byId[`${root}:b1/x`]).toMatchObject({ toolCallId: "b1/x", metadata: { args: { to: "carol" } } })
    expect(byId[`${root}:b1/x`]).not.toHaveProperty("subagentRunId")
    const started = out.flatMap((e) => (e.type === "TOOL_CALL_START" ? [e.toolCallId] : []))
    expect(started).toHaveLength(3)
    expect(byId[`${root}:b1/x#2`]!.toolCallId).toBe(started.find((id) => id !== "b1" && id !== "b1/x"))
  })

  it("declares events the protocol's own types accept", () => {
    expectTypeOf<Extract<AgUiEvent, { type: "TOOL_CALL_START" }>>().toMatchTypeOf<Omit<Extract<CoreEvent, { type: "TOOL_CALL_START" }>, "type"> & { type: "TOOL_CALL_START" }>()
    expectTypeOf<Extract<AgUiEvent, { type: "TEXT_MESSAGE_CONTENT" }>>().toMatchTypeOf<Omit<Extract<CoreEvent, { type: "TEXT_MESSAGE_CONTENT" }>, "type">>()
    expectTypeOf<Extract<AgUiEvent, { type: "RUN_STARTED" }>>().toMatchTypeOf<Omit<Extract<CoreEvent, { type: "RUN_STARTED" }>, "type">>()
  })
})

describe("eventStreamResponse with format \"ag-ui\"", () => {
  it("answers Server-Sent Events, one data frame per AG-UI event", async () => {
    const response = eventStreamResponse(agent("a").model(scriptedModel([text("hi")], { chunk: 1 })).runStream("x"), { format: "ag-ui", agUi: { threadId: "t9" } })
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8")
    const body = await response.text()
    const frames = body.split("\n\n").filter((f) => f !== "")
    expect(frames.every((f) => f.startsWith("data: "))).toBe(true)
    const events = frames.map((f) => JSON.parse(f.slice(6)) as AgUiEvent)
    expect(events[0]).toMatchObject({ type: "RUN_STARTED", threadId: "t9" })
    expect(events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => (e as { delta: string }).delta).join("")).toBe("hi")
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", threadId: "t9", result: "hi" })
  })
})
