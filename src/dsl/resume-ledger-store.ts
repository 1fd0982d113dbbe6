/**
 * The shape of a resume ledger, in `dsl/` beside `SessionStore` so that stores in other layers
 * (`effect-agent-dsl/postgres`) implement it without importing the runtime; the runtime's
 * `ResumeLedger` reference and in-memory ledger are in `runtime/resume-ledger.ts`.
 */
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
