/**
 * The closing `MESSAGES_SNAPSHOT` is the client's history for the next run (an AG-UI client keeps it
 * and sends it back): it holds the run's own conversation. A child run's turns (an agent used as a
 * tool) are streamed as they happen, but its calls and text are the child's conversation, not the
 * parent's: sent back, they would give the parent's model calls of tools it was never offered, and a
 * transcript strict providers refuse (an assistant call not followed by its result).
 */
import { EventSchemas } from "@ag-ui/core/schemas"
import { Effect, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, pipeline, skill, text, tool, toolCalls } from "effect-agent-dsl"
import { agUiHandler, toAgUiEvents } from "effect-agent-dsl/ag-ui"
import { scriptedModel } from "effect-agent-dsl/testing"

interface Message {
  readonly id: string
  readonly role: string
  readonly content?: string
  readonly toolCallId?: string
  readonly toolCalls?: ReadonlyArray<{ readonly id: string; readonly function: { readonly name: string } }>
}

/** The events of one run of `handler` on `messages`, each checked against `@ag-ui/core`'s schema. */
const run = async (handler: (request: Request) => Promise<Response>, messages: ReadonlyArray<unknown>) => {
  const response = await handler(new Request("http://localhost/", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ threadId: "t", runId: "r", tools: [], context: [], messages })
  }))
  expect(response.status).toBe(200)
  const events = (await response.text()).split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => JSON.parse(f.slice(6)) as { readonly type: string; readonly messages?: ReadonlyArray<Message> })
  for (const event of events) expect(EventSchemas.safeParse(event).success, JSON.stringify(event)).toBe(true)
  return events
}
const snapshotOf = (events: ReadonlyArray<{ readonly type: string; readonly messages?: ReadonlyArray<Message> }>) =>
  events.filter((e) => e.type === "MESSAGES_SNAPSHOT").at(-1)!.messages!
const shape = (messages: ReadonlyArray<Message>) =>
  messages.map((m) => `${m.role}:${m.content ?? ""}${m.toolCalls === undefined ? "" : `[${m.toolCalls.map((c) => c.function.name).join(",")}]`}${m.toolCallId === undefined ? "" : `<${m.toolCallId}>`}`)

const weather = tool("weather", { description: "The weather", args: Schema.Struct({ city: Schema.String }), run: ({ city }) => `sunny in ${city}` })
const child = agent("child")
  .model(scriptedModel((request) => request.messages.at(-1)?.role === "tool" ? text("child done") : toolCalls([{ id: "k1", name: "weather", arguments: { city: "Oslo" } }])))
  .tools({ weather })

describe("MESSAGES_SNAPSHOT and child runs", () => {
  it("keeps an agent-as-tool's own calls and text out of the parent's conversation, and a second run on it sees only the parent's", async () => {
    const parentModel = scriptedModel((request) => {
      const last = request.messages.at(-1)!
      if (last.role === "tool") return text(`parent: ${last.content}`)
      return last.content === "first" ? toolCalls([{ id: "c1", name: "child", arguments: { input: "go" } }]) : text("second answer")
    })
    const handler = agUiHandler(agent("parent").model(parentModel).tools({ child: child.asTool({ name: "child", description: "A child agent" }) }))
    const events = await run(handler, [{ id: "u1", role: "user", content: "first" }])
    // The child's call is streamed as it happens…
    expect(events.some((e) => e.type === "TOOL_CALL_START" && (e as { toolCallName?: string }).toolCallName === "weather")).toBe(true)
    // …but the conversation is the parent's alone.
    const history = snapshotOf(events)
    expect(shape(history)).toEqual(["user:first", "assistant:[child]", "tool:child done<c1>", "assistant:parent: child done"])
    await run(handler, [...history, { id: "u2", role: "user", content: "second" }])
    const sent = parentModel.requests.at(-1)!.messages
    expect(sent.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"])
    expect(sent.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []).map((c) => c.name) : []))).toEqual(["child"])
  })

  it("keeps a handoff target's answer (it answers for the run) and leaves out the target's own tool calls", async () => {
    const billing = agent("billing")
      .model(scriptedModel((request) => request.messages.at(-1)?.role === "tool" ? text("billing: refunded") : toolCalls([{ id: "b1", name: "weather", arguments: { city: "Rome" } }])))
      .tools({ weather })
    const triage = agent("triage")
      .model(scriptedModel(() => toolCalls([{ id: "h1", name: "handoff_to_billing", arguments: {} }])))
      .skills(() => [skill("triage", "Route").handoffs(billing)])
    const history = snapshotOf(await run(agUiHandler(triage), [{ id: "u1", role: "user", content: "refund" }]))
    const shapes = shape(history)
    expect(shapes).not.toContain("assistant:[weather]")
    expect(shapes.at(-1)).toBe("assistant:billing: refunded")
  })

  it("keeps a composite's members' messages (its stages speak in turn), and leaves out a member's agent used as a tool", async () => {
    const planner = agent("planner").model(scriptedModel(() => text("the plan")))
    const writer = agent("writer")
      .model(scriptedModel((request) => request.messages.at(-1)?.role === "tool" ? text("the text") : toolCalls([{ id: "w1", name: "child", arguments: { input: "look" } }])))
      .tools({ child: child.asTool({ name: "child", description: "A child agent" }) })
    const events = [...await Effect.runPromise(Stream.runCollect(toAgUiEvents(pipeline("p", planner, writer).runStream("go"), { threadId: "t", runId: "r", conversation: [{ id: "u1", role: "user", content: "go" }] })))]
    const history = snapshotOf(events as never)
    expect(shape(history)).toEqual(["user:go", "assistant:the plan", "assistant:[child]", "tool:child done<w1>", "assistant:the text"])
  })
})
