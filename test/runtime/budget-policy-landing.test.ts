/**
 * Budget policies under a model that will not cooperate: turns a policy granted are turns a typed
 * answer may be corrected in, and the tokens of a soft landing's last call are spent like any others,
 * here and in every budget above the run.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, BudgetExceeded, BudgetPolicy, type LlmResponse, OutputInvalid, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const add = tool("add", { args: Schema.Struct({ a: Schema.Finite }), run: ({ a }) => a })
const addCall = (id: string): LlmResponse => ({ _tag: "ToolCalls", calls: [{ id, name: "add", arguments: JSON.stringify({ a: 1 }) }] })
const Answer = Schema.Struct({ n: Schema.Finite })

describe("a typed answer in turns a budget policy granted", () => {
  it("is corrected while a granted turn remains, not refused at the configured limit", async () => {
    // maxTurns 2, extended by 2 when reached: turns 3 and 4 are the run's; turn 3 answers badly.
    const model = scriptedModel([addCall("1"), addCall("2"), text("not json"), text(`{"n":3}`)])
    const typed = agent("typed", { output: Answer }).model(model).tools({ add }).budget({ maxTurns: 2 }).budgetPolicy(() => BudgetPolicy.extend(2))
    expect(await typed.run("x")).toEqual({ n: 3 })
    expect(model.requests).toHaveLength(4)
  })

  it("ends with OutputInvalid on the last granted turn", async () => {
    const model = scriptedModel([addCall("1"), addCall("2"), text("not json"), text("still not")])
    const typed = agent("typed", { output: Answer }).model(model).tools({ add }).budget({ maxTurns: 2 }).budgetPolicy(() => BudgetPolicy.extend(2))
    expect(failureOf(await runExit(typed.runEffect("x")))).toBeInstanceOf(OutputInvalid)
    expect(model.requests).toHaveLength(4)
  })
})

describe("the soft landing's model call", () => {
  it("charges its tokens to the budget of the run that called the landed one", async () => {
    const child = agent("child")
      .model(scriptedModel([addCall("c"), text("landed", { inputTokens: 5_000, outputTokens: 5_000 })]))
      .tools({ add })
      .budget({ maxTurns: 1 })
      .budgetPolicy(() => BudgetPolicy.finalAnswer)
    const parentModel = scriptedModel([toolCalls([{ id: "p", name: "child", arguments: { input: "go" } }]), text("parent done")])
    const parent = agent("parent").model(parentModel).tools({ child: child.asTool({ name: "child" }) }).budget({ maxTokens: 1_000 })
    const error = failureOf(await runExit(parent.runEffect("x")))
    expect(error).toBeInstanceOf(BudgetExceeded)
    expect(error).toMatchObject({ reason: "tokens", used: 10_000, limit: 1_000 })
    // The child's landed answer came back as the tool result; the parent was stopped before its next call.
    expect(parentModel.requests).toHaveLength(1)
  })

  it("counts its tokens in the run's own budget rows (a threshold sees them)", async () => {
    const seen: Array<number> = []
    const model = scriptedModel([addCall("1"), text("landed", { inputTokens: 400, outputTokens: 400 })])
    const landed = agent("landed").model(model).tools({ add }).budget({ maxTurns: 1, maxTokens: 1_000 })
      .budgetPolicy(() => BudgetPolicy.finalAnswer)
      .onBudgetThreshold({ threshold: 0.5 }, (e) => void (e.reason === "tokens" && seen.push(e.used)))
    expect(await landed.run("x")).toBe("landed")
    expect(seen).toEqual([800])
  })
})
