/**
 * Internal: an engine that runs executions in this process (the embedded engine's local engine) tells
 * when a run of one ended (completed, or suspended), so `d.result` and `d.join` see a run of this
 * process end at once instead of at their next poll (the poll stays, for runs other processes run).
 */
import * as Context from "effect/Context"

/**
 * When a run of an execution ended in this process.
 *
 * @example
 * ```ts
 * const stop = settled.onSettled(executionId, () => console.log("the run ended or suspended"))
 * ```
 */
export class RunSettled extends Context.Service<RunSettled, {
  /** Calls `wake` once the next run of `executionId` in this process ended; answers a function that stops waiting. */
  readonly onSettled: (executionId: string, wake: () => void) => () => void
}>()("effect-agent-dsl/durable/RunSettled") {}
