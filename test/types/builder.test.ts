/**
 * Compile-time guarantees. `tsc --noEmit` (part of `npm test`) fails if any `@ts-expect-error` line
 * stops being an error, so each of these is a test that can fail.
 */
import { Effect, Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { AgentConfigError, agent, escalateTool, throwExceptionTool, type ModelClientService, type AgentError, skill, type Tool, tool, type ToolHandle } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const add = tool("add", {
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  run: ({ a, b }) => a + b
})
const multiply = tool("multiply", {
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  run: async ({ a, b }) => a * b
})
const shout = tool("shout", { args: Schema.Struct({ text: Schema.String }), run: ({ text }) => text.toUpperCase() })
const model = scriptedModel([])

describe("tools are typed from their Schemas", () => {
  it("infers name, args and result", () => {
    expectTypeOf(add).toEqualTypeOf<Tool<"add", { readonly a: number; readonly b: number }, number>>()
    expectTypeOf<Tool.Args<typeof shout>>().toEqualTypeOf<{ readonly text: string }>()
    expectTypeOf<Tool.Result<typeof multiply>>().toEqualTypeOf<number>()
  })

  it("types run's arguments", () => {
    tool("typed", {
      args: Schema.Struct({ n: Schema.Finite }),
      // @ts-expect-error n is a number, it has no toUpperCase
      run: ({ n }) => n.toUpperCase()
    })
  })

  it("refuses a tool without args unless unsafeNoSchema is declared", () => {
    // @ts-expect-error args is required
    expect(() => tool("raw", { run: () => 1 })).toThrow(AgentConfigError)
  })
})

describe("skills only accept this agent's registered handles", () => {
  it("passes exactly the registered handles to .skills", () => {
    agent("calc")
      .tools({ add, multiply })
      .skills((handles) => {
        expectTypeOf(handles).toEqualTypeOf<{
          readonly escalate: ToolHandle<"calc", typeof escalateTool>
          readonly throwException: ToolHandle<"calc", typeof throwExceptionTool>
          readonly add: ToolHandle<"calc", typeof add>
          readonly multiply: ToolHandle<"calc", typeof multiply>
        }>()
        return [skill("compute").tools(handles.add, handles.multiply)]
      })
  })

  it("rejects an unregistered tool", () => {
    const calc = agent("calc").tools({ add })
    // @ts-expect-error shout is not registered on this agent
    expect(() => calc.skills(({ shout }) => [skill("compute").tools(shout)])).toThrow(AgentConfigError)
  })

  it("rejects a raw tool in place of a handle", () => {
    const calc = agent("calc").tools({ add })
    // @ts-expect-error skills take handles, not tools
    expect(() => calc.skills(() => [skill("compute").tools(add)])).toThrow(AgentConfigError)
  })

  it("rejects a handle of another agent", () => {
    let foreign!: ToolHandle<"other", typeof shout>
    agent("other").tools({ shout }).skills((h) => {
      foreign = h.shout
      return [skill("loud").tools(h.shout)]
    })
    const calc = agent("calc").tools({ add })
    // @ts-expect-error the handle belongs to agent "other"
    expect(() => calc.skills(({ add }) => [skill("compute").tools(add, foreign)])).toThrow(/another agent/)
  })

  it("rejects a deterministic skill whose types do not match the agent's", () => {
    const calc = agent("calc").model(model)
    // @ts-expect-error the agent's input is a string, not a number
    void calc.skills(() => [skill("n").implementedBy((input: number) => String(input))])
  })
})

describe("registration", () => {
  it("rejects a key that is not the tool's name", () => {
    // @ts-expect-error the key must be the tool's name
    expect(() => agent("calc").tools({ plus: add })).toThrow(AgentConfigError)
  })

  it("rejects registering a name twice", () => {
    // @ts-expect-error add is already registered
    expect(() => agent("calc").tools({ add }).tools({ add })).toThrow(AgentConfigError)
  })
})

describe("running", () => {
  it("refuses run before .model", async () => {
    const noModel = agent("calc").tools({ add })
    // @ts-expect-error call .model(...) before .run(...)
    await expect(noModel.run("2+2")).rejects.toBeInstanceOf(AgentConfigError)
  })

  it("requires ModelClientService from runEffect when no model was given", () => {
    expectTypeOf(agent("calc").runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, ModelClientService>>()
    expectTypeOf(agent("calc").model(model).runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
  })

  it("types input and output from the agent's Schemas", async () => {
    const typed = agent("typed", {
      input: Schema.Struct({ question: Schema.String }),
      output: Schema.Struct({ answer: Schema.Finite })
    }).model(model)
    expectTypeOf(typed.run).parameter(0).toEqualTypeOf<{ readonly question: string }>()
    expectTypeOf(typed.run).returns.toEqualTypeOf<Promise<{ readonly answer: number }>>()
    // @ts-expect-error the input must match the input Schema
    await expect(typed.run("plain text")).rejects.toMatchObject({ _tag: "InputInvalid" })
  })

  it("types recover policies by tool name", () => {
    agent("calc")
      .tools({ add })
      .recover({
        invalidArgs: ({ tool }) => {
          expectTypeOf(tool).toEqualTypeOf<"add" | "escalate" | "throwException">()
          return { _tag: "Feedback" }
        }
      })
  })
})
