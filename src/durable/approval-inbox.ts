/**
 * The calls a durable run waits for, readable from any process: when a run suspends for approval it
 * writes its snapshot here (once, as an activity), so `poll` can show the pending calls and `decide`
 * can check decisions against them (`DecisionsInvalid`) before it completes the run's durable
 * deferred. A wait is the one place where deciding is arbitrated: `decide` takes it (records its
 * decisions and closes it, only while it is open: one taker wins) before it hands them to the run, a
 * cancellation and the run's end close it, so a decision given at the same moment as another, or
 * after the run ended, is refused rather than lost. The run closes the wait when it took the decisions.
 * Cancellations of runs (`d.cancel`) are kept here too: a decision about the whole run, read by its
 * steps from any process. So is the run list, which also says which workflow (durable agent) holds a
 * run id: one run per id on an engine, whatever its agent (`register`).
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
  readonly operation: "open" | "close" | "read" | "cancel" | "decide"
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
  /** Closes the wait: the run took its decisions (what `take` recorded is dropped). */
  readonly close: (runId: string, wait: number) => Effect.Effect<void, ApprovalInboxFailed>
  /** The open wait of run `runId`, if it waits (`DurableRunUnreadable` when its row is not JSON). */
  readonly current: (runId: string) => Effect.Effect<Option.Option<ApprovalWait>, ApprovalInboxFailed | DurableRunUnreadable>
  /**
   * Records `decisions` for wait `wait` of run `runId` and closes it, in one step, only if it is open:
   * `true` when this call did (of two deciders at once, one gets `true`), `false` when the wait was
   * decided, cancelled or ended before. The decisions stay until the run took them (`close`).
   */
  readonly take: (runId: string, wait: number, decisions: Schema.Json) => Effect.Effect<boolean, ApprovalInboxFailed>
  /**
   * The latest wait of run `runId` whose decisions were taken but not yet taken by the run (its
   * decider stopped before handing them over): `decide` hands them over again.
   */
  readonly undelivered: (runId: string) => Effect.Effect<
    Option.Option<{ readonly wait: number; readonly executionId: string; readonly decisions: Schema.Json }>,
    ApprovalInboxFailed | DurableRunUnreadable
  >
  /**
   * The runs of `workflow` with decisions taken and not yet taken by the run (see `undelivered`): a
   * runner hands them over as it starts.
   */
  readonly undeliveredRuns: (workflow: string) => Effect.Effect<ReadonlyArray<string>, ApprovalInboxFailed>
  /**
   * Closes every wait of run `runId` that is open or holds decisions the run has not taken (it was
   * cancelled, or it ended): answers those, so that a cancellation can wake the run.
   */
  readonly closeAll: (runId: string) => Effect.Effect<ReadonlyArray<{ readonly wait: number; readonly executionId: string }>, ApprovalInboxFailed>
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
  /**
   * Records that run `runId` of `workflow` was started (again: kept once), unless the id is another
   * workflow's: answers the workflow that holds `runId`, `workflow` itself when it was free. Atomic: of
   * two workflows registering one id at once, one holds it (a run id names one run per engine).
   */
  readonly register: (workflow: string, runId: string) => Effect.Effect<string, ApprovalInboxFailed>
  /** The workflow that holds run id `runId`, if one registered it. */
  readonly owner: (runId: string) => Effect.Effect<Option.Option<string>, ApprovalInboxFailed>
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
  // Waits by run (a run's waits by number), cancellations by run, runs in order by workflow, and the
  // workflow of each run id.
  const waits = new Map<string, Map<number, ApprovalWait & { open: boolean; decisions?: Schema.Json | undefined }>>()
  const cancellations = new Map<string, string>()
  const started = new Map<string, Set<string>>()
  const owners = new Map<string, string>()
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
        if (found !== undefined) {
          found.open = false
          found.decisions = undefined
        }
      }),
    current: (runId) =>
      Effect.sync(() => {
        let latest: ApprovalWait | undefined
        for (const { open, decisions: _, ...wait } of waits.get(runId)?.values() ?? []) {
          if (open && (latest === undefined || wait.wait > latest.wait)) latest = wait
        }
        return Option.fromNullishOr(latest)
      }),
    take: (runId, wait, decisions) =>
      Effect.sync(() => {
        const found = waits.get(runId)?.get(wait)
        if (found === undefined || !found.open) return false
        found.open = false
        found.decisions = decisions
        return true
      }),
    undelivered: (runId) =>
      Effect.sync(() => {
        let latest: { readonly wait: number; readonly executionId: string; readonly decisions: Schema.Json } | undefined
        for (const w of waits.get(runId)?.values() ?? []) {
          if (w.decisions !== undefined && (latest === undefined || w.wait > latest.wait)) latest = { wait: w.wait, executionId: w.executionId, decisions: w.decisions }
        }
        return Option.fromNullishOr(latest)
      }),
    undeliveredRuns: (workflow) =>
      Effect.sync(() => [...(started.get(workflow) ?? [])].filter((runId) => [...(waits.get(runId)?.values() ?? [])].some((w) => w.decisions !== undefined))),
    closeAll: (runId) =>
      Effect.sync(() => {
        const closed: Array<{ readonly wait: number; readonly executionId: string }> = []
        for (const w of waits.get(runId)?.values() ?? []) {
          if (!w.open && w.decisions === undefined) continue
          w.open = false
          w.decisions = undefined
          closed.push({ wait: w.wait, executionId: w.executionId })
        }
        return closed
      }),
    cancel: (runId, reason) =>
      Effect.sync(() => {
        if (!cancellations.has(runId)) cancellations.set(runId, reason)
      }),
    cancelled: (runId) => Effect.sync(() => Option.fromNullishOr(cancellations.get(runId))),
    register: (workflow, runId) =>
      Effect.sync(() => {
        const holder = owners.get(runId)
        if (holder !== undefined) return holder
        owners.set(runId, workflow)
        let runs = started.get(workflow)
        if (runs === undefined) started.set(workflow, (runs = new Set()))
        runs.add(runId)
        return workflow
      }),
    owner: (runId) => Effect.sync(() => Option.fromNullishOr(owners.get(runId))),
    runs: (workflow, limit) => Effect.sync(() => [...(started.get(workflow) ?? [])].slice(0, Math.max(0, limit)))
  })
}
