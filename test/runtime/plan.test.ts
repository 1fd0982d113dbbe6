import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, skill, text, tool } from "../../src/index.ts"
import { definitionOf } from "../../src/dsl/agent.ts"
import { defaultBudget } from "../../src/dsl/budget.ts"
import { BudgetLedger } from "../../src/runtime/budget-ledger.ts"
import { compile } from "../../src/runtime/plan.ts"
import { RunContext } from "../../src/runtime/run-context.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeCalculatorTools } from "../fixtures.ts"

const { add, multiply } = makeCalculatorTools()
const Answer = Schema.Struct({ value: Schema.Finite })

const calculator = agent("calc", { output: Answer })
  .tools({ add, multiply })
  .skills(({ add, multiply, escalate }) => [
    skill("adding").tools(add, escalate).knowledge("faq", "the FAQ", () => "text").when((i) => i.includes("+")),
    skill("multiplying").tools(multiply)
  ])
  .onToolUse(() => {})
  .onEvent(() => {})

describe("the compiled plan", () => {
  it("is compiled once per definition", () => {
    const definition = definitionOf(calculator)
    expect(compile(definition)).toBe(compile(definition))
    expect(compile(definitionOf(calculator.prompt("other")))).not.toBe(compile(definition))
  })

  it("has a tool table per skill: executable tools, knowledge, terminals, the allowlist", () => {
    const plan = compile(definitionOf(calculator))
    const adding = plan.skillByName.get("adding")!
    expect([...adding.tools.keys()]).toEqual(["add", "faq"])
    expect([...adding.knowledge.keys()]).toEqual(["faq"])
    expect([...adding.terminals.keys()]).toEqual(["escalate", "submit"])
    expect(adding.allowed).toEqual(["add", "escalate", "faq", "submit"])
    const multiplying = plan.skillByName.get("multiplying")!
    expect([...multiplying.tools.keys()]).toEqual(["multiply"])
    expect([...multiplying.terminals.keys()]).toEqual(["submit"])
  })

  it("indexes listeners by event tag, onEvent listeners merged in registration order", () => {
    const plan = compile(definitionOf(calculator))
    expect(plan.listeners.get("ToolUse")).toHaveLength(2)
    expect(plan.listeners.get("Turn")).toHaveLength(1)
    expect(compile(definitionOf(agent("quiet"))).listeners.size).toBe(0)
  })

  it("has a fingerprint that changes with tools, parameters, skills and budget, not with prompts or hooks", () => {
    const fp = (a: { readonly prompt: (p: string) => unknown }) => compile(definitionOf(a as never)).fingerprint()
    const base = agent("fp").tools({ add })
    expect(fp(base)).toBe(fp(base.prompt("be brief").onTurn(() => {})))
    expect(fp(base)).not.toBe(fp(base.budget({ maxTurns: 3 })))
    expect(fp(base)).not.toBe(fp(agent("fp").tools({ multiply })))
    const otherAdd = tool("add", { args: Schema.Struct({ a: Schema.Finite }), run: ({ a }) => a })
    expect(fp(base)).not.toBe(fp(agent("fp").tools({ add: otherAdd })))
  })
})

describe("the budget ledger", () => {
  it("checks turns, tokens, tool calls and repetition from its rows", () => {
    const ledger = new BudgetLedger({ ...defaultBudget, maxTurns: 2, maxToolCalls: 2, maxTokens: 10, maxConsecutiveSameTool: 1 }, [0.5])
    expect(ledger.checkTurn()).toBeUndefined()
    ledger.spendTurn()
    ledger.spendTurn()
    expect(ledger.checkTurn()).toEqual({ reason: "turns", limit: 2, used: 2 })
    expect(ledger.spendTokens(11)).toEqual({ reason: "tokens", limit: 10, used: 11 })
    ledger.spendExecution("add")
    expect(ledger.checkExecution("add")).toEqual({ reason: "consecutiveTool", limit: 1, used: 1, tool: "add" })
    expect(ledger.checkExecution("multiply")).toBeUndefined()
    ledger.spendExecution("multiply")
    expect(ledger.checkExecution("multiply")).toEqual({ reason: "toolCalls", limit: 2, used: 2 })
  })

  it("fires each threshold once per dimension and round-trips through its state", () => {
    const ledger = new BudgetLedger({ ...defaultBudget, maxTurns: 4 }, [0.5])
    ledger.spendTurn()
    expect(ledger.crossedThresholds(0)).toEqual([])
    ledger.spendTurn()
    expect(ledger.crossedThresholds(0)).toEqual([{ reason: "turns", limit: 4, used: 2, threshold: 0.5 }])
    ledger.spendTurn()
    expect(ledger.crossedThresholds(0)).toEqual([])
    const copy = new BudgetLedger({ ...defaultBudget, maxTurns: 4 }, [0.5], ledger.state())
    expect(copy.state()).toEqual(ledger.state())
    expect(copy.crossedThresholds(0)).toEqual([])
  })
})

describe("the run context", () => {
  it("stamps agent, run, skill and turn on the events it emits", async () => {
    const events: Array<unknown> = []
    const a = agent("stamp").tools({ add }).onTurn((e) => {
      events.push(e)
    }).onRunStart((e) => {
      events.push(e)
    })
    const plan = compile(definitionOf(a))
    const ctx = RunContext.start(plan, plan.skills[0]!, "run_x", "hi", 0, { turns: 0, tokens: 0 })
    ctx.ledger.spendTurn()
    await Effect.runPromise(ctx.emit({ _tag: "Turn" }))
    await Effect.runPromise(ctx.emit({ _tag: "RunStart", input: "hi" }))
    expect(events).toEqual([
      { _tag: "Turn", agent: "stamp", runId: "run_x", skill: "stamp", turn: 1 },
      { _tag: "RunStart", agent: "stamp", runId: "run_x", input: "hi" }
    ])
  })

  it("gives its state as data and is restored from it", () => {
    const plan = compile(definitionOf(agent("st").tools({ add })))
    const ctx = RunContext.start(plan, plan.skills[0]!, "run_y", "hi", 100, { turns: 1, tokens: 0 })
    ctx.append({ role: "user", content: "hi" })
    ctx.expect([{ id: "c", name: "add", arguments: "{}" }])
    ctx.takeInvalidArgsRetry("add", 3)
    ctx.rememberKnowledge("faq", "text")
    const state = ctx.state(150)
    const restored = RunContext.restore(plan, plan.skills[0]!, state, 1000)
    expect(restored.state(1000)).toEqual(state)
    expect(restored.startedAt).toBe(950)
  })

  it("runs an agent through the plan", async () => {
    expect(await agent("run").model(scriptedModel([text("ok")])).run("x")).toBe("ok")
  })
})
