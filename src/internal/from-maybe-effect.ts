/**
 * Internal: turns user code that may answer with a value, a Promise or an Effect into one Effect.
 * Throws and rejections land in the error channel; interrupting the Effect aborts the signal handed
 * to the user code, so Promise-based work (fetch, SDK calls) can stop too. The AbortController is
 * only created when the user code reads `signal` (most hooks never do).
 */
import { Cause, Effect } from "effect"

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
 * The result is typed as requiring nothing: user code's services are tracked by the agent builder's
 * type (its `requirements`) and provided around the whole run, whose fiber every step inherits.
 */
export const fromMaybeEffect = <A>(run: (abortable: Abortable) => MaybeEffect<A, any>): Effect.Effect<A, unknown> =>
  Effect.suspend(() => {
    let controller: AbortController | undefined
    const abortable: Abortable = {
      get signal() {
        controller ??= new AbortController()
        return controller.signal
      }
    }
    let out: MaybeEffect<A, any>
    try {
      out = run(abortable)
    } catch (error) {
      return Effect.fail(error)
    }
    if (!Effect.isEffect(out) && !isPromiseLike(out)) return Effect.succeed(out)
    const effect: Effect.Effect<A, unknown> = Effect.isEffect(out)
      ? (out as Effect.Effect<A, unknown>)
      : Effect.tryPromise({ try: () => Promise.resolve(out), catch: (error) => error })
    return effect.pipe(Effect.onInterrupt(() => Effect.sync(() => controller?.abort())))
  })

/**
 * Recovers from every failure and defect of `self` with `recover`, but lets interruption through:
 * user code failing must never stop the run, while interrupting the run must always stop it.
 */
export const catchUnlessInterrupted = <A2, E2>(recover: (error: unknown) => Effect.Effect<A2, E2>) =>
<A, E>(self: Effect.Effect<A, E>): Effect.Effect<A | A2, E2> =>
  Effect.catchCause(self, (cause) => (Cause.hasInterruptsOnly(cause) ? Effect.interrupt : recover(Cause.squash(cause))))
