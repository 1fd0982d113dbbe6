/**
 * A composite's `runStream` as AG-UI events (the guide says `toAgUiEvents` maps "a composite" too):
 * the members' turns as steps, then the composite's end as the stream's end (its output, its waiting
 * calls as an interrupt, its failure as `RUN_ERROR`), every event one `@ag-ui/core`'s schema accepts.
 * Before, the stream of a composite ended in "The run's stream ended before the run did".
 */
import { EventSchemas } from "@ag-ui/core/schemas"
import { Effect, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, ModelError, parallel, pipeline, text, tool, toolCalls } from "effect-agent-dsl"
import { toAgUiEvents } from "effect-agent-dsl/ag-ui"
import { scriptedModel } from "effect-agent-dsl/testing"
import { wellFormedProblems } from "./well-formed.ts"

const collect = async (events: Stream.Stream<any, any>) => {
  const out = [...await Effect.runPromise(Stream.runCollect(toAgUiEvents(events, { threadId: "t", runId: "r" })))] as Array<{ readonly type: string } & Record<string, any>>
  for (const event of out) expect(EventSchemas.safeParse(event).success, JSON.stringify(event)).toBe(true)
  expect(wellFormedProblems(out as never)).toEqual([])
  return out
}

const planner = agent("planner").model(scriptedModel(() => text("the plan")))
const writer = agent("writer").model(scriptedModel(() => text("the text")))

describe("toAgUiEvents on a composite's stream", () => {
  it("ends a pipeline with RUN_FINISHED carrying its output, after each stage's turn as a step", async () => {
    const out = await collect(pipeline("p", planner, writer).runStream("go"))
    expect(out[0]).toMatchObject({ type: "RUN_STARTED", threadId: "t", runId: "r" })
    expect(out.filter((e) => e.type === "STEP_STARTED").map((e) => e.stepName)).toEqual(["planner turn 1", "writer turn 1"])
    expect(out.at(-1)).toMatchObject({ type: "RUN_FINISHED", result: "the text", outcome: { type: "success" } })
  })

  it("ends a composite waiting for a decision with an interrupt naming the waiting call", async () => {
    const pay = tool("pay", { description: "Pay", args: Schema.Struct({ amount: Schema.Finite }), needsApproval: true, run: () => "paid" })
    const payer = agent("payer").model(scriptedModel(() => toolCalls([{ id: "p1", name: "pay", arguments: { amount: 5 } }]))).tools({ pay })
    const out = await collect(pipeline("p", planner, payer).runStream("go"))
    const end = out.at(-1)!
    expect(end).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "interrupt" } })
    expect(end.outcome.interrupts).toHaveLength(1)
    expect(end.outcome.interrupts[0]).toMatchObject({ reason: "tool_call", metadata: { tool: "pay", args: { amount: 5 } } })
  })

  it("ends a failed composite with RUN_ERROR carrying the error's tag", async () => {
    const broken = agent("broken").model(scriptedModel(() => Effect.fail(new ModelError({ provider: "test", reason: "down", retryable: false }))))
    const out = await collect(parallel("both", [planner, broken]).runStream("go"))
    expect(out.at(-1)).toMatchObject({ type: "RUN_ERROR", code: "ModelError" })
    expect(out.filter((e) => e.type === "RUN_ERROR")).toHaveLength(1)
  })
})
