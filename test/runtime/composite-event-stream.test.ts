/**
 * A composite's stream served by `eventStreamResponse`, in each format. Before, `eventStreamResponse`
 * took an agent's stream only (a composite's did not type-check), and a composite's stream cast to it
 * ended the UI message stream without `finish` (the members' `RunEnd`s are a child's, and the
 * composite's `CompositeEnd` was not read). The UI message stream is read with the AI SDK's own parser
 * and `readUIMessageStream`, as `useChat` reads it.
 */
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage } from "ai"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, eventStreamResponse, ModelError, parallel, pipeline, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { quietLogs } from "../support/quiet-logs.ts"

quietLogs()

const planner = agent("planner").model(scriptedModel(() => text("the plan")))
const writer = agent("writer").model(scriptedModel(() => text("the text")))

/** The UI message stream's chunks, each checked by the AI SDK's schema. */
const chunksOf = async (response: Response) => {
  const body = await response.text()
  expect(body.trimEnd().endsWith("data: [DONE]")).toBe(true)
  const chunks: Array<Record<string, any>> = []
  const parsed = parseJsonEventStream({ stream: new Response(body).body!, schema: uiMessageChunkSchema })
  for await (const result of parsed as unknown as AsyncIterable<{ success: boolean; value: Record<string, any>; error?: unknown }>) {
    if (!result.success) throw result.error
    chunks.push(result.value)
  }
  return { body, chunks }
}

const lastMessage = async (body: string): Promise<UIMessage | undefined> => {
  const chunks = parseJsonEventStream({ stream: new Response(body).body!, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw result.error
        controller.enqueue(result.value)
      }
    })
  )
  let last: UIMessage | undefined
  for await (const message of readUIMessageStream({ stream: chunks })) last = message
  return last
}

describe("eventStreamResponse of a composite's stream", () => {
  it("ui-message-stream: one message named by the composite's run, every stage's text in it, ended by one finish", async () => {
    const { body, chunks } = await chunksOf(eventStreamResponse(pipeline("p", planner, writer).runStream("go"), { format: "ui-message-stream" }))
    expect(chunks[0]).toMatchObject({ type: "start" })
    expect(typeof chunks[0]!.messageId).toBe("string")
    expect(chunks.filter((c) => c.type === "start")).toHaveLength(1)
    expect(chunks.filter((c) => c.type === "finish")).toEqual([{ type: "finish", finishReason: "stop" }])
    expect(chunks.at(-1)).toMatchObject({ type: "finish" })
    expect(chunks.filter((c) => c.type === "start-step").length).toBe(chunks.filter((c) => c.type === "finish-step").length)
    const message = await lastMessage(body)
    expect(message?.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toEqual(["the plan", "the text"])
  })

  it("ui-message-stream: a composite that fails ends with its error, then finish of reason error", async () => {
    const broken = agent("broken").model(scriptedModel(() => Promise.reject(new ModelError({ provider: "test", reason: "the model is down", retryable: false }))))
    const { chunks } = await chunksOf(eventStreamResponse(pipeline("p", planner, broken).runStream("go"), { format: "ui-message-stream" }))
    const errors = chunks.filter((c) => c.type === "error")
    expect(errors).toHaveLength(1)
    expect(errors[0]!.errorText).toContain("the model is down")
    expect(chunks.filter((c) => c.type === "finish")).toEqual([{ type: "finish", finishReason: "error" }])
    expect(chunks.at(-1)).toMatchObject({ type: "finish" })
  })

  it("ui-message-stream: a composite waiting for a decision ends with finish of reason tool-calls", async () => {
    const pay = tool("pay", { description: "Pay", args: Schema.Struct({ amount: Schema.Finite }), needsApproval: true, run: () => "paid" })
    const payer = agent("payer").model(scriptedModel(() => toolCalls([{ id: "p1", name: "pay", arguments: { amount: 5 } }]))).tools({ pay })
    const { chunks } = await chunksOf(eventStreamResponse(pipeline("p", planner, payer).runStream("go"), { format: "ui-message-stream" }))
    expect(chunks.filter((c) => c.type === "finish")).toEqual([{ type: "finish", finishReason: "tool-calls" }])
    expect(chunks.find((c) => c.type === "tool-input-available")).toMatchObject({ toolName: "pay", input: { amount: 5 } })
  })

  it("ui-message-stream: a composite inside a composite ends the message once, at the outer end", async () => {
    const inner = parallel("fan", [planner, writer])
    const outer = pipeline("outer", inner, agent("summary", { input: Schema.Tuple([Schema.String, Schema.String]) }).model(scriptedModel(() => text("both"))))
    const { body, chunks } = await chunksOf(eventStreamResponse(outer.runStream("go"), { format: "ui-message-stream" }))
    expect(chunks.filter((c) => c.type === "finish")).toEqual([{ type: "finish", finishReason: "stop" }])
    expect(chunks.at(-1)).toMatchObject({ type: "finish" })
    const message = await lastMessage(body)
    expect(message?.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text).sort()).toEqual(["both", "the plan", "the text"])
  })

  it("events: the composite's start and end are events of their own, whatever include says", async () => {
    const response = eventStreamResponse(pipeline("p", planner, writer).runStream("go"), { include: (event) => event._tag === "RunEnd" })
    const names = [...(await response.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1])
    expect(names).toEqual(["CompositeStart", "RunEnd", "RunEnd", "CompositeEnd"])
  })

  it("ag-ui: the composite's end is RUN_FINISHED with its output", async () => {
    const body = await eventStreamResponse(pipeline("p", planner, writer).runStream("go"), { format: "ag-ui", agUi: { threadId: "t", runId: "r" } }).text()
    const events = body.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => JSON.parse(f.slice(6)) as Record<string, unknown>)
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", result: "the text" })
  })
})
