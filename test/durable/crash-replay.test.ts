/**
 * A runner stopped in the middle of a tool (its fibers interrupted, as a killed process's stop), then
 * a fresh runner on the same storage: the run replays from its recorded steps, the model is not asked
 * again for what it answered, and each tool effect class behaves as documented.
 */
import { Context, Deferred, Effect, Exit, Layer, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type LlmMessage, text, tool, type ToolEffectClass, toolCalls } from "../../src/index.ts"
import { durable, type DurableOptions, OutcomeUnknown, Reconciled, ToolIntents } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { engineKinds, type EngineKind, sharedStorage, sharedStores, startRunner } from "./harness.ts"

const script = () => scriptedModel([toolCalls([{ id: "c1", name: "act", arguments: { q: "x" } }]), text("done")])

interface Crash {
  readonly engine: EngineKind
  readonly effect: ToolEffectClass
  readonly options?: DurableOptions
  /** Stop the runner after the tool wrote its outcome beside the claim, before the engine recorded it. */
  readonly afterFinish?: boolean
}

/**
 * Runs a one-tool agent on runner A, stops A while the tool runs (or right after a mutating tool
 * finished), and asks runner B for the result.
 */
const crashIn = (crash: Crash) =>
  Effect.gen(function*() {
    const runs: Array<{ readonly key: string | undefined }> = []
    const entered = Deferred.makeUnsafe<void>()
    const act = tool("act", {
      args: Schema.Struct({ q: Schema.String }),
      effect: crash.effect,
      run: ({ q }, context) =>
        Effect.gen(function*() {
          runs.push({ key: context.idempotencyKey })
          if (runs.length === 1 && crash.afterFinish !== true) {
            yield* Deferred.succeed(entered, undefined)
            return yield* Effect.never
          }
          return `acted on ${q}`
        })
    })
    const model = script()
    const d = durable(agent("actor").model(model).tools({ act }), crash.options)
    const driver = yield* sharedStorage(crash.engine)
    const stores = yield* sharedStores()
    const intents = Context.get(stores, ToolIntents)
    // The store as runner A sees it: when asked, `finish` writes and then the runner dies.
    const dyingIntents = ToolIntents.of({
      ...intents,
      finish: (key, outcome) =>
        Effect.andThen(intents.finish(key, outcome), crash.afterFinish === true ? Effect.andThen(Deferred.succeed(entered, undefined), Effect.never) : Effect.void)
    })
    const runner = (store: Context.Context<any>) =>
      d.layer.pipe(Layer.provideMerge(driver.engine()), Layer.provideMerge(Layer.succeedContext(store)))
    const first = yield* startRunner(runner(Context.add(stores, ToolIntents, dyingIntents)))
    yield* d.start("act on x", { runId: "crash" }).pipe(Effect.provide(first.context))
    yield* Deferred.await(entered)
    yield* first.stop
    const second = yield* startRunner(runner(stores))
    const exit = yield* Effect.exit(d.result("crash").pipe(Effect.provide(second.context)))
    yield* second.stop
    return { exit, runs, model }
  }).pipe(Effect.timeout("20 seconds"), Effect.runPromise)

/** What the model got back for the call, in its second request. */
const toolResult = (requests: ReadonlyArray<{ readonly messages: ReadonlyArray<LlmMessage> }>) =>
  requests[1]?.messages.find((m) => m.role === "tool")?.content

describe.each(engineKinds)("a runner stopped in a tool, and a fresh one on the same storage (%s engine)", (engine) => {
  const crashInTool = (crash: Omit<Crash, "engine">) => crashIn({ ...crash, engine })
  it("readOnly: the tool runs again and the run completes; the model is not asked again for the turn it answered", async () => {
    const { exit, runs, model } = await crashInTool({ effect: "readOnly" })
    expect(exit).toEqual(Exit.succeed({ _tag: "Completed", output: "done" }))
    expect(runs).toHaveLength(2)
    expect(runs.every((r) => r.key === undefined)).toBe(true)
    expect(model.requests).toHaveLength(2)
    expect(toolResult(model.requests)).toBe("acted on x")
  }, 30_000)

  it("the replayed run's transcript is the uncrashed run's", async () => {
    const { model } = await crashInTool({ effect: "readOnly" })
    const plain = script()
    const act = tool("act", { args: Schema.Struct({ q: Schema.String }), run: ({ q }) => `acted on ${q}` })
    await Effect.runPromise(agent("actor").model(plain).tools({ act }).runEffect("act on x"))
    expect(model.requests).toEqual(plain.requests)
  }, 30_000)

  it("idempotent: the tool runs again with the same idempotency key (run, turn, call)", async () => {
    const { exit, runs } = await crashInTool({ effect: "idempotent" })
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(runs).toHaveLength(2)
    expect(runs[0]!.key).toBe("crash/1/c1")
    expect(runs[1]!.key).toBe(runs[0]!.key)
  }, 30_000)

  it("mutating, no handler: never runs twice; the run ends with OutcomeUnknown naming the tool and the call", async () => {
    const { exit, runs } = await crashInTool({ effect: "mutating" })
    expect(runs).toHaveLength(1)
    expect(Exit.isFailure(exit)).toBe(true)
    const error = Exit.isFailure(exit) ? Option.getOrUndefined(Exit.findErrorOption(exit)) : undefined
    expect(error).toBeInstanceOf(OutcomeUnknown)
    expect(error).toMatchObject({ _tag: "OutcomeUnknown", tool: "act", toolCallId: "c1", runId: "crash", args: { q: "x" } })
  }, 30_000)

  it("the default effect class is mutating", async () => {
    const act = tool("act", { args: Schema.Struct({ q: Schema.String }), run: () => "" })
    expect(act.effect).toBe("mutating")
  })

  it("mutating with a reconcile handler: its result is recorded as the call's, and the tool never runs again", async () => {
    const seen: Array<OutcomeUnknown> = []
    const { exit, runs, model } = await crashInTool({
      effect: "mutating",
      options: { reconcile: (unknown) => Effect.sync(() => seen.push(unknown)).pipe(Effect.as(Reconciled.result("found it done"))) }
    })
    expect(exit).toEqual(Exit.succeed({ _tag: "Completed", output: "done" }))
    expect(runs).toHaveLength(1)
    expect(seen.map((u) => [u.tool, u.toolCallId])).toEqual([["act", "c1"]])
    expect(toolResult(model.requests)).toBe("found it done")
  }, 30_000)

  it("mutating with a handler that says it did not run: runs it now", async () => {
    const { exit, runs } = await crashInTool({ effect: "mutating", options: { reconcile: () => Effect.succeed(Reconciled.runAgain) } })
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(runs).toHaveLength(2)
  }, 30_000)

  it("mutating with a handler that gives up, or fails: OutcomeUnknown with its reason", async () => {
    const gaveUp = await crashInTool({ effect: "mutating", options: { reconcile: () => Effect.succeed(Reconciled.fail("ask finance")) } })
    expect(Exit.isFailure(gaveUp.exit) && Option.getOrUndefined(Exit.findErrorOption(gaveUp.exit))).toMatchObject({ _tag: "OutcomeUnknown", reason: "ask finance" })
    const failed = await crashInTool({ effect: "mutating", options: { reconcile: () => Effect.fail("ledger down") } })
    expect(Exit.isFailure(failed.exit) && Option.getOrUndefined(Exit.findErrorOption(failed.exit))).toMatchObject({ _tag: "OutcomeUnknown" })
    expect(String(Exit.isFailure(failed.exit) && (Option.getOrUndefined(Exit.findErrorOption(failed.exit)) as OutcomeUnknown).reason)).toContain("ledger down")
    expect(failed.runs).toHaveLength(1)
  }, 30_000)

  it("mutating, stopped between the tool's end and its recorded result: the outcome written beside the claim is used, nothing runs twice", async () => {
    const { exit, runs, model } = await crashInTool({ effect: "mutating", afterFinish: true })
    expect(exit).toEqual(Exit.succeed({ _tag: "Completed", output: "done" }))
    expect(runs).toHaveLength(1)
    expect(toolResult(model.requests)).toBe("acted on x")
  }, 30_000)
})
