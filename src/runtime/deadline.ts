/**
 * A run's deadline (`maxDuration`): the run's body in a fiber of its own, and one timer that
 * interrupts it when the time is up, after which `onTimeout` decides the result. Every run has a
 * deadline (5 minutes by default), so this is on the hot path: `Effect.timeoutOrElse` races the body
 * against a sleeping fiber (two fibers, a race and an interruption per run, about a sixth of a short
 * run's cost); this pays one fiber and one `setTimeout`. Under any Clock other than Effect's live one
 * (a `TestClock`), it is `Effect.timeoutOrElse`, so virtual time decides as before.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

const liveClock = Context.get(Context.empty(), Clock.Clock)

// setTimeout's limit; a longer deadline is left to the sleeper (it never happens in practice).
const maxTimerMillis = 2 ** 31 - 1

/**
 * `effect`, interrupted after `millis` and answered by `onTimeout` then; an interruption from
 * outside interrupts `effect` and waits for it.
 *
 * @example
 * ```ts
 * withDeadline(body, 60_000, () => Effect.fail(new BudgetExceeded({ ... })))
 * ```
 */
export const withDeadline = <A, E, R, A2, E2, R2>(
  effect: Effect.Effect<A, E, R>,
  millis: number,
  onTimeout: () => Effect.Effect<A2, E2, R2>
): Effect.Effect<A | A2, E | E2, R | R2> =>
  Effect.withFiber((parent) => {
    if (parent.getRef(Clock.Clock) !== liveClock || millis > maxTimerMillis) {
      return Effect.timeoutOrElse(effect, { duration: Duration.millis(millis), orElse: onTimeout })
    }
    return Effect.callback<A | A2, E | E2, R | R2>((resume) => {
      const child = Effect.runForkWith(parent.context as Context.Context<R>)(effect)
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        child.interruptUnsafe(parent.id)
      }, millis)
      child.addObserver((exit) => {
        clearTimeout(timer)
        // As with `timeoutOrElse`: once the time is up, the body's own end (interrupted, or finishing
        // in an uninterruptible region) is dropped and `onTimeout` answers.
        resume(timedOut ? onTimeout() : exit)
      })
      return Effect.suspend(() => {
        clearTimeout(timer)
        return Fiber.interrupt(child)
      })
    })
  })
