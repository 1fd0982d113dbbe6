/**
 * The one table between our run outcomes and A2A task states. The server reports a run's end with
 * `taskStateOf(outcome)`; the client reads a remote task's state with `remoteStateOf(state)`. Every
 * outcome maps to exactly one state, and only `Suspended` maps to a state that is not terminal
 * (`input-required`: the next message on the same task resumes the run).
 */
import { TaskState } from "@a2a-js/sdk"
import type { RunEndEvent } from "../../dsl/events.ts"

/** The outcomes of a run, by tag. */
export type RunOutcomeTag = RunEndEvent["outcome"]["_tag"]

/**
 * The A2A task state each run outcome ends in.
 *
 * @example
 * ```ts
 * outcomeTaskState.Suspended // TaskState.TASK_STATE_INPUT_REQUIRED
 * ```
 */
export const outcomeTaskState: { readonly [K in RunOutcomeTag]: TaskState } = Object.freeze({
  Success: TaskState.TASK_STATE_COMPLETED,
  Failure: TaskState.TASK_STATE_FAILED,
  Interrupted: TaskState.TASK_STATE_CANCELED,
  Suspended: TaskState.TASK_STATE_INPUT_REQUIRED
})

/**
 * The A2A task state a run outcome ends in (see {@link outcomeTaskState}).
 *
 * @example
 * ```ts
 * taskStateOf({ _tag: "Interrupted" }) // TaskState.TASK_STATE_CANCELED
 * ```
 */
export const taskStateOf = (outcome: { readonly _tag: RunOutcomeTag }): TaskState => outcomeTaskState[outcome._tag]

/** How a remote task's state reads from our side: still going, ended in one of our outcomes, or waiting. */
export type RemoteState = "working" | RunOutcomeTag | "Rejected" | "AuthRequired"

/**
 * A remote task's state as our outcome (the client's half of the table): `working` while it runs.
 * Unknown numbers (a newer protocol) read as `working`, so the client keeps waiting for a known one.
 *
 * @example
 * ```ts
 * remoteStateOf(TaskState.TASK_STATE_FAILED) // "Failure"
 * ```
 */
export const remoteStateOf = (state: TaskState | undefined): RemoteState => {
  switch (state) {
    case TaskState.TASK_STATE_COMPLETED:
      return "Success"
    case TaskState.TASK_STATE_FAILED:
      return "Failure"
    case TaskState.TASK_STATE_CANCELED:
      return "Interrupted"
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return "Suspended"
    case TaskState.TASK_STATE_REJECTED:
      return "Rejected"
    case TaskState.TASK_STATE_AUTH_REQUIRED:
      return "AuthRequired"
    default:
      return "working"
  }
}

/**
 * True for the states a task never leaves (and `input-required`, where a run stops until a new message).
 *
 * @example
 * ```ts
 * isSettledState(TaskState.TASK_STATE_WORKING) // false
 * ```
 */
export const isSettledState = (state: TaskState | undefined): boolean => remoteStateOf(state) !== "working"
