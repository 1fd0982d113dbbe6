/** `composite.runStream`: every agent run under a composite streams into one Stream, in order, with its lineage. */
import { Effect, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type CompositeStreamEvent, ModelError, text, toolCalls, tool } from "../../src/index.ts"
import { parallel, pipeline } from "../../src/compose/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const collect = <E>(stream: Stream.Stream<CompositeStreamEvent, E>) => Effect.runPromise(Stream.runCollect(stream))

describe("composite.runStream", () => {
  it("streams the composite's start, each child's events and deltas, and its end with the output", async () => {
    const planner = agent("planner").model(scriptedModel(text("plan: two parts"), { chunk: 3 }))
    const writer = agent("writer").model(scriptedModel([toolCalls([{ id: "c1", name: "count", arguments: { s: "ab" } }]), text("report")]))
      .tools({ count: tool("count", { args: Schema.Struct({ s: Schema.String }), run: ({ s }) => s.length }) })
    const events = [...await collect(pipeline("research", planner, writer).runStream("go"))]
    const tags = events.map((e) => ("agent" in e ? `${e.agent}:${e._tag}` : `${e.name}:${e._tag}`))
    expect(tags[0]).toBe("research:CompositeStart")
    expect(tags.at(-1)).toBe("research:CompositeEnd")
    expect(tags.indexOf("planner:RunEnd")).toBeLessThan(tags.indexOf("writer:RunStart"))
    const deltas = events.filter((e) => e._tag === "TextDelta" && e.agent === "planner").map((e) => (e._tag === "TextDelta" ? e.delta : ""))
    expect(deltas.join("")).toBe("plan: two parts")
    expect(deltas.length).toBeGreaterThan(1)
    expect(tags).toContain("writer:ToolUse")
    const start = events[0]!
    const end = events.at(-1)!
    expect(end).toMatchObject({ _tag: "CompositeEnd", outcome: { _tag: "Success", output: "report" } })
    const compositeRun = start._tag === "CompositeStart" ? start.runId : ""
    expect(events.filter((e) => "agent" in e).every((e) => "parentRunId" in e && e.parentRunId === compositeRun)).toBe(true)
  })

  it("keeps concurrent children apart by run id, and fails with the run's error", async () => {
    const fan = parallel("fan", [agent("a").model(scriptedModel(text("A"))), agent("b").model(scriptedModel(text("B")))])
    const events = [...await collect(fan.runStream("q"))]
    const runs = new Set(events.filter((e) => e._tag === "RunStart").map((e) => ("runId" in e ? e.runId : "")))
    expect(runs.size).toBe(2)
    const failing = pipeline("p", agent("ok").model(scriptedModel(text("x"))), agent("down").model(scriptedModel(new ModelError({ provider: "t", reason: "down" }))))
    const exit = await runExit(Stream.runCollect(failing.runStream("q")))
    expect(failureOf(exit)).toMatchObject({ _tag: "ModelError", reason: "down" })
  })
})
