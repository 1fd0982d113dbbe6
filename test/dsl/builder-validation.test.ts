/**
 * Issue #28 items 11 and 12: untyped callers (plain JavaScript, `any`) get an `AgentConfigError` at
 * construction naming the option, with a suggestion for a known old or misspelt name; an agent run
 * without a model says how to give it one.
 */
import { Effect, Exit, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, AgentConfigError, ModelClient, text, tool } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const add = tool("add", { args: Schema.Struct({ a: Schema.Number, b: Schema.Number }), run: ({ a, b }) => a + b })
const thrown = (f: () => unknown): unknown => {
  try {
    f()
  } catch (error) {
    return error
  }
  throw new Error("expected a throw")
}

describe("listeners are functions (item 11)", () => {
  it(".onToolError(name, {...}) is refused at construction, naming the method and suggesting recoverTool", () => {
    const error = thrown(() => (agent("a") as any).onToolError("add", { retry: 2 }))
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(String((error as Error).message)).toMatch(/onToolError/)
    expect(String((error as Error).message)).toMatch(/recoverTool/)
  })

  it(".onError({...}) is refused, suggesting recover", () => {
    const error = thrown(() => (agent("a") as any).onError({ invalidArgs: () => undefined }))
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(String((error as Error).message)).toMatch(/did you mean `recover`/)
  })

  for (const method of ["onEvent", "onRunEnd", "onToolUse", "onHookFailed", "onBudgetExceeded"]) {
    it(`.${method}("not a function") is refused`, () => {
      expect(thrown(() => (agent("a") as any)[method]("nope"))).toBeInstanceOf(AgentConfigError)
    })
  }

  it("a well-typed listener is accepted and runs", async () => {
    const seen: Array<string> = []
    const a = agent("a").model(scriptedModel(text("ok"))).onRunEnd((e) => void seen.push(e.outcome._tag))
    expect(await a.run("x")).toBe("ok")
    expect(seen).toEqual(["Success"])
  })
})

describe("builder arguments (item 11)", () => {
  it(".model(notAClient) is refused", () => {
    expect(thrown(() => (agent("a") as any).model({ name: "gpt" }))).toBeInstanceOf(AgentConfigError)
  })

  it(".skills(notAFunction) is refused", () => {
    expect(thrown(() => (agent("a") as any).skills([]))).toBeInstanceOf(AgentConfigError)
  })

  it(".disallowedToolPolicy(\"ignore\") is refused", () => {
    const error = thrown(() => (agent("a") as any).disallowedToolPolicy("ignore")) as Error
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(error.message).toMatch(/"fail" or "feedback"/)
  })

  it(".onBudgetThreshold(undefined, listener) uses the default threshold instead of crashing", () => {
    expect(() => (agent("a") as any).onBudgetThreshold(undefined, () => undefined)).not.toThrow()
    expect(thrown(() => (agent("a") as any).onBudgetThreshold({ treshold: 0.5 }, () => undefined))).toBeInstanceOf(AgentConfigError)
  })

  it(".prompt(42) is refused", () => {
    expect(thrown(() => (agent("a") as any).prompt(42))).toBeInstanceOf(AgentConfigError)
  })

  it(".budget({ maxTurn: 3 }) names the option and suggests maxTurns", () => {
    const error = thrown(() => (agent("a") as any).budget({ maxTurn: 3 })) as Error
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(error.message).toMatch(/maxTurn\b/)
    expect(error.message).toMatch(/did you mean `maxTurns`/)
  })

  it(".recover({ invalidArg: ... }) suggests invalidArgs", () => {
    const error = thrown(() => (agent("a") as any).recover({ invalidArg: () => undefined })) as Error
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(error.message).toMatch(/did you mean `invalidArgs`/)
  })

  it("agent(name, { outptu }) is refused, suggesting output", () => {
    const error = thrown(() => (agent as any)("a", { outptu: Schema.String })) as Error
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(error.message).toMatch(/did you mean `output`/)
  })

  it("a valid agent with every option still builds", () => {
    expect(() => agent("a").model(scriptedModel(text("ok"))).prompt("p").tools({ add }).budget({ maxTurns: 3 }).recover({ maxRepairSteps: 2 })).not.toThrow()
  })
})

describe("tool options (item 11)", () => {
  it("tool({ onError }) is refused, suggesting recover at the agent", () => {
    const error = thrown(() => tool("t", { args: Schema.Struct({}), run: () => 1, onError: () => undefined } as any)) as Error
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(error.message).toMatch(/onError/)
    expect(error.message).toMatch(/recover/)
  })

  it("a misspelt option is refused with a suggestion", () => {
    const error = thrown(() => tool("t", { args: Schema.Struct({}), run: () => 1, descripton: "x" } as any)) as Error
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(error.message).toMatch(/did you mean `description`/)
  })

  it("run that is not a function is refused", () => {
    expect(thrown(() => tool("t", { args: Schema.Struct({}), run: "x" } as any))).toBeInstanceOf(AgentConfigError)
  })
})

describe("a run without a model (item 12)", () => {
  it("runEffect fails with AgentConfigError saying to call .model(...) or provide the ModelClient Layer", async () => {
    const exit = await runExit(agent("a").runEffect("x") as Effect.Effect<unknown, unknown>)
    const error = failureOf(exit) as AgentConfigError
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(error.message).toMatch(/\.model\(/)
    expect(error.message).toMatch(/ModelClient/)
  })

  it("runStream fails the same way", async () => {
    const exit = await runExit(Stream.runCollect(agent("a").runStream("x")) as Effect.Effect<unknown, unknown>)
    expect(failureOf(exit)).toBeInstanceOf(AgentConfigError)
    expect(String((failureOf(exit) as Error).message)).toMatch(/\.model\(/)
  })

  it("a ModelClient provided as a Layer is still used", async () => {
    const run = agent("a").runEffect("x").pipe(Effect.provide(ModelClient.layer(scriptedModel(text("via layer")))))
    expect(await runExit(run as Effect.Effect<unknown, unknown>)).toEqual(Exit.succeed("via layer"))
  })
})
