/**
 * A store operation inside a durable step, retried a few times with backoff before it fails the step
 * as a defect: a dropped connection should not end a run that a second attempt would carry on. (A
 * claim whose commit was acknowledged too late is found by its retry: the call then goes to
 * reconciliation, the safe side.)
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

const schedule = Schedule.exponential(Duration.millis(100), 2)

/**
 * `operation`, retried up to 4 times (50 ms, 100 ms, 200 ms, 400 ms), then a defect. The retry is set
 * up only after a first failure: most operations succeed at once, and a durable step makes a few of
 * them (a retry's schedule is a dozen Effect operations of its own).
 *
 * @example
 * ```ts
 * yield* withStoreRetry(inbox.register(workflow, runId))
 * ```
 */
export const withStoreRetry = <A, E>(operation: Effect.Effect<A, E>): Effect.Effect<A> =>
  Effect.orDie(Effect.catch(operation, () => Effect.andThen(Effect.sleep(Duration.millis(50)), Effect.retry(operation, { schedule, times: 3 }))))
