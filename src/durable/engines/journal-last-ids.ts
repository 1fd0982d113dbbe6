/**
 * The last journal id of each run the embedded engine writes, known in its process so that a step's
 * events are numbered by the process instead of by a `max(id)` and a key check in the step's statement
 * (that check made the statement about a quarter dearer inside PGlite). Sound because the embedded
 * engine's data directory has one process at a time (`data-dir-lock.ts`) and its journal is written
 * only through one `PendingWrites` queue, one write after the other.
 *
 * A run's id is learnt where its journal's keys are read (every execution of a run reads them before
 * its first event) and moves on with each write that commits. A statement that uses it takes it away
 * (`take`) and gives the next one back only when its pipeline commits (`PipelinedStatement.onCommit`):
 * a write that fails, or whose caller is interrupted before it knows, leaves the run unknown, and the
 * run's next events are numbered by the database again (`max(id)`), which is always right. At most
 * `capacity` runs are kept (the least recently written is forgotten first, and numbered by the
 * database again if it writes later).
 */

/**
 * The runs' last journal ids this process knows, bounded.
 *
 * @example
 * ```ts
 * const ids = new JournalLastIds(1_000)
 * ids.learn("run_1", 3)
 * const last = ids.take("run_1") // 3; unknown until `learn("run_1", 3 + written)`
 * ```
 */
export class JournalLastIds {
  readonly #last = new Map<string, number>()

  constructor(private readonly capacity: number) {}

  /** Run `runId`'s journal ends at `last` (its highest id; 0 when it is empty). */
  learn(runId: string, last: number): void {
    if (!Number.isSafeInteger(last) || last < 0) return void this.#last.delete(runId)
    this.#last.delete(runId)
    this.#last.set(runId, last)
    if (this.#last.size > this.capacity) this.#last.delete(this.#last.keys().next().value!)
  }

  /** Run `runId`'s last id, forgotten until `learn` gives the next one (undefined when unknown). */
  take(runId: string): number | undefined {
    const last = this.#last.get(runId)
    if (last !== undefined) this.#last.delete(runId)
    return last
  }
}
