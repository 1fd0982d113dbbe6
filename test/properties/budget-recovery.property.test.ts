/**
 * Laws of budgets and recovery over arbitrary model scripts, budgets and handlers.
 */
import { fc, test } from "@fast-check/vitest"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { agent, type LlmResponseInit, Recovery, type RecoveryHandlers, tool, toolCalls, text } from "../../src/index.ts"
import { runScript } from "../../src/testing/index.ts"
import { arbToolCall } from "../../src/testing/arbitraries.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const isOperands = Schema.is(Operands)

const makeTools = () => {
  const executed: Array<{ tool: string; args: unknown }> = []
  const add = tool("add", {
    args: Operands,
    run: (args) => {
      executed.push({ tool: "add", args })
      return args.a + args.b
    }
  })
  const multiply = tool("multiply", {
    args: Operands,
    run: (args) => {
      executed.push({ tool: "multiply", args })
      if (args.b % 2 === 0) throw new Error("even multipliers fail")
      return args.a * args.b
    }
  })
  return { add, multiply, executed }
}

const { add: addShape, multiply: multiplyShape } = makeTools()
const arbResponse: fc.Arbitrary<LlmResponseInit> = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.array(arbToolCall([addShape, multiplyShape], { invalidRate: 0.3, unknownRate: 0.05 }), { minLength: 1, maxLength: 4 }), fc.option(fc.record({ inputTokens: fc.nat(60), outputTokens: fc.nat(30) }), { nil: undefined })).map(
    ([calls, usage]): LlmResponseInit => usage === undefined ? { _tag: "ToolCalls", calls } : { _tag: "ToolCalls", calls, usage }
  ) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 10 }).map((content): LlmResponseInit => ({ _tag: "Text", content })) }
)
const arbBudget = fc.record(
  { maxTurns: fc.integer({ min: 1, max: 6 }), maxToolCalls: fc.integer({ min: 1, max: 8 }), maxTokens: fc.integer({ min: 1, max: 200 }), maxConsecutiveSameTool: fc.integer({ min: 1, max: 3 }) },
  { requiredKeys: [] }
)
const arbRecovery = fc.oneof(
  fc.constantFrom(Recovery.feedback, Recovery.fail, Recovery.substitute("s"), Recovery.escalate("e", "LOW")),
  fc.integer({ min: 0, max: 3 }).map(Recovery.retry),
  fc.oneof(fc.record({ a: fc.integer(), b: fc.integer() }), fc.anything()).map(Recovery.fixed)
)

const tokensUsed = (responses: ReadonlyArray<LlmResponseInit>) => responses.reduce((sum, r) => sum + (r.usage === undefined ? 0 : r.usage.inputTokens + r.usage.outputTokens), 0)

describe("budget laws", () => {
  test.prop([fc.array(arbResponse, { maxLength: 10 }), arbBudget, arbRecovery, arbRecovery], { numRuns })(
    "no budget is ever exceeded: turns, tool calls, same tool in a row, tokens",
    async (script, budget, onInvalid, onFailure) => {
      const { add, multiply, executed } = makeTools()
      const subject = agent("subject")
        .budget(budget)
        .tools({ add, multiply })
        .recover({ invalidArgs: () => onInvalid, executionError: () => onFailure })
      const run = await runScript(subject, script, "go")
      expect(run.outcome._tag === "Success" || run.outcome._tag === "Failure").toBe(true)
      expect(run.requests.length).toBeLessThanOrEqual(budget.maxTurns ?? 8)
      expect(executed.length).toBeLessThanOrEqual(budget.maxToolCalls ?? 32)
      let streak = 0
      executed.forEach((e, i) => {
        streak = i > 0 && executed[i - 1]!.tool === e.tool ? streak + 1 : 1
        expect(streak).toBeLessThanOrEqual(budget.maxConsecutiveSameTool ?? Number.POSITIVE_INFINITY)
      })
      const limit = budget.maxTokens ?? Number.POSITIVE_INFINITY
      const answered = script.slice(0, run.requests.length)
      // A model call is made only while tokens are left...
      for (let i = 1; i < run.requests.length; i++) expect(tokensUsed(answered.slice(0, i))).toBeLessThan(limit)
      // ...and no tool runs for a response that went past the limit.
      for (const event of run.events) {
        if (event._tag === "ToolUse" || event._tag === "ToolError") expect(tokensUsed(answered.slice(0, event.turn))).toBeLessThanOrEqual(limit)
      }
    },
    // ~3-4 s alone; the default 5 s timed out under a loaded `npm test` (2 cores).
    60_000
  )
})

describe("recovery laws", () => {
  test.prop([fc.array(arbResponse, { maxLength: 8 }), arbRecovery, arbRecovery], { numRuns })(
    "fixed arguments that fail the Schema never reach run",
    async (script, onInvalid, onFailure) => {
      const { add, multiply, executed } = makeTools()
      const subject = agent("subject")
        .tools({ add, multiply })
        .recover({ invalidArgs: () => onInvalid, executionError: () => onFailure, maxRepairSteps: 2 })
      await runScript(subject, script, "go")
      for (const { args } of executed) expect(isOperands(args)).toBe(true)
    }
  )

  const arbLevel = fc.constantFrom("absent", "answers", "throws")
  test.prop([arbLevel, arbLevel, arbLevel, fc.boolean()], { numRuns })(
    "handler priority holds for any placement: tool recover > recoverTool(name) > recover defaults > feedback",
    async (toolLevel, agentToolLevel, defaultsLevel, invalidCase) => {
      const handler = (level: string, name: string) =>
        level === "absent" ? undefined : () => {
          if (level === "throws") throw new Error(`${name} failed`)
          return Recovery.substitute(`decided by ${name}`)
        }
      const handlers = (level: string, name: string): RecoveryHandlers => {
        const h = handler(level, name)
        return h === undefined ? {} : { invalidArgs: h, executionError: h }
      }
      const subjectTool = tool("subject_tool", {
        args: Operands,
        recover: handlers(toolLevel, "tool"),
        run: () => {
          throw new Error("always fails")
        }
      })
      const subject = agent("subject")
        .tools({ subject_tool: subjectTool })
        .recoverTool("subject_tool", handlers(agentToolLevel, "agent-tool"))
        .recover(handlers(defaultsLevel, "defaults"))
      const args = invalidCase ? { a: "not a number", b: 1 } : { a: 1, b: 2 }
      const run = await runScript(subject, [toolCalls([{ id: "1", name: "subject_tool", arguments: args }]), text("end")], "go")
      const expected = ([["tool", toolLevel], ["agent-tool", agentToolLevel], ["defaults", defaultsLevel]] as const).find(([, level]) => level === "answers")
      const result = run.requests[1]!.messages.at(-1)!.content
      if (expected === undefined) {
        expect(result).toContain(invalidCase ? "Invalid arguments" : "always fails")
      } else {
        expect(result).toBe(`decided by ${expected[0]}`)
      }
      const throwing = [toolLevel, agentToolLevel, defaultsLevel]
      const reportedFailures = run.events.filter((e) => e._tag === "HookFailed").length
      const firstAnswer = throwing.indexOf("answers")
      const consulted = firstAnswer === -1 ? throwing : throwing.slice(0, firstAnswer)
      expect(reportedFailures).toBe(consulted.filter((l) => l === "throws").length)
    }
  )
})
