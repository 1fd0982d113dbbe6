import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { AgentConfigError, agent, defaultBudget, skill, text, tool } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { definitionOf } from "../../src/dsl/agent.ts"
import { makeCalculatorTools } from "../fixtures.ts"

const { add, multiply } = makeCalculatorTools()

describe("the builder is immutable", () => {
  it("returns a new builder from every call and leaves the original unchanged", () => {
    const base = agent("calc").tools({ add })
    const withPrompt = base.prompt("be brief")
    const withMore = base.tools({ multiply })
    expect(definitionOf(base).prompt).toBeUndefined()
    expect(definitionOf(withPrompt).prompt).toBe("be brief")
    expect(definitionOf(base).tools.map((t) => t.name)).toEqual(["escalate", "throwException", "add"])
    expect(definitionOf(withMore).tools.map((t) => t.name)).toEqual(["escalate", "throwException", "add", "multiply"])
    expect(Object.isFrozen(definitionOf(base))).toBe(true)
  })

  it("uses a default budget of 8 turns and merges partial budgets", () => {
    const a = agent("calc")
    expect(definitionOf(a).budget).toEqual(defaultBudget)
    expect(definitionOf(a).budget.maxTurns).toBe(8)
    const b = a.budget({ maxToolCalls: 3 }).budget({ maxTurns: 2, maxDuration: "30 seconds", perToolTimeout: 500 })
    expect(definitionOf(b).budget).toEqual({
      maxTurns: 2,
      maxToolCalls: 3,
      maxDuration: 30_000,
      perToolTimeout: 500,
      maxTokens: Number.POSITIVE_INFINITY,
      maxConsecutiveSameTool: Number.POSITIVE_INFINITY,
      hookTimeout: 5_000,
      maxToolArgsBytes: 1024 * 1024,
      toolConcurrency: 1
    })
    expect(definitionOf(a).budget).toMatchObject({ maxToolCalls: 32, maxDuration: 300_000 })
  })
})

describe("construction-time errors", () => {
  it("refuses two tools with the same name", () => {
    const other = tool("add", { args: Schema.Struct({}), run: () => 0 })
    const base = agent("calc").tools({ add })
    expect(() => (base.tools as (t: object) => unknown)({ add: other })).toThrow(AgentConfigError)
    expect(() => (base.tools as (t: object) => unknown)({ add: other })).toThrow(/already registered/)
  })

  it("refuses a tool registered under a key that is not its name", () => {
    expect(() => (agent("calc").tools as (t: object) => unknown)({ plus: add })).toThrow(/key "plus"/)
  })

  it("refuses values that are not tools", () => {
    expect(() => (agent("calc").tools as (t: object) => unknown)({ add: { name: "add" } })).toThrow(/not a tool/)
  })

  it("refuses a skill with neither tools nor an implementation", () => {
    expect(() => agent("calc").tools({ add }).skills(() => [skill("empty")])).toThrow(/neither tools nor an implementation/)
  })

  it("refuses a skill with both tools and an implementation", () => {
    expect(() =>
      agent("calc").tools({ add }).skills(({ add }) => [skill("both").tools(add).implementedBy((i: string) => i)])
    ).toThrow(/both tools and an implementation/)
  })

  it("refuses a handle issued by another agent, even one with the same name", () => {
    let foreign: unknown
    agent("calc").tools({ add }).skills((handles) => {
      foreign = handles.add
      return [skill("compute").tools(handles.add)]
    })
    const untyped = agent("calc").tools({ add }) as unknown as { skills: (f: () => unknown[]) => unknown }
    expect(() => untyped.skills(() => [skill("compute").tools(foreign as never)])).toThrow(/belongs to another agent/)
  })

  it("refuses raw tools and names from untyped callers", () => {
    const untyped = agent("calc").tools({ add }) as unknown as { skills: (f: () => unknown[]) => unknown }
    expect(() => untyped.skills(() => [skill("compute").tools(add as never)])).toThrow(/handles passed to .skills/)
    expect(() => untyped.skills(() => [skill("compute").tools("add" as never)])).toThrow(AgentConfigError)
  })

  it("refuses duplicate skill names", () => {
    expect(() =>
      agent("calc").tools({ add }).skills(({ add }) => [skill("s").tools(add), skill("s").tools(add).when(() => true)])
    ).toThrow(/two skills are named "s"/)
  })

  it("refuses reserved names: memory_* for tools, submit beside an output Schema", () => {
    const sneaky = tool("memory_read", { args: Schema.Struct({}), run: () => "x" })
    expect(() => agent("calc").tools({ memory_read: sneaky })).toThrow(/reserved/)
    const submit = tool("submit", { args: Schema.Struct({}), run: () => "x" })
    expect(() => agent("typed", { output: Schema.Struct({ n: Schema.Finite }) }).tools({ submit })).toThrow(/submit/)
    expect(definitionOf(agent("untyped").tools({ submit })).tools.map((t) => t.name)).toContain("submit")
    const escalate = tool("escalate", { args: Schema.Struct({}), run: () => "x" })
    expect(() => (agent("calc").tools as (t: object) => unknown)({ escalate })).toThrow(/reserved/)
  })

  it("refuses knowledge named like a tool of the skill, a reserved name, or on a deterministic skill", () => {
    const load = () => "text"
    expect(() => agent("calc").tools({ add }).skills(({ add }) => [skill("s").tools(add).knowledge("add", "dup", load)])).toThrow(
      /knowledge "add"/
    )
    expect(() => agent("calc").skills(() => [skill("s").knowledge("memory_notes", "x", load)])).toThrow(/reserved/)
    expect(() =>
      agent("calc").skills(() => [skill("s").knowledge("faq", "x", load).knowledge("faq", "y", load)])
    ).toThrow(/knowledge "faq"/)
    expect(() => agent("calc").skills(() => [skill("s").implementedBy((i: string) => i).knowledge("faq", "x", load)])).toThrow(
      /agentic skill/
    )
  })

  it("refuses budgets that are not positive whole numbers", () => {
    expect(() => agent("calc").budget({ maxTurns: 0 })).toThrow(/maxTurns/)
    expect(() => agent("calc").budget({ maxToolCalls: 1.5 })).toThrow(/maxToolCalls/)
    expect(() => agent("calc").budget({ maxDuration: "soon" as never })).toThrow(/maxDuration/)
    expect(() => agent("calc").budget({ perToolTimeout: 0 })).toThrow(/perToolTimeout/)
  })

  it("refuses an empty agent name", () => {
    expect(() => agent("")).toThrow(AgentConfigError)
  })

  it("rejects run without a model for untyped callers with a clear error", async () => {
    const untyped = agent("calc") as unknown as { run: (input: string) => Promise<string> }
    await expect(untyped.run("hi")).rejects.toThrow(/call .model/)
  })

  it("builds a valid agent and runs it", async () => {
    const calc = agent("calc").model(scriptedModel([text("4")])).tools({ add })
    expect(await calc.run("2+2")).toBe("4")
  })
})
