/**
 * Internal: a duration input in milliseconds as Effect reads it, for the configuration checks that
 * refuse what is not a duration (budgets, composite hooks, provider fault options).
 */
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/**
 * The milliseconds of a duration input (`"30 seconds"`, a number of milliseconds, a `Duration`),
 * `NaN` when it is none.
 *
 * @example
 * ```ts
 * durationMillis("2 seconds") // 2000
 * durationMillis("soon") // NaN
 * ```
 */
export const durationMillis = (value: unknown): number =>
  Option.match(Duration.fromInput(value as Duration.Input), { onNone: () => Number.NaN, onSome: Duration.toMillis })
