/**
 * The calls a durable run waits for, readable from any process: when a run suspends for approval it
 * writes its snapshot here (once, as an activity), so `poll` can show the pending calls and `decide`
 * can check decisions against them (`DecisionsInvalid`) before it completes the run's durable
 * deferred. The run closes the wait when it took the decisions. Cancellations of runs (`d.cancel`)
 * are kept here too: a decision about the whole run, read by its steps from any process.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { cancellationsInMemory } from "./cancellations-in-memory.ts"
import type * as Schema from "effect/Schema"
import type { DurableRunUnreadable } from "./run-unreadable.ts"

/** One wait of a run for decisions. */
export interface ApprovalWait {
  readonly runId: string
  /** 1 for the run's first wait, then 2, … */
  readonly wait: number
  /** The workflow execution the decisions go to. */
  readonly executionId: string
  /** The run's snapshot at the wait (`RunSnapshotSchema`'s JSON): what is pending, and with which arguments. */
  readonly snapshot: Schema.Json
}

/**
 * The inbox failed (the database is down).
 *
 * @example
 * ```ts
 * Effect.catchTag("ApprovalInboxFailed", (e) => Effect.logError(e.reason))
 * ```
 */
export class ApprovalInboxFailed extends Data.TaggedError("ApprovalInboxFailed")<{
  readonly operation: "open" | "close" | "read" | "cancel"
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `The approval inbox could not ${this.operation}: ${this.reason}`
  }
}

/**
 * Where durable runs leave the calls they wait for. Every process that runs, polls or decides uses
 * the same one (the engine's database).
 *
 * @example
 * ```ts
 * const waiting = yield* (yield* ApprovalInbox).current("run_1") // Option<ApprovalWait>
 * ```
 */
export class ApprovalInbox extends Context.Service<ApprovalInbox, {
  /** Records `wait` as open (again: writing the same wait twice keeps one). */
  readonly open: (wait: ApprovalWait) => Effect.Effect<void, ApprovalInboxFailed>
  /** Closes the wait: its decisions were taken. */
  readonly close: (runId: string, wait: number) => Effect.Effect<void, ApprovalInboxFailed>
  /** The open wait of run `runId`, if it waits (`DurableRunUnreadable` when its row is not JSON). */
  readonly current: (runId: string) => Effect.Effect<Option.Option<ApprovalWait>, ApprovalInboxFailed | DurableRunUnreadable>
  /** Records that run `runId` is cancelled, with `reason` (the first reason stays). */
  readonly cancel: (runId: string, reason: string) => Effect.Effect<void, ApprovalInboxFailed>
  /** Why run `runId` was cancelled, if it was. */
  readonly cancelled: (runId: string) => Effect.Effect<Option.Option<string>, ApprovalInboxFailed>
  /**
   * Calls `listener` with the reason when run `runId` is cancelled (from now on); answers a function
   * that stops listening. For an inbox that sees every cancellation itself (the embedded engine's, one
   * process per store). Without it, a running step asks `cancelled` every half second.
   */
  readonly onCancelled?: ((runId: string, listener: (reason: string) => void) => () => void) | undefined
  /** Records that run `runId` of `workflow` was started (again: kept once). */
  readonly register: (workflow: string, runId: string) => Effect.Effect<void, ApprovalInboxFailed>
  /** The runs of `workflow` started so far, oldest first (at most `limit`). */
  readonly runs: (workflow: string, limit: number) => Effect.Effect<ReadonlyArray<string>, ApprovalInboxFailed>
}>()("effect-agent-dsl/durable/ApprovalInbox") {
  /**
   * Waits in this process's memory: for tests and the in-memory engine.
   *
   * @example
   * ```ts
   * Effect.provide(program, ApprovalInbox.memory)
   * ```
   */
  static readonly memory: Layer.Layer<ApprovalInbox> = Layer.sync(ApprovalInbox, () => cancellationsInMemory(memoryInbox()))
}

/** The inbox in this process's memory (its cancellations told at once by `cancellationsInMemory`). */
const memoryInbox = (): ApprovalInbox["Service"] => {
  // Waits by run (a run's waits by number), cancellations by run, runs in order by workflow.
  const waits = new Map<string, Map<number, ApprovalWait & { open: boolean }>>()
  const cancellations = new Map<string, string>()
  const started = new Map<string, Set<string>>()
  return ApprovalInbox.of({
    open: (wait) =>
      Effect.sync(() => {
        let ofRun = waits.get(wait.runId)
        if (ofRun === undefined) waits.set(wait.runId, (ofRun = new Map()))
        if (!ofRun.has(wait.wait)) ofRun.set(wait.wait, { ...wait, open: true })
      }),
    close: (runId, wait) =>
      Effect.sync(() => {
        const found = waits.get(runId)?.get(wait)
        if (found !== undefined) found.open = false
      }),
    current: (runId) =>
      Effect.sync(() => {
        let latest: ApprovalWait | undefined
        for (const { open, ...wait } of waits.get(runId)?.values() ?? []) {
          if (open && (latest === undefined || wait.wait > latest.wait)) latest = wait
        }
        return Option.fromNullishOr(latest)
      }),
    cancel: (runId, reason) =>
      Effect.sync(() => {
        if (!cancellations.has(runId)) cancellations.set(runId, reason)
      }),
    cancelled: (runId) => Effect.sync(() => Option.fromNullishOr(cancellations.get(runId))),
    register: (workflow, runId) =>
      Effect.sync(() => {
        let runs = started.get(workflow)
        if (runs === undefined) started.set(workflow, (runs = new Set()))
        runs.add(runId)
      }),
    runs: (workflow, limit) => Effect.sync(() => [...(started.get(workflow) ?? [])].slice(0, Math.max(0, limit)))
  })
}
