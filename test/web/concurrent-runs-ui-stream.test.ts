/**
 * The UI message stream of runs that write at once (a `parallel`'s members), of a call the model's
 * stream tore, and of a call the run's deadline cut, read by the AI SDK's own reader (what `useChat`
 * runs). Before: the members' deltas went into one text part (the second member's under the first's
 * id), a `finish-step` while a member's text was open made the reader throw "Received text-delta for
 * missing text part", a torn call stayed `input-streaming` for ever, and a call cut while it ran was
 * told "not run" to the next turn's model. And `fromUIMessages` refused the messages as the reader
 * builds them in memory (optional keys holding `undefined`).
 */
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage } from "ai"
import { Effect, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, eventStreamResponse, type ModelClient, ModelError, parallel, pipeline, tool } from "../../src/index.ts"
import type { ResponsePart } from "../../src/model/response-part.ts"
import { fromUIMessages } from "../../src/web/index.ts"
import { pacedModel, textParts } from "../support/paced-model.ts"
import { quietLogs } from "../support/quiet-logs.ts"

quietLogs()

const callOf = (id: string, name: string): ReadonlyArray<ResponsePart> => [
  { _tag: "ToolCallStart", index: 0, id, name },
  { _tag: "ToolCallDelta", index: 0, delta: "{}" },
  { _tag: "ToolCallEnd", index: 0 },
  { _tag: "Finish", reason: "tool-calls" }
]

/** The chunks, the problems a `useChat` client would meet, and the message the AI SDK builds. */
const read = async (response: Response) => {
  const body = await response.text()
  const chunks = body.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)) as Record<string, any>)
  const problems: Array<string> = []
  if (chunks.filter((c) => c.type === "start").length !== 1) problems.push("not one start")
  if (chunks.filter((c) => c.type === "finish").length !== 1 || chunks.at(-1)?.type !== "finish") problems.push("not one finish, last")
  let depth = 0
  for (const c of chunks) {
    if (c.type === "start-step" && depth++ !== 0) problems.push("nested step")
    if (c.type === "finish-step" && --depth !== 0) problems.push("finish-step without a step")
  }
  if (depth !== 0) problems.push("unbalanced steps")
  const outcomes = new Set(chunks.filter((c) => c.type.startsWith("tool-output-") || c.type === "tool-approval-request").map((c) => c.toolCallId))
  for (const c of chunks) if (c.type === "tool-input-start" && !outcomes.has(c.toolCallId)) problems.push(`call ${c.toolCallId} without an outcome`)
  const parsed = parseJsonEventStream({ stream: new Response(body).body!, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) problems.push(`refused by the schema: ${String(result.error)}`)
        else controller.enqueue(result.value)
      }
    })
  )
  let message: UIMessage | undefined
  const errors = new Set(chunks.filter((c) => c.type === "error").map((c) => c.errorText))
  try {
    for await (const m of readUIMessageStream({ stream: parsed, onError: (e) => void (errors.has((e as Error).message) || problems.push(`reader: ${(e as Error).message}`)) })) message = m
  } catch (error) {
    problems.push(`reader: ${(error as Error).message}`)
  }
  return { chunks, problems, message: message! }
}
const texts = (message: UIMessage) => message.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)

describe("a parallel's members writing at once, in the UI message stream", () => {
  it("each member's text is its own part, never merged into the other's", async () => {
    const a = agent("a").model(pacedModel([textParts("alpha ".repeat(4))], 4))
    const b = agent("b").model(pacedModel([textParts("beta ".repeat(5))], 5))
    const { problems, message } = await read(eventStreamResponse(parallel("both", [a, b]).runStream("go"), { format: "ui-message-stream" }))
    expect(problems).toEqual([])
    expect(texts(message).sort()).toEqual(["alpha ".repeat(4), "beta ".repeat(5)].sort())
  })

  it("a member's step ending while the other writes does not break the reader; every text arrives whole", async () => {
    const ping = tool("ping", { args: Schema.Struct({}), run: () => Effect.as(Effect.sleep(30), "pong") })
    const a = agent("a").model(pacedModel([textParts("alpha ".repeat(10))], 8))
    const b = agent("b").model(pacedModel([callOf("c1", "ping"), textParts("done")], 2)).tools({ ping })
    const { problems, message } = await read(eventStreamResponse(parallel("both", [a, b]).runStream("go"), { format: "ui-message-stream" }))
    expect(problems).toEqual([])
    const all = texts(message)
    expect(all.filter((t) => t.startsWith("done") || t === "done")).toEqual(["done"])
    expect(all.filter((t) => t !== "done").join("")).toBe("alpha ".repeat(10))
    expect(message.parts.find((p) => p.type === "tool-ping")).toMatchObject({ state: "output-available", output: "pong" })
  })
})

describe("calls without a whole input or a result, in the UI message stream", () => {
  const add = tool("add", { args: Schema.Struct({ a: Schema.Finite }), run: ({ a }) => a })
  const torn: ModelClient = {
    chat: () => Effect.die("streamed only"),
    stream: () =>
      Stream.fromIterable<ResponsePart>([{ _tag: "ToolCallStart", index: 0, id: "c1", name: "add" }, { _tag: "ToolCallDelta", index: 0, delta: '{"a":' }]).pipe(
        Stream.concat(Stream.fail(new ModelError({ provider: "test", reason: "connection reset", retryable: false })))
      )
  }

  it.each([
    ["an agent", () => agent("solo").model(torn).tools({ add }).runStream("go")],
    ["a pipeline's stage", () => pipeline("p", agent("solo").model(torn).tools({ add }), agent("w").model(torn)).runStream("go")]
  ] as const)("a call the model's stream tore mid-arguments ends in an outcome (%s)", async (_name, stream) => {
    const { problems, chunks, message } = await read(eventStreamResponse(stream() as never, { format: "ui-message-stream" }))
    expect(problems).toEqual([])
    expect(chunks.find((c) => c.type === "tool-output-error")).toMatchObject({ toolCallId: expect.stringMatching(/c1$/), errorText: expect.stringContaining("not run") })
    expect(message.parts.filter((p) => p.type === "tool-add").map((p) => (p as { state: string }).state)).toEqual(["output-error"])
  })

  it("a call cut by the run's deadline while it ran is not told 'not run' to the next turn's model", async () => {
    let started = 0
    const transfer = tool("transfer", { args: Schema.Struct({}), effect: "mutating", run: () => Effect.sleep(1_000).pipe(Effect.as("sent"), Effect.ensuring(Effect.sync(() => void started++))) })
    const bank = agent("bank").model(pacedModel([callOf("c1", "transfer")], 1)).tools({ transfer }).budget({ maxDuration: 150 })
    const { problems, chunks, message } = await read(eventStreamResponse(bank.runStream("go"), { format: "ui-message-stream" }))
    expect(problems).toEqual([])
    expect(started).toBe(1)
    const outcome = chunks.find((c) => c.type === "tool-output-error")
    expect(outcome?.errorText).toMatch(/^no result: the run ended before this call finished \(it may have started\)/)
    // The message as the reader built it, in memory (optional keys holding `undefined`), is a transcript.
    const next = fromUIMessages([{ id: "u", role: "user", parts: [{ type: "text", text: "go" }] }, message, { id: "u2", role: "user", parts: [{ type: "text", text: "again?" }] }])
    expect(next.transcript.find((m) => m.role === "tool")).toMatchObject({ content: outcome!.errorText })
  })
})
