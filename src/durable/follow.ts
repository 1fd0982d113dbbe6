/**
 * Following a durable run (`d.follow`): its journal (`RunJournal`) read from an event id on, in
 * pages, waiting between reads while nothing new is there. The journal is the engine's database, so
 * a follower in any process sees the run live whichever runner hosts it, and goes on through a crash
 * of that runner (the run's replay on another runner appends only what the journal lacks). The stream
 * ends after the run's end; a follower that went away re-attaches with `after` set to the last id it
 * saw. A journalled row that is not an event (edited, damaged) ends the stream with
 * `DurableRunUnreadable` naming it.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import type { RunStreamEvent } from "../dsl/events.ts"
import { InputInvalid } from "../errors.ts"
import { effectStream } from "../internal/lazy-effect.ts"
import { decodeJournalEvent, endsRun } from "./journal-events.ts"
import { RunJournal, type RunJournalFailed } from "./run-journal.ts"
import { DurableRunUnreadable } from "./run-unreadable.ts"
import { shownValue } from "../internal/shown-value.ts"

/** One event of a followed durable run: its id in the run's journal (1, 2, …) and the event. */
export interface DurableEvent {
  readonly id: number
  readonly event: RunStreamEvent
}

/** Options of `d.follow`. */
export interface FollowOptions {
  /** The last event id the client saw: the stream starts after it (default 0: from the first event). */
  readonly after?: number
  /** How long to wait between reads while nothing new is journalled (default 100 ms). */
  readonly pollInterval?: Duration.Input
}

const pageSize = 200
/** While idle, whether the run ended (without a journalled end: a defect) is asked every this many reads. */
const endCheckEvery = 10

/**
 * Whose run id `runId` is: this agent's (`"ours"`), no agent's yet (`"unknown"`: waited for, as a run
 * not started yet), or another agent's (the error the stream fails with).
 */
export type RunHolder<E> = "ours" | "unknown" | E

/**
 * The events of run `runId` after `options.after`, ending after its end; `hasEnded` says whether the
 * engine has the run's result (a run that ended without a journalled end, a defect, ends the stream too);
 * `holder` whose run the id is, asked before the first read until it is this agent's: nothing of
 * another agent's run is read.
 */
export const followRun = <E, R, H extends InputInvalid, R2>(
  agent: string,
  runId: string,
  options: FollowOptions,
  hasEnded: Effect.Effect<boolean, E, R>,
  holder: Effect.Effect<RunHolder<H>, never, R2>
): Stream.Stream<DurableEvent, RunJournalFailed | DurableRunUnreadable | InputInvalid | E, RunJournal | R | R2> => {
  const after = options.after ?? 0
  if (!Number.isInteger(after) || after < 0) {
    return effectStream().fail(new InputInvalid({ agent, issues: `follow: after must be a non-negative integer event id (got ${shownValue(after)})` }))
  }
  const interval = Duration.fromInput(options.pollInterval ?? Duration.millis(100))
  const wait = Option.isSome(interval) ? interval.value : Duration.millis(100)
  type State = { readonly after: number; readonly idle: number; readonly ours: boolean }
  const page = (state: State): Effect.Effect<readonly [ReadonlyArray<DurableEvent>, Option.Option<State>], RunJournalFailed | DurableRunUnreadable | InputInvalid | E, RunJournal | R | R2> =>
    Effect.gen(function*() {
      if (!state.ours) {
        const held = yield* holder
        if (held === "unknown") {
          yield* Effect.sleep(wait)
          return [[], Option.some(state)] as const
        }
        if (held !== "ours") return yield* Effect.fail(held)
        return [[], Option.some({ ...state, ours: true })] as const
      }
      const journal = yield* RunJournal
      const records = yield* journal.read(runId, state.after, pageSize).pipe(Effect.retry({ times: 3, while: (e) => !(e instanceof DurableRunUnreadable) }))
      if (records.length === 0) {
        // Nothing new: a run that ended without a journalled end (a defect) ends the stream too.
        if ((state.idle + 1) % endCheckEvery === 0 && (yield* hasEnded)) {
          const last = yield* journal.read(runId, state.after, pageSize)
          if (last.length === 0) return [[], Option.none()] as const
          return yield* deliver(last, state)
        }
        yield* Effect.sleep(wait)
        return [[], Option.some({ after: state.after, idle: state.idle + 1, ours: true })] as const
      }
      return yield* deliver(records, state)
    })
  const deliver = (records: ReadonlyArray<{ readonly id: number; readonly event: unknown }>, state: State) =>
    Effect.suspend(() => {
      const out: Array<DurableEvent> = []
      for (const record of records) {
        const event = decodeJournalEvent(runId, record)
        if (event instanceof DurableRunUnreadable) return Effect.fail(event)
        out.push({ id: record.id, event })
        if (endsRun(event, runId)) return Effect.succeed([out, Option.none<State>()] as const)
      }
      return Effect.succeed([out, Option.some({ after: records[records.length - 1]!.id, idle: 0, ours: true })] as const)
    })
  return effectStream().paginate({ after, idle: 0, ours: false } as State, page)
}
