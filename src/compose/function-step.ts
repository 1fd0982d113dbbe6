/**
 * Internal: runs a user function placed in a composite (captain, case, stop condition) as an Effect
 * whose failures are `StepFailed`, and that is interrupted (its signal aborted) with the composite.
 */
import * as Effect from "effect/Effect"
import { catchUnlessInterrupted, fromMaybeEffect, type MaybeEffect } from "../internal/from-maybe-effect.ts"
import { StepFailed } from "./errors.ts"

/** A value, Promise or Effect produced by a user function, unwrapped. */
export type StepValue<R> = R extends Effect.Effect<infer A, any, any> ? A : Awaited<R>

export const functionStep = <A>(composite: string, step: string, run: (signal: AbortSignal) => MaybeEffect<A>): Effect.Effect<A, StepFailed> =>
  fromMaybeEffect((abortable) => run(abortable.signal)).pipe(
    catchUnlessInterrupted((cause) => Effect.fail(new StepFailed({ composite, step, cause })))
  )
