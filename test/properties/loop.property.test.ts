/**
 * Invariants of the loop over arbitrary model behaviour: valid, invalid, unknown and disallowed
 * calls, garbage arguments, empty replies, text, model errors; arbitrary budgets and policies.
 */
import { fc, test } from "@fast-check/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { describe, expect } from "vitest"
import {
  agent,
  type AgentEvent,
  isAgentError,
  type LlmResponseInit,
  ModelError,
  Recovery,
  skill,
  tool,
  type ToolCallInit
} from "../../src/index.ts"
import { scriptedModel, type ScriptStep } from "../../src/testing/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const isOperands = Schema.is(Operands)

const allowedNames = ["add", "multiply"] as const
const disallowedNames = ["delete_all"] as const

const arbValidArgs = fc.record({ a: fc.double({ noNaN: true, noDefaultInfinity: true }), b: fc.integer() })
const arbInvalidArgs = fc.oneof(
  fc.record({ a: fc.string(), b: fc.integer() }),
  fc.record({ a: fc.integer() }),
  fc.record({ a: fc.integer(), b: fc.integer(), extra: fc.string() }),
  fc.constantFrom(null, 42, "not json", "{\"a\": 1, \"b\":", [], [1, 2], { a: Number.NaN, b: 1 }, "", "null"),
  fc.anything()
)
const arbArguments: fc.Arbitrary<unknown> = fc.oneof(
  arbValidArgs,
  arbValidArgs.map((args) => JSON.stringify(args)),
  arbInvalidArgs,
  arbInvalidArgs.map((args) => JSON.stringify(args) ?? "")
)
const arbToolName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...allowedNames) },
  { weight: 1, arbitrary: fc.constantFrom(...disallowedNames) },
  { weight: 1, arbitrary: fc.string() }
)
const arbCall: fc.Arbitrary<ToolCallInit> = fc.record({ id: fc.string({ maxLength: 8 }), name: arbToolName, arguments: arbArguments })
const arbResponse: fc.Arbitrary<ScriptStep> = fc.oneof(
  { weight: 6, arbitrary: fc.array(arbCall, { maxLength: 3 }).map((calls): LlmResponseInit => ({ _tag: "ToolCalls", calls })) },
  { weight: 2, arbitrary: fc.string({ maxLength: 20 }).map((content): LlmResponseInit => ({ _tag: "Text", content })) },
  { weight: 1, arbitrary: fc.constant(new ModelError({ provider: "scripted", reason: "rate limited", status: 429 })) }
)
const arbRecovery = fc.constantFrom(Recovery.feedback, Recovery.fail, Recovery.substitute("substituted"))

const arbScenario = fc.record({
  script: fc.array(arbResponse, { maxLength: 12 }),
  maxTurns: fc.integer({ min: 1, max: 6 }),
  maxToolCalls: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
  invalidArgs: arbRecovery,
  executionError: arbRecovery
})

const documentedTags = new Set([
  "ToolNotAllowed",
  "InvalidToolArgs",
  "ToolFailed",
  "BudgetExceeded",
  "ModelError",
  "OutputInvalid"
])

type Scenario = typeof arbScenario extends fc.Arbitrary<infer S> ? S : never

const runScenario = async (scenario: Scenario) => {
  const executed: Array<{ tool: string; args: unknown }> = []
  const record = (name: string) => (args: unknown) => {
    executed.push({ tool: name, args })
  }
  const add = tool("add", {
    args: Operands,
    run: (args) => {
      record("add")(args)
      return args.a + args.b
    }
  })
  const multiply = tool("multiply", {
    args: Operands,
    run: (args) => {
      record("multiply")(args)
      if (args.b % 3 === 0) throw new Error("multiply is flaky on multiples of 3")
      return args.a * args.b
    }
  })
  const deleteAll = tool("delete_all", { args: Schema.Struct({}), run: () => record("delete_all")({}) })
  const model = scriptedModel(scenario.script)
  const events: Array<AgentEvent> = []
  const recordEvent = (event: AgentEvent) => {
    events.push(event)
  }
  const subject = agent("subject")
    .model(model)
    .budget({ maxTurns: scenario.maxTurns, ...(scenario.maxToolCalls === undefined ? {} : { maxToolCalls: scenario.maxToolCalls }) })
    .tools({ add, multiply, delete_all: deleteAll })
    .skills(({ add, multiply }) => [skill("compute", "arithmetic").tools(add, multiply)])
    .recover({ invalidArgs: () => scenario.invalidArgs, executionError: () => scenario.executionError })
    .onRunStart(recordEvent)
    .onRunEnd(recordEvent)
    .onTurn(recordEvent)
    .onModelCall(recordEvent)
    .onModelResponse(recordEvent)
  const exit = await Effect.runPromise(Effect.exit(subject.runEffect("compute something")))
  return { exit, executed, model, events }
}

describe("loop invariants over arbitrary model scripts", () => {
  test.prop([arbScenario], { numRuns })("never executes a disallowed or unknown tool", async (scenario) => {
    const { executed } = await runScenario(scenario)
    for (const { tool } of executed) expect(allowedNames).toContain(tool)
  })

  test.prop([arbScenario], { numRuns })("never runs a tool with arguments that fail its Schema", async (scenario) => {
    const { executed } = await runScenario(scenario)
    for (const { args } of executed) expect(isOperands(args)).toBe(true)
  })

  test.prop([arbScenario], { numRuns })("never exceeds maxTurns model calls nor maxToolCalls executions", async (scenario) => {
    const { executed, model } = await runScenario(scenario)
    expect(model.requests.length).toBeLessThanOrEqual(scenario.maxTurns)
    if (scenario.maxToolCalls !== undefined) expect(executed.length).toBeLessThanOrEqual(scenario.maxToolCalls)
  })

  test.prop([arbScenario], { numRuns })("always ends in success or a documented tagged error", async (scenario) => {
    const { exit } = await runScenario(scenario)
    if (Exit.isSuccess(exit)) {
      expect(typeof exit.value).toBe("string")
      return
    }
    expect(Cause.hasDies(exit.cause)).toBe(false)
    expect(Cause.hasInterrupts(exit.cause)).toBe(false)
    const error = Cause.squash(exit.cause)
    expect(isAgentError(error)).toBe(true)
    expect(documentedTags).toContain((error as { _tag: string })._tag)
    if ((error as { _tag: string })._tag === "ToolNotAllowed") {
      expect((error as { allowed: ReadonlyArray<string> }).allowed).toEqual(allowedNames)
      expect((error as Error).message).not.toMatch(/Allowed:.*delete_all/)
    }
  })

  test.prop([arbScenario], { numRuns })("emits balanced events: one start, one end, one response per call", async (scenario) => {
    const { events, model } = await runScenario(scenario)
    const count = (tag: AgentEvent["_tag"]) => events.filter((e) => e._tag === tag).length
    expect(count("RunStart")).toBe(1)
    expect(count("RunEnd")).toBe(1)
    expect(events[0]?._tag).toBe("RunStart")
    expect(events.at(-1)?._tag).toBe("RunEnd")
    expect(count("Turn")).toBe(model.requests.length)
    expect(count("ModelCall")).toBe(model.requests.length)
    const failedCalls = model.responses.filter(Exit.isFailure).length
    expect(count("ModelResponse")).toBe(model.requests.length - failedCalls)
  })
})
