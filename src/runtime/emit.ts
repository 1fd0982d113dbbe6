/**
 * Delivers events to hooks. Hooks run in registration order; a hook that throws, rejects or fails
 * never changes the run: it is logged through Effect's logger (level Warning) and delivered as a
 * `HookFailed` event to `onHookFailed` listeners, whose own failures are only logged.
 */
import { Effect } from "effect"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import type { AgentEvent, HookFailedEvent } from "../dsl/events.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { catchUnlessInterrupted, fromMaybeEffect } from "../internal/from-maybe-effect.ts"

/** Sends `event` to every listener of its kind. Never fails. */
export const emit = (definition: AgentDefinition, event: AgentEvent): Effect.Effect<void> => {
  const listeners = definition.listeners.filter((l) => l.event === event._tag || l.event === "*")
  if (listeners.length === 0) return Effect.void
  return Effect.forEach(
    listeners,
    ({ listener }) =>
      fromMaybeEffect(() => listener(event)).pipe(
        catchUnlessInterrupted((error) => reportHookFailure(definition, event.runId, event._tag, error))
      ),
    { discard: true }
  ).pipe(Effect.asVoid)
}

/** Reports a failure of user code that must not change the run (a hook or a recovery policy). */
export const reportHookFailure = (
  definition: AgentDefinition,
  runId: string,
  hook: AgentEvent["_tag"],
  error: unknown
): Effect.Effect<void> => {
  const event: HookFailedEvent = { _tag: "HookFailed", agent: definition.name, runId, hook, error }
  const log = Effect.logWarning(`hook ${hook} of agent "${definition.name}" failed: ${describeCause(error)}`)
  if (hook === "HookFailed") return log
  return log.pipe(Effect.andThen(emit(definition, event)))
}
