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

describe("an invalid typed answer on the last turn the budget allows", () => {
  const Slots = Schema.Struct({ city: Schema.String, nights: Schema.Int })
  const submit = (id: string, args: unknown): LlmResponse => ({ _tag: "ToolCalls", calls: [{ id, name: "submit", arguments: JSON.stringify(args) }] })

  it("asks the budget policy: a turn it grants corrects the answer", async () => {
    const asked: Array<unknown> = []
    const model = scriptedModel([text("not json"), text(`{"n":3}`)])
    const typed = agent("typed", { output: Answer }).model(model).budget({ maxTurns: 1 })
      .budgetPolicy((context) => (asked.push(context), BudgetPolicy.extend(1)))
    expect(await typed.run("x")).toEqual({ n: 3 })
    expect(asked).toEqual([{ agent: "typed", reason: "turns", limit: 1, used: 1, extended: 0 }])
    // The correction is what the granted turn sees.
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "user" })
    expect(model.requests[1]!.messages.at(-1)!.content).toContain("n")
  })

  it("a submit call corrected in a granted turn keeps its tool result paired with the call", async () => {
    const model = scriptedModel([submit("s1", { city: "Lyon" }), submit("s2", { city: "Lyon", nights: 3 })])
    const booking = agent("booking", { output: Slots }).model(model).budget({ maxTurns: 1 }).budgetPolicy(() => BudgetPolicy.extend(1))
    expect(await booking.run("Book Lyon")).toEqual({ city: "Lyon", nights: 3 })
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "s1", name: "submit" })
  })

  it("a final answer asked for is one more call without tools, which may answer", async () => {
    const events: Array<string> = []
    const model = scriptedModel([text("not json"), text(`{"n":7}`)])
    const typed = agent("typed", { output: Answer }).model(model).tools({ add }).budget({ maxTurns: 1 })
      .budgetPolicy(() => BudgetPolicy.finalAnswer)
      .onEvent((event) => void events.push(event._tag))
    expect(await typed.run("x")).toEqual({ n: 7 })
    expect(model.requests[1]!.tools).toEqual([])
    expect(model.requests[1]!.messages.at(-1)!.content).toContain("budget of this run is used up")
    expect(events).not.toContain("BudgetExceeded")
  })

  it("a landing whose answer is invalid again ends with BudgetExceeded, the policy not asked twice", async () => {
    let asked = 0
    const model = scriptedModel([text("not json"), text("still not")])
    const typed = agent("typed", { output: Answer }).model(model).budget({ maxTurns: 1 }).budgetPolicy(() => (asked++, BudgetPolicy.finalAnswer))
    expect(failureOf(await runExit(typed.runEffect("x")))).toMatchObject({ _tag: "BudgetExceeded", reason: "turns", used: 1, limit: 1 })
    expect(asked).toBe(1)
    expect(model.requests).toHaveLength(2)
  })

  it("a refusal ends with OutputInvalid (the answer and its issues), no BudgetExceeded event", async () => {
    const events: Array<string> = []
    const model = scriptedModel([text("not json")])
    const typed = agent("typed", { output: Answer }).model(model).budget({ maxTurns: 1 }).budgetPolicy(() => BudgetPolicy.fail)
      .onEvent((event) => void events.push(event._tag))
    expect(failureOf(await runExit(typed.runEffect("x")))).toMatchObject({ _tag: "OutputInvalid", raw: "not json" })
    expect(events).not.toContain("BudgetExceeded")
    expect(model.requests).toHaveLength(1)
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
