/**
 * For any scripted run (src/testing/arbitraries.ts: valid, invalid and unknown calls, hostile
 * arguments, model errors, reasoning, any tearing of the texts into chunks) over a server tool, a tool
 * that may need approval and a client tool, the AG-UI stream is well-formed (./well-formed.ts), every
 * event passes `@ag-ui/core`'s schema, `@ag-ui/client`'s own verifier accepts the sequence, and the
 * finish says what the run's end said. The same holds for the stream cut anywhere, with or without a
 * failure after the cut (a client gone, a worker killed): it still ends with exactly one `RUN_ERROR`.
 */
import { verifyEvents } from "@ag-ui/client"
import { EventSchemas } from "@ag-ui/core/schemas"
import { fc, test } from "@fast-check/vitest"
import { Effect, Exit, Schema, Stream } from "effect"
import { from, lastValueFrom, toArray } from "rxjs"
import { describe, expect } from "vitest"
import { agent, ModelError, type RunEndEvent, type RunStreamEvent, tool } from "effect-agent-dsl"
import { clientTools, toAgUiEvents, type AgUiEvent } from "effect-agent-dsl/ag-ui"
import { scriptedModel, type ScriptStep } from "effect-agent-dsl/testing"
import { arbModelScript } from "effect-agent-dsl/testing/arbitraries"
import { wellFormedProblems } from "./well-formed.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 150)

const add = tool("add", { description: "Add", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const transfer = tool("transfer", {
  description: "Move money",
  args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
  needsApproval: ({ amount }) => amount > 0,
  run: ({ amount }) => `sent ${amount}`
})
const client = clientTools([{ name: "pick_color", parameters: { type: "object", properties: { hint: { type: "string" } }, required: ["hint"] } }], new Map())
const tools = [add, transfer, client.pick_color!]

/** A script with reasoning added to some answers. */
const arbScript: fc.Arbitrary<ReadonlyArray<ScriptStep>> = fc.tuple(
  arbModelScript(tools, { maxLength: 8 }),
  fc.array(fc.option(fc.string({ unit: "binary", maxLength: 20 }), { nil: undefined }), { maxLength: 8 })
).map(([steps, thoughts]) =>
  steps.map((step, i) => {
    const thought = thoughts[i]
    return thought === undefined || thought === "" || step instanceof ModelError ? step : { ...(step as object), reasoning: [{ _tag: "Thinking" as const, text: thought }] } as unknown as ScriptStep
  })
)

/** The run's events, and its failure when it failed. */
const runEvents = async (script: ReadonlyArray<ScriptStep>, chunk: number) => {
  const model = scriptedModel(script, { chunk })
  const builder = agent("prop").prompt("p").model(model).tools({ add, transfer, ...client } as { add: typeof add; transfer: typeof transfer })
  const events: Array<RunStreamEvent> = []
  const exit = await Effect.runPromiseExit(Stream.runForEach(builder.runStream("go"), (e) => Effect.sync(() => void events.push(e))))
  return { events, failure: Exit.isFailure(exit) ? exit.cause : undefined }
}

const before = [{ id: "u0", role: "user", content: "earlier" }, { id: "a0", role: "assistant", content: "noted" }, { id: "u1", role: "user", content: "go" }]
const toAgUi = (events: ReadonlyArray<RunStreamEvent>, tail: Stream.Stream<never, any> = Stream.empty) =>
  Effect.runPromise(Stream.runCollect(toAgUiEvents(Stream.concat(Stream.fromIterable(events), tail), { threadId: "thread", clientTools: ["pick_color"], conversation: before })))
    .then((chunk) => [...chunk] as Array<AgUiEvent>)

/**
 * The closing MESSAGES_SNAPSHOT (when the run did not fail): right before RUN_FINISHED, it keeps the
 * input's messages first, ids unique, every tool message answers a call an assistant message of the
 * snapshot made, and the calls and texts are the ones the stream carried.
 */
const checkSnapshot = (out: ReadonlyArray<AgUiEvent>) => {
  const last = out.at(-1)!
  const snapshots = out.filter((e) => e.type === "MESSAGES_SNAPSHOT")
  if (last.type !== "RUN_FINISHED" || (last.outcome as { type: string }).type === "cancelled") return expect(snapshots).toEqual([])
  expect(snapshots).toHaveLength(1)
  expect(out.at(-2)).toBe(snapshots[0])
  const messages = (snapshots[0] as { messages: ReadonlyArray<{ id: string; role: string; toolCallId?: string; toolCalls?: ReadonlyArray<{ id: string }>; content?: string }> }).messages
  expect(messages.slice(0, 3)).toEqual(before)
  expect(new Set(messages.map((m) => m.id)).size).toBe(messages.length)
  const calls = new Set(messages.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)))
  for (const m of messages) if (m.role === "tool") expect(calls.has(m.toolCallId!)).toBe(true)
  expect([...calls].sort()).toEqual(out.flatMap((e) => (e.type === "TOOL_CALL_START" ? [e.toolCallId] : [])).sort())
  const texts = messages.slice(3).flatMap((m) => (m.role === "assistant" && m.content !== undefined ? [m.content] : [])).join("")
  expect(texts).toBe(out.flatMap((e) => (e.type === "TEXT_MESSAGE_CONTENT" ? [e.delta] : [])).join(""))
}

const checkProtocol = async (out: ReadonlyArray<AgUiEvent>) => {
  expect(wellFormedProblems(out as never)).toEqual([])
  for (const event of out) {
    const parsed = EventSchemas.safeParse(event)
    if (!parsed.success) throw new Error(`${JSON.stringify(event)}: ${parsed.error.message}`)
  }
  // The protocol's own verifier (what HttpAgent runs on every stream) accepts the sequence.
  await lastValueFrom(from(out as Array<never>).pipe(verifyEvents(false), toArray()))
}

describe("the AG-UI stream of any scripted run", () => {
  test.prop([arbScript, fc.integer({ min: 1, max: 7 })], { numRuns })("is well-formed, passes the protocol's schemas and verifier, and finishes as the run ended", async (script, chunk) => {
    const { events, failure } = await runEvents(script, chunk)
    const out = await toAgUi(events, failure === undefined ? Stream.empty : Stream.failCause(failure))
    await checkProtocol(out)
    checkSnapshot(out)
    const end = [...events].reverse().find((e): e is RunEndEvent => e._tag === "RunEnd" && e.parentRunId === undefined)
    const last = out.at(-1)!
    switch (end?.outcome._tag) {
      case "Success":
        expect(last).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } })
        break
      case "Failure":
        expect(last).toMatchObject({ type: "RUN_ERROR", code: end.outcome.error._tag })
        break
      case "Suspended": {
        const waitsOnApproval = end.outcome.pending.some((p) => p.tool !== "pick_color")
        expect(last).toMatchObject({ type: "RUN_FINISHED", outcome: { type: waitsOnApproval ? "interrupt" : "success" } })
        // Every waiting call is named: the pending list, or (approvals waiting) one interrupt per call,
        // the client tool's calls included (an interrupt outcome has no pending list).
        const outcome = (last as unknown as { outcome: { pendingToolCallIds?: Array<string>; interrupts?: Array<{ reason: string; toolCallId?: string; metadata: { tool: string } }> } }).outcome
        if (!waitsOnApproval) expect(outcome.pendingToolCallIds).toHaveLength(end.outcome.pending.length)
        else {
          expect(outcome.interrupts!.map((i) => [i.metadata.tool, i.reason])).toEqual(end.outcome.pending.map((p) => [p.tool, p.tool === "pick_color" ? "effect-agent-dsl:client_tool" : "tool_call"]))
          // AG-UI: a tool_call interrupt must name its call.
          for (const i of outcome.interrupts!) expect(typeof i.toolCallId).toBe("string")
        }
        break
      }
      default:
        expect(last.type).toBe("RUN_ERROR")
    }
    // The text the model streamed is the text the stream carries.
    const streamed = events.flatMap((e) => (e._tag === "TextDelta" ? [e.delta] : [])).join("")
    const carried = out.flatMap((e) => (e.type === "TEXT_MESSAGE_CONTENT" ? [e.delta] : [])).join("")
    expect(carried).toBe(streamed)
  })

  test.prop([arbScript, fc.integer({ min: 1, max: 7 }), fc.nat(), fc.boolean()], { numRuns })("stays well-formed when cut anywhere, ending with one RUN_ERROR", async (script, chunk, at, fails) => {
    const { events } = await runEvents(script, chunk)
    const cut = events.slice(0, events.length === 0 ? 0 : at % events.length)
    const tail = fails ? Stream.fail(new ModelError({ provider: "scripted", reason: "connection reset" })) : Stream.empty
    const out = await toAgUi(cut, tail)
    await checkProtocol(out)
    checkSnapshot(out)
    expect(out.at(-1)).toMatchObject({ type: "RUN_ERROR", code: fails ? "ModelError" : "StreamEnded" })
  })
})
