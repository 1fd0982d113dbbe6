/**
 * AG-UI of runs that write at once (a `parallel`'s members): each run's text goes to its own message,
 * every event one `@ag-ui/core`'s schema accepts and the stream well formed. Before, the one open text
 * block was reused whatever run wrote into it: the second member's deltas were delivered as part of
 * the first member's assistant message.
 */
import { EventSchemas } from "@ag-ui/core/schemas"
import { Effect, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, parallel, tool } from "../../../src/index.ts"
import { toAgUiEvents } from "../../../src/protocols/ag-ui/index.ts"
import { pacedModel, textParts } from "../../support/paced-model.ts"
import { wellFormedProblems } from "./well-formed.ts"

const collect = async (events: Stream.Stream<any, any>) => {
  const out = [...await Effect.runPromise(Stream.runCollect(toAgUiEvents(events, { threadId: "t", runId: "r" })))] as Array<Record<string, any>>
  for (const event of out) expect(EventSchemas.safeParse(event).success, JSON.stringify(event)).toBe(true)
  expect(wellFormedProblems(out as never)).toEqual([])
  const texts = new Map<string, string>()
  for (const e of out) if (e.type === "TEXT_MESSAGE_CONTENT") texts.set(e.messageId, (texts.get(e.messageId) ?? "") + e.delta)
  return { out, texts: [...texts.values()] }
}

describe("toAgUiEvents: runs writing at once", () => {
  it("each member's text is its own message", async () => {
    const a = agent("a").model(pacedModel([textParts("alpha ".repeat(4))], 4))
    const b = agent("b").model(pacedModel([textParts("beta ".repeat(5))], 5))
    const { texts } = await collect(parallel("both", [a, b]).runStream("go"))
    expect(texts.sort()).toEqual(["alpha ".repeat(4), "beta ".repeat(5)].sort())
  })

  it("a member calling a tool while the other writes: the text stays whole in its own message", async () => {
    const ping = tool("ping", { args: Schema.Struct({}), run: () => Effect.as(Effect.sleep(20), "pong") })
    const a = agent("a").model(pacedModel([textParts("alpha ".repeat(10))], 6))
    const b = agent("b").model(pacedModel([[{ _tag: "ToolCallStart", index: 0, id: "c1", name: "ping" }, { _tag: "ToolCallDelta", index: 0, delta: "{}" }, { _tag: "ToolCallEnd", index: 0 }, { _tag: "Finish", reason: "tool-calls" }], textParts("done")], 2)).tools({ ping })
    const { out, texts } = await collect(parallel("both", [a, b]).runStream("go"))
    expect(texts.sort()).toEqual(["alpha ".repeat(10), "done"].sort())
    expect(out.find((e) => e.type === "TOOL_CALL_RESULT")).toMatchObject({ content: "pong" })
  })
})
