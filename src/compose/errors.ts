/**
 * The errors composition adds to a run's: a loop that reached its iteration cap, and a branch whose
 * routed value has no case (possible only for callers that bypass the types). Like every error of the
 * library they carry the `isAgentError` marker.
 */
import * as Data from "effect/Data"
import { AgentErrorTypeId } from "../internal/agent-error-marker.ts"

/**
 * A `loop` ran `maxIterations` times without its `until` predicate accepting an output. `iterations`
 * holds every output, in order, so nothing is lost.
 *
 * @example
 * ```ts
 * Effect.catchTag("LoopLimitExceeded", (e) => Effect.succeed(e.iterations.at(-1)))
 * ```
 */
export class LoopLimitExceeded extends Data.TaggedError("LoopLimitExceeded")<{
  readonly loop: string
  readonly maxIterations: number
  readonly iterations: ReadonlyArray<unknown>
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Loop "${this.loop}" reached its cap of ${this.maxIterations} iteration(s) without its stop condition accepting an output`
  }
}

/**
 * A `branch` received a value whose `_tag` has no case.
 *
 * @example
 * ```ts
 * Effect.catchTag("BranchNotRouted", (e) => Effect.succeed(`no case for ${e.tag}`))
 * ```
 */
export class BranchNotRouted extends Data.TaggedError("BranchNotRouted")<{
  readonly branch: string
  readonly tag: string
  readonly cases: ReadonlyArray<string>
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Branch "${this.branch}" has no case for "${this.tag}" (cases: ${this.cases.join(", ")})`
  }
}

/**
 * A function placed in a composite (a forum's captain, a branch's case, a loop's `until`) threw, rejected
 * or failed.
 *
 * @example
 * ```ts
 * Effect.catchTag("StepFailed", (e) => Effect.succeed(`${e.step} broke: ${String(e.cause)}`))
 * ```
 */
export class StepFailed extends Data.TaggedError("StepFailed")<{
  readonly composite: string
  readonly step: string
  readonly cause: unknown
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    const cause = this.cause instanceof Error ? this.cause.message : String(this.cause)
    return `Step ${this.step} of "${this.composite}" failed: ${cause}`
  }
}

/** Any error composition itself can end a run with. */
export type CompositionError = LoopLimitExceeded | BranchNotRouted | StepFailed
