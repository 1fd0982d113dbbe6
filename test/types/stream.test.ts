/**
 * Compile-time guarantees of `runStream`: its events are a discriminated union (narrowing on `_tag`
 * types the deltas), its error channel is `AgentError`, and without `.model(...)` it requires the
 * `ModelClientService`, as `runEffect` does.
 */
import { Schema, Stream } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { agent, type AgentError, type ModelClientService, type RunStreamEvent } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

describe("agent.runStream", () => {
  it("streams RunStreamEvent with AgentError, and needs no service once a model is set", () => {
    const stream = agent("a").model(scriptedModel([])).runStream("hi")
    expectTypeOf(stream).toEqualTypeOf<Stream.Stream<RunStreamEvent, AgentError, never>>()
  })

  it("requires ModelClientService without a model", () => {
    expectTypeOf(agent("a").runStream("hi")).toEqualTypeOf<Stream.Stream<RunStreamEvent, AgentError, ModelClientService>>()
  })

  it("takes the input type of the agent's input Schema", () => {
    const typed = agent("typed", { input: Schema.Struct({ n: Schema.Finite }) }).model(scriptedModel([]))
    typed.runStream({ n: 1 })
    // @ts-expect-error the input must match the agent's input Schema
    typed.runStream("not a struct")
  })

  it("narrows deltas on _tag", () => {
    const describe = (event: RunStreamEvent): string => {
      if (event._tag === "TextDelta") {
        expectTypeOf(event.delta).toEqualTypeOf<string>()
        return event.delta
      }
      if (event._tag === "ToolCallDelta") {
        expectTypeOf(event.index).toEqualTypeOf<number>()
        // @ts-expect-error argument deltas have no decoded args
        return event.args
      }
      return event._tag
    }
    void describe
  })
})
