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
): Effect.Effect<A, unknown> => fromMaybeEffectSettled(run, around, undefined)

/**
 * What a caller makes of the answer of user code, in the same step (`fromMaybeEffectSettled`): its
 * value, or what it threw, rejected with or failed with (an interruption from outside stays one).
 */
export interface Settle<A, B, E> {
  readonly onValue: (value: A) => Effect.Effect<B, E>
  readonly onError: (error: unknown) => Effect.Effect<B, E>
}

/**
 * `fromMaybeEffect` followed by `settle`, without an Effect of its own in between: what `settle`
 * answers is what the call resumes with. A model function's answer is normalised this way (one
 * primitive per model call instead of three: issue #37).
 *
 * @example
 * ```ts
 * fromMaybeEffectSettled(() => answer(request), undefined, { onValue: normalize, onError: (e) => Effect.fail(toModelError(e)) })
 * ```
 */
export const fromMaybeEffectSettled = <A, B, E>(
  run: (abortable: Abortable) => MaybeEffect<A, any>,
  around: AroundAnswer<A> | undefined,
  settle: Settle<A, B, E> | undefined
): Effect.Effect<B, E> =>
  Effect.callback<B, E>((resume) => {
    const abortable = new LazyAbortable()
    let out: MaybeEffect<A, any>
    try {
      out = run(abortable)
    } catch (error) {
      return resume(settle === undefined ? Effect.fail(error as E) : settle.onError(error))
    }
    if (Effect.isEffect(out)) {
      const interrupted = userInterruptAsFailure(out as Effect.Effect<A, unknown>).pipe(Effect.onInterrupt(() => Effect.sync(() => abortable.abort())))
      const answer = around === undefined ? interrupted : around(interrupted)
      return resume(settle === undefined ? answer as unknown as Effect.Effect<B, E> : Effect.matchCauseEffect(answer, {
        onSuccess: settle.onValue,
        onFailure: (cause) => (Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause as Cause.Cause<never>) : settle.onError(Cause.squash(cause)))
      }))
    }
    if (!isPromiseLike(out)) return resume(settle === undefined ? Effect.succeed(out as unknown as B) : settle.onValue(out))
    // A Promise (every async tool, hook and model function): its cancellation aborts the signal.
    // (`Promise.resolve` hands a native Promise back as it is.)
    const settled = Promise.resolve(out)
    settled.then(
      settle === undefined ? (value) => resume(Effect.succeed(value as unknown as B)) : (value) => resume(settle.onValue(value)),
      settle === undefined ? (error) => resume(Effect.fail(error as E)) : (error) => resume(settle.onError(error))
    )
    return Effect.withFiber((fiber) => {
      abortable.abort()
      const awaiting = fiber.getRef(AwaitAbandoned)
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
