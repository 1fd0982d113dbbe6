/**
 * Property: for any scripted model (text, valid and invalid tool calls, calls outside the allowlist,
 * calls that need approval, a script that runs out) and any budget, the durable run — with its
 * decisions given through `decide`, each causing a replay — ends as the in-memory run suspended and
 * resumed with the same decisions: the same outcome and the same requests to the model.
 */
import { fc } from "@fast-check/vitest"
import { Effect, Exit, Layer, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, type Decisions, type LlmResponseInit, type ModelRequest, tool, type ToolCallInit } from "../../src/index.ts"
import { durable, memoryEngine } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 60)

const makeAgent = (script: ReadonlyArray<LlmResponseInit>, budget: { readonly maxTurns: number; readonly maxToolCalls?: number }) => {
  const model = scriptedModel(script)
  const echo = tool("echo", { args: Schema.Struct({ x: Schema.String }), effect: "readOnly", run: ({ x }) => `echo ${x}` })
  const bump = tool("bump", { args: Schema.Struct({ n: Schema.Finite }), run: ({ n }) => ({ bumped: n + 1 }) })
  const guarded = tool("guarded", {
    args: Schema.Struct({ n: Schema.Finite }),
    effect: "idempotent",
    needsApproval: ({ n }) => n > 5,
    run: ({ n }) => (n === 13 ? Effect.fail(new Error("unlucky")) : Effect.succeed(`guarded ${n}`))
  })
  return { model, agent: agent("prop").model(model).tools({ echo, bump, guarded }).budget(budget) }
}

const call: fc.Arbitrary<ToolCallInit> = fc.oneof(
  fc.record({ name: fc.constant("echo"), arguments: fc.oneof(fc.record({ x: fc.string({ maxLength: 5 }) }), fc.record({ x: fc.integer() })) }),
  fc.record({ name: fc.constant("bump"), arguments: fc.record({ n: fc.integer({ min: -3, max: 3 }) }) }),
  fc.record({ name: fc.constant("guarded"), arguments: fc.record({ n: fc.constantFrom(1, 6, 9, 13) }) }),
  fc.record({ name: fc.constant("nope"), arguments: fc.constant({}) })
)

const step: fc.Arbitrary<LlmResponseInit> = fc.oneof(
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map((content): LlmResponseInit => ({ _tag: "Text", content })) },
  {
    weight: 3,
    arbitrary: fc.record({
      calls: fc.array(call, { minLength: 1, maxLength: 3 }),
      usage: fc.option(fc.record({ inputTokens: fc.nat(50), outputTokens: fc.nat(50) }), { nil: undefined })
    }).map(({ calls, usage }): LlmResponseInit => ({ _tag: "ToolCalls", calls, ...(usage === undefined ? {} : { usage }) }))
  }
)

/** Ids given here: the scripted model would otherwise number them per turn, the same on both sides anyway. */
const withIds = (script: ReadonlyArray<LlmResponseInit>): ReadonlyArray<LlmResponseInit> =>
  script.map((response, turn) =>
    response._tag === "ToolCalls" ? { ...response, calls: response.calls.map((c, i) => ({ ...c, id: `t${turn}_${i}` })) } : response
  )

/** One decision per pending call, taken from `verdicts` in order (approve, deny, or edit to 2). */
const decisionsFor = (pending: ReadonlyArray<{ readonly id: string }>, verdicts: Array<number>): Decisions =>
  Object.fromEntries(pending.map((p) => {
    const v = verdicts.shift() ?? 0
    return [p.id, v === 0 ? Decision.approve : v === 1 ? Decision.deny("no") : Decision.edit({ n: 2 })]
  }))

type Outcome = { readonly ok: unknown } | { readonly error: unknown }

const outcomeOf = (exit: Exit.Exit<unknown, unknown>): Outcome => {
  if (Exit.isSuccess(exit)) return { ok: exit.value }
  const error = Option.getOrUndefined(Exit.findErrorOption(exit)) as { readonly _tag?: string; readonly reason?: unknown; readonly used?: unknown } | undefined
  return { error: error === undefined ? "defect" : { tag: error._tag, reason: error.reason, used: error.used } }
}

const plainRun = (script: ReadonlyArray<LlmResponseInit>, budget: { readonly maxTurns: number; readonly maxToolCalls?: number }, verdicts: Array<number>) => {
  const { model, agent } = makeAgent(script, budget)
  return Effect.gen(function*() {
    let result = yield* agent.runEffect("go")
    while (result._tag === "Suspended") result = yield* agent.resume(result.snapshot, decisionsFor(result.pending, verdicts))
    return result.output
  }).pipe(Effect.exit, Effect.map((exit) => ({ outcome: outcomeOf(exit), requests: model.requests as ReadonlyArray<ModelRequest> })))
}

const durableRun = (script: ReadonlyArray<LlmResponseInit>, budget: { readonly maxTurns: number; readonly maxToolCalls?: number }, verdicts: Array<number>) => {
  const { model, agent } = makeAgent(script, budget)
  const d = durable(agent)
  return Effect.gen(function*() {
    let result = yield* d.run("go", { runId: "prop" })
    while (result._tag === "Suspended") {
      yield* d.decide("prop", decisionsFor(result.pending, verdicts))
      result = yield* d.result("prop")
    }
    return result.output
  }).pipe(
    Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))),
    Effect.exit,
    Effect.map((exit) => ({ outcome: outcomeOf(exit), requests: model.requests as ReadonlyArray<ModelRequest> }))
  )
}

describe("durable runs equal in-memory runs", () => {
  it("the same outcome and the same model requests, for any script, budget and decisions", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 0, maxLength: 6 }).map(withIds),
        fc.record({ maxTurns: fc.integer({ min: 1, max: 7 }), maxToolCalls: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }) }),
        fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 12 }),
        async (script, { maxTurns, maxToolCalls }, verdicts) => {
          const budget = maxToolCalls === undefined ? { maxTurns } : { maxTurns, maxToolCalls }
          const plain = await Effect.runPromise(plainRun(script, budget, [...verdicts]))
          const durableResult = await Effect.runPromise(durableRun(script, budget, [...verdicts]))
          expect(durableResult.outcome).toEqual(plain.outcome)
          expect(durableResult.requests).toEqual(plain.requests)
        }
      ),
      { numRuns }
    )
  }, 120_000)
})
