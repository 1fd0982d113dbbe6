/**
 * The resume ledger at a composite's border. A composite's resume consumes one key for its whole
 * snapshot, once every check that refuses before anything runs has passed (its snapshot's, and every
 * waiting member's decisions, down to nested composites and child agents) and before any member
 * continues, as an agent's own key gates its suspended children. So of two resumes of one snapshot
 * exactly one goes on and the other fails with `SnapshotAlreadyResumed`, having run nothing, however
 * long the ledger takes to answer: the members' own keys, consumed as each continues, are no longer
 * the race (with several members waiting, two resumes could each win one member and both fail).
 */
import * as Effect from "effect/Effect"
import { ResumeLedger } from "../dsl/resume-ledger-store.ts"
import { type ResumeLedgerFailed, SnapshotAlreadyResumed, SnapshotInvalid } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { isRecord } from "../internal/is-record.ts"
import { type CompositeSnapshot, fingerprintOf } from "./composite-snapshot.ts"

/**
 * The key of a composite snapshot's suspension point: its kind, name, the run id of the first agent
 * that waits in it, and a hash of where it waits (each waiting member's index and own snapshot, whose
 * run ids make it unique), as RFC 8785 canonical JSON (`fingerprintOf`) so key order and layout do not
 * matter. What else it keeps (completed members' outputs, a loop's iterations, what the tree spent,
 * the signature) does not say where it waits: a copy with those changed is the same suspension point.
 */
export const compositeResumeKey = (snapshot: CompositeSnapshot): string => {
  const { stage, member, waiting } = snapshot.state
  return `${snapshot.kind}:${snapshot.composite}/${waitingRunId(member)}/${fingerprintOf({ stage, member, waiting: waiting ?? [] })}`
}

/**
 * Runs `check` (everything that refuses a resume before anything runs), then, when a `ResumeLedger`
 * is provided, consumes the snapshot's key: a key consumed before fails with `SnapshotAlreadyResumed`.
 */
export const gateResume = <E, R>(
  composite: string,
  snapshot: CompositeSnapshot,
  check: Effect.Effect<void, E, R>
): Effect.Effect<void, E | SnapshotInvalid | SnapshotAlreadyResumed | ResumeLedgerFailed, R> =>
  Effect.andThen(check, Effect.gen(function*() {
    const ledger = yield* ResumeLedger
    if (ledger === undefined) return
    const key = yield* Effect.try({
      try: () => compositeResumeKey(snapshot),
      catch: (cause) => new SnapshotInvalid({ issues: `the snapshot of "${composite}" cannot be keyed for the resume ledger: ${describeCause(cause)}` })
    })
    if (!(yield* ledger.consume(key))) {
      return yield* new SnapshotAlreadyResumed({ agent: composite, runId: waitingRunId(snapshot.state.member), key })
    }
  }))

/** The run id of the first agent waiting in a member's snapshot (down nested composites), for the key and the error. */
const waitingRunId = (member: unknown): string => {
  for (let at = member, depth = 0; isRecord(at) && isRecord(at.state) && depth < 64; at = at.state.member, depth++) {
    if (typeof at.state.runId === "string") return at.state.runId
  }
  return "-"
}
