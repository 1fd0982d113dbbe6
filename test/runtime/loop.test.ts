import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  agent,
  BudgetExceeded,
  InvalidToolArgs,
  ModelError,
  OutputInvalid,
  Recovery,
  skill,
  text,
  tool,
  ToolFailed,
  ToolNotAllowed,
  toolCalls
} from "../../src/index.ts"
import type { LlmMessage, ToolUseEvent } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const call = (name: string, args: unknown, id = `call_${name}`) => ({ id, name, arguments: args })

const calculatorWith = (script: Parameters<typeof scriptedModel>[0]) => {
  const tools = makeCalculatorTools()
  const model = scriptedModel(script)
  const uses: Array<ToolUseEvent> = []
  const calculator = agent("calculator")
    .prompt("You are a calculator. Use the tools.")
    .model(model)
    .tools({ add: tools.add, multiply: tools.multiply, delete_all: tools.deleteAll })
    .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
    .onToolUse((event) => {
      uses.push(event)
    })
  return { ...tools, model, uses, calculator }
}

describe("the calculator flow from the Kotlin docs", () => {
  it("adds, then multiplies, then answers; onToolUse fires twice with args and results", async () => {
    const { calculator, uses, model, addSpy, multiplySpy } = calculatorWith([
      toolCalls([call("add", '{"a":3,"b":5}')]),
      toolCalls([call("multiply", { a: 8, b: 2 })]),
      text("16")
    ])
    expect(await calculator.run("What is (3 + 5) * 2?")).toBe("16")
    expect(uses.map(({ tool, args, result }) => ({ tool, args, result }))).toEqual([
      { tool: "add", args: { a: 3, b: 5 }, result: 8 },
      { tool: "multiply", args: { a: 8, b: 2 }, result: 16 }
    ])
    expect(addSpy.calls).toEqual([{ a: 3, b: 5 }])
    expect(multiplySpy.calls).toEqual([{ a: 8, b: 2 }])
    expect(model.requests).toHaveLength(3)
    const last = model.requests[2]!.messages
    expect(last.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", toolCallId: "call_add", name: "add", content: "8" },
      { role: "tool", toolCallId: "call_multiply", name: "multiply", content: "16" }
    ])
  })

  it("sends the system prompt with the skill's tools and the input as the user message", async () => {
    const { calculator, model } = calculatorWith([text("16")])
    await calculator.run("What is (3 + 5) * 2?")
    const request = model.requests[0]!
    const [system, user] = request.messages
    expect(system?.role).toBe("system")
    expect(system?.content).toContain("You are a calculator. Use the tools.")
    expect(system?.content).toContain("compute")
    expect(system?.content).toContain("- add: Add two numbers")
    expect(system?.content).toContain("- multiply: Multiply two numbers")
    expect(system?.content).not.toContain("delete_all")
    expect(user).toEqual({ role: "user", content: "What is (3 + 5) * 2?" })
    expect(request.tools.map((t) => t.name)).toEqual(["add", "multiply"])
    expect(request.toolChoice).toBe("auto")
  })

  it("handles several tool calls in one response, in order", async () => {
    const { calculator, uses } = calculatorWith([
      toolCalls([call("add", { a: 1, b: 2 }, "c1"), call("multiply", { a: 3, b: 4 }, "c2")]),
      text("done")
    ])
    await calculator.run("both")
    expect(uses.map((u) => [u.toolCallId, u.result])).toEqual([["c1", 3], ["c2", 12]])
  })
})

describe("allowlist", () => {
  it("refuses a registered tool outside the skill, naming the skill and only its allowed tools", async () => {
    const { calculator, deleteSpy } = calculatorWith([toolCalls([call("delete_all", {})])])
    const error = failureOf(await runExit(calculator.runEffect("wipe it")))
    expect(error).toBeInstanceOf(ToolNotAllowed)
    expect(error).toMatchObject({ _tag: "ToolNotAllowed", skill: "compute", tool: "delete_all", allowed: ["add", "multiply"] })
    expect(error.message).toBe('Tool "delete_all" is not available for skill "compute". Allowed: add, multiply')
    expect(deleteSpy.calls).toEqual([])
  })

  it("refuses an unknown tool the same way, without revealing other tools", async () => {
    const { calculator } = calculatorWith([toolCalls([call("sudo", {})])])
    const error = failureOf(await runExit(calculator.runEffect("x")))
    expect(error).toMatchObject({ _tag: "ToolNotAllowed", tool: "sudo", allowed: ["add", "multiply"] })
    expect(error.message).not.toContain("delete_all")
  })

  it("isolates skills: the chosen skill cannot call another skill's tool", async () => {
    const tools = makeCalculatorTools()
    const model = scriptedModel([toolCalls([call("multiply", { a: 2, b: 2 })])])
    const calc = agent("calc")
      .model(model)
      .tools({ add: tools.add, multiply: tools.multiply })
      .skills(({ add, multiply }) => [
        skill("adding", "Adds").tools(add).when((input) => input.includes("+")),
        skill("multiplying", "Multiplies").tools(multiply)
      ])
    const error = failureOf(await runExit(calc.runEffect("2 + 2")))
    expect(error).toMatchObject({ _tag: "ToolNotAllowed", skill: "adding", tool: "multiply", allowed: ["add"] })
    expect(tools.multiplySpy.calls).toEqual([])
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["add"])
  })

  it("gives an agent without skills one implicit skill with every tool", async () => {
    const { add, multiply } = makeCalculatorTools()
    const model = scriptedModel([toolCalls([call("multiply", { a: 2, b: 3 })]), text("6")])
    const calc = agent("calc").model(model).tools({ add, multiply })
    expect(await calc.run("2*3")).toBe("6")
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["add", "multiply"])
  })
})

describe("invalid arguments", () => {
  const badCall = toolCalls([call("add", { a: "three", b: 5 })])

  it("by default sends the model a readable error, never runs the tool, and lets it correct itself", async () => {
    const { calculator, addSpy, model } = calculatorWith([badCall, toolCalls([call("add", { a: 3, b: 5 })]), text("8")])
    expect(await calculator.run("3+5")).toBe("8")
    expect(addSpy.calls).toEqual([{ a: 3, b: 5 }])
    const feedback = model.requests[1]!.messages.at(-1) as Extract<LlmMessage, { role: "tool" }>
    expect(feedback.role).toBe("tool")
    expect(feedback.content).toContain('Invalid arguments for tool "add"')
    expect(feedback.content).toContain("Expected number")
    expect(feedback.content).toContain('["a"]')
  })

  it("routes to recover.invalidArgs, which can fail the run", async () => {
    const { calculator, addSpy } = calculatorWith([badCall])
    const seen: Array<unknown> = []
    const strict = calculator.recover({
      invalidArgs: ({ tool, raw, error }) => {
        seen.push({ tool, raw, error })
        return Recovery.fail
      }
    })
    const error = failureOf(await runExit(strict.runEffect("3+5")))
    expect(error).toBeInstanceOf(InvalidToolArgs)
    expect(error).toMatchObject({ tool: "add", skill: "compute", raw: { a: "three", b: 5 } })
    expect(seen).toHaveLength(1)
    expect(addSpy.calls).toEqual([])
  })

  it("can substitute a result for the tool", async () => {
    const { calculator, addSpy, model } = calculatorWith([badCall, text("fine")])
    const lenient = calculator.recover({ invalidArgs: () => Recovery.substitute({ value: 0 }) })
    expect(await lenient.run("3+5")).toBe("fine")
    expect(addSpy.calls).toEqual([])
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "tool", content: '{"value":0}' })
  })

  it("treats unparsable JSON arguments as invalid arguments", async () => {
    const { calculator, addSpy, model } = calculatorWith([toolCalls([call("add", '{"a": 3, "b":')]), text("gave up")])
    expect(await calculator.run("3+5")).toBe("gave up")
    expect(addSpy.calls).toEqual([])
    expect(model.requests[1]!.messages.at(-1)!.content).toContain("JSON")
  })

  it("falls back to feedback and reports the failure when a policy throws", async () => {
    const { calculator, model } = calculatorWith([badCall, text("ok")])
    const hookErrors: Array<unknown> = []
    const broken = calculator
      .recover({ invalidArgs: () => {
        throw new Error("policy bug")
      } })
      .onHookFailed((e) => {
        hookErrors.push(e.error)
      })
    expect(await broken.run("3+5")).toBe("ok")
    expect(hookErrors).toEqual([new Error("policy bug")])
    expect(model.requests[1]!.messages.at(-1)!.content).toContain("Invalid arguments")
  })
})

describe("tool failures", () => {
  const failing = tool("flaky", {
    args: Schema.Struct({}),
    run: () => {
      throw new Error("disk full")
    }
  })

  it("by default reports the error to the model as the tool result", async () => {
    const model = scriptedModel([toolCalls([call("flaky", {})]), text("sorry")])
    const errors: Array<string> = []
    const a = agent("a")
      .model(model)
      .tools({ flaky: failing })
      .onToolError((e) => {
        errors.push(`${e.tool}:${e.recovery}`)
      })
    expect(await a.run("go")).toBe("sorry")
    expect(model.requests[1]!.messages.at(-1)!.content).toBe('Error: tool "flaky" failed: disk full')
    expect(errors).toEqual(["flaky:Feedback"])
  })

  it("can fail the run with ToolFailed", async () => {
    const model = scriptedModel([toolCalls([call("flaky", {})])])
    const a = agent("a").model(model).tools({ flaky: failing }).recover({ executionError: () => Recovery.fail })
    const error = failureOf(await runExit(a.runEffect("go")))
    expect(error).toBeInstanceOf(ToolFailed)
    expect(error.message).toBe('Tool "flaky" failed: disk full')
  })

  it("treats a failing Effect or a rejected Promise the same way", async () => {
    const viaEffect = tool("e", { args: Schema.Struct({}), run: () => Effect.fail("nope") })
    const viaPromise = tool("p", { args: Schema.Struct({}), run: () => Promise.reject(new Error("nope")) })
    const model = scriptedModel([toolCalls([call("e", {}), call("p", {})]), text("done")])
    expect(await agent("a").model(model).tools({ e: viaEffect, p: viaPromise }).run("go")).toBe("done")
    expect(model.requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      'Error: tool "e" failed: nope',
      'Error: tool "p" failed: nope'
    ])
  })
})

describe("budget", () => {
  it("stops after exactly maxTurns model calls with the transcript", async () => {
    const { calculator, model } = calculatorWith(toolCalls([call("add", { a: 1, b: 1 })]))
    const error = failureOf(await runExit(calculator.budget({ maxTurns: 3 }).runEffect("loop forever")))
    expect(error).toBeInstanceOf(BudgetExceeded)
    expect(error).toMatchObject({ reason: "turns", limit: 3, used: 3 })
    expect(model.requests).toHaveLength(3)
    if (!(error instanceof BudgetExceeded)) throw error
    expect(error.transcript.filter((m) => m.role === "tool")).toHaveLength(3)
    expect(error.transcript[1]).toEqual({ role: "user", content: "loop forever" })
  })

  it("uses the default of 8 turns", async () => {
    const { calculator, model } = calculatorWith(toolCalls([call("add", { a: 1, b: 1 })]))
    const error = failureOf(await runExit(calculator.runEffect("loop")))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", limit: 8 })
    expect(model.requests).toHaveLength(8)
  })

  it("stops before a tool call beyond maxToolCalls", async () => {
    const { calculator, addSpy } = calculatorWith([
      toolCalls([call("add", { a: 1, b: 1 }, "1"), call("add", { a: 2, b: 2 }, "2"), call("add", { a: 3, b: 3 }, "3")])
    ])
    const error = failureOf(await runExit(calculator.budget({ maxToolCalls: 2 }).runEffect("x")))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "toolCalls", limit: 2, used: 2 })
    expect(addSpy.calls).toHaveLength(2)
  })

  it("fires onBudgetExceeded then onRunEnd", async () => {
    const { calculator } = calculatorWith(toolCalls([call("add", { a: 1, b: 1 })]))
    const events: Array<string> = []
    const watched = calculator
      .budget({ maxTurns: 1 })
      .onBudgetExceeded((e) => {
        events.push(`budget:${e.reason}`)
      })
      .onRunEnd((e) => {
        events.push(`end:${e.outcome._tag}`)
      })
    await runExit(watched.runEffect("x"))
    expect(events).toEqual(["budget:turns", "end:Failure"])
  })
})

describe("model output edge cases", () => {
  it("corrects an empty reply within the budget", async () => {
    const { calculator, model } = calculatorWith([text("  "), toolCalls([]), text("16")])
    expect(await calculator.run("x")).toBe("16")
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "user", content: expect.stringContaining("empty") })
  })

  it("ends with BudgetExceeded when the model only ever replies empty", async () => {
    const { calculator } = calculatorWith(text(""))
    const error = failureOf(await runExit(calculator.budget({ maxTurns: 2 }).runEffect("x")))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "turns", used: 2 })
  })

  it("fails with ModelError when the script is exhausted", async () => {
    const { calculator } = calculatorWith([toolCalls([call("add", { a: 1, b: 1 })])])
    const error = failureOf(await runExit(calculator.runEffect("x")))
    expect(error).toBeInstanceOf(ModelError)
    expect(error.message).toContain("no response for call 2")
  })

  it("fails with ModelError when a client answers something that is not a response", async () => {
    const model = scriptedModel([{ _tag: "Mystery" } as never])
    const error = failureOf(await runExit(agent("a").model(model).runEffect("x")))
    expect(error).toMatchObject({ _tag: "ModelError" })
    expect(error.message).toContain("not a valid LlmResponse")
  })

  it("fails with ModelError when a client throws", async () => {
    const model = scriptedModel(() => {
      throw new Error("connection reset")
    })
    const error = failureOf(await runExit(agent("a").model(model).runEffect("x")))
    expect(error).toMatchObject({ _tag: "ModelError", reason: "connection reset" })
  })

  it("gives tool calls without ids stable ids", async () => {
    const { calculator, uses } = calculatorWith([toolCalls([call("add", { a: 1, b: 1 }, "")]), text("2")])
    await calculator.run("x")
    expect(uses[0]!.toolCallId).toBe("call_1_0")
  })
})

describe("typed output", () => {
  const Answer = Schema.Struct({ value: Schema.Finite, explanation: Schema.String })
  const typed = (script: Parameters<typeof scriptedModel>[0], maxTurns = 8) => {
    const model = scriptedModel(script)
    return { model, a: agent("typed", { output: Answer }).model(model).budget({ maxTurns }) }
  }

  it("decodes a final text into the output Schema, and offers a forced submit tool with its JSON Schema", async () => {
    const { a, model } = typed([text('```json\n{"value": 16, "explanation": "8*2"}\n```')])
    const out = await a.run("(3+5)*2")
    expect(out).toEqual({ value: 16, explanation: "8*2" })
    const request = model.requests[0]!
    expect(request.tools.map((t) => t.name)).toEqual(["submit"])
    expect(request.tools[0]!.parameters).toMatchObject({ required: ["value", "explanation"] })
    expect(request.toolChoice).toEqual({ tool: "submit" })
    expect(request.messages[0]!.content).toContain('call the tool "submit"')
  })

  it("feeds decoding errors back within the budget", async () => {
    const { a, model } = typed([text('{"value": "16"}'), text('{"value": 16, "explanation": "ok"}')])
    expect(await a.run("x")).toEqual({ value: 16, explanation: "ok" })
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: "user", content: expect.stringContaining("does not match") })
  })

  it("fails with OutputInvalid when the budget allows no retry", async () => {
    const { a } = typed([text("sixteen"), text("still sixteen")], 2)
    const error = failureOf(await runExit(a.runEffect("x")))
    expect(error).toBeInstanceOf(OutputInvalid)
    expect(error).toMatchObject({ raw: "still sixteen" })
    expect(error.message).toContain("not valid JSON")
  })

  it("encodes a typed input with the input Schema", async () => {
    const model = scriptedModel([text("ok")])
    const Question = Schema.Struct({ left: Schema.Finite, right: Schema.Finite })
    await agent("in", { input: Question }).model(model).run({ left: 1, right: 2 })
    expect(model.requests[0]!.messages[1]).toEqual({ role: "user", content: '{"left":1,"right":2}' })
  })
})

describe("deterministic skills", () => {
  it("answer without any model call", async () => {
    const model = scriptedModel([])
    const echo = agent("echo")
      .model(model)
      .skills(() => [skill("shout").implementedBy((input: string) => input.toUpperCase())])
    expect(await echo.run("hello")).toBe("HELLO")
    expect(model.requests).toHaveLength(0)
  })

  it("are chosen by predicate beside agentic skills", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([text("model answer")])
    const chosen: Array<string> = []
    const a = agent("mixed")
      .model(model)
      .tools({ add })
      .skills(({ add }) => [
        skill("greet").implementedBy((input: string) => `hi ${input}`).when((input) => input.startsWith("@")),
        skill("compute").tools(add)
      ])
      .onSkillChosen((e) => {
        chosen.push(`${e.skill}/${e.how}`)
      })
    expect(await a.run("@bob")).toBe("hi @bob")
    expect(await a.run("1+1")).toBe("model answer")
    expect(chosen).toEqual(["greet/predicate", "compute/fallback"])
    expect(model.requests).toHaveLength(1)
  })

  it("fail with NoSkillMatched when every skill has a predicate and none accepts", async () => {
    const a = agent("picky")
      .model(scriptedModel([]))
      .skills(() => [skill("only").implementedBy((i: string) => i).when(() => false)])
    const error = failureOf(await runExit(a.runEffect("x")))
    expect(error).toMatchObject({ _tag: "NoSkillMatched", skills: ["only"] })
  })
})

describe("Effect integration", () => {
  it("runs with a ModelClient provided through a Layer", async () => {
    const { add } = makeCalculatorTools()
    const { ModelClient } = await import("../../src/index.ts")
    const model = scriptedModel([toolCalls([call("add", { a: 2, b: 2 })]), text("4")])
    const program = agent("calc").tools({ add }).runEffect("2+2").pipe(Effect.provide(ModelClient.layer(model)))
    expect(await Effect.runPromise(program)).toBe("4")
  })

  it("rejects run() with the tagged error itself", async () => {
    const { calculator } = calculatorWith([toolCalls([call("delete_all", {})])])
    await expect(calculator.run("x")).rejects.toBeInstanceOf(ToolNotAllowed)
  })
})
