/**
 * Property: a runner stopped at a random tool execution of a random run (scripted model, valid and
 * invalid calls, approvals with random decisions, budgets), and the run continued on a fresh runner on
 * the same storage, ends as the uncrashed in-memory run: the same outcome and the same requests to the
 * model. Its tools are `readOnly` and `idempotent`, which run again after the crash as documented.
 */
import { fc } from "@fast-check/vitest"
import { Deferred, Effect, Exit, Layer, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, type Decisions, type LlmResponseInit, type ModelRequest, tool, type ToolCallInit } from "../../src/index.ts"
import { durable } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { engineKinds, type EngineKind, sharedStorage, sharedStores, startRunner } from "./harness.ts"

const numRuns = Math.max(4, Math.round(Number(process.env.PROPERTY_RUNS ?? 120) / 3))

type Budget = { readonly maxTurns: number; readonly maxToolCalls?: number }

/** The agent; `crashAt` makes its n-th tool execution (the first time it is reached) hang and signal `entered`. */
const makeAgent = (script: ReadonlyArray<LlmResponseInit>, budget: Budget, crash?: { readonly at: number; readonly entered: Deferred.Deferred<void> }) => {
  const model = scriptedModel(script)
  let executions = 0
  const hang = <A>(value: A) =>
    Effect.suspend(() => {
      executions++
      return crash !== undefined && executions === crash.at ? Effect.andThen(Deferred.succeed(crash.entered, undefined), Effect.never) : Effect.succeed(value)
    })
  const echo = tool("echo", { args: Schema.Struct({ x: Schema.String }), effect: "readOnly", run: ({ x }) => hang(`echo ${x}`) })
  const guarded = tool("guarded", {
    args: Schema.Struct({ n: Schema.Finite }),
    effect: "idempotent",
    needsApproval: ({ n }) => n > 5,
    run: ({ n }) => Effect.flatMap(hang(n), (n) => (n === 13 ? Effect.fail(new Error("unlucky")) : Effect.succeed(`guarded ${n}`)))
  })
  return { model, agent: agent("prop").model(model).tools({ echo, guarded }).budget(budget) }
}

const call: fc.Arbitrary<ToolCallInit> = fc.oneof(
  fc.record({ name: fc.constant("echo"), arguments: fc.oneof(fc.record({ x: fc.string({ maxLength: 4 }) }), fc.record({ x: fc.integer() })) }),
  fc.record({ name: fc.constant("guarded"), arguments: fc.record({ n: fc.constantFrom(1, 6, 13) }) })
)

const script: fc.Arbitrary<ReadonlyArray<LlmResponseInit>> = fc.array(
  fc.oneof(
    { weight: 1, arbitrary: fc.constant<LlmResponseInit>({ _tag: "Text", content: "end" }) },
    { weight: 3, arbitrary: fc.array(call, { minLength: 1, maxLength: 3 }).map((calls): LlmResponseInit => ({ _tag: "ToolCalls", calls })) }
  ),
  { minLength: 1, maxLength: 5 }
).map((steps) => steps.map((r, turn) => (r._tag === "ToolCalls" ? { ...r, calls: r.calls.map((c, i) => ({ ...c, id: `t${turn}_${i}` })) } : r)))

const decisionsFor = (pending: ReadonlyArray<{ readonly id: string }>, verdicts: Array<number>): Decisions =>
  Object.fromEntries(pending.map((p) => [p.id, (verdicts.shift() ?? 0) === 0 ? Decision.approve : Decision.deny("no")]))

const outcomeOf = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return { ok: exit.value }
  const error = Option.getOrUndefined(Exit.findErrorOption(exit)) as { readonly _tag?: string; readonly reason?: unknown } | undefined
  return { error: error === undefined ? "defect" : { tag: error._tag, reason: error.reason } }
}

const plainRun = (steps: ReadonlyArray<LlmResponseInit>, budget: Budget, verdicts: Array<number>) => {
  const { model, agent } = makeAgent(steps, budget)
  return Effect.gen(function*() {
    let result = yield* agent.runEffect("go")
    while (result._tag === "Suspended") result = yield* agent.resume(result.snapshot, decisionsFor(result.pending, verdicts))
    return result.output
  }).pipe(Effect.exit, Effect.map((exit) => ({ outcome: outcomeOf(exit), requests: model.requests as ReadonlyArray<ModelRequest> })))
}

const crashedRun = (engine: EngineKind, steps: ReadonlyArray<LlmResponseInit>, budget: Budget, verdicts: Array<number>, at: number) =>
  Effect.gen(function*() {
    const entered = yield* Deferred.make<void>()
    const { model, agent } = makeAgent(steps, budget, { at, entered })
    const d = durable(agent)
    const driver = yield* sharedStorage(engine)
    const stores = yield* sharedStores()
    const runner = () => d.layer.pipe(Layer.provideMerge(driver.engine()), Layer.provideMerge(Layer.succeedContext(stores)))
    let live = yield* startRunner(runner())
    const drive = Effect.gen(function*() {
      let result = yield* d.result("prop")
      while (result._tag === "Suspended") {
        yield* d.decide("prop", decisionsFor(result.pending, verdicts))
        result = yield* d.result("prop")
      }
      return result.output
    }).pipe(Effect.exit)
    yield* d.start("go", { runId: "prop" }).pipe(Effect.provide(live.context))
    // Runner A until the crash point is reached (if the run reaches it), then runner B.
    let exit = yield* Effect.raceFirst(Deferred.await(entered).pipe(Effect.as(undefined)), drive.pipe(Effect.provide(live.context)))
    if (exit === undefined) {
      yield* live.stop
      live = yield* startRunner(runner())
      exit = yield* drive.pipe(Effect.provide(live.context))
    }
    yield* live.stop
    return { outcome: outcomeOf(exit), requests: model.requests as ReadonlyArray<ModelRequest> }
  })

describe.each(engineKinds)("a run crashed at a random tool execution (%s engine)", (engine) => {
  it("ends as the uncrashed run: the same outcome and the same model requests", async () => {
    await fc.assert(
      fc.asyncProperty(
        script,
        fc.record({ maxTurns: fc.integer({ min: 2, max: 6 }), maxToolCalls: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }) }),
        fc.array(fc.integer({ min: 0, max: 1 }), { maxLength: 10 }),
        fc.integer({ min: 1, max: 2 }),
        async (steps, { maxTurns, maxToolCalls }, verdicts, at) => {
          const budget = maxToolCalls === undefined ? { maxTurns } : { maxTurns, maxToolCalls }
          const plain = await Effect.runPromise(plainRun(steps, budget, [...verdicts]))
          const crashed = await Effect.runPromise(crashedRun(engine, steps, budget, [...verdicts], at).pipe(Effect.timeout("20 seconds")))
          expect(crashed.outcome).toEqual(plain.outcome)
          expect(crashed.requests).toEqual(plain.requests)
        }
      ),
      { numRuns }
    )
  }, 300_000)
})
