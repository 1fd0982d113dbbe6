/**
 * The local workflow engine (the embedded engine's) on its in-memory store: what it records as a run
 * goes, what a fresh engine on the same store (a restarted process) picks up, durable deferreds and
 * clocks across a restart, a process that runs nothing (`runner: false`), the services a run runs with,
 * and the one race an engine that persists suspensions can lose: a deferred completed while the run
 * that is about to suspend still finishes. Effect Cluster's semantics are the reference; the agent-level
 * crash and replay suites run on both engines (harness.ts `engineKinds`).
 */
import { fc } from "@fast-check/vitest"
import { Cause, Clock, Context, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, References, Schema } from "effect"
import * as Activity from "effect/workflow/Activity"
import * as DurableClock from "effect/workflow/DurableClock"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as Workflow from "effect/workflow/Workflow"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import { describe, expect, it } from "vitest"
import { localWorkflowEngine } from "../../src/durable/engines/local-workflow-engine.ts"
import { memoryWorkflowStore, type WorkflowStore, WorkflowStoreFailed } from "../../src/durable/engines/workflow-store.ts"
import { startRunner } from "./harness.ts"
import { Decision, text, toolCalls } from "../../src/index.ts"
import { ApprovalInbox, durable, RunJournal, ToolIntents } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank } from "../approvals/bank.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 40)

const Job = Workflow.make("Job", { payload: { id: Schema.String }, success: Schema.Number, idempotencyKey: (p) => p.id })

/** A counter of activity runs by name, and gates a test opens to let an activity finish. */
const makeProbe = () => {
  const runs = new Map<string, number>()
  const gates = new Map<string, Deferred.Deferred<void>>()
  const gate = (name: string) => {
    let g = gates.get(name)
    if (g === undefined) gates.set(name, (g = Deferred.makeUnsafe<void>()))
    return g
  }
  const step = (name: string, value: number, gated = false) =>
    Activity.make({
      name,
      success: Schema.Number,
      execute: Effect.gen(function*() {
        runs.set(name, (runs.get(name) ?? 0) + 1)
        if (gated) yield* Deferred.await(gate(name))
        return value
      })
    })
  return { runs, gate, step }
}

const runnerOf = <R>(store: WorkflowStore, body: Layer.Layer<never, never, R>, options: { readonly runner?: boolean } = {}) =>
  startRunner(body.pipe(Layer.provideMerge(localWorkflowEngine(store, options))) as Layer.Layer<WorkflowEngine>)

const executionIdOf = (id: string) => Job.executionId({ id })

describe("local workflow engine", () => {
  it("records each completed activity once and the result; a finished execution is read back from the store", async () => {
    const store = memoryWorkflowStore()
    const probe = makeProbe()
    const body = Job.toLayer(Effect.fnUntraced(function*() {
      return (yield* probe.step("a", 1)) + (yield* probe.step("b", 2))
    }))
    const result = await Effect.runPromise(Effect.gen(function*() {
      const runner = yield* runnerOf(store, body)
      const value = yield* Job.execute({ id: "one" }).pipe(Effect.provide(runner.context))
      const polled = yield* Job.poll(yield* executionIdOf("one")).pipe(Effect.provide(runner.context))
      yield* runner.stop
      return { value, polled }
    }))
    expect(result.value).toBe(3)
    expect(Option.getOrUndefined(result.polled)).toMatchObject({ _tag: "Complete", exit: Exit.succeed(3) })
    const stored = await Effect.runPromise(Effect.flatMap(executionIdOf("one"), store.load))
    expect(stored).toMatchObject({ status: "complete", workflow: "Job", payload: { id: "one" } })
    expect(stored!.steps.map((s) => [s.kind, s.name]).sort()).toEqual([["activity", "a/1"], ["activity", "b/1"]])
    expect([...probe.runs]).toEqual([["a", 1], ["b", 1]])
  })

  it("a store write that fails a few times is retried; one that keeps failing ends the run with a defect, never a lost step", async () => {
    const attempt = (failures: number) => {
      const inner = memoryWorkflowStore()
      let failed = 0
      const store: WorkflowStore = {
        ...inner,
        recordActivity: (executionId, name, value) =>
          Effect.suspend(() =>
            failed++ < failures ? Effect.fail(new WorkflowStoreFailed({ operation: "record an activity", reason: "disk full" })) : inner.recordActivity(executionId, name, value)
          )
      }
      const probe = makeProbe()
      const body = Job.toLayer(Effect.fnUntraced(function*() {
        return yield* probe.step("a", 5)
      }))
      return Effect.runPromise(Effect.gen(function*() {
        const runner = yield* runnerOf(store, body)
        const exit = yield* Job.execute({ id: "flaky" }).pipe(Effect.provide(runner.context), Effect.exit)
        yield* runner.stop
        return { exit, recorded: (yield* inner.load(yield* executionIdOf("flaky")))?.steps.length }
      }))
    }
    expect(await attempt(2)).toEqual({ exit: Exit.succeed(5), recorded: 1 })
    const broken = await attempt(100)
    expect(Exit.isFailure(broken.exit) && Cause.hasDies(broken.exit.cause)).toBe(true)
    expect(broken.recorded).toBe(0)
  })

  it("a fresh engine on the same store picks up what was in flight: completed activities are read back, the one in flight runs again", async () => {
    const store = memoryWorkflowStore()
    const probe = makeProbe()
    const body = Job.toLayer(Effect.fnUntraced(function*() {
      return (yield* probe.step("a", 1)) + (yield* probe.step("b", 2, true))
    }))
    const value = await Effect.runPromise(Effect.gen(function*() {
      const first = yield* runnerOf(store, body)
      yield* Job.execute({ id: "two" }, { discard: true }).pipe(Effect.provide(first.context))
      while ((probe.runs.get("b") ?? 0) === 0) yield* Effect.sleep("5 millis")
      yield* first.stop
      expect((yield* store.load(yield* executionIdOf("two")))?.status).toBe("running")
      yield* Deferred.succeed(probe.gate("b"), undefined)
      // Nobody asks for it: the runner finishes it on its own once the workflow registers.
      const second = yield* runnerOf(store, body)
      const executionId = yield* executionIdOf("two")
      while ((yield* store.load(executionId))?.status !== "complete") yield* Effect.sleep("5 millis")
      const polled = yield* Job.poll(executionId).pipe(Effect.provide(second.context))
      yield* second.stop
      return Option.getOrUndefined(polled)?._tag === "Complete" ? yield* (Option.getOrThrow(polled) as Workflow.Complete<number, never>).exit : -1
    }))
    expect(value).toBe(3)
    expect([...probe.runs]).toEqual([["a", 1], ["b", 2]])
  })

  it("a durable deferred completed by a process that runs nothing wakes the run in the next runner; a suspended run is not held in memory", async () => {
    const inner = memoryWorkflowStore()
    let loads = 0
    const store: WorkflowStore = { ...inner, load: (id) => Effect.andThen(Effect.sync(() => loads++), inner.load(id)) }
    const Approval = DurableDeferred.make("approval", { success: Schema.Number })
    const probe = makeProbe()
    const body = Job.toLayer(Effect.fnUntraced(function*() {
      const before = yield* probe.step("before", 1)
      const approved = yield* DurableDeferred.await(Approval)
      return before + approved + (yield* probe.step("after", 100))
    }))
    const value = await Effect.runPromise(Effect.gen(function*() {
      const first = yield* runnerOf(store, body)
      const executionId = yield* executionIdOf("three")
      const suspended = yield* Job.execute({ id: "three" }, { discard: true }).pipe(
        Effect.andThen(Effect.gen(function*() {
          while (true) {
            const polled = yield* Job.poll(executionId)
            if (Option.isSome(polled)) return polled.value
            yield* Effect.sleep("5 millis")
          }
        })),
        Effect.provide(first.context)
      )
      expect(suspended._tag).toBe("Suspended")
      expect((yield* store.load(executionId))?.status).toBe("suspended")
      // Let go of: polling it reads the store.
      const before = loads
      expect(Option.getOrUndefined(yield* Job.poll(executionId).pipe(Effect.provide(first.context)))?._tag).toBe("Suspended")
      expect(loads).toBe(before + 1)
      yield* first.stop
      // A client: decides, runs nothing.
      const client = yield* runnerOf(store, Layer.empty, { runner: false })
      const token = DurableDeferred.tokenFromExecutionId(Approval, { workflow: Job, executionId })
      yield* DurableDeferred.succeed(Approval, { token, value: 10 }).pipe(Effect.provide(client.context))
      yield* client.stop
      expect(yield* store.load(executionId)).toMatchObject({ status: "running", wake: 1 })
      const second = yield* runnerOf(store, body)
      const value = yield* Job.execute({ id: "three" }).pipe(Effect.provide(second.context))
      yield* second.stop
      return value
    }))
    expect(value).toBe(111)
    expect([...probe.runs]).toEqual([["before", 1], ["after", 1]])
  })

  it("a run started by a process that does not run its workflow (no layer for it) is recorded, and the next process that runs it finishes it", async () => {
    const store = memoryWorkflowStore()
    const probe = makeProbe()
    const body = Job.toLayer(Effect.fnUntraced(function*() {
      return yield* probe.step("a", 9)
    }))
    const value = await Effect.runPromise(Effect.gen(function*() {
      const without = yield* runnerOf(store, Layer.empty)
      yield* Job.execute({ id: "elsewhere" }, { discard: true }).pipe(Effect.provide(without.context))
      yield* without.stop
      const executionId = yield* executionIdOf("elsewhere")
      expect((yield* store.load(executionId))?.status).toBe("running")
      expect(probe.runs.size).toBe(0)
      const runner = yield* runnerOf(store, body)
      while ((yield* store.load(executionId))?.status !== "complete") yield* Effect.sleep("5 millis")
      const polled = yield* Job.poll(executionId).pipe(Effect.provide(runner.context))
      yield* runner.stop
      return Option.getOrUndefined(polled)
    }))
    expect(value).toMatchObject({ _tag: "Complete", exit: Exit.succeed(9) })
  })

  it("a child completed by a process that does not run its parent: the parent, suspended on it, is finished by the next runner", async () => {
    const store = memoryWorkflowStore()
    const Go = DurableDeferred.make("go", { success: Schema.Number })
    const Child = Workflow.make("Child", { payload: { id: Schema.String }, success: Schema.Number, idempotencyKey: (p) => p.id })
    const Parent = Workflow.make("Parent", { payload: { id: Schema.String }, success: Schema.Number, idempotencyKey: (p) => p.id })
    const probe = makeProbe()
    const child = Child.toLayer(Effect.fnUntraced(function*() {
      return (yield* DurableDeferred.await(Go)) + (yield* probe.step("child", 1))
    }))
    const parent = Parent.toLayer(Effect.fnUntraced(function*({ id }) {
      return (yield* Child.execute({ id })) + (yield* probe.step("parent", 100))
    }))
    const value = await Effect.runPromise(Effect.gen(function*() {
      const parentId = yield* Parent.executionId({ id: "p1" })
      const childId = yield* Child.executionId({ id: "p1" })
      const first = yield* runnerOf(store, Layer.merge(parent, child))
      yield* Parent.execute({ id: "p1" }, { discard: true }).pipe(Effect.provide(first.context))
      while ((yield* store.load(parentId))?.status !== "suspended") yield* Effect.sleep("5 millis")
      yield* first.stop
      // A process that runs the child only (the parent's resume has nothing to run there), as a process
      // killed right after the child's result was written would leave it.
      const second = yield* runnerOf(store, child)
      const token = DurableDeferred.tokenFromExecutionId(Go, { workflow: Child, executionId: childId })
      yield* DurableDeferred.succeed(Go, { token, value: 10 }).pipe(Effect.provide(second.context))
      while ((yield* store.load(childId))?.status !== "complete") yield* Effect.sleep("5 millis")
      yield* second.stop
      expect((yield* store.load(parentId))?.status).toBe("running")
      const third = yield* runnerOf(store, Layer.merge(parent, child))
      while ((yield* store.load(parentId))?.status !== "complete") yield* Effect.sleep("5 millis")
      const polled = yield* Parent.poll(parentId).pipe(Effect.provide(third.context))
      yield* third.stop
      return Option.getOrUndefined(polled)
    }).pipe(Effect.timeout("10 seconds")))
    expect(value).toMatchObject({ _tag: "Complete", exit: Exit.succeed(111) })
    expect([...probe.runs].sort()).toEqual([["child", 1], ["parent", 1]])
  })

  it("a child that completes while its parent runs wakes the parent once: the parent completes in the same process", async () => {
    const store = memoryWorkflowStore()
    const Go = DurableDeferred.make("go", { success: Schema.Number })
    const Child = Workflow.make("Child2", { payload: { id: Schema.String }, success: Schema.Number, idempotencyKey: (p) => p.id })
    const Parent = Workflow.make("Parent2", { payload: { id: Schema.String }, success: Schema.Number, idempotencyKey: (p) => p.id })
    const child = Child.toLayer(Effect.fnUntraced(function*() {
      return yield* DurableDeferred.await(Go)
    }))
    const parent = Parent.toLayer(Effect.fnUntraced(function*({ id }) {
      return (yield* Child.execute({ id })) + 1
    }))
    const value = await Effect.runPromise(Effect.gen(function*() {
      const runner = yield* runnerOf(store, Layer.merge(parent, child))
      const childId = yield* Child.executionId({ id: "q1" })
      const parentId = yield* Parent.executionId({ id: "q1" })
      yield* Parent.execute({ id: "q1" }, { discard: true }).pipe(Effect.provide(runner.context))
      while ((yield* store.load(parentId))?.status !== "suspended") yield* Effect.sleep("5 millis")
      const token = DurableDeferred.tokenFromExecutionId(Go, { workflow: Child, executionId: childId })
      yield* DurableDeferred.succeed(Go, { token, value: 41 }).pipe(Effect.provide(runner.context))
      while ((yield* store.load(parentId))?.status !== "complete") yield* Effect.sleep("5 millis")
      const polled = yield* Parent.poll(parentId).pipe(Effect.provide(runner.context))
      yield* runner.stop
      return Option.getOrUndefined(polled)
    }).pipe(Effect.timeout("10 seconds")))
    expect(value).toMatchObject({ _tag: "Complete", exit: Exit.succeed(42) })
  })

  it("a durable clock keeps its time across a restart: the next runner wakes the run when it was due", async () => {
    const store = memoryWorkflowStore()
    const body = Job.toLayer(Effect.fnUntraced(function*() {
      yield* DurableClock.sleep({ name: "nap", duration: "400 millis", inMemoryThreshold: Duration.zero })
      return 7
    }))
    const started = Date.now()
    const value = await Effect.runPromise(Effect.gen(function*() {
      const first = yield* runnerOf(store, body)
      yield* Job.execute({ id: "four" }, { discard: true }).pipe(Effect.provide(first.context))
      yield* Effect.sleep("100 millis")
      yield* first.stop
      const clocks = yield* store.dueClocks(Number.MAX_SAFE_INTEGER, 100)
      expect(clocks).toHaveLength(1)
      expect(clocks[0]!.wakeAt).toBeGreaterThanOrEqual(started + 400)
      const second = yield* runnerOf(store, body)
      const value = yield* Job.execute({ id: "four" }).pipe(Effect.provide(second.context))
      yield* second.stop
      return value
    }))
    expect(value).toBe(7)
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(400)
    expect(elapsed).toBeLessThan(3000)
    expect(await Effect.runPromise(store.dueClocks(Number.MAX_SAFE_INTEGER, 100))).toEqual([])
  })

  it("one timer for every clock: a clock recorded earlier than the one the timer waits for wakes its run on time", async () => {
    const store = memoryWorkflowStore()
    const Nap = Workflow.make("Nap", { payload: { id: Schema.String, ms: Schema.Number }, success: Schema.Number, idempotencyKey: (p) => p.id })
    const body = Nap.toLayer(Effect.fnUntraced(function*({ ms }) {
      yield* DurableClock.sleep({ name: "nap", duration: Duration.millis(ms), inMemoryThreshold: Duration.zero })
      return ms
    }))
    const started = Date.now()
    const short = await Effect.runPromise(Effect.gen(function*() {
      const runner = yield* runnerOf(store, body)
      yield* Nap.execute({ id: "long", ms: 5_000 }, { discard: true }).pipe(Effect.provide(runner.context))
      yield* Effect.sleep("50 millis")
      const value = yield* Nap.execute({ id: "short", ms: 200 }).pipe(Effect.provide(runner.context))
      const elapsed = Date.now() - started
      yield* runner.stop
      return { value, elapsed }
    }))
    expect(short.value).toBe(200)
    expect(short.elapsed).toBeLessThan(2_000)
  })

  it("a store outage longer than the write retries does not stop the clocks: the timer starts again and fires them after", async () => {
    const inner = memoryWorkflowStore()
    let down = false
    const outage = <A>(effect: Effect.Effect<A, WorkflowStoreFailed>) =>
      Effect.suspend(() => (down ? Effect.fail(new WorkflowStoreFailed({ operation: "read clocks", reason: "the database is unavailable" })) : effect))
    const store: WorkflowStore = { ...inner, dueClocks: (now, limit) => outage(inner.dueClocks(now, limit)), nextClockAt: outage(inner.nextClockAt) }
    const Nap = Workflow.make("Nap", { payload: { id: Schema.String, ms: Schema.Number }, success: Schema.Number, idempotencyKey: (p) => p.id })
    const body = Nap.toLayer(Effect.fnUntraced(function*({ ms }) {
      yield* DurableClock.sleep({ name: "nap", duration: Duration.millis(ms), inMemoryThreshold: Duration.zero })
      return ms
    }))
    const values = await Effect.runPromise(Effect.gen(function*() {
      const runner = yield* runnerOf(store, body)
      const first = yield* Effect.forkChild(Nap.execute({ id: "during", ms: 300 }).pipe(Effect.provide(runner.context)))
      yield* Effect.sleep("50 millis")
      down = true
      yield* Effect.sleep("1 second")
      down = false
      const second = yield* Nap.execute({ id: "after", ms: 100 }).pipe(Effect.provide(runner.context))
      const value = yield* Fiber.join(first)
      yield* runner.stop
      return [value, second]
    }).pipe(Effect.provideService(References.MinimumLogLevel, "None"), Effect.timeout("10 seconds")))
    expect(values).toEqual([300, 100])
  })

  it("a run runs with the services its workflow was registered with, not its caller's", async () => {
    class Greeting extends Context.Service<Greeting, string>()("test/Greeting") {}
    const store = memoryWorkflowStore()
    const seen: Array<string> = []
    const body = Job.toLayer(Effect.fnUntraced(function*() {
      seen.push(yield* Greeting)
      return 0
    })).pipe(Layer.provide(Layer.succeed(Greeting, "registered")))
    await Effect.runPromise(Effect.gen(function*() {
      const runner = yield* runnerOf(store, body as Layer.Layer<never>)
      yield* Job.execute({ id: "five" }).pipe(Effect.provide(runner.context), Effect.provideService(Greeting, "caller"))
      yield* runner.stop
    }))
    expect(seen).toEqual(["registered"])
  })

  it("a deferred completed while the run's suspension is being written: the suspension is not recorded, a restart picks the run up", async () => {
    const inner = memoryWorkflowStore()
    const writing = Deferred.makeUnsafe<void>()
    const release = Deferred.makeUnsafe<void>()
    // The store as the first runner sees it: its suspension write waits for the test.
    const store: WorkflowStore = {
      ...inner,
      suspend: (executionId, wake) =>
        Deferred.succeed(writing, undefined).pipe(Effect.andThen(Deferred.await(release)), Effect.andThen(inner.suspend(executionId, wake)))
    }
    const Go = DurableDeferred.make("go", { success: Schema.Number })
    const body = Job.toLayer(Effect.fnUntraced(function*() {
      return yield* DurableDeferred.await(Go)
    }))
    const exit = await Effect.runPromise(Effect.gen(function*() {
      const first = yield* runnerOf(store, body)
      const executionId = yield* executionIdOf("mid-write")
      yield* Job.execute({ id: "mid-write" }, { discard: true }).pipe(Effect.provide(first.context))
      yield* Deferred.await(writing)
      const token = DurableDeferred.tokenFromExecutionId(Go, { workflow: Job, executionId })
      yield* DurableDeferred.succeed(Go, { token, value: 42 }).pipe(Effect.provide(first.context))
      yield* Deferred.succeed(release, undefined)
      yield* Effect.yieldNow
      yield* first.stop
      expect((yield* inner.load(executionId))?.status).not.toBe("suspended")
      const second = yield* runnerOf(inner, body)
      const value = yield* Job.execute({ id: "mid-write" }).pipe(Effect.provide(second.context), Effect.timeout("5 seconds"), Effect.exit)
      yield* second.stop
      return value
    }))
    expect(exit).toEqual(Exit.succeed(42))
  })

  it("d.run sees a run of this process end or wait at once (RunSettled), not at its next poll: with a clock that never wakes a sleeper it still answers", async () => {
    const real = Effect.runSync(Effect.clockWith(Effect.succeed))
    // Time goes on, but a sleep never ends: only the engine's word can end `result`'s wait.
    const stuck: Clock.Clock = {
      currentTimeMillisUnsafe: () => real.currentTimeMillisUnsafe(),
      currentTimeMillis: Effect.sync(() => real.currentTimeMillisUnsafe()),
      currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe(),
      currentTimeNanos: Effect.sync(() => real.currentTimeNanosUnsafe()),
      monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: Effect.sync(() => real.monotonicTimeNanosUnsafe()),
      sleep: () => Effect.never
    }
    const { bank } = makeBank(scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("paid")]))
    const d = durable(bank)
    const engine = Layer.mergeAll(localWorkflowEngine(memoryWorkflowStore()), ToolIntents.memory, ApprovalInbox.memory, RunJournal.memory)
    const outcome = await Effect.runPromise(Effect.gen(function*() {
      const waiting = yield* d.run("pay bob", { runId: "settled" })
      expect(waiting._tag).toBe("Suspended")
      yield* d.decide("settled", { c1: Decision.approve })
      return yield* d.result("settled")
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(engine))), Effect.provideService(Clock.Clock, stuck), Effect.timeout("10 seconds"), Effect.provideService(Clock.Clock, real)))
    expect(outcome).toEqual({ _tag: "Completed", output: "paid" })
  })

  it("never loses a wake to a suspension: however a completion and the run's end interleave (and a restart between), the run completes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 4 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 3 }),
        async (completeAfterTicks, restart, extraTicks) => {
          const store = memoryWorkflowStore()
          const Go = DurableDeferred.make("go", { success: Schema.Number })
          const probe = makeProbe()
          const body = Job.toLayer(Effect.fnUntraced(function*() {
            yield* probe.step("work", 1, true)
            return yield* DurableDeferred.await(Go)
          }))
          const exit = await Effect.runPromise(Effect.gen(function*() {
            let runner = yield* runnerOf(store, body)
            const executionId = yield* executionIdOf("race")
            yield* Job.execute({ id: "race" }, { discard: true }).pipe(Effect.provide(runner.context))
            while ((probe.runs.get("work") ?? 0) === 0) yield* Effect.yieldNow
            // The activity ends; the deferred completes some ticks later (before, while or after the run suspends).
            yield* Deferred.succeed(probe.gate("work"), undefined)
            for (let i = 0; i < completeAfterTicks; i++) yield* Effect.yieldNow
            const token = DurableDeferred.tokenFromExecutionId(Go, { workflow: Job, executionId })
            yield* DurableDeferred.succeed(Go, { token, value: 42 }).pipe(Effect.provide(runner.context))
            for (let i = 0; i < extraTicks; i++) yield* Effect.yieldNow
            if (restart) {
              yield* runner.stop
              runner = yield* runnerOf(store, body)
            }
            const value = yield* Job.execute({ id: "race" }).pipe(Effect.provide(runner.context), Effect.timeout("5 seconds"), Effect.exit)
            yield* runner.stop
            return value
          }))
          expect(exit).toEqual(Exit.succeed(42))
        }
      ),
      { numRuns }
    )
  }, 120_000)
})
