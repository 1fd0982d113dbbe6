/**
 * `parallel(name, [a, b, c], options)`: every runnable on the same input, concurrently (at most
 * `concurrency` at once), outputs as a typed tuple in the order given. `onFailure: "failFast"` (default)
 * ends on the first failure and interrupts the others; `"collect"` lets every run finish and gives each
 * one's `Result` (success or tagged error). When members may wait for a human decision, the parallel
 * suspends as a whole while any of them does (`concurrent-members.ts`).
 */
import * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import type { AgentTypeError } from "../dsl/agent-type-error.ts"
import { checkOneOf, checkOptions } from "../dsl/builder-validation.ts"
import { checkName, type Composite, makeComposite, type Outcome, type Settle, type ValueOf } from "./composite.ts"
import { checkConcurrently, type Concurrent, resumeConcurrently, runConcurrently } from "./concurrent-members.ts"
import { checkCount, checkMembers } from "./placement.ts"
import type { AnyRunnable, ErrorOf, InputOf, OutputOf, RequirementsOf, Same } from "./runnable.ts"

/** Each runnable must take the same input type as the first. */
export type SameInput<Rs extends ReadonlyArray<AnyRunnable>> = {
  readonly [I in keyof Rs]: Same<InputOf<Rs[I]>, InputOf<Rs[0]>> extends true ? Rs[I]
    : AgentTypeError<`branch ${I & string} takes another input type than branch 0: parallel branches run on the same input`>
}

/** The outputs of `Rs`, as a tuple (each one's completed output, for a member that may suspend). */
export type Outputs<Rs extends ReadonlyArray<AnyRunnable>> = { readonly [I in keyof Rs]: ValueOf<OutputOf<Rs[I]>> }
/** Each run's outcome under `onFailure: "collect"`. */
export type Settled<Rs extends ReadonlyArray<AnyRunnable>> = { readonly [I in keyof Rs]: Result.Result<ValueOf<OutputOf<Rs[I]>>, ErrorOf<Rs[I]>> }

/** How many run at once (default: all) and what a failure does (default `"failFast"`). */
export interface ParallelOptions<Mode extends "failFast" | "collect"> {
  readonly concurrency?: number
  readonly onFailure?: Mode
}

type Members = readonly [AnyRunnable, ...ReadonlyArray<AnyRunnable>]

/** What `onFailure` takes. */
const failureModes: ReadonlyArray<"failFast" | "collect"> = ["failFast", "collect"]

/**
 * Runs every runnable on the same input concurrently. When a member may wait for a human decision, the
 * result is `Completed<outputs> | CompositeSuspended`: while one or several members wait, the parallel
 * suspends as a whole, its snapshot holding each waiting member's snapshot and the completed members'
 * outputs, its waiting calls named `<member index>/<call id>`. `resume(snapshot, decisions)` checks
 * every decision of every waiting member against that member's own snapshot before any member
 * continues or any tool runs; then the waiting members continue at once; completed members are not run
 * again.
 *
 * @example
 * ```ts
 * const [summary, keywords] = await parallel("read", [summariser, tagger]).run(article)
 * const settled = await parallel("try", [fast, slow], { onFailure: "collect", concurrency: 2 }).run(q)
 * ```
 */
export function parallel<const Rs extends Members>(
  name: string,
  runnables: SameInput<Rs>,
  options?: ParallelOptions<"failFast">
): Composite<InputOf<Rs[0]>, Outcome<OutputOf<Rs[number]>, Outputs<Rs>>, ErrorOf<Rs[number]>, RequirementsOf<Rs[number]>>
export function parallel<const Rs extends Members>(
  name: string,
  runnables: SameInput<Rs>,
  options: ParallelOptions<"collect">
): Composite<InputOf<Rs[0]>, Outcome<OutputOf<Rs[number]>, Settled<Rs>>, never, RequirementsOf<Rs[number]>>
export function parallel(name: string, runnables: ReadonlyArray<unknown>, options: ParallelOptions<"failFast" | "collect"> = {}): any {
  checkName("parallel", name)
  const subject = `parallel "${name}"`
  const members = checkMembers(subject, runnables, "branch")
  checkOptions(subject, "parallel(name, members, options)", options, ["concurrency", "onFailure"])
  const concurrency = checkCount(subject, "concurrency", options.concurrency ?? Infinity, true)
  // An unknown mode would otherwise run as "failFast", silently.
  if (options.onFailure !== undefined) checkOneOf(subject, "`onFailure`", options.onFailure, failureModes)
  const at = { concurrency, collect: options.onFailure === "collect" }
  const settled = (settle: Settle) => (outcome: Concurrent) => ("suspended" in outcome ? outcome.suspended : settle.complete(outcome.values))
  return makeComposite(name, "parallel", members, {
    run: (input, settle) => Effect.map(runConcurrently(name, members, input, at, settle), settled(settle)),
    resume: (snapshot, decisions, settle) => Effect.map(resumeConcurrently(name, members, snapshot, decisions, at, settle), settled(settle)),
    check: (snapshot, decisions) => checkConcurrently(name, members, snapshot, decisions)
  })
}
