/**
 * A composite's hooks (`onRunStart`, `onRunEnd`, `onHookFailed`), delivered as an agent's are
 * (`runtime/emit.ts`; the bound on one hook is the same code, `internal/hook-timeout.ts`). Each hook is
 * bounded by the composite's `hookTimeout` and runs interruptible, so user code never holds a run past
 * its budget or its interruption. `onRunStart` hooks run inside the run, so `maxDuration` bounds them
 * too. `onRunEnd` hooks run once the outcome is sealed, on a detached fiber started at once: a
 * synchronous one has run when the run returns, an asynchronous one goes on without holding the caller,
 * and an interruption of the caller meanwhile changes nothing. A hook that throws, rejects, fails or
 * does not settle in time never changes the run: it is logged (level Warning) and reported as
 * `CompositeHookFailed` to the `onHookFailed` hooks (bounded the same way; their own failures are only
 * logged) and to a stream. Every event goes to a streaming composite around it after its hooks.
 */
import * as Effect from "effect/Effect"
import type { Listener, RunStreamEvent } from "../dsl/events.ts"
import { StreamSink } from "../dsl/lineage.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { catchUnlessInterrupted, fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import { boundHook } from "../internal/hook-timeout.ts"
import type { CompositeEnd, CompositeHookFailed, CompositeStart } from "./composite.ts"
import { logQuotingContent } from "../internal/content-log.ts"

/** A composite's hooks and the bound on each. */
export interface CompositeHooks {
  readonly onStart: ReadonlyArray<Listener<CompositeStart>>
  readonly onEnd: ReadonlyArray<Listener<CompositeEnd>>
  readonly onFailed: ReadonlyArray<Listener<CompositeHookFailed>>
  /** Milliseconds one hook may take (`Infinity`: unbounded). */
  readonly hookTimeout: number
}

type Sink = (event: RunStreamEvent) => Effect.Effect<void>

/**
 * `CompositeStart` to its hooks, awaited (each bounded), then to the stream. Never fails.
 *
 * @example
 * ```ts
 * yield* notifyStart(hooks, { _tag: "CompositeStart", name, kind, runId, parentRunId, input })
 * ```
 */
export const notifyStart = (hooks: CompositeHooks, event: CompositeStart): Effect.Effect<void> =>
  Effect.flatMap(StreamSink, (sink) => {
    const delivered = hooks.onStart.length === 0 ? Effect.void : deliver(hooks, hooks.onStart, event, sink)
    return sink === undefined ? delivered : Effect.andThen(delivered, sink(event as unknown as RunStreamEvent))
  })

/**
 * `CompositeEnd` to its hooks on a detached fiber started at once, then to the stream in the caller's
 * fiber (a stream still ends with it). Never fails, never waits for a hook.
 *
 * @example
 * ```ts
 * yield* notifyEnd(hooks, { _tag: "CompositeEnd", name, kind, runId, parentRunId, outcome, durationMs })
 * ```
 */
export const notifyEnd = (hooks: CompositeHooks, event: CompositeEnd): Effect.Effect<void> =>
  Effect.flatMap(StreamSink, (sink) => {
    const delivered = hooks.onEnd.length === 0
      ? Effect.void
      : Effect.asVoid(Effect.forkDetach(deliver(hooks, hooks.onEnd, event, sink), { startImmediately: true }))
    return sink === undefined ? delivered : Effect.andThen(delivered, sink(event as unknown as RunStreamEvent))
  })

const deliver = <Ev extends CompositeStart | CompositeEnd>(
  hooks: CompositeHooks,
  listeners: ReadonlyArray<Listener<Ev>>,
  event: Ev,
  sink: Sink | undefined
): Effect.Effect<void> =>
  Effect.forEach(
    listeners,
    (listener) =>
      fromMaybeEffect(() => listener(event)).pipe(
        boundHook(hooks.hookTimeout),
        catchUnlessInterrupted((error) => reportHookFailure(hooks, event, error, sink))
      ),
    { discard: true }
  )

/** Logs a failed hook of `event` and reports it to the `onHookFailed` hooks (whose failures are only logged), then to the stream. */
const reportHookFailure = (hooks: CompositeHooks, event: CompositeStart | CompositeEnd, error: unknown, sink: Sink | undefined): Effect.Effect<void> => {
  const { name, kind, runId, parentRunId } = event
  const failed: CompositeHookFailed = { _tag: "CompositeHookFailed", name, kind, runId, parentRunId, hook: event._tag, error }
  const log = (hook: string, cause: unknown) => logQuotingContent(Effect.logWarning(`hook ${hook} of ${kind} "${name}" failed: ${describeCause(cause)}`))
  const heard = Effect.forEach(
    hooks.onFailed,
    (listener) =>
      fromMaybeEffect(() => listener(failed)).pipe(
        boundHook(hooks.hookTimeout),
        catchUnlessInterrupted((cause) => log(failed._tag, cause))
      ),
    { discard: true }
  )
  const reported = Effect.andThen(log(event._tag, error), heard)
  return sink === undefined ? reported : Effect.andThen(reported, sink(failed as unknown as RunStreamEvent))
}
