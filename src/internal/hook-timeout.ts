/**
 * Internal: the bound on one hook (listener), shared by agents (`runtime/emit.ts`) and composites
 * (`compose/composite-hooks.ts`). A hook runs interruptible even where its caller is not (a finalizer),
 * and one that does not settle within `hookTimeout` is abandoned (interrupted, so its signal aborts)
 * and fails with `HookTimedOut`, so user code never holds a run past its budget or its interruption.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** What a hook that did not settle in time is reported with. */
export class HookTimedOut extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the hook did not settle within ${timeoutMs} ms (budget hookTimeout)`)
    this.name = "HookTimedOut"
  }
}

/**
 * `hook`, interruptible, failing with `HookTimedOut` after `timeoutMs` (none when it is not finite).
 *
 * @example
 * ```ts
 * fromMaybeEffect(() => listener(event)).pipe(boundHook(5_000), catchUnlessInterrupted(report))
 * ```
 */
export const boundHook = (timeoutMs: number) => <A>(hook: Effect.Effect<A, unknown>): Effect.Effect<A | void, unknown> =>
  Number.isFinite(timeoutMs)
    ? Effect.interruptible(hook).pipe(
      Effect.timeoutOrElse({ duration: Duration.millis(timeoutMs), orElse: () => Effect.fail(new HookTimedOut(timeoutMs)) })
    )
    : Effect.interruptible(hook)
