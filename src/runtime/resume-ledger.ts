/**
 * The resume ledger: where a plain run records that a snapshot was resumed, so its decisions are
 * consumed once. A second resume of the same snapshot (the same run at the same suspension point,
 * whatever its key order or JSON layout) fails with `SnapshotAlreadyResumed` before anything runs, so
 * an approved mutating call cannot run twice from two copies of one snapshot. Without a ledger a plain
 * snapshot can be resumed any number of times, and each resume runs its approved calls again.
 * Durable runs keep their own record (each tool call an Activity) and do not consult it.
 *
 * The consumption is recorded before the run continues: a process that dies after it and before the
 * tool ran leaves that snapshot consumed (at most once, never twice); continue such a run as a durable
 * run when it must be exactly once.
 */
import * as Effect from "effect/Effect"
import type { RunSnapshot } from "../dsl/run-snapshot.ts"
import type { ResumeLedgerStore } from "../dsl/resume-ledger-store.ts"
import { canonicalJson } from "../internal/canonical-json.ts"
import { hash53 } from "./fingerprint.ts"

export type { ResumeLedgerStore } from "../dsl/resume-ledger-store.ts"
export { ResumeLedger } from "../dsl/resume-ledger-store.ts"

/**
 * A resume ledger in this process's memory: enough when every resume of a run happens in one process.
 *
 * @example
 * ```ts
 * const ledger = inMemoryResumeLedger()
 * const resumeOnce = (s: unknown, d: Decisions) => bank.resume(s, d).pipe(Effect.provideService(ResumeLedger, ledger))
 * ```
 */
export const inMemoryResumeLedger = (): ResumeLedgerStore => {
  const consumed = new Set<string>()
  return {
    consume: (key) =>
      Effect.sync(() => {
        if (consumed.has(key)) return false
        consumed.add(key)
        return true
      })
  }
}

/**
 * The key of a snapshot's suspension point: its agent, run id, transcript and the calls it waits on or
 * has decided, canonicalised (RFC 8785), so the same snapshot stored and read back in another key order
 * has the same key, and a later suspension of the same run has another.
 *
 * @example
 * ```ts
 * const key = resumeKey(snapshot) // "bank/run_…/3f0c…"
 * ```
 */
export const resumeKey = (snapshot: RunSnapshot): string => {
  const { state } = snapshot
  const point = canonicalJson({
    transcript: state.transcript,
    pending: state.pending,
    awaiting: state.awaiting ?? [],
    decided: state.decided ?? [],
    // Where a child or a handoff target waits: a handoff suspended twice keeps the first agent's own state.
    children: state.children ?? [],
    handoff: state.handoff ?? null,
    ledger: { turns: state.ledger.turns, toolCalls: state.ledger.toolCalls }
  })
  return `${snapshot.agent}/${state.runId}/${hash53(point)}`
}
