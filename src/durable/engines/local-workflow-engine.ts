/**
 * A `WorkflowEngine` for one process that owns its store (the embedded engine: one process per data
 * directory). Runs execute in this process exactly as in effect/workflow's in-memory engine
 * (`WorkflowEngine.layerMemory`, whose run, wake and interrupt logic this follows), and what a replay
 * needs is written to a `WorkflowStore` as it happens: the execution and its payload when started,
 * each activity's result when it completes (one write per step), each durable deferred's result, the
 * durable clocks, the suspension and the final result. A process that starts again on the same store
 * picks up, when a workflow registers, every execution of it that was running (its steps are read
 * back, so completed activities are not run again); its clocks wake when due, whichever process
 * recorded them (one timer for all of them, set to the earliest: 10,000 waiting runs with a deadline
 * cost 10,000 rows, not 10,000 sleeping fibers).
 *
 * Why not Effect Cluster's engine (`ClusterWorkflowEngine` with `SingleRunner`), which the embedded
 * engine used before: it routes every activity through its message storage (write the request, read it
 * back through a storage poll, write the reply, mark it processed: four statements and most of 10 ms
 * of CPU a step on PGlite), to serve several runners that an embedded store never has. Here a step is
 * one write. The PostgreSQL runners keep Effect Cluster: they share their shards.
 *
 * Suspended executions are not kept in memory (10,000 waiting runs cost their rows, not the heap): a
 * wake (a deferred's result, a clock, `resume`) reads the execution back. A process made with
 * `runner: false` runs nothing: it records executions and deferred results, which the next runner
 * picks up (a client-only process beside a data directory no runner holds).
 *
 * An execution whose stored rows cannot be read back (not JSON, a recorded result of another shape
 * than its step's, met when the execution is read or while a replay reads its steps back) is not run
 * and not written to: the engine says so in a warning, goes on serving its other executions, and its
 * `poll` dies with the `StoredRowUnreadable` (the engine's only channel there), which `d.poll` and
 * `d.join` turn into the typed `DurableRunUnreadable`. Nothing is overwritten: a row put right lets the
 * execution run at its next wake or the next start.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Workflow from "effect/workflow/Workflow"
import * as WorkflowEngine from "effect/workflow/WorkflowEngine"
import { executionsTable, type StoredExecution, StoredRowUnreadable, stepsTable, type WorkflowStore, type WorkflowStoreFailed } from "./workflow-store.ts"
import { RunSettled } from "../run-settled.ts"
import { DurableRunUnreadable, unreadableReason } from "../run-unreadable.ts"

/** Options of {@link localWorkflowEngine}. */
export interface LocalWorkflowEngineOptions {
  /** When false, the process records executions and deferred results but runs none (default true). */
  readonly runner?: boolean
}

type Execute = (payload: object, executionId: string) => Effect.Effect<unknown, unknown, WorkflowEngine.WorkflowInstance | WorkflowEngine.WorkflowEngine>

type WakeMode = "explicit" | "automatic"

/** One activity's result in a live execution: the whole exit while this process ran it, or read back. */
interface ActivityState {
  exit: Exit.Exit<Workflow.Result<unknown, unknown>> | undefined
  /** Read back from the store and not yet checked against its activity's schemas. */
  unchecked?: boolean
}

/** An execution this process runs (or ran last and has not let go of yet). */
interface ExecutionState {
  readonly workflow: Workflow.Any
  readonly payload: object
  readonly execute: Execute
  readonly parent: string | undefined
  instance: WorkflowEngine.WorkflowInstance["Service"]
  interrupted: boolean
  interruptedUnsafe: boolean
  /** The strongest wake requested while a run was still finishing. */
  resumeRequested: WakeMode | undefined
  fiber: Fiber.Fiber<Workflow.Result<unknown, unknown>> | undefined
  /** Parent of every run's scope (as in `layerMemory`). */
  readonly scope: Scope.Closeable
  readonly activities: Map<string, ActivityState>
  readonly deferreds: Map<string, Exit.Exit<unknown, unknown>>
  /** Deferred results read back from the store and not yet checked against their deferred's schemas. */
  readonly uncheckedDeferreds: Set<string>
  /** Deferred results recorded for the execution (the store's `wake`). */
  wake: number
}

const AnyOrVoid = Schema.Union([Schema.Undefined, Schema.Any])
/** An activity's result as stored (what Effect Cluster's activity replies hold). */
const ActivityResultJson = Schema.toCodecJson(Workflow.Result({ success: AnyOrVoid, error: AnyOrVoid }))
/** A durable deferred's result as stored (its exit is encoded already by the engine's caller). */
const DeferredExitJson = Schema.toCodecJson(Schema.Exit(AnyOrVoid, AnyOrVoid, Schema.Any))
const encodeActivityResult = Schema.encodeSync(ActivityResultJson)
const decodeActivityResult = Schema.decodeUnknownSync(ActivityResultJson)
const encodeDeferredExit = Schema.encodeSync(DeferredExitJson)
const decodeDeferredExit = Schema.decodeUnknownSync(DeferredExitJson)

/** The codecs of a workflow's payload and result, made once per workflow. */
const codecsOf = (() => {
  const cache = new WeakMap<Workflow.Any, {
    readonly encodePayload: (payload: object) => unknown
    readonly decodePayload: (json: unknown) => object
    readonly encodeResult: (result: Workflow.Result<unknown, unknown>) => unknown
    readonly decodeResult: (json: unknown) => Workflow.Result<unknown, unknown>
  }>()
  return (workflow: Workflow.Any) => {
    let codecs = cache.get(workflow)
    if (codecs === undefined) {
      const w = workflow as unknown as Workflow.Workflow<string, Workflow.AnyStructSchema, Schema.Top, Schema.Top>
      const payload = Schema.toCodecJson(w.payloadSchema as unknown as Schema.Codec<object, unknown>)
      const result = Schema.toCodecJson(Workflow.Result({ success: w.successSchema as Schema.Codec<unknown, unknown>, error: w.errorSchema as Schema.Codec<unknown, unknown> }))
      codecs = {
        encodePayload: Schema.encodeSync(payload),
        decodePayload: Schema.decodeUnknownSync(payload),
        encodeResult: Schema.encodeSync(result as Schema.Codec<Workflow.Result<unknown, unknown>, unknown>),
        decodeResult: Schema.decodeUnknownSync(result as Schema.Codec<Workflow.Result<unknown, unknown>, unknown>)
      }
      cache.set(workflow, codecs)
    }
    return codecs
  }
})()

const isUnwakeable = (result: Workflow.Result<unknown, unknown>, mode: WakeMode) =>
  result._tag === "Complete" || (mode === "automatic" && result.failed === true)

/** How many completed executions' results the engine keeps for the poll that follows (`completedLately`). */
const completedKept = 100

/** How long a clock that could not fire (or the clock timer, stopped by a failure) waits before trying again. */
const clockRetry = Duration.seconds(1)

/**
 * A store write, retried a few times (a busy or briefly failing database), then a defect: the engine
 * cannot go on without it. The retry is set up only after a first failure (one write a step).
 */
const durably = <A>(write: Effect.Effect<A, WorkflowStoreFailed | StoredRowUnreadable>): Effect.Effect<A> =>
  Effect.orDie(Effect.catch(write, (error) =>
    // A row that cannot be read would not read better a moment later.
    error._tag === "StoredRowUnreadable"
      ? Effect.fail(error)
      : Effect.retry(Effect.delay(write, Duration.millis(20)), { times: 3, schedule: Schedule.exponential(Duration.millis(20)) })))

/** `decode()`, or the `StoredRowUnreadable` of the row it reads (thrown: caught at the engine's edge, `readBack`). */
const decodeRow = <A>(executionId: string, table: string, row: string, decode: () => A): A => {
  try {
    return decode()
  } catch (error) {
    throw new StoredRowUnreadable({ executionId, table, row, reason: unreadableReason(error) })
  }
}

/** `read()`, its `StoredRowUnreadable` as a typed failure. */
const readBack = <A>(executionId: string, read: () => A): Effect.Effect<A, StoredRowUnreadable> =>
  Effect.try({
    try: read,
    catch: (error) => (error instanceof StoredRowUnreadable ? error : new StoredRowUnreadable({ executionId, table: executionsTable, row: "execution", reason: unreadableReason(error) }))
  })

/**
 * The unreadable row that ended a run of `executionId` (`cause`): the engine's own, or the
 * `DurableRunUnreadable` of a store a step read (a claim's outcome, say).
 */
const unreadableOf = (executionId: string, cause: Cause.Cause<unknown>): StoredRowUnreadable | undefined => {
  for (const reason of cause.reasons) {
    const value = reason._tag === "Die" ? reason.defect : reason._tag === "Fail" ? reason.error : undefined
    if (value instanceof StoredRowUnreadable) return value
    if (value instanceof DurableRunUnreadable) return new StoredRowUnreadable({ executionId, table: value.table, row: value.row, reason: value.reason })
  }
  return undefined
}

/**
 * The payload and recorded results of `stored`, decoded; throws the `StoredRowUnreadable` of the
 * first row that does not decode (what a replay would meet: `poll` checks it too, so a run whose rows
 * cannot be read is said so before any replay).
 */
const decodeStored = (workflow: Workflow.Any, stored: StoredExecution) => {
  const activities = new Map<string, ActivityState>()
  const deferreds = new Map<string, Exit.Exit<unknown, unknown>>()
  const id = stored.executionId
  for (const step of stored.steps) {
    const row = stepRow(step.kind, step.name)
    if (step.kind === "activity") activities.set(step.name, { exit: Exit.succeed(decodeRow(id, stepsTable, row, () => decodeActivityResult(step.value))), unchecked: true })
    else deferreds.set(step.name, decodeRow(id, stepsTable, row, () => decodeDeferredExit(step.value)) as Exit.Exit<unknown, unknown>)
  }
  const payload = decodeRow(id, executionsTable, "payload", () => codecsOf(workflow).decodePayload(stored.payload))
  return { payload, activities, deferreds }
}

/** What an `Exit` of a recorded result is decoded from by effect/workflow (its `toJsonExit`: `undefined` as `null`). */
const toJsonExit = Exit.map((value: unknown) => value ?? null)

/** Why the recorded `exit` does not decode by `schema` (as effect/workflow decodes it next); undefined when it does. */
const decodeStoredExit = (schema: Schema.Top, exit: Exit.Exit<unknown, unknown>): string | undefined => {
  try {
    Schema.decodeUnknownSync(schema as Schema.Codec<unknown, unknown>)(toJsonExit(exit))
    return undefined
  } catch (error) {
    return unreadableReason(error)
  }
}

const activityKey = (name: string, attempt: number) => `${name}/${attempt}`

/** A recorded step as `StoredRowUnreadable` names it: its stored name (`a:<activity>/<attempt>`, `d:<deferred>`). */
const stepRow = (kind: "activity" | "deferred", name: string) => `step ${JSON.stringify(`${kind === "activity" ? "a" : "d"}:${name}`)}`

/**
 * The engine over `store`, for the layer's lifetime.
 *
 * @example
 * ```ts
 * const engine = localWorkflowEngine(memoryWorkflowStore())
 * const runner = myWorkflow.toLayer(body).pipe(Layer.provideMerge(engine))
 * ```
 */
export const localWorkflowEngine = (
  store: WorkflowStore,
  options: LocalWorkflowEngineOptions = {}
): Layer.Layer<WorkflowEngine.WorkflowEngine | RunSettled> =>
  Layer.effectContext(Effect.map(makeLocalWorkflowEngine(store, options), ({ engine, settled }) =>
    Context.make(WorkflowEngine.WorkflowEngine, engine).pipe(Context.add(RunSettled, settled))
  ))

/** The engine over `store`, its fibers in the current scope. */
export const makeLocalWorkflowEngine = (store: WorkflowStore, options: LocalWorkflowEngineOptions = {}) =>
  Effect.gen(function*() {
    const runner = options.runner !== false
    const scope = yield* Effect.scope
    const workflows = new Map<string, {
      readonly workflow: Workflow.Any
      readonly execute: Execute
      readonly scope: Scope.Scope
      /** The services the workflow was registered with: its runs run with these (as Effect Cluster's do), not their caller's. */
      readonly context: Context.Context<never>
    }>()
    const executions = new Map<string, ExecutionState>()
    /** Callers waiting for an execution's completion (`awaitComplete`), kept across its suspensions. */
    const completions = new Map<string, Deferred.Deferred<void>>()
    /** Callers waiting for the next run of an execution to end (`RunSettled`). */
    const settleWaiters = new Map<string, Set<() => void>>()
    /**
     * The results of the executions this process completed last (at most `completedKept`): the poll
     * that follows a completion (`d.run`, `d.result`, told by `RunSettled`) answers without reading the
     * store back. A complete execution's result never changes.
     */
    const completedLately = new Map<string, Workflow.Result<unknown, unknown>>()
    const deferredState = WorkflowEngine.makeDeferredState()
    /** The clock timer's wake-up: completed when a clock earlier than the one it waits for is recorded. */
    let clockSignal = Deferred.makeUnsafe<void>()
    let clockSleepsUntil = Number.POSITIVE_INFINITY

    const completion = (executionId: string) => {
      let done = completions.get(executionId)
      if (done === undefined) completions.set(executionId, (done = Deferred.makeUnsafe<void>()))
      return done
    }

    /**
     * Executions whose stored rows could not be read when this process last tried (`poll` answers
     * with it while the store says they run); forgotten once one is read back whole.
     */
    const unreadable = new Map<string, StoredRowUnreadable>()
    const unreadableFound = (error: StoredRowUnreadable) =>
      Effect.suspend(() => {
        unreadable.set(error.executionId, error)
        return Effect.logWarning(`durable engine: execution ${error.executionId} is not run, its stored state cannot be read (${error.table}, ${error.row}: ${error.reason}); the other executions go on`)
      })

    /**
     * A state for an execution read from the store (a replay reads its recorded results from it).
     * Throws the `StoredRowUnreadable` of a row that does not decode (see `adopt`).
     */
    const stateFrom = (stored: StoredExecution): ExecutionState | undefined => {
      const entry = workflows.get(stored.workflow)
      if (entry === undefined) return undefined
      const { payload, activities, deferreds } = decodeStored(entry.workflow, stored)
      return {
        workflow: entry.workflow,
        payload,
        execute: entry.execute,
        parent: stored.parent,
        instance: WorkflowEngine.WorkflowInstance.initial(entry.workflow, stored.executionId),
        interrupted: stored.interrupted,
        interruptedUnsafe: false,
        resumeRequested: undefined,
        fiber: undefined,
        scope: Scope.makeUnsafe(),
        activities,
        deferreds,
        uncheckedDeferreds: new Set(deferreds.keys()),
        wake: stored.wake
      }
    }

    /**
     * The live state of `stored` (one per execution: another fiber may have made it meanwhile);
     * `StoredRowUnreadable` when a row of it does not decode.
     */
    const adopt = (executionId: string, stored: StoredExecution | undefined): Effect.Effect<ExecutionState | undefined, StoredRowUnreadable> =>
      Effect.suspend(() => {
        const live = executions.get(executionId)
        if (live !== undefined) return Effect.succeed(live)
        if (stored === undefined || stored.status === "complete") return Effect.succeed(undefined)
        return Effect.map(readBack(executionId, () => stateFrom(stored)), (state) => {
          if (state !== undefined) {
            executions.set(executionId, state)
            unreadable.delete(executionId)
          }
          return state
        })
      })

    /** Runs `effect`; a `StoredRowUnreadable` it meets is said in a warning and answered with `orElse`. */
    const unlessUnreadable = <A>(effect: Effect.Effect<A>, orElse: A): Effect.Effect<A> =>
      Effect.catchDefect(effect, (defect) => (defect instanceof StoredRowUnreadable ? Effect.as(unreadableFound(defect), orElse) : Effect.die(defect)))

    /**
     * The live state of `executionId`, read back from the store when this process let go of it; none
     * for one whose rows cannot be read (said in a warning: it is not run).
     */
    const stateOf = (executionId: string): Effect.Effect<ExecutionState | undefined> =>
      Effect.suspend(() => {
        const live = executions.get(executionId)
        if (live !== undefined || !runner) return Effect.succeed(live)
        return unlessUnreadable(durably(Effect.flatMap(store.load(executionId), (stored) => adopt(executionId, stored))), undefined)
      })

    /**
     * What this process records when a run ends, before the run's fiber ends: the result of a
     * completed execution, or the suspension of one no wake came for meanwhile.
     */
    const settle = (executionId: string, state: ExecutionState, runWake: number, result: Workflow.Result<unknown, unknown>) =>
      Effect.suspend(() => {
        // A run that met a row it cannot read records nothing: the execution stays as stored.
        const unreadableRow = result._tag === "Complete" && Exit.isFailure(result.exit) ? unreadableOf(executionId, result.exit.cause) : undefined
        if (unreadableRow !== undefined) {
          return Effect.andThen(unreadableFound(unreadableRow), Effect.sync(() => {
            if (executions.get(executionId) === state) executions.delete(executionId)
          }))
        }
        if (result._tag === "Complete") {
          return durably(store.complete(executionId, codecsOf(state.workflow).encodeResult(result))).pipe(
            Effect.andThen(Effect.sync(() => {
              completedLately.set(executionId, result)
              if (completedLately.size > completedKept) completedLately.delete(completedLately.keys().next().value!)
              if (executions.get(executionId) === state) executions.delete(executionId)
              // The store woke the parent with this write (`complete`); its live state follows, so that
              // a run of it that ends now is not let go of or recorded suspended by a stale wake.
              const parent = state.parent === undefined ? undefined : executions.get(state.parent)
              if (parent !== undefined) parent.wake += 1
            })),
            Effect.andThen(Deferred.succeed(completion(executionId), void 0)),
            Effect.andThen(Effect.sync(() => completions.delete(executionId)))
          )
        }
        return state.resumeRequested !== undefined ? Effect.void : durably(store.suspend(executionId, runWake))
      })

    /**
     * Once a run's fiber ended: a suspended execution no wake came for is let go of (a wake reads it
     * back), and those waiting for the run to settle are told.
     */
    const settled = (executionId: string, state: ExecutionState, runWake: number) => (exit: Exit.Exit<Workflow.Result<unknown, unknown>>) => {
      if (
        Exit.isSuccess(exit) && exit.value._tag === "Suspended" &&
        state.resumeRequested === undefined && state.wake === runWake && executions.get(executionId) === state
      ) {
        executions.delete(executionId)
        state.instance.abandoned = true
        Scope.closeUnsafe(state.scope, Exit.void)
      }
      const waiting = settleWaiters.get(executionId)
      if (waiting === undefined) return
      settleWaiters.delete(executionId)
      for (const wake of waiting) wake()
    }

    /** Calls `wake` once the next run of `executionId` in this process ended; answers a function that stops waiting. */
    const onSettled = (executionId: string, wake: () => void): (() => void) => {
      let waiting = settleWaiters.get(executionId)
      if (waiting === undefined) settleWaiters.set(executionId, (waiting = new Set()))
      waiting.add(wake)
      return () => {
        waiting.delete(wake)
        if (waiting.size === 0 && settleWaiters.get(executionId) === waiting) settleWaiters.delete(executionId)
      }
    }

    const resume = (executionId: string, mode: WakeMode): Effect.Effect<void> =>
      Effect.gen(function*() {
        const state = yield* stateOf(executionId)
        if (state === undefined) return
        const exit = state.fiber?.pollUnsafe()
        if (exit && exit._tag === "Success" && isUnwakeable(exit.value, mode)) {
          return
        } else if (state.fiber && !exit) {
          // Queue wakes until the run finishes cleanup; explicit wakes take priority.
          const requested = state.resumeRequested
          state.resumeRequested = mode === "explicit" ? mode : requested ?? mode
          if (requested === undefined) {
            yield* Fiber.await(state.fiber).pipe(
              Effect.flatMap(() => {
                const mode = state.resumeRequested!
                state.resumeRequested = undefined
                return resume(executionId, mode)
              }),
              Effect.forkIn(scope)
            )
          }
          return
        }
        const entry = workflows.get(state.workflow._tag)!
        // Each run gets a fresh scope, so replays rebuild compensations instead of registering them again.
        const instance = WorkflowEngine.WorkflowInstance.initial(state.workflow, executionId, { scope: Scope.forkUnsafe(state.scope) })
        state.instance = instance
        const runWake = state.wake
        state.fiber = yield* state.execute(state.payload, executionId).pipe(
          Effect.onExit((exit) => {
            // Safe interrupts take effect only when the run would suspend;
            // unsafe interrupts must also survive a replay that completes normally.
            if (
              !state.interrupted ||
              (!state.interruptedUnsafe &&
                !instance.suspended &&
                !instance.abandoned &&
                !(Context.get(instance.workflow.annotations, Workflow.SuspendOnFailure) && Exit.isFailure(exit)))
            ) {
              return Effect.void
            }
            instance.interrupted = true
            instance.suspended = false
            return Effect.withFiber((fiber) => Effect.interruptible(Fiber.interrupt(fiber)))
          }),
          Workflow.intoResult,
          Effect.provideService(WorkflowEngine.WorkflowEngine, engine),
          (effect) => deferredState.trackRun(instance, effect),
          Effect.tap((result) => settle(executionId, state, runWake, result)),
          Effect.tap((result) =>
            !state.parent || result._tag !== "Complete" || (Exit.isFailure(result.exit) && unreadableOf(executionId, result.exit.cause) !== undefined)
              ? Effect.void
              : Effect.forkIn(resume(state.parent, "automatic"), scope)
          ),
          Effect.onExit((exit) => {
            if (Exit.isSuccess(exit) && exit.value._tag === "Suspended") return Effect.void
            return Scope.close(state.scope, Exit.void)
          }),
          Effect.provideContext(entry.context),
          Effect.forkIn(entry.scope)
        )
        state.fiber.addObserver(settled(executionId, state, runWake))
      })

    /** Starts `executionId` in this process if it is stored as running and nobody runs it here yet. */
    const pickUp = (executionId: string) =>
      Effect.suspend(() => (executions.has(executionId) ? Effect.void : resume(executionId, "explicit")))

    const wakeAfter = (executionId: string, name: string) =>
      Effect.andThen(deferredState.deferredDone(executionId, name), resume(executionId, "automatic"))

    const deferredDone = (options: {
      readonly workflowName: string
      readonly executionId: string
      readonly deferredName: string
      readonly exit: Exit.Exit<unknown, unknown>
    }) =>
      Effect.gen(function*() {
        const live = executions.get(options.executionId)
        if (live?.deferreds.has(options.deferredName)) return
        const recorded = yield* durably(store.deferredDone(options.executionId, options.deferredName, encodeDeferredExit(options.exit as never)))
        if (!recorded) return
        const state = executions.get(options.executionId)
        if (state !== undefined) {
          state.deferreds.set(options.deferredName, options.exit)
          state.wake += 1
        }
        if (!runner) return
        const wake = wakeAfter(options.executionId, options.deferredName)
        const instance = yield* Effect.serviceOption(WorkflowEngine.WorkflowInstance)
        // A workflow finalizer cannot wait for its own run's cleanup: the engine's scope owns that wake.
        yield* Option.isSome(instance) && instance.value.executionId === options.executionId ? Effect.asVoid(Effect.forkIn(wake, scope)) : wake
      })

    /**
     * Wakes the executions whose clocks are due, then sleeps until the earliest left (or a new earlier
     * one), and again. A clock that cannot be fired now (its execution's row unreadable, the store
     * failing past `durably`'s retries) is said so and tried again a second later, without holding up
     * the others; and the timer itself starts again after anything that stops it but an interruption,
     * so one failure never leaves every later clock and deadline unfired.
     */
    const clockTimer = Effect.gen(function*() {
      const batch = 100
      while (true) {
        const now = yield* Clock.currentTimeMillis
        const due = yield* durably(store.dueClocks(now, batch))
        let failing = false
        for (const clock of due) {
          const fired = yield* deferredDone({ workflowName: clock.workflow, executionId: clock.executionId, deferredName: clockDeferredName(clock.name), exit: Exit.void }).pipe(
            Effect.andThen(durably(store.clearClock(clock.executionId, clock.name))),
            Effect.as(true),
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause)
                ? Effect.failCause(cause)
                : Effect.as(Effect.logWarning(`durable engine: the clock ${clock.name} of ${clock.executionId} could not fire, trying again in ${Duration.format(clockRetry)}: ${Cause.pretty(cause)}`), false)
            )
          )
          if (!fired) failing = true
        }
        if (failing) {
          yield* Effect.sleep(clockRetry)
          continue
        }
        if (due.length === batch) continue
        const signal = (clockSignal = Deferred.makeUnsafe<void>())
        const next = yield* durably(store.nextClockAt)
        clockSleepsUntil = next ?? Number.POSITIVE_INFINITY
        const left = next === undefined ? undefined : Math.max(0, next - (yield* Clock.currentTimeMillis))
        yield* left === undefined ? Deferred.await(signal) : Effect.raceFirst(Deferred.await(signal), Effect.sleep(Duration.millis(left)))
        clockSleepsUntil = Number.POSITIVE_INFINITY
      }
    })
    const supervisedClockTimer = clockTimer.pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logWarning(`durable engine: the clock timer stopped, starting again in ${Duration.format(clockRetry)}: ${Cause.pretty(cause)}`).pipe(Effect.andThen(Effect.sleep(clockRetry)))
      ),
      Effect.forever
    )
    if (runner) yield* Effect.forkIn(supervisedClockTimer, scope)

    const engine: WorkflowEngine.WorkflowEngine["Service"] = WorkflowEngine.makeUnsafe({
      register: Effect.fnUntraced(function*(workflow, execute) {
        workflows.set(workflow._tag, { workflow, execute, scope: yield* Effect.scope, context: yield* Effect.context<never>() })
        if (!runner) return
        // What a process that stopped left in flight (its clocks wake on the engine's clock timer).
        for (const executionId of yield* durably(store.running(workflow._tag))) yield* Effect.forkIn(pickUp(executionId), scope)
      }),
      execute: Effect.fnUntraced(function*(workflow, options) {
        let state = executions.get(options.executionId)
        if (state === undefined) {
          // A process that does not run this workflow (client-only, or without its layer) records the
          // execution, which the next process that runs the workflow picks up.
          const runsIt = runner && workflows.has(workflow._tag)
          // An execution there already whose rows cannot be read: started (it exists), not run; a
          // caller waiting for its result gets the `StoredRowUnreadable`.
          const unreadableStart = (error: StoredRowUnreadable) =>
            Effect.andThen(unreadableFound(error), options.discard ? Effect.succeed(undefined) : Effect.die(error))
          type Created = { readonly created: boolean; readonly execution: StoredExecution; readonly result: Workflow.Result<unknown, unknown> | undefined }
          const read: Effect.Effect<Created, WorkflowStoreFailed | StoredRowUnreadable> = Effect.flatMap(store.create({
            executionId: options.executionId,
            workflow: workflow._tag,
            payload: codecsOf(workflow).encodePayload(options.payload),
            parent: options.detached ? undefined : options.parent?.executionId
          }), ({ created, execution }) =>
            readBack(options.executionId, () => ({
              created,
              execution,
              result: execution.status === "complete"
                ? decodeRow(options.executionId, executionsTable, "result", () => codecsOf(workflow).decodeResult(execution.result))
                : undefined
            })))
          const created: Created | undefined = yield* durably(read).pipe(
            Effect.catchDefect((defect) => (defect instanceof StoredRowUnreadable ? unreadableStart(defect) : Effect.die(defect)))
          )
          if (created === undefined) return undefined as any
          const { execution } = created
          if (execution.status === "complete") return (options.discard ? undefined : created.result) as any
          if (!runsIt) return (options.discard ? undefined : new Workflow.Suspended({})) as any
          if (created.created || execution.status === "running") {
            // The execution as just read: no second read to start it.
            const adopted = yield* adopt(options.executionId, execution).pipe(Effect.catch((error) => Effect.as(unreadableStart(error), "unreadable" as const)))
            if (adopted === "unreadable") return undefined as any
            if (adopted?.fiber === undefined) yield* resume(options.executionId, "explicit")
          }
          state = executions.get(options.executionId)
          if (state === undefined) return (options.discard ? undefined : new Workflow.Suspended({})) as any
        }
        if (options.discard) return
        // Capture together so a wake that swaps in a replay cannot desync them.
        const instance = state.instance
        const exit = yield* Fiber.await(state.fiber!)
        if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) && instance.suspended) {
          // A completion preempted the run; the caller retries into the replay.
          return new Workflow.Suspended({}) as any
        }
        return (yield* exit) as any
      }),
      awaitComplete: (_workflow, executionId) => Effect.suspend(() => Deferred.await(completion(executionId))),
      interrupt: Effect.fnUntraced(function*(_workflow, executionId) {
        yield* durably(store.interrupt(executionId))
        const state = yield* stateOf(executionId)
        if (state === undefined) return
        state.interrupted = true
        yield* resume(executionId, "explicit")
      }),
      interruptUnsafe: Effect.fnUntraced(function*(_workflow, executionId) {
        yield* durably(store.interrupt(executionId))
        const state = yield* stateOf(executionId)
        if (state === undefined) return
        state.interrupted = true
        state.interruptedUnsafe = true
        if (state.fiber) yield* Fiber.interrupt(state.fiber)
        // Replay after hard interruption to record a terminal workflow result.
        yield* resume(executionId, "explicit")
      }),
      resume: (_workflow, executionId) => (runner ? resume(executionId, "explicit") : Effect.void),
      activityExecute: Effect.fnUntraced(function*(activity, attempt) {
        const instance = yield* WorkflowEngine.WorkflowInstance
        const state = executions.get(instance.executionId)
        if (state === undefined) return yield* Effect.die(new Error(`internal: activity "${activity.name}" of an execution this engine does not run`))
        const key = activityKey(activity.name, attempt)
        let entry = state.activities.get(key)
        if (entry?.unchecked === true) {
          // Read back from the store: it must decode as this activity's result (effect/workflow decodes
          // it next, and would end the run with a defect of its schema).
          const exit = entry.exit
          if (exit !== undefined && exit._tag === "Success" && exit.value._tag === "Complete") {
            const recorded = exit.value.exit
            const checked = decodeStoredExit((activity as unknown as { readonly exitSchemaPartial: Schema.Top }).exitSchemaPartial, recorded)
            if (checked !== undefined) {
              return yield* Effect.die(new StoredRowUnreadable({ executionId: instance.executionId, table: stepsTable, row: stepRow("activity", key), reason: checked }))
            }
          }
          entry.unchecked = false
        }
        if (entry) {
          const exit = entry.exit
          if (exit && exit._tag === "Success" && exit.value._tag === "Suspended") {
            entry.exit = undefined
          } else if (exit) {
            return yield* exit
          }
        } else {
          entry = { exit: undefined }
          state.activities.set(key, entry)
        }
        // A pending interrupt replays only to rebuild compensations, so it must not run new activities.
        if (state.interrupted && !instance.interrupted) {
          return new Workflow.Suspended({})
        }
        const activityInstance = WorkflowEngine.WorkflowInstance.initial(instance.workflow, instance.executionId)
        activityInstance.interrupted = instance.interrupted
        const recorded = entry
        return yield* activity.executeEncoded.pipe(
          Workflow.intoResult,
          Effect.provideService(WorkflowEngine.WorkflowInstance, activityInstance),
          Effect.onExit((exit) => {
            // A step that met a stored row it cannot read (a claim's outcome) is not its result: nothing is recorded.
            const unreadableRow = Exit.isSuccess(exit) && exit.value._tag === "Complete" && Exit.isFailure(exit.value.exit)
              ? unreadableOf(instance.executionId, exit.value.exit.cause)
              : undefined
            // A preempted activity must run again on the next replay.
            recorded.exit = (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) || unreadableRow !== undefined ? undefined : exit
            // A completed activity is written before the workflow goes on: a replay reads it back.
            return Exit.isSuccess(exit) && exit.value._tag === "Complete" && unreadableRow === undefined
              ? durably(store.recordActivity(instance.executionId, key, encodeActivityResult(exit.value)))
              : Effect.void
          })
        )
      }),
      poll: (workflow, executionId) =>
        Effect.suspend(() => {
          const state = executions.get(executionId)
          const exit = state?.fiber?.pollUnsafe()
          if (state !== undefined) {
            if (!exit) return Effect.succeedNone
            return exit._tag === "Success" ? Effect.succeedSome(exit.value) : Effect.die(exit.cause)
          }
          const completed = completedLately.get(executionId)
          if (completed !== undefined) return Effect.succeedSome(completed)
          // A row that cannot be read is the poll's defect, `StoredRowUnreadable` (the engine's interface
          // has no error channel here): `d.poll` and `d.join` answer it as `DurableRunUnreadable`.
          return durably(Effect.flatMap(store.load(executionId), (stored) =>
            readBack(executionId, () => {
              if (stored !== undefined && stored.status === "complete") {
                return Option.some(decodeRow(executionId, executionsTable, "result", () => codecsOf(workflow).decodeResult(stored.result)))
              }
              // Stored as running or waiting, but a replay here could not read it.
              const known = unreadable.get(executionId)
              if (known !== undefined) throw known
              if (stored === undefined) return Option.none()
              // What a replay would read back must decode.
              decodeStored(workflow, stored)
              if (stored.status === "running") return Option.none()
              return Option.some(new Workflow.Suspended({}))
            })
          ))
        }),
      deferredResult: Effect.fnUntraced(function*(deferred) {
        const instance = yield* WorkflowEngine.WorkflowInstance
        const state = executions.get(instance.executionId)
        const exit = state?.deferreds.get(deferred.name)
        if (state !== undefined && exit !== undefined && state.uncheckedDeferreds.delete(deferred.name)) {
          // Read back from the store: it must decode as this deferred's result (see `activityExecute`).
          const checked = decodeStoredExit((deferred as unknown as { readonly exitSchema: Schema.Top }).exitSchema, exit)
          if (checked !== undefined) {
            state.uncheckedDeferreds.add(deferred.name)
            return yield* Effect.die(new StoredRowUnreadable({ executionId: instance.executionId, table: stepsTable, row: stepRow("deferred", deferred.name), reason: checked }))
          }
        }
        return Option.fromNullishOr(exit)
      }),
      deferredDone,
      scheduleClock: (workflow, options) =>
        Effect.gen(function*() {
          const wakeAt = (yield* Clock.currentTimeMillis) + Duration.toMillis(options.clock.duration)
          yield* durably(store.scheduleClock({ executionId: options.executionId, workflow: workflow._tag, name: options.clock.name, wakeAt }))
          // Earlier than what the timer waits for: it looks again.
          if (runner && wakeAt < clockSleepsUntil) yield* Deferred.succeed(clockSignal, void 0)
        })
    })

    return { engine, settled: RunSettled.of({ onSettled }) }
  })

/** The deferred a durable clock completes (`DurableClock.make`: `DurableClock/<name>`). */
const clockDeferredName = (clockName: string) => `DurableClock/${clockName}`
