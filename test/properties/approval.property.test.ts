/**
 * The approval law: for arbitrary scripts (valid, invalid and hostile arguments, unknown tools,
 * duplicate call ids, recovery handlers that substitute other arguments, tools that fail) and arbitrary
 * decisions (approve, deny, valid and invalid edits), a tool that needs approval never runs without an
 * `approve` or an `edit` for that exact call and those exact arguments. Every suspension goes through
 * JSON and a freshly built agent.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Exit, Schema } from "effect"
import { describe, expect } from "vitest"
import { agent, type Decision as DecisionT, Decision, type ModelClient, Recovery, type RunSnapshot, tool, toolCalls, text, unsafeNoSchema } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import type { LlmResponseInit } from "../../src/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 150)

interface Execution {
  readonly id: string
  readonly tool: string
  readonly args: unknown
}

const Amount = Schema.Struct({ amount: Schema.Int })

const makeAgent = (model: ModelClient, executed: Array<Execution>, options: { readonly fixInvalid: boolean; readonly fixFailed: boolean }) => {
  const record = (name: string) => (args: unknown, context: { readonly toolCallId: string }) => {
    executed.push({ id: context.toolCallId, tool: name, args })
    if (typeof args === "object" && args !== null && (args as { amount?: unknown }).amount === 13) throw new Error("unlucky")
    return "ok"
  }
  const free = tool("free", { args: Amount, run: record("free") })
  const guarded = tool("guarded", { args: Amount, needsApproval: ({ amount }) => amount > 50, run: record("guarded") })
  const always = tool("always", { args: Amount, needsApproval: true, run: record("always") })
  const raw = tool("raw", { args: unsafeNoSchema({ mode: "human-approval" }), run: record("raw") })
  return agent("law")
    .model(model)
    .budget({ maxTurns: 6 })
    .disallowedToolPolicy("feedback")
    .tools({ free, guarded, always, raw })
    .recover({
      ...(options.fixInvalid ? { invalidArgs: () => Recovery.fixed({ amount: 99 }) } : {}),
      ...(options.fixFailed ? { executionError: () => Recovery.fixed({ amount: 77 }) } : {})
    })
}

/** Whether `tool` may run `args` without a decision. */
const freeToRun = (tool: string, args: unknown): boolean =>
  tool === "free" || (tool === "guarded" && typeof args === "object" && args !== null && (args as { amount: number }).amount <= 50)

const arbArgs: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ amount: fc.integer({ min: -20, max: 120 }) }),
  fc.constant({ amount: 13 }),
  fc.constant({ amount: "lots" }),
  fc.constant({}),
  fc.constant("{not json"),
  fc.constant({ amount: 60, extra: true }),
  fc.constant([1, 2])
)

const arbCall = fc.record({
  id: fc.constantFrom("a", "b", "c", "d"),
  name: fc.constantFrom("free", "guarded", "always", "raw", "nope"),
  arguments: arbArgs
})

const arbTurn: fc.Arbitrary<LlmResponseInit> = fc.oneof(
  { weight: 4, arbitrary: fc.array(arbCall, { minLength: 1, maxLength: 4 }).map((calls) => toolCalls(calls as never)) },
  { weight: 1, arbitrary: fc.constant(text("done")) }
)

const arbDecision: fc.Arbitrary<DecisionT> = fc.oneof(
  fc.constant(Decision.approve),
  fc.constant(Decision.deny("no")),
  arbArgs.map((args) => Decision.edit(args))
)

describe("approvals", () => {
  test.prop(
    [
      fc.array(arbTurn, { minLength: 1, maxLength: 6 }),
      fc.infiniteStream(arbDecision),
      fc.boolean(),
      fc.boolean()
    ],
    { numRuns }
  )("a tool that needs approval never runs without an approve or edit of that exact call", async (script, decisionStream, fixInvalid, fixFailed) => {
    const model = scriptedModel(script)
    const executed: Array<Execution> = []
    const authorised: Array<Execution> = []
    const decisions = decisionStream[Symbol.iterator]()
    const fresh = () => makeAgent(model, executed, { fixInvalid, fixFailed })
    let exit = await Effect.runPromise(Effect.exit(fresh().runEffect("go")))
    let rounds = 0
    while (Exit.isSuccess(exit) && exit.value._tag === "Suspended" && rounds++ < 30) {
      const suspended = exit.value
      const json = JSON.stringify(suspended.snapshot)
      const snapshot = JSON.parse(json) as RunSnapshot
      const chosen: Record<string, DecisionT> = {}
      for (const pending of snapshot.state.awaiting ?? []) chosen[pending.id] = decisions.next().value as DecisionT
      const before = executed.length
      exit = await Effect.runPromise(Effect.exit(fresh().resume(json, chosen)))
      if (Exit.isFailure(exit) && exit.cause.reasons.some((r) => r._tag === "Fail" && (r.error as { _tag?: string })._tag === "DecisionsInvalid")) {
        // An invalid edit is refused before anything runs; the reviewer then approves everything.
        expect(executed.length).toBe(before)
        for (const id of Object.keys(chosen)) chosen[id] = Decision.approve
        exit = await Effect.runPromise(Effect.exit(fresh().resume(json, chosen)))
      }
      for (const pending of snapshot.state.awaiting ?? []) {
        const decision = chosen[pending.id]!
        if (decision._tag === "Approve") authorised.push({ id: pending.id, tool: pending.tool, args: pending.args })
        if (decision._tag === "Edit") authorised.push({ id: pending.id, tool: pending.tool, args: decision.args })
      }
    }
    for (const run of executed) {
      if (freeToRun(run.tool, run.args)) continue
      expect(authorised).toContainEqual({ id: run.id, tool: run.tool, args: run.args })
    }
  }, 120_000)

  test.prop([fc.array(arbTurn, { minLength: 1, maxLength: 6 })], { numRuns: Math.min(numRuns, 60) })(
    "suspends on scripts that call a guarded tool with valid arguments (the law above is not vacuous)",
    async (script) => {
      const first = script[0]
      fc.pre(first !== undefined && first._tag === "ToolCalls" && first.calls.some((c) => c.name === "always" && typeof c.arguments === "object" && c.arguments !== null && Number.isInteger((c.arguments as { amount?: unknown }).amount) && Object.keys(c.arguments).length === 1))
      const executed: Array<Execution> = []
      const result = await Effect.runPromise(makeAgent(scriptedModel(script), executed, { fixInvalid: false, fixFailed: false }).runEffect("go"))
      expect(result._tag).toBe("Suspended")
    }
  )
})
