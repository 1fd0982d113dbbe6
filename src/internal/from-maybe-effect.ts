/**
 * Internal: turns user code that may answer with a value, a Promise or an Effect into one Effect.
 * Throws and rejections land in the error channel; interrupting the Effect aborts the signal handed
 * to the user code, so Promise-based work (fetch, SDK calls) can stop too.
 */
import { Cause, Effect } from "effect"

/** A value, a Promise of it, or an Effect producing it. */
export type MaybeEffect<A> = A | PromiseLike<A> | Effect.Effect<A, unknown>

export const isPromiseLike = (u: unknown): u is PromiseLike<unknown> =>
  typeof u === "object" && u !== null && "then" in u && typeof u.then === "function"

export const fromMaybeEffect = <A>(run: (signal: AbortSignal) => MaybeEffect<A>): Effect.Effect<A, unknown> =>
  Effect.suspend(() => {
    const controller = new AbortController()
    let out: MaybeEffect<A>
    try {
      out = run(controller.signal)
    } catch (error) {
      return Effect.fail(error)
    }
    const effect: Effect.Effect<A, unknown> = Effect.isEffect(out)
      ? out
      : isPromiseLike(out)
      ? Effect.tryPromise({ try: () => Promise.resolve(out), catch: (error) => error })
      : Effect.succeed(out)
    return effect.pipe(Effect.onInterrupt(() => Effect.sync(() => controller.abort())))
  })

/**
 * Recovers from every failure and defect of `self` with `recover`, but lets interruption through:
 * user code failing must never stop the run, while interrupting the run must always stop it.
 */
export const catchUnlessInterrupted = <A2, E2>(recover: (error: unknown) => Effect.Effect<A2, E2>) =>
<A, E>(self: Effect.Effect<A, E>): Effect.Effect<A | A2, E2> =>
  Effect.catchCause(self, (cause) => (Cause.hasInterruptsOnly(cause) ? Effect.interrupt : recover(Cause.squash(cause))))
