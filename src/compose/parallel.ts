/**
 * `parallel(name, [a, b, c], options)`: every runnable on the same input, concurrently (at most
 * `concurrency` at once), outputs as a typed tuple in the order given. `onFailure: "failFast"` (default)
 * ends on the first failure and interrupts the others; `"collect"` lets every run finish and gives each
 * one's `Result` (success or tagged error).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { AgentTypeError } from "../dsl/agent-type-error.ts"
import { checkName, type Composite, makeComposite } from "./composite.ts"
import { checkCount, checkMembers } from "./placement.ts"
import type { AnyRunnable, ErrorOf, InputOf, OutputOf, RequirementsOf, Same } from "./runnable.ts"

/** Each runnable must take the same input type as the first. */
export type SameInput<Rs extends ReadonlyArray<AnyRunnable>> = {
  readonly [I in keyof Rs]: Same<InputOf<Rs[I]>, InputOf<Rs[0]>> extends true ? Rs[I]
    : AgentTypeError<`branch ${I & string} takes another input type than branch 0: parallel branches run on the same input`>
}

/** The outputs of `Rs`, as a tuple. */
export type Outputs<Rs extends ReadonlyArray<AnyRunnable>> = { readonly [I in keyof Rs]: OutputOf<Rs[I]> }
/** Each run's outcome under `onFailure: "collect"`. */
export type Settled<Rs extends ReadonlyArray<AnyRunnable>> = { readonly [I in keyof Rs]: Result.Result<OutputOf<Rs[I]>, ErrorOf<Rs[I]>> }

/** How many run at once (default: all) and what a failure does (default `"failFast"`). */
export interface ParallelOptions<Mode extends "failFast" | "collect"> {
  readonly concurrency?: number
  readonly onFailure?: Mode
}

type Members = readonly [AnyRunnable, ...ReadonlyArray<AnyRunnable>]

/**
 * Runs every runnable on the same input concurrently.
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
): Composite<InputOf<Rs[0]>, Outputs<Rs>, ErrorOf<Rs[number]>, RequirementsOf<Rs[number]>>
export function parallel<const Rs extends Members>(
  name: string,
  runnables: SameInput<Rs>,
  options: ParallelOptions<"collect">
): Composite<InputOf<Rs[0]>, Settled<Rs>, never, RequirementsOf<Rs[number]>>
export function parallel(name: string, runnables: ReadonlyArray<unknown>, options: ParallelOptions<"failFast" | "collect"> = {}): any {
  checkName("parallel", name)
  const subject = `parallel "${name}"`
  const members = checkMembers(subject, runnables, "branch")
  const concurrency = checkCount(subject, "concurrency", options.concurrency ?? Infinity, true)
  const collect = options.onFailure === "collect"
  return makeComposite(name, "parallel", members, (input) =>
    collect
      ? Effect.all(members.map((m) => Effect.result(m.runEffect(input))), { concurrency })
      : Effect.all(members.map((m) => m.runEffect(input)), { concurrency }))
}
