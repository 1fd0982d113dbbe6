/**
 * The shape of a resume ledger and the reference a resume reads it from, in `dsl/` beside
 * `SessionStore` so that stores in other layers (`effect-agent-dsl/postgres`) implement it, and
 * composites (`compose/`) consult it, without importing the runtime; the in-memory ledger and the
 * key of a run snapshot are in `runtime/resume-ledger.ts`.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { ResumeLedgerFailed } from "../errors.ts"

/**
 * A ledger of consumed snapshots. `consume(key)` records `key` and answers `true` the first time,
 * `false` every later time (atomically: of two concurrent calls, one gets `true`).
 *
 * @example
 * ```ts
 * const ledger: ResumeLedgerStore = inMemoryResumeLedger()
 * ```
 */
export interface ResumeLedgerStore {
  readonly consume: (key: string) => Effect.Effect<boolean, ResumeLedgerFailed>
}

/**
 * The ledger a run resumes with, when there is one (a `Context.Reference`, undefined by default).
 *
 * @example
 * ```ts
 * await Effect.runPromise(bank.resume(snapshot, decisions).pipe(Effect.provideService(ResumeLedger, ledger)))
 * ```
 */
export const ResumeLedger = Context.Reference<ResumeLedgerStore | undefined>("effect-agent-dsl/ResumeLedger", {
  defaultValue: () => undefined
})
