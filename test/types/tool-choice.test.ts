/**
 * Compile-time guarantees of `.toolChoice(...)`: a skill forces only its own agent's handles, a keyword
 * or the typed answer; an agent without skills names only its registered tools. `tsc --noEmit` fails if
 * an `@ts-expect-error` line below stops being an error.
 */
import { Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, outputToolName, skill, tool, type ToolChoiceSetting } from "../../src/index.ts"

const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const shout = tool("shout", { args: Schema.Struct({ text: Schema.String }), run: ({ text }) => text.toUpperCase() })
const Answer = Schema.Struct({ n: Schema.Finite })

describe("skill(...).toolChoice(...)", () => {
  it("accepts the keywords, the typed answer, the skill's own handles and a per-turn policy", () => {
    const built = agent("calc", { output: Answer }).tools({ add }).skills(({ add }) => [
      skill("a").tools(add).toolChoice("output"),
      skill("b").tools(add).toolChoice(add).when(() => false),
      skill("c").tools(add).toolChoice({ lastTurn: "output", otherTurns: "required" }).when(() => false)
    ])
    expect(built.name).toBe("calc")
    expectTypeOf<"output">().toExtend<ToolChoiceSetting<never>>()
  })

  it("refuses another agent's handle, unknown keywords, and unknown per-turn keys", () => {
    let foreign: any
    agent("other").tools({ shout }).skills(({ shout }) => ((foreign = shout), [skill("s").tools(shout)]))
    const typedForeign = agent("other").tools({ shout })
    type ForeignHandle = Parameters<Parameters<typeof typedForeign.skills>[0]>[0]["shout"]
    expect(() =>
      agent("calc").tools({ add }).skills(({ add }) => [
        // @ts-expect-error a handle of agent "other" cannot be forced in a skill of agent "calc"
        skill("s").tools(add).toolChoice(foreign as ForeignHandle)
      ])
    ).toThrow(/not one of this skill's tools/)
    // @ts-expect-error "always" is not a choice
    expect(() => skill("s").toolChoice("always")).not.toThrow()
    // @ts-expect-error a per-turn policy is { lastTurn, otherTurns? }
    expect(() => skill("s").toolChoice({ last: "auto" })).not.toThrow()
    // @ts-expect-error a skill without handles can force no tool
    expect(() => skill("s").toolChoice(foreign as ForeignHandle)).not.toThrow()
  })
})

describe("agent(...).toolChoice(...)", () => {
  it("names registered tools only", () => {
    expect(agent("calc").tools({ add }).toolChoice({ tool: "add" }).name).toBe("calc")
    // @ts-expect-error "shout" is not registered on this agent
    expect(() => agent("calc").tools({ add }).toolChoice({ tool: "shout" })).toThrow()
  })
})

describe("outputToolName(schema, name)", () => {
  it("keeps the Schema's type", () => {
    expectTypeOf(outputToolName(Answer, "submit_slots")).toEqualTypeOf<typeof Answer>()
  })
})
