/**
 * Delivers events to hooks. Listeners come from the plan, indexed by event tag, so an event nobody
 * listens to costs one map lookup. Hooks run in registration order; a hook that throws, rejects or
 * fails never changes the run: it is logged through Effect's logger (level Warning) and delivered as a
 * `HookFailed` event to `onHookFailed` listeners, whose own failures are only logged.
 */
import { Effect } from "effect"
import type { AgentEvent, HookFailedEvent, Listener } from "../dsl/events.ts"
import { ParentRun } from "../dsl/lineage.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { catchUnlessInterrupted, fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import type { AgentPlan } from "./plan.ts"

/**
 * Sends `event` to every listener of its tag, stamped with the parent run's id when the run has one
 * (`ParentRun`, set by composites and by agents for the runs their tools start). Never fails.
 */
export const emit = (plan: AgentPlan, event: AgentEvent): Effect.Effect<void> => {
  const listeners = plan.listeners.get(event._tag)
  if (listeners === undefined) return Effect.void
  return Effect.flatMap(ParentRun, (parentRunId: string | undefined) =>
    deliver(plan, listeners, parentRunId === undefined ? event : { ...event, parentRunId }))
}

const deliver = (plan: AgentPlan, listeners: ReadonlyArray<Listener<any>>, event: AgentEvent): Effect.Effect<void> =>
  Effect.forEach(
    listeners,
    (listener) =>
      fromMaybeEffect(() => listener(event)).pipe(
        catchUnlessInterrupted((error) => reportHookFailure(plan, event.runId, event._tag, error))
      ),
    { discard: true }
  ).pipe(Effect.asVoid)

/** Reports a failure of user code that must not change the run (a hook or a recovery policy). */
export const reportHookFailure = (plan: AgentPlan, runId: string, hook: AgentEvent["_tag"], error: unknown): Effect.Effect<void> => {
  const event: HookFailedEvent = { _tag: "HookFailed", agent: plan.name, runId, hook, error }
  const log = Effect.logWarning(`hook ${hook} of agent "${plan.name}" failed: ${describeCause(error)}`)
  if (hook === "HookFailed") return log
  return log.pipe(Effect.andThen(emit(plan, event)))
}
