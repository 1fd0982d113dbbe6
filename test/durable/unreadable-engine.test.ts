/**
 * The local workflow engine (the embedded engine's) meeting stored rows it cannot read, on its
 * in-memory store with a wrapper that hands back edited rows (the PGlite store's own parse errors are
 * in unreadable-rows.test.ts): a running execution picked up at a restart, and a replay after a
 * decision, meet a recorded result of another shape. The engine records nothing for that execution,
 * says so, and keeps serving the others; `d.join`/`d.poll`/`d.list` of that run give the typed
 * `DurableRunUnreadable`, never a defect. A property does it over hostile values in any recorded step.
 */
import { fc } from "@fast-check/vitest"
import { Cause, Deferred, Effect, Exit, Layer, Logger, References, Schema } from "effect"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import { describe, expect, it } from "vitest"
import { localWorkflowEngine } from "../../src/durable/engines/local-workflow-engine.ts"
import { memoryWorkflowStore, type StoredExecution, type StoredStep, type WorkflowStore } from "../../src/durable/engines/workflow-store.ts"
import { agent, Decision, isAgentError, text, tool, toolCalls } from "../../src/index.ts"
import { ApprovalInbox, durable, DurableRunUnreadable, RunJournal, ToolIntents } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { startRunner } from "./harness.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 40)

/** The store, and the edits it hands back for an execution's steps when read (an operator's bad edit). */
const editable = (inner: WorkflowStore) => {
  const edits = new Map<string, (step: StoredStep, index: number) => StoredStep>()
  const edited = (e: StoredExecution | undefined): StoredExecution | undefined => {
    const edit = e === undefined ? undefined : edits.get(e.executionId)
    return e === undefined || edit === undefined ? e : { ...e, steps: e.steps.map(edit) }
  }
  const store: WorkflowStore = {
    ...inner,
    load: (id) => Effect.map(inner.load(id), edited),
    create: (execution) => Effect.map(inner.create(execution), (r) => ({ ...r, execution: edited(r.execution)! }))
  }
  return { store, edits }
}

const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String }), effect: "idempotent", needsApproval: true, run: ({ to }) => `sent to ${to}` })

const makeAgent = (gate?: Deferred.Deferred<void>) => {
  let blocking = gate !== undefined
  const model = scriptedModel((request) => {
    const input = String(request.messages.find((m) => m.role === "user")?.content ?? "")
    const answered = request.messages.some((m) => m.role === "tool")
    if (input === "wait" && !answered) return toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob" } }])
    if (input === "slow" && blocking && gate !== undefined) return Effect.as(Deferred.await(gate), text("late"))
    return text("done")
  })
  return { d: durable(agent("engine-keeper").model(model).tools({ transfer })), unblock: () => (blocking = false) }
}

/** How an effect ended: a value, a typed failure, or a defect. */
const ended = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.exit(effect), (exit) =>
    Exit.isSuccess(exit)
      ? { _tag: "Ok" as const, value: exit.value as unknown }
      : Cause.hasDies(exit.cause) || !Cause.hasFails(exit.cause)
      ? { _tag: "Die" as const, cause: Cause.pretty(exit.cause).slice(0, 600) }
      : { _tag: "Fail" as const, error: exit.cause.reasons.find((r) => r._tag === "Fail")!._tag === "Fail" ? (exit.cause.reasons.find((r) => r._tag === "Fail") as { error: unknown }).error : undefined })

const stores = Layer.mergeAll(ToolIntents.memory, ApprovalInbox.memory, RunJournal.memory)

describe("local workflow engine: stored rows it cannot read", () => {
  it("a restart meets a running execution whose recorded step is of another shape: warned and left as stored, the other runs complete, its join fails typed", async () => {
    const gate = Deferred.makeUnsafe<void>()
    const { d, unblock } = makeAgent(gate)
    const inner = memoryWorkflowStore()
    const { store, edits } = editable(inner)
    const warnings: Array<string> = []
    const out = await Effect.runPromise(Effect.gen(function*() {
      const shared = yield* Layer.build(stores)
      const runnerOn = () => startRunner(d.layer.pipe(Layer.provideMerge(localWorkflowEngine(store)), Layer.provideMerge(Layer.succeedContext(shared))) as Layer.Layer<WorkflowEngine | ApprovalInbox | ToolIntents | RunJournal>)
      const first = yield* runnerOn()
      yield* d.start("slow", { runId: "bad" }).pipe(Effect.provide(first.context))
      yield* d.start("slow", { runId: "good" }).pipe(Effect.provide(first.context))
      yield* Effect.sleep("200 millis")
      // The worker stops with both in flight (inside their model call); the store holds their start step.
      yield* first.stop
      unblock()
      const badId = yield* d.workflow.executionId({ runId: "bad", input: null })
      edits.set(badId, (step) => (step.name.startsWith("start/") ? { ...step, value: { _tag: "Complete", exit: { _tag: "Success", value: "not a time" } } } : step))
      const second = yield* runnerOn()
      const good = yield* d.join("good").pipe(Effect.provide(second.context))
      const bad = yield* ended(d.join("bad").pipe(Effect.provide(second.context)))
      const listed = yield* d.list().pipe(Effect.provide(second.context))
      const stored = yield* inner.load(badId)
      yield* second.stop
      return { good, bad, listed, stored }
    }).pipe(Effect.scoped, Effect.provide(captureWarnings(warnings)), Effect.timeout("20 seconds")))
    expect(out.good).toBe("done")
    expect(out.bad._tag).toBe("Fail")
    expect((out.bad as { error: unknown }).error).toBeInstanceOf(DurableRunUnreadable)
    expect((out.bad as { error: DurableRunUnreadable }).error).toMatchObject({ runId: "bad", table: "agent_workflow_steps", row: 'step "a:start/bad/1"' })
    expect(out.listed.map((r) => [r.runId, r.status])).toEqual([["bad", "unreadable"], ["good", "completed"]])
    expect(out.stored?.status).not.toBe("complete")
    expect(warnings.some((w) => w.includes("is not run, its stored state cannot be read"))).toBe(true)
  })

  // Hostile values for one recorded step of a waiting run, met when a decision replays it.
  const hostileStep = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => ({ kind: "shape" as const, value: v as unknown })),
    fc.jsonValue({ maxDepth: 3 }).map((v) => ({ kind: "inner" as const, value: { _tag: "Complete", exit: { _tag: "Success", value: v } } as unknown })),
    fc.jsonValue({ maxDepth: 3 }).map((v) => ({ kind: "exit" as const, value: { _tag: "Success", value: v } as unknown })),
    fc.integer({ min: 50, max: 5000 }).map((n) => ({ kind: "deep" as const, value: JSON.parse(`${"[".repeat(n)}${"]".repeat(n)}`) as unknown })),
    fc.jsonValue({ maxDepth: 2 }).map((v) => ({ kind: "proto" as const, value: JSON.parse(`{"__proto__":${JSON.stringify(v ?? null)},"_tag":"Complete"}`) as unknown }))
  )

  it("property: a hostile value in any recorded step of a waiting run ends its replay with DurableRunUnreadable or leaves it working, never a defect; another run completes", async () => {
    const { d } = makeAgent()
    const inner = memoryWorkflowStore()
    const { store, edits } = editable(inner)
    await Effect.runPromise(Effect.gen(function*() {
      const shared = yield* Layer.build(stores)
      const runner = yield* startRunner(d.layer.pipe(Layer.provideMerge(localWorkflowEngine(store)), Layer.provideMerge(Layer.succeedContext(shared))) as Layer.Layer<WorkflowEngine | ApprovalInbox | ToolIntents | RunJournal>)
      let n = 0
      let exitChecked = 0
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(hostileStep, fc.nat(), fc.boolean(), (hostile, pick, decision) =>
            Effect.runPromise(Effect.gen(function*() {
              n += 1
              const bad = `bad-${n}`
              const good = `good-${n}`
              yield* d.run("wait", { runId: bad })
              yield* d.run("wait", { runId: good })
              const id = yield* d.workflow.executionId({ runId: bad, input: null })
              const steps = (yield* inner.load(id))!.steps
              const chosen = steps[pick % steps.length]!
              // One recorded activity, or the decision (a durable deferred, recorded by `decide` below).
              edits.set(id, (step) =>
                (decision ? step.kind === "deferred" : step.name === chosen.name && step.kind === chosen.kind) ? { ...step, value: hostile.value } : step)
              const listed = (yield* d.list()).find((r) => r.runId === bad)!
              yield* ended(d.decide(bad, { t1: Decision.approve }))
              const joined = yield* ended(d.join(bad))
              // Never a defect: the typed error; or, for a value its step's schema takes after all (a start
              // time of 0), what the run makes of it: its output or an error of its own.
              expect(joined._tag, joined._tag === "Die" ? joined.cause : "").not.toBe("Die")
              if (joined._tag === "Fail" && joined.error instanceof DurableRunUnreadable) {
                expect(joined.error.table).toMatch(/agent_workflow_(steps|executions)/)
                expect((yield* inner.load(id))!.status).not.toBe("complete")
              } else if (joined._tag === "Fail") {
                // A value its step's schema takes: a recorded result's inner value, or a decision's exit
                // whose decisions decode (`{}`: no decision for the waiting call): the run's own error.
                expect(hostile.kind === "inner" || (decision && hostile.kind === "exit"), `${hostile.kind} ${decision}`).toBe(true)
                expect(isAgentError(joined.error)).toBe(true)
              } else {
                expect(joined.value).toBe("done")
              }
              // A step of another shape than any recorded result is seen before a replay, by list.
              if (hostile.kind !== "inner" && hostile.kind !== "exit" && !decision) {
                expect(listed.status).toBe("unreadable")
                expect(joined._tag).toBe("Fail")
              }
              // A decision of another shape: the replay that reads it back ends unreadable, naming it.
              if (decision && hostile.kind !== "exit") {
                expect(joined._tag === "Fail" && joined.error instanceof DurableRunUnreadable && joined.error.row.startsWith('step "d:')).toBe(true)
              }
              if (decision && hostile.kind === "exit" && joined._tag === "Fail" && joined.error instanceof DurableRunUnreadable) exitChecked += 1
              yield* d.decide(good, { t1: Decision.approve })
              expect(yield* d.join(good)).toBe("done")
            }).pipe(Effect.provide(runner.context), Effect.provideService(References.MinimumLogLevel, "None"), Effect.timeout("10 seconds")))
          ),
          // A decision of the shape of an exit whose value the decisions' schema refuses, every time.
          // And one whose decisions decode (`{}`, found in CI): the run ends with its own typed error.
          { numRuns, examples: [[{ kind: "exit", value: { _tag: "Success", value: 42 } }, 0, true], [{ kind: "exit", value: { _tag: "Success", value: {} } }, 0, true]] }
        )
      )
      // That decision was met by the engine's check, not decoded into a defect.
      expect(exitChecked).toBeGreaterThan(0)
      yield* runner.stop
    }).pipe(Effect.scoped))
  }, 300_000)
})

/** A logger that keeps the messages of warnings (and nothing else is printed). */
const captureWarnings = (into: Array<string>) =>
  Logger.layer([Logger.make(({ logLevel, message }) => {
    if (logLevel === "Warn") into.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
  })])
