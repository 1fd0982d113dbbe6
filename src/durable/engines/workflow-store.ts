/**
 * What the local workflow engine (`local-workflow-engine.ts`) keeps of its executions: each execution's
 * payload and where it stands (running, suspended, complete with its result), the recorded result of
 * every activity and durable deferred it met, and its durable clocks. An execution's `wake` counts the
 * deferred results recorded for it: a suspension is recorded only when no result came since the run
 * that suspended started (`suspend(executionId, wake)`), so a wake-up is never lost to a suspension
 * recorded after it, whatever order the two happen in. Everything is JSON.
 *
 * `pgliteWorkflowStore` (`pglite-workflow-store.ts`) keeps it in the embedded engine's PGlite files;
 * `memoryWorkflowStore` in this process (tests of the engine's restarts without a database).
 *
 * A row that cannot be read back (not JSON, an unknown status, a step of neither kind) fails its read
 * with `StoredRowUnreadable`, never a defect of the parser: the engine says which execution cannot be
 * run and goes on with the others, and `d.join`/`d.poll` of that run fail with `DurableRunUnreadable`.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

/** Where an execution stands. */
export type ExecutionStatus = "running" | "suspended" | "complete"

/** A recorded result: an activity's (`Workflow.Result`, encoded) or a durable deferred's (`Exit`, encoded). */
export interface StoredStep {
  readonly kind: "activity" | "deferred"
  readonly name: string
  readonly value: unknown
}

/** An execution as stored, with its recorded results. */
export interface StoredExecution {
  readonly executionId: string
  readonly workflow: string
  /** The payload, encoded by the workflow's payload schema (JSON). */
  readonly payload: unknown
  readonly parent: string | undefined
  readonly status: ExecutionStatus
  /** How many deferred results were recorded for it. */
  readonly wake: number
  readonly interrupted: boolean
  /** The workflow's result (`Workflow.Complete`, encoded) once complete. */
  readonly result: unknown
  readonly steps: ReadonlyArray<StoredStep>
}

/**
 * The store failed (the database is down or full). The engine retries, then ends what it was doing
 * with a defect.
 *
 * @example
 * ```ts
 * Effect.catchTag("WorkflowStoreFailed", (e) => Effect.logError(e.message))
 * ```
 */
export class WorkflowStoreFailed extends Data.TaggedError("WorkflowStoreFailed")<{
  readonly operation: string
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `The workflow store could not ${this.operation}: ${this.reason}`
  }
}

/** The embedded store's table of executions (named in `StoredRowUnreadable`). */
export const executionsTable = "agent_workflow_executions"
/** The embedded store's table of recorded steps. */
export const stepsTable = "agent_workflow_steps"

/**
 * A stored row of execution `executionId` cannot be read: `row` of `table` is `reason` (text that is
 * not JSON, JSON of another shape). Not retried (it would fail again); the engine carries it as the
 * defect of the run's `poll` (its only channel there), which `d.poll`/`d.join` turn into the typed
 * `DurableRunUnreadable`.
 *
 * @example
 * ```ts
 * Effect.catchTag("StoredRowUnreadable", (e) => Effect.logWarning(e.message))
 * ```
 */
export class StoredRowUnreadable extends Data.TaggedError("StoredRowUnreadable")<{
  readonly executionId: string
  readonly table: string
  readonly row: string
  readonly reason: string
}> {
  override get message(): string {
    return `The stored execution ${this.executionId} cannot be read: ${this.table}, ${this.row}: ${this.reason}`
  }
}

/** The engine's store. Every write is atomic; `create` and the deferred results keep the first writer's. */
export interface WorkflowStore {
  /**
   * Records a new execution (running); an existing one is kept as it is. Answers it as stored, and
   * whether it is new (`StoredRowUnreadable` when an existing one cannot be read back).
   */
  readonly create: (execution: {
    readonly executionId: string
    readonly workflow: string
    readonly payload: unknown
    readonly parent: string | undefined
  }) => Effect.Effect<{ readonly created: boolean; readonly execution: StoredExecution }, WorkflowStoreFailed | StoredRowUnreadable>
  /** The execution with its recorded results, if it exists (`StoredRowUnreadable` when a row of it cannot be read). */
  readonly load: (executionId: string) => Effect.Effect<StoredExecution | undefined, WorkflowStoreFailed | StoredRowUnreadable>
  /** Records an activity's result (a result recorded already stays). */
  readonly recordActivity: (executionId: string, name: string, value: unknown) => Effect.Effect<void, WorkflowStoreFailed>
  /** Marks the execution suspended, unless a deferred result was recorded since `wake`. */
  readonly suspend: (executionId: string, wake: number) => Effect.Effect<void, WorkflowStoreFailed>
  /**
   * Marks the execution complete with its result; its clocks are dropped. Its parent, when it has one
   * that is not complete, is woken in the same write (running, `wake` + 1): a child's result is what a
   * parent suspended on it waits for, and a process stopped before it resumed the parent leaves it to
   * the next one, which picks up running executions.
   */
  readonly complete: (executionId: string, result: unknown) => Effect.Effect<void, WorkflowStoreFailed>
  /** Marks the execution interrupted (and running, so a runner picks it up to finish it). */
  readonly interrupt: (executionId: string) => Effect.Effect<void, WorkflowStoreFailed>
  /**
   * Records a deferred's result unless one is there (the first wins) and wakes the execution (running,
   * `wake` + 1). Answers whether this result was recorded.
   */
  readonly deferredDone: (executionId: string, name: string, value: unknown) => Effect.Effect<boolean, WorkflowStoreFailed>
  /** Records a durable clock (a clock recorded already keeps its time). */
  readonly scheduleClock: (clock: StoredClock) => Effect.Effect<void, WorkflowStoreFailed>
  readonly clearClock: (executionId: string, name: string) => Effect.Effect<void, WorkflowStoreFailed>
  /** The executions of `workflow` marked running (in flight when a process stopped, or woken while none ran them). */
  readonly running: (workflow: string) => Effect.Effect<ReadonlyArray<string>, WorkflowStoreFailed>
  /** Clocks due at `now` (epoch ms), earliest first, at most `limit`. */
  readonly dueClocks: (now: number, limit: number) => Effect.Effect<ReadonlyArray<StoredClock>, WorkflowStoreFailed>
  /** When the earliest clock is due, if there is one. */
  readonly nextClockAt: Effect.Effect<number | undefined, WorkflowStoreFailed>
}

/** A durable clock: when execution `executionId`'s clock `name` wakes it (epoch milliseconds). */
export interface StoredClock {
  readonly executionId: string
  readonly workflow: string
  readonly name: string
  readonly wakeAt: number
}

/**
 * A store in this process's memory: nothing survives the process, but two engines made one after the
 * other over the same store see what the first recorded, as two processes over the same files would.
 *
 * @example
 * ```ts
 * const store = memoryWorkflowStore()
 * const engine = localWorkflowEngine(store)
 * ```
 */
export const memoryWorkflowStore = (): WorkflowStore => {
  type Row = Omit<StoredExecution, "steps"> & { readonly steps: Map<string, StoredStep> }
  const executions = new Map<string, Row>()
  const clocks = new Map<string, StoredClock>()
  const stored = (row: Row): StoredExecution => ({ ...row, steps: [...row.steps.values()] })
  const update = (executionId: string, patch: Partial<Row>) => {
    const row = executions.get(executionId)
    if (row !== undefined) executions.set(executionId, { ...row, ...patch })
  }
  const clockKey = (executionId: string, name: string) => `${executionId}\u0000${name}`
  return {
    create: (execution) =>
      Effect.sync(() => {
        const found = executions.get(execution.executionId)
        if (found !== undefined) return { created: false, execution: stored(found) }
        const row: Row = { ...execution, status: "running", wake: 0, interrupted: false, result: undefined, steps: new Map() }
        executions.set(execution.executionId, row)
        return { created: true, execution: stored(row) }
      }),
    load: (executionId) =>
      Effect.sync(() => {
        const row = executions.get(executionId)
        return row === undefined ? undefined : stored(row)
      }),
    recordActivity: (executionId, name, value) =>
      Effect.sync(() => {
        const steps = executions.get(executionId)?.steps
        if (steps !== undefined && !steps.has(`a:${name}`)) steps.set(`a:${name}`, { kind: "activity", name, value })
      }),
    suspend: (executionId, wake) =>
      Effect.sync(() => {
        const row = executions.get(executionId)
        if (row !== undefined && row.wake === wake && row.status !== "complete") update(executionId, { status: "suspended" })
      }),
    complete: (executionId, result) =>
      Effect.sync(() => {
        update(executionId, { status: "complete", result })
        for (const [key, clock] of clocks) if (clock.executionId === executionId) clocks.delete(key)
        const parent = executions.get(executionId)?.parent
        const parentRow = parent === undefined ? undefined : executions.get(parent)
        if (parent !== undefined && parentRow !== undefined && parentRow.status !== "complete") update(parent, { wake: parentRow.wake + 1, status: "running" })
      }),
    interrupt: (executionId) =>
      Effect.sync(() => {
        const row = executions.get(executionId)
        if (row !== undefined && row.status !== "complete") update(executionId, { interrupted: true, status: "running" })
      }),
    deferredDone: (executionId, name, value) =>
      Effect.sync(() => {
        const row = executions.get(executionId)
        if (row === undefined || row.steps.has(`d:${name}`)) return false
        row.steps.set(`d:${name}`, { kind: "deferred", name, value })
        update(executionId, { wake: row.wake + 1, ...(row.status === "complete" ? {} : { status: "running" as const }) })
        return true
      }),
    scheduleClock: (clock) =>
      Effect.sync(() => {
        const key = clockKey(clock.executionId, clock.name)
        if (!clocks.has(key)) clocks.set(key, clock)
      }),
    clearClock: (executionId, name) => Effect.sync(() => void clocks.delete(clockKey(executionId, name))),
    running: (workflow) =>
      Effect.sync(() => [...executions.values()].filter((e) => e.workflow === workflow && e.status === "running").map((e) => e.executionId)),
    dueClocks: (now, limit) =>
      Effect.sync(() =>
        [...clocks.values()].filter((c) => c.wakeAt <= now).sort((a, b) => a.wakeAt - b.wakeAt || a.executionId.localeCompare(b.executionId) || a.name.localeCompare(b.name)).slice(0, limit)
      ),
    nextClockAt: Effect.sync(() => {
      let next: number | undefined
      for (const c of clocks.values()) if (next === undefined || c.wakeAt < next) next = c.wakeAt
      return next
    })
  }
}
