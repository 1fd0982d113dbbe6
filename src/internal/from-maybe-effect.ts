/**
 * Internal: turns user code that may answer with a value, a Promise or an Effect into one Effect.
 * Throws and rejections land in the error channel; interrupting the Effect aborts the signal handed
 * to the user code, so Promise-based work (fetch, SDK calls) can stop too. The AbortController is
 * only created when the user code reads `signal` (most hooks never do).
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/** A value, a Promise of it, or an Effect producing it (which may require services `R`). */
export type MaybeEffect<A, R = never> = A | PromiseLike<A> | Effect.Effect<A, unknown, R>

/** The services an answer of user code requires: `R` of an Effect, nothing for a value or a Promise. */
export type RequirementsOf<T> = T extends Effect.Effect<any, any, infer R> ? R : never

export const isPromiseLike = (u: unknown): u is PromiseLike<unknown> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

/** What user code gets to observe interruption; the controller behind it is created on first read. */
export interface Abortable {
  readonly signal: AbortSignal
}

/**
 * The `Abortable` of one call of user code (a class: an object literal with a getter is several
 * times slower to make, and one is made per tool call, hook and model call).
 */
class LazyAbortable implements Abortable {
  #controller: AbortController | undefined = undefined
  // Interrupted before the signal was first read (a tool reading it after its first `await`): the
  // signal it gets then is aborted already, never a fresh one that nothing will abort.
  #interrupted = false

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#interrupted) this.#controller.abort()
    }
    return this.#controller.signal
  }

  abort(): void {
    this.#interrupted = true
    this.#controller?.abort()
  }
}

/**
 * Set by a caller that must know when user code really stopped (a durable `mutating` tool call: its
 * lease is held while the work goes on). When set, interrupting a Promise answer aborts its signal and
 * then waits for the Promise to settle, and hands what it settled with to `settled`: code that ignores
 * its signal is waited for, never abandoned while it still runs. Read only on interruption.
 */
export const AwaitAbandoned = Context.Reference<
  { readonly settled: (outcome: { readonly _tag: "Value"; readonly value: unknown } | { readonly _tag: "Error"; readonly error: unknown }) => void } | undefined
>("effect-agent-dsl/AwaitAbandoned", { defaultValue: () => undefined })

/** What wraps an Effect answer of user code (see `fromMaybeEffect`'s `around`). */
export type AroundAnswer<A = unknown> = (answer: Effect.Effect<A, unknown>) => Effect.Effect<A, unknown>

/**
 * The result is typed as requiring nothing: user code's services are tracked by the agent builder's
 * type (its `requirements`) and provided around the whole run, whose fiber every step inherits.
 * `around` wraps an Effect answer only (e.g. services that only an Effect can read): a value or a
 * Promise needs nothing around it. One primitive per call: the user code runs when the Effect is
 * evaluated, and a value, a throw or an Effect answer resumes at once.
 */
export const fromMaybeEffect = <A>(
  run: (abortable: Abortable) => MaybeEffect<A, any>,
  around?: AroundAnswer<A>
): Effect.Effect<A, unknown> =>
  Effect.callback<A, unknown>((resume) => {
    const abortable = new LazyAbortable()
    let out: MaybeEffect<A, any>
    try {
      out = run(abortable)
    } catch (error) {
      return resume(Effect.fail(error))
    }
    const abort = () => abortable.abort()
    if (Effect.isEffect(out)) {
      const answer = userInterruptAsFailure(out as Effect.Effect<A, unknown>).pipe(Effect.onInterrupt(() => Effect.sync(abort)))
      return resume(around === undefined ? answer : around(answer))
    }
    if (!isPromiseLike(out)) return resume(Effect.succeed(out))
    // A Promise (every async tool, hook and model function): its cancellation aborts the signal.
    const settled = Promise.resolve(out)
    settled.then((value) => resume(Effect.succeed(value)), (error) => resume(Effect.fail(error)))
    return AwaitAbandoned.use((awaiting) => {
      abort()
      if (awaiting === undefined) return Effect.void
      return Effect.promise(() =>
        settled.then((value) => awaiting.settled({ _tag: "Value", value }), (error) => awaiting.settled({ _tag: "Error", error }))
      )
    })
  })

/** What user code that answered `Effect.interrupt` (or interrupted itself) fails with instead. */
export class UserCodeInterrupted extends Error {
  constructor() {
    super("user code interrupted itself (Effect.interrupt); only the run's caller may interrupt a run")
    this.name = "UserCodeInterrupted"
  }
}

/**
 * An Effect written by user code that interrupts itself (`Effect.interrupt`) fails instead: only the
 * run's caller (or a budget) may interrupt a run. An interruption from outside stays one; it is told
 * apart by its interruptor, which is another fiber.
 */
export const userInterruptAsFailure = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | UserCodeInterrupted> =>
  Effect.withFiber((fiber) =>
    Effect.catchCause(effect, (cause): Effect.Effect<never, E | UserCodeInterrupted> =>
      Cause.hasInterruptsOnly(cause) && cause.reasons.every((r) => Cause.isInterruptReason(r) && r.fiberId === fiber.id)
        ? Effect.fail(new UserCodeInterrupted())
        : Effect.failCause(cause)
    )
  )

/**
 * Recovers from every failure and defect of `self` with `recover`, but lets interruption through:
 * user code failing must never stop the run, while interrupting the run must always stop it.
 */
export const catchUnlessInterrupted = <A2, E2>(recover: (error: unknown) => Effect.Effect<A2, E2>) =>
<A, E>(self: Effect.Effect<A, E>): Effect.Effect<A | A2, E2> =>
  Effect.catchCause(self, (cause) => (Cause.hasInterruptsOnly(cause) ? Effect.interrupt : recover(Cause.squash(cause))))
