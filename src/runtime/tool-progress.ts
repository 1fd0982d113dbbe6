/**
 * `ToolProgress` events: what a running tool reports through `ToolContext.progress`. Reports are taken
 * synchronously from the tool's own code (a plain function, a Promise or an Effect alike), queued, and
 * delivered by a fiber of the call, in the order reported, while the tool runs; the call's outcome
 * waits until every report made before it ended was delivered, so `ToolProgress` always precedes the
 * call's `ToolUse` or `ToolError`. A report after the call ended is dropped. When nobody hears the event
 * (no `onToolProgress`/`onEvent` hook, no stream), the tool gets a no-op and the call pays nothing.
 *
 * @example
 * ```ts
 * const exit = yield* withToolProgress(ctx, "download", "call_1", (progress) => Effect.exit(executeTool(tool, args, "call_1", undefined, undefined, progress)))
 * ```
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type { RunContext } from "./run-context.ts"
import type { Steps } from "../internal/steps.ts"

/**
 * Runs `execution` with a progress callback whose reports become `ToolProgress` events of `ctx`'s run
 * (see the module comment); with `undefined` when nobody hears them.
 */
export const withToolProgress = <A, E, R>(
  ctx: RunContext,
  tool: string,
  toolCallId: string,
  execution: (progress: ((data: unknown) => void) | undefined) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => {
  if (ctx.sink === undefined && !ctx.plan.listeners.has("ToolProgress")) return execution(undefined)
  return Effect.suspend(() => {
    const pending: Array<unknown> = []
    let closed = false
    let wake: (() => void) | undefined
    const progress = (data: unknown): void => {
      if (closed) return
      pending.push(data)
      const resume = wake
      wake = undefined
      resume?.()
    }
    const nextReport = Effect.callback<void>((resume) => {
      if (pending.length > 0 || closed) return resume(Effect.void)
      wake = () => resume(Effect.void)
    })
    const deliver: Effect.Effect<void> = Effect.gen(() => delivering(ctx, tool, toolCallId, pending, () => closed, nextReport))
    const close = Effect.sync(() => {
      closed = true
      const resume = wake
      wake = undefined
      resume?.()
    })
    // An interrupted call stops delivering (a consumer that went away must not hold the finalizer).
    return Effect.flatMap(Effect.forkChild(deliver, { startImmediately: true }), (fiber) =>
      execution(progress).pipe(
        Effect.onExit((exit) => Exit.hasInterrupts(exit) ? Fiber.interrupt(fiber) : Effect.andThen(close, Fiber.join(fiber)))
      ))
  })
}

/**
 * Delivers the reports of `pending` as `ToolProgress` events until the call is closed. A module-level
 * generator, not a `function*` expression per call (see `runSteps` in run-agent.ts).
 */
function* delivering(
  ctx: RunContext,
  tool: string,
  toolCallId: string,
  pending: Array<unknown>,
  closed: () => boolean,
  nextReport: Effect.Effect<void>
): Steps<void> {
  while (true) {
    while (pending.length > 0) yield* ctx.emit({ _tag: "ToolProgress", tool, toolCallId, data: pending.shift() })
    if (closed()) return
    yield* nextReport
  }
}
