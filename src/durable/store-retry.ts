/**
 * A store operation inside a durable step, retried a few times with backoff before it fails the step
 * as a defect: a dropped connection should not end a run that a second attempt would carry on. (A
 * claim whose commit was acknowledged too late is found by its retry: the call then goes to
 * reconciliation, the safe side.) A row that cannot be read (`DurableRunUnreadable`) is not retried:
 * it would not read better a moment later.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { DurableRunUnreadable } from "./run-unreadable.ts"

const schedule = Schedule.exponential(Duration.millis(100), 2)

/** `operation`, retried as `withStoreRetry` says, but a `DurableRunUnreadable` fails at once, typed. */
const retried = <A, E>(operation: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.catch(operation, (error) =>
    error instanceof DurableRunUnreadable
      ? Effect.fail(error)
      : Effect.andThen(Effect.sleep(Duration.millis(50)), Effect.retry(operation, { schedule, times: 3, while: (e) => !(e instanceof DurableRunUnreadable) })))

/**
 * `operation`, retried up to 4 times (50 ms, 100 ms, 200 ms, 400 ms), then a defect. The retry is set
 * up only after a first failure: most operations succeed at once, and a durable step makes a few of
 * them (a retry's schedule is a dozen Effect operations of its own). A `DurableRunUnreadable` is the
 * defect at once (inside a run's step, the engine records nothing for it: see `run-unreadable.ts`).
 *
 * @example
 * ```ts
 * yield* withStoreRetry(inbox.register(workflow, runId))
 * ```
 */
export const withStoreRetry = <A, E>(operation: Effect.Effect<A, E>): Effect.Effect<A> => Effect.orDie(retried(operation))

/**
 * `withStoreRetry` for a read outside a run's steps (`poll`, `list`, `decide`): a row that cannot be
 * read stays the typed `DurableRunUnreadable`, anything else that outlives the retries is a defect.
 *
 * @example
 * ```ts
 * const open = yield* readStore(inbox.current(runId)) // fails with DurableRunUnreadable
 * ```
 */
export const readStore = <A, E>(operation: Effect.Effect<A, E>): Effect.Effect<A, Extract<E, DurableRunUnreadable>> =>
  Effect.catch(retried(operation), (error) => (error instanceof DurableRunUnreadable ? Effect.fail(error as Extract<E, DurableRunUnreadable>) : Effect.die(error)))
