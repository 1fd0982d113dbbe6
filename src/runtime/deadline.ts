/**
 * A run's deadline (`maxDuration`): the run's body in a fiber of its own, interrupted when the time
 * is up, after which `onTimeout` decides the result. Every run has a deadline (5 minutes by default),
 * so this is on the hot path: `Effect.timeoutOrElse` races the body against a sleeping fiber (two
 * fibers, a race and an interruption per run, about a sixth of a short run's cost); this pays one
 * fiber and an entry in a list of deadlines. Under any Clock other than Effect's live one (a
 * `TestClock`), it is `Effect.timeoutOrElse`, so virtual time decides as before.
 *
 * A run of `agent.run` (a Promise) pays neither: `Effect.runPromise` starts a fiber for that run
 * alone, so the run claims it (`runPromiseOwned`, `claimOwnedFiber`) and its deadline interrupts that
 * fiber itself; the run then ends as `onTimeout` says, and the Promise answers that (issue #37: ~5%
 * of a calculator run).
 *
 * The deadlines in flight share one Node timer, armed for the earliest of them (`Deadlines`): a
 * `setTimeout` and `clearTimeout` per run cost ~1.5 µs of a ~40 µs calculator run, and a timer with its
 * closure ~0.2 KB of the ~10 KB a run in flight holds (issue #37). The timer keeps the process alive
 * exactly while a deadline is in flight, as a timer per run did.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
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
      const deadline = deadlines.add(performance.now() + millis, child, parent.id)
      child.addObserver((exit) => {
        deadlines.remove(deadline)
        // As with `timeoutOrElse`: once the time is up, the body's own end (interrupted, or finishing
        // in an uninterruptible region) is dropped and `onTimeout` answers.
        resume(deadline.expired ? onTimeout() : exit as Exit.Exit<A, E>)
      })
      return Effect.suspend(() => {
        deadlines.remove(deadline)
        return Fiber.interrupt(child)
      })
    })
  })

/**
 * The fiber `Effect.runPromise` starts for one run of a `Promise` caller (`agent.run`), once the run
 * claims it: the run's deadline then interrupts that fiber itself (`armDeadline`) instead of running
 * the body in a fiber of its own, which costs a fiber, a wait and a resumption per run (issue #37).
 * The fiber ends interrupted when the time is up; what the run ended with then (`onTimeout`'s exit)
 * is kept here, and `runPromiseOwned` answers with it.
 */
export class OwnedFiber {
  /** What the run ended with once its time was up: the caller's answer instead of the fiber's interruption. */
  timedOut: Exit.Exit<unknown, unknown> | undefined = undefined
  constructor(readonly fiber: Fiber.Fiber<unknown, unknown>) {}
}

/** What `runPromiseOwned` is starting: the first run to start decides (`claimOwnedFiber`), and the fiber it claimed. */
interface Opening {
  decided: boolean
  claimed: OwnedFiber | undefined
}

// The fiber `runPromiseOwned` is starting: decided by the first run that starts on it while
// `runPromise` evaluates synchronously (the top-level run: nothing of it waited before), else by none.
let opening: Opening | undefined = undefined

/**
 * `Effect.runPromise(effect)` for one run of a `Promise` caller: the run that starts first on the
 * fiber, without waiting for anything before it, may claim the fiber (`claimOwnedFiber`) so that its
 * deadline interrupts it directly; its answer is then what the run ended with, as with `withDeadline`.
 *
 * @example
 * ```ts
 * run: (input) => runPromiseOwned(runEffect(input))
 * ```
 */
export const runPromiseOwned = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => {
  const starting: Opening = { decided: false, claimed: undefined }
  const outer = opening
  opening = starting
  let exit: Promise<Exit.Exit<A, E>>
  try {
    exit = Effect.runPromiseExit(effect)
  } finally {
    opening = outer
  }
  return exit.then((ended) => {
    const final = starting.claimed?.timedOut ?? ended
    if (final._tag === "Failure") throw Cause.squash(final.cause)
    return final.value as A
  })
}

/**
 * Claims `fiber` for the deadline of the run starting on it when `runPromiseOwned` is starting that
 * fiber and this is the first run to start there (the top-level one), if the run can use it
 * (`eligible`: nothing but its deadline would see the interruption, no span, stream or durable record).
 *
 * @example
 * ```ts
 * const owned = claimOwnedFiber(fiber, !traced) // undefined unless `agent.run` started this fiber for this run
 * ```
 */
export const claimOwnedFiber = (fiber: Fiber.Fiber<unknown, unknown>, eligible: boolean): OwnedFiber | undefined => {
  const starting = opening
  if (starting === undefined || starting.decided) return undefined
  starting.decided = true
  return eligible ? (starting.claimed = new OwnedFiber(fiber)) : undefined
}

/**
 * Arms a deadline that interrupts the owned fiber itself in `millis` (its `expired` says whether it
 * did); disarm it when the run ends. Undefined where `withDeadline` would not use the shared timer
 * either (a Clock other than the live one, such as a TestClock; a deadline past `setTimeout`'s limit):
 * the run then takes `withDeadline`.
 *
 * @example
 * ```ts
 * const deadline = armDeadline(owned, 60_000, clock)
 * // … when the run ends:
 * if (deadline !== undefined) disarmDeadline(deadline)
 * ```
 */
export const armDeadline = (owned: OwnedFiber, millis: number, clock: Clock.Clock): Deadline | undefined =>
  clock !== liveClock || millis > maxTimerMillis ? undefined : deadlines.add(performance.now() + millis, owned.fiber, owned.fiber.id)

/**
 * Disarms a deadline of `armDeadline` (nothing when it expired already).
 *
 * @example
 * ```ts
 * disarmDeadline(deadline)
 * ```
 */
export const disarmDeadline = (deadline: Deadline): void => deadlines.remove(deadline)

/** A deadline in flight: the fiber to interrupt at `at` (on `performance.now()`'s clock), in a list ordered by `at`. */
export interface Deadline {
  readonly at: number
  readonly fiber: Fiber.Fiber<unknown, unknown>
  readonly interruptor: number
  expired: boolean
  listed: boolean
  previous: Deadline | undefined
  next: Deadline | undefined
}

/**
 * The deadlines in flight, earliest first, and one timer armed for the earliest (or an earlier one
 * that went away: the timer then finds nothing due and is armed again). Runs with the same budget
 * start in order, so a new deadline goes last in O(1); removal is O(1). The timer is unref'd while
 * no deadline is in flight.
 */
class Deadlines {
  #first: Deadline | undefined = undefined
  #last: Deadline | undefined = undefined
  #timer: ReturnType<typeof setTimeout> | undefined = undefined
  #armedAt = Infinity

  add(at: number, fiber: Fiber.Fiber<unknown, unknown>, interruptor: number): Deadline {
    const deadline: Deadline = { at, fiber, interruptor, expired: false, listed: true, previous: undefined, next: undefined }
    let after = this.#last
    while (after !== undefined && after.at > at) after = after.previous
    deadline.previous = after
    deadline.next = after === undefined ? this.#first : after.next
    if (deadline.next === undefined) this.#last = deadline
    else deadline.next.previous = deadline
    if (after === undefined) this.#first = deadline
    else after.next = deadline
    if (this.#timer === undefined || at < this.#armedAt) this.#arm(at)
    else if (this.#first === deadline && this.#last === deadline) this.#timer.ref()
    return deadline
  }

  remove(deadline: Deadline): void {
    if (!deadline.listed) return
    deadline.listed = false
    if (deadline.previous === undefined) this.#first = deadline.next
    else deadline.previous.next = deadline.next
    if (deadline.next === undefined) this.#last = deadline.previous
    else deadline.next.previous = deadline.previous
    if (this.#first === undefined) this.#timer?.unref()
  }

  #arm(at: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#armedAt = at
    this.#timer = setTimeout(() => this.#due(), Math.max(1, Math.ceil(at - performance.now())))
  }

  /** Interrupts the fibers whose time is up, then arms the timer for the next deadline. */
  #due(): void {
    this.#timer = undefined
    this.#armedAt = Infinity
    const now = performance.now()
    for (let deadline = this.#first; deadline !== undefined && deadline.at <= now; deadline = this.#first) {
      this.remove(deadline)
      deadline.expired = true
      deadline.fiber.interruptUnsafe(deadline.interruptor)
    }
    if (this.#first !== undefined) this.#arm(this.#first.at)
  }
}

const deadlines = new Deadlines()
