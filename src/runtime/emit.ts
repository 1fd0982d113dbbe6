/**
 * Delivers events to hooks. Listeners come from the plan, indexed by event tag, so an event nobody
 * listens to costs one map lookup. Hooks run in registration order; a hook that throws, rejects or
 * fails never changes the run: it is logged through Effect's logger (level Warning) and delivered as a
 * `HookFailed` event to `onHookFailed` listeners, whose own failures are only logged. The report about
 * a listener never goes back to that listener (an `onEvent` listener hears `HookFailed` too): a hung
 * listener is awaited once, not a second time for its own report. Each hook is
 * bounded by the budget's `hookTimeout` (a hook that never settles is abandoned, its signal aborted,
 * and reported as failed) and stays interruptible even where the run is not, so user code never holds
 * a run past its budget or its interruption. A hook answering `Effect.interrupt` fails like any other
 * hook.
 *
 * `RunEnd` is delivered by `emitEnd`: its outcome is sealed when the run's body ended, and its hooks run
 * on a detached fiber started at once (a synchronous hook has run when the run returns; an
 * asynchronous one goes on, bounded by `hookTimeout`, without holding the caller). An interruption of
 * the caller that comes while they run therefore cannot make the caller's result differ from the
 * outcome the hooks saw.
 *
 * `BudgetExceeded` for `maxDuration` is delivered by `emitWithin`: the caller waits for its listeners at
 * most one hook timeout in all, however many of them hang; their delivery goes on detached, each still
 * bounded by `hookTimeout`. So a run's outcome reaches its caller within `maxDuration` plus one hook
 * timeout. (A synchronous listener that loops cannot be pre-empted in JavaScript: its own running time
 * adds to that.)
 *
 * A streaming run also has a sink: every event goes to it after its listeners (so `runStream` sees
 * exactly what hooks see, in the same order). Runs without one pay nothing for it.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Queue from "effect/Queue"
import type { AgentEvent, HookFailedEvent, Listener, RunStreamEvent } from "../dsl/events.ts"
import { ParentRun } from "../dsl/lineage.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { effectQueue } from "../internal/lazy-effect.ts"
import { catchUnlessInterrupted, fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import { boundHook } from "../internal/hook-timeout.ts"
import type { AgentPlan } from "./plan.ts"
import { logQuotingContent } from "../internal/content-log.ts"

/**
 * Where a streaming run's events go (a queue behind `runStream`). A sink may also offer an event at
 * once (`offerNow`: true when it took it, false when it must wait for room), which is what its Effect
 * does first: a streamed delta uses it and needs no Effect of its own while the consumer keeps up.
 * A sink that takes no deltas says so (`deltas: false`, a durable run's journal): a run whose only
 * sink it is asks the model for its whole answer (`chat`) instead of streaming it.
 */
export type EventSink = ((event: RunStreamEvent) => Effect.Effect<void>) & {
  readonly offerNow?: ((event: RunStreamEvent) => boolean) | undefined
  readonly deltas?: false | undefined
}

/**
 * The sink of a stream's queue (`Stream.callback`): each event offered (waiting for room when the
 * queue is full), and `offerNow` for a delta.
 *
 * @example
 * ```ts
 * Stream.callback((queue) => execute(definition, start, {}, queueSink(queue)))
 * ```
 */
export const queueSink = (queue: Queue.Queue<RunStreamEvent, any>): EventSink => {
  const queues = effectQueue()
  return Object.assign((event: RunStreamEvent) => Effect.asVoid(queues.offer(queue, event)), {
    offerNow: (event: RunStreamEvent) => queues.offerUnsafe(queue, event)
  })
}

/**
 * A sink that holds what it is given until `release`, then sends it on, in order, to `sink`, and passes
 * everything after straight through. For the end of a run whose deadline expired: its `BudgetExceeded`
 * and `RunEnd` reach their hooks at once even when the stream's reader stopped reading (a full queue),
 * and the stream still gets both, in order, when it reads again.
 *
 * @example
 * ```ts
 * const held = holdSink(sink)
 * yield* budgetExceeded(plan, runId, overrun, transcript, held.sink) // hooks heard, the sink not yet
 * yield* held.release                                                 // now waits for the reader
 * ```
 */
export const holdSink = (sink: EventSink): { readonly sink: EventSink; readonly held: () => boolean; readonly release: Effect.Effect<void> } => {
  let pending: Array<RunStreamEvent> | undefined = []
  return {
    sink: (event) => {
      if (pending === undefined) return sink(event)
      pending.push(event)
      return Effect.void
    },
    held: () => pending !== undefined && pending.length > 0,
    // Held events go first, in order; one that comes while they are sent (a hook's late failure) waits its turn.
    release: Effect.suspend(function next(): Effect.Effect<void> {
      const event = pending?.shift()
      if (event === undefined) {
        pending = undefined
        return Effect.void
      }
      return Effect.flatMap(sink(event), () => Effect.suspend(next))
    })
  }
}

/**
 * Sends `event` to `sink` now when it has room (nothing to run then), else the sink's Effect, which
 * waits for room. Only for a caller that runs the answer at once (a streamed delta in `runForEach`).
 *
 * @example
 * ```ts
 * return offerNow(sink, { _tag: "TextDelta", delta: "Hi", agent, runId, skill, turn })
 * ```
 */
export const offerNow = (sink: EventSink, event: RunStreamEvent): Effect.Effect<void> => {
  const now = sink.offerNow
  return now !== undefined && now(event) ? Effect.void : sink(event)
}

/**
 * Sends `event` to every listener of its tag, then to `sink`, stamped with the parent run's id when the
 * run has one (`ParentRun`, set by composites, and by agents for the runs their tools and handoffs
 * start). Never fails.
 */
export const emit = (plan: AgentPlan, event: AgentEvent, sink?: EventSink): Effect.Effect<void> => dispatch(plan, event, sink, "wait", lookUp)

/**
 * `emit` for a run that read its parent run's id (`ParentRun`) when it started: the same delivery,
 * without looking it up again for every event.
 *
 * @example
 * ```ts
 * yield* emitInRun(plan, { _tag: "Turn", agent: plan.name, runId, skill, turn }, sink, parentRunId)
 * ```
 */
export const emitInRun = (plan: AgentPlan, event: AgentEvent, sink: EventSink | undefined, parentRunId: string | undefined): Effect.Effect<void> =>
  dispatch(plan, event, sink, "wait", parentRunId)

/**
 * `emit` for `RunEnd`: the listeners run on a detached fiber started at once, then the event goes to
 * the sink in the caller's fiber (a stream still ends with it). Never fails, never waits for a hook.
 */
export const emitEnd = (plan: AgentPlan, event: AgentEvent, sink?: EventSink): Effect.Effect<void> => dispatch(plan, event, sink, "detach", lookUp)

/**
 * `emit` waiting at most one hook timeout for all the listeners together (the `BudgetExceeded` of an
 * expired `maxDuration`): what is still running then goes on detached, each hook bounded by
 * `hookTimeout`. Interrupting the caller while it waits interrupts the listeners.
 *
 * @example
 * ```ts
 * yield* emitWithin(plan, { _tag: "BudgetExceeded", agent: plan.name, runId, reason: "duration", limit, used })
 * ```
 */
export const emitWithin = (plan: AgentPlan, event: AgentEvent, sink?: EventSink): Effect.Effect<void> =>
  dispatch(plan, event, sink, Number.isFinite(plan.budget.hookTimeout) ? "within" : "wait", lookUp)

/** How the caller waits for the listeners: until they end, not at all, or at most one hook timeout. */
type Waiting = "wait" | "detach" | "within"

/** The parent run's id is looked up in the fiber (`ParentRun`) rather than given. */
const lookUp: unique symbol = Symbol("look up ParentRun")

const dispatch = (
  plan: AgentPlan,
  event: AgentEvent,
  sink: EventSink | undefined,
  waiting: Waiting,
  parent: string | undefined | typeof lookUp,
  except?: Listener<any>
): Effect.Effect<void> => {
  const listeners = without(plan.listeners.get(event._tag), except)
  if (listeners === undefined && sink === undefined) return Effect.void
  const send = (parentRunId: string | undefined): Effect.Effect<void> => {
    // `Object.assign`, not `{ ...event, parentRunId }` (see `stamp` in run-context.ts).
    const stamped: AgentEvent = parentRunId === undefined ? event : Object.assign({}, event, { parentRunId })
    const delivered = listeners === undefined
      ? Effect.void
      : waiting === "detach"
      ? Effect.asVoid(Effect.forkDetach(deliver(plan, listeners, stamped, sink), { startImmediately: true }))
      : waiting === "within"
      ? Effect.flatMap(Effect.forkDetach(deliver(plan, listeners, stamped, sink), { startImmediately: true }), (fiber) =>
        Fiber.await(fiber).pipe(
          Effect.timeoutOption(Duration.millis(plan.budget.hookTimeout)),
          Effect.onInterrupt(() => Fiber.interrupt(fiber)),
          Effect.asVoid
        ))
      : deliver(plan, listeners, stamped, sink)
    return sink === undefined ? delivered : Effect.andThen(delivered, sink(stamped))
  }
  return parent === lookUp ? Effect.flatMap(ParentRun, send) : send(parent)
}

/** `listeners` but `except` (undefined when none is left). */
const without = (listeners: ReadonlyArray<Listener<any>> | undefined, except: Listener<any> | undefined) => {
  if (listeners === undefined || except === undefined || !listeners.includes(except)) return listeners
  const rest = listeners.filter((l) => l !== except)
  return rest.length === 0 ? undefined : rest
}

const deliver = (plan: AgentPlan, listeners: ReadonlyArray<Listener<any>>, event: AgentEvent, sink: EventSink | undefined): Effect.Effect<void> =>
  Effect.forEach(
    listeners,
    (listener) =>
      fromMaybeEffect(() => listener(event)).pipe(
        boundHook(plan.budget.hookTimeout),
        catchUnlessInterrupted((error) => reportHookFailure(plan, event.runId, event._tag, error, sink, listener))
      ),
    { discard: true }
  ).pipe(Effect.asVoid)

// The bound on one hook lives in internal/, so composites bound theirs with the same code.
export { HookTimedOut } from "../internal/hook-timeout.ts"

/**
 * Reports a failure of user code that must not change the run (a hook or a recovery policy); `failed`,
 * the listener that failed, does not hear its own report.
 */
export const reportHookFailure = (
  plan: AgentPlan,
  runId: string,
  hook: AgentEvent["_tag"],
  error: unknown,
  sink?: EventSink,
  failed?: Listener<any>
): Effect.Effect<void> => {
  const event: HookFailedEvent = { _tag: "HookFailed", agent: plan.name, runId, hook, error }
  const log = logQuotingContent(Effect.logWarning(`hook ${hook} of agent "${plan.name}" failed: ${describeCause(error)}`))
  if (hook === "HookFailed") return sink === undefined ? log : log.pipe(Effect.andThen(sink(event)))
  return log.pipe(Effect.andThen(dispatch(plan, event, sink, "wait", lookUp, failed)))
}
