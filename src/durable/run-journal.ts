/**
 * The event journal of durable runs: every event a run emits (turns, model answers, tool calls and
 * results, approvals requested and decided, retries, the run's end) is appended here with an id that
 * is stable and increases by one per run (1, 2, 3, …), so a client can follow a run from any process
 * and re-attach from the last id it saw (`d.follow`).
 *
 * An event has a key besides its id. A replay of the workflow (after a crash, or after a wait for
 * decisions) emits the run's events again in the same order, with the same keys: those are already
 * in the journal and are kept once (`append` of a known key does nothing). Events that happen only
 * while a step really runs (a retry's wait, a child run's events inside an agent-as-tool) have keys of
 * their own, so a step that really ran twice shows both.
 *
 * `RunJournal.memory` keeps it in this process; `runJournalSql` (`run-journal-sql.ts`) in a table of
 * the engine's database, beside the runs.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import type { DurableRunUnreadable } from "./run-unreadable.ts"

/** One event of a run's journal: its id (1, 2, … per run) and the event as JSON. */
export interface JournalRecord {
  readonly id: number
  readonly event: Schema.Json
}

/**
 * The journal failed (the database is down).
 *
 * @example
 * ```ts
 * Effect.catchTag("RunJournalFailed", (e) => Effect.logError(e.reason))
 * ```
 */
export class RunJournalFailed extends Data.TaggedError("RunJournalFailed")<{
  readonly operation: "open" | "append" | "read"
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `The run journal could not ${this.operation}: ${this.reason}`
  }
}

/**
 * Where durable runs journal their events. Every runner, and every process that follows runs, uses
 * the same one (the engine's database).
 *
 * @example
 * ```ts
 * const events = yield* (yield* RunJournal).read("run_1", 0, 100) // the first 100 events of run_1
 * ```
 */
export class RunJournal extends Context.Service<RunJournal, {
  /**
   * Appends `event` to run `runId`'s journal under `key`, with the next id; a key already in the
   * journal keeps its event and id (a replay's events are appended once).
   */
  readonly append: (runId: string, key: string, event: Schema.Json) => Effect.Effect<void, RunJournalFailed>
  /**
   * `append` of an event given as its JSON text (what `append`'s event would stringify to): for a
   * journal that stores text, so the event is not parsed back and stringified again (optional).
   */
  readonly appendText?: ((runId: string, key: string, json: string) => Effect.Effect<void, RunJournalFailed>) | undefined
  /**
   * The events of run `runId` with an id above `after`, in order (at most `limit`); a row whose event
   * is not JSON fails with `DurableRunUnreadable` (its shape is checked where it is decoded,
   * `decodeJournalEvent`).
   */
  readonly read: (runId: string, after: number, limit: number) => Effect.Effect<ReadonlyArray<JournalRecord>, RunJournalFailed | DurableRunUnreadable>
  /** The keys of run `runId`'s journal: a replay appends only what is not among them. */
  readonly keys: (runId: string) => Effect.Effect<ReadonlySet<string>, RunJournalFailed>
}>()("effect-agent-dsl/durable/RunJournal") {
  /**
   * The journal in this process's memory: for tests and the in-memory engine.
   *
   * @example
   * ```ts
   * Effect.provide(program, Layer.mergeAll(memoryEngine, RunJournal.memory))
   * ```
   */
  static readonly memory: Layer.Layer<RunJournal> = Layer.sync(RunJournal, () => {
    const runs = new Map<string, { readonly keys: Set<string>; readonly events: Array<JournalRecord> }>()
    const of = (runId: string) => {
      let run = runs.get(runId)
      if (run === undefined) runs.set(runId, (run = { keys: new Set(), events: [] }))
      return run
    }
    return RunJournal.of({
      append: (runId, key, event) =>
        Effect.sync(() => {
          const run = of(runId)
          if (run.keys.has(key)) return
          run.keys.add(key)
          run.events.push({ id: run.events.length + 1, event })
        }),
      read: (runId, after, limit) =>
        Effect.sync(() => (runs.get(runId)?.events ?? []).filter((e) => e.id > after).slice(0, Math.max(0, limit))),
      keys: (runId) => Effect.sync(() => new Set(runs.get(runId)?.keys ?? []))
    })
  })
}
