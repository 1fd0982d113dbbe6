import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, BudgetExceeded, type BudgetLimitContext, BudgetPolicy, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const call = (id: string) => toolCalls([{ id, name: "add", arguments: { a: 1, b: 2 } }])

describe("a budget policy", () => {
  it("extends a limit instead of failing, and sees what was extended already", async () => {
    const seen: Array<BudgetLimitContext> = []
    const model = scriptedModel([call("1"), call("2"), text("3")])
    const calc = agent("calc").model(model).tools({ add }).budget({ maxTurns: 2 }).budgetPolicy((context) => {
      seen.push(context)
      return BudgetPolicy.extend(1)
    })
    expect(await calc.run("1 + 2")).toBe("3")
    expect(seen).toEqual([{ agent: "calc", reason: "turns", limit: 2, used: 2, extended: 0 }])
  })

  it("extends within a bound: all extensions of a limit add up to at most the limit", async () => {
    const model = scriptedModel([call("1"), call("2"), call("3"), call("4"), text("done")])
    const calc = agent("calc").model(model).tools({ add }).budget({ maxTurns: 2 }).budgetPolicy(() => BudgetPolicy.extend(1))
    const error = failureOf(await runExit(calc.runEffect("loop")))
    expect(error).toBeInstanceOf(BudgetExceeded)
    expect(error).toMatchObject({ reason: "turns", limit: 4, used: 4 })
    expect(model.requests).toHaveLength(4)
  })

  it("asks for a final answer: one last model call without tools, whose text is the output", async () => {
    const model = scriptedModel([call("1"), text("about 3")])
    const calc = agent("calc").model(model).tools({ add }).budget({ maxTurns: 1 }).budgetPolicy(() => BudgetPolicy.finalAnswer)
    expect(await calc.run("1 + 2")).toBe("about 3")
    const last = model.requests.at(-1)!
    expect(last.tools).toEqual([])
    expect(last.messages.at(-1)).toMatchObject({ role: "user" })
    expect(last.messages.at(-1)!.content).toContain("budget of this run is used up (turns: 1 of 1)")
  })

  it("answers the calls that did not run when a tool-call limit is reached mid-answer", async () => {
    const model = scriptedModel([toolCalls([{ id: "a", name: "add", arguments: { a: 1, b: 1 } }, { id: "b", name: "add", arguments: { a: 2, b: 2 } }]), text("2 and ?")])
    const calc = agent("calc").model(model).tools({ add }).budget({ maxToolCalls: 1 }).budgetPolicy(() => BudgetPolicy.finalAnswer)
    expect(await calc.run("sums")).toBe("2 and ?")
    const tools = model.requests.at(-1)!.messages.filter((m) => m.role === "tool").map((m) => m.content)
    expect(tools).toEqual(["2", "Not run: the budget of this run is used up."])
  })

  it("fails as before when the final answer is not one, when it says fail, or when it throws", async () => {
    const calls = scriptedModel([call("1"), call("2")])
    const landing = agent("calc").model(calls).tools({ add }).budget({ maxTurns: 1 }).budgetPolicy(() => BudgetPolicy.finalAnswer)
    expect(failureOf(await runExit(landing.runEffect("x")))).toMatchObject({ _tag: "BudgetExceeded", reason: "turns" })
    const failing = agent("calc").model(scriptedModel([call("1")])).tools({ add }).budget({ maxTurns: 1 }).budgetPolicy(() => BudgetPolicy.fail)
    expect(failureOf(await runExit(failing.runEffect("x")))).toBeInstanceOf(BudgetExceeded)
    const throwing = agent("calc").model(scriptedModel([call("1")])).tools({ add }).budget({ maxTurns: 1 }).budgetPolicy(() => {
      throw new Error("policy bug")
    })
    expect(failureOf(await runExit(throwing.runEffect("x")))).toBeInstanceOf(BudgetExceeded)
  })
})
