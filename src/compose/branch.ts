/**
 * `branch(name, source, cases)`: routes the source's output, a discriminated union on `_tag`, to one case
 * per tag: an agent taking that member, or a function of it. A missing case is a compile error naming
 * the tag (the Kotlin reference fails at run time); for untyped callers an unrouted tag fails with
 * `BranchNotRouted`.
 */
import * as Effect from "effect/Effect"
import type { AgentTypeError } from "../dsl/agent-type-error.ts"
import { AgentConfigError } from "../errors.ts"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import { checkName, type Composite, makeComposite, memberAt, type Outcome, type Settle, settleMember, type ValueOf } from "./composite.ts"
import { BranchNotRouted, type StepFailed } from "./errors.ts"
import { functionStep, type StepValue } from "./function-step.ts"
import { checkMembers } from "./placement.ts"
import { type AnyRunnable, type ErrorOf, type InputOf, isRunnable, type OutputOf, type RequirementsOf } from "./runnable.ts"

type Tagged = { readonly _tag: string }

/** One case per tag of `U`: an agent taking that member, or a function of it. */
export type BranchCases<U extends Tagged> = {
  readonly [K in U["_tag"]]: AnyRunnable | ((value: Extract<U, { readonly _tag: K }>, signal: AbortSignal) => MaybeEffect<unknown>)
}

/** Cases whose agents take exactly their member, and no case for a tag the union does not have. */
export type CheckCases<U extends Tagged, C> = {
  readonly [K in keyof C]: K extends U["_tag"]
    ? C[K] extends AnyRunnable ? ([Extract<U, { readonly _tag: K }>] extends [InputOf<C[K]>] ? C[K]
      : AgentTypeError<`the case for '${K}' must be an agent taking that member of the union (an input Schema for it)`>)
    : C[K]
    : AgentTypeError<`'${K & string}' is not a tag of the routed union`>
}

type CaseOutput<X> = X extends AnyRunnable ? OutputOf<X> : X extends (...args: any) => infer R ? StepValue<R> : never
type CaseValue<X> = X extends AnyRunnable ? ValueOf<OutputOf<X>> : X extends (...args: any) => infer R ? StepValue<R> : never
type CaseError<X> = X extends AnyRunnable ? ErrorOf<X> : StepFailed
type CaseRequirements<X> = X extends AnyRunnable ? RequirementsOf<X> : never

/** The source must output a union tagged by `_tag` (its completed output, for a source that may suspend). */
export type TaggedSource<S> = ValueOf<OutputOf<S>> extends Tagged ? S : AgentTypeError<"branch routes on `_tag`: the source must output a discriminated union (Schema.TaggedStruct / Schema.Union)">

/**
 * Routes the source's output by its `_tag`. When the source or a case may wait for a human decision,
 * the result is `Completed<Out> | CompositeSuspended`: the branch suspends where that member did, and
 * its `resume(snapshot, decisions)` continues that member (then routes, after the source).
 *
 * @example
 * ```ts
 * const support = branch("support", triage, {
 *   Refund: refunds,                                   // an agent whose input is the Refund member
 *   Question: (q) => `See the FAQ about ${q.topic}`    // or a function
 * })
 * ```
 */
export const branch = <const S extends AnyRunnable, const C extends BranchCases<ValueOf<OutputOf<S>> & Tagged>>(
  name: string,
  source: TaggedSource<S>,
  cases: C & CheckCases<ValueOf<OutputOf<S>> & Tagged, C>
): Composite<
  InputOf<S>,
  Outcome<OutputOf<S> | CaseOutput<C[keyof C]>, CaseValue<C[keyof C]>>,
  ErrorOf<S> | CaseError<C[keyof C]> | BranchNotRouted,
  RequirementsOf<S> | CaseRequirements<C[keyof C]>
> => {
  checkName("branch", name)
  const subject = `branch "${name}"`
  const [from] = checkMembers(subject, [source], "source")
  if (typeof cases !== "object" || cases === null) throw new AgentConfigError({ subject, reason: "cases must be an object keyed by tag" })
  const table = new Map<string, unknown>(Object.entries(cases))
  for (const [tag, handler] of table) {
    if (!isRunnable(handler) && typeof handler !== "function") {
      throw new AgentConfigError({ subject, reason: `the case for "${tag}" must be an agent, a composite or a function` })
    }
  }
  const agents = [...table.values()].filter(isRunnable)
  const members = [from!, ...agents]
  /** Finishes the run of the case at `stage` (index in `members`) from its result. */
  const finishCase = (settle: Settle, stage: number, result: unknown) => {
    const settled = settleMember(settle, stage, members[stage]!, result)
    return "suspended" in settled ? settled.suspended : settle.complete(settled.value)
  }
  /** Routes the source's result (unless it suspended). */
  const route = (settle: Settle, result: unknown) =>
    Effect.gen(function*() {
      const settled = settleMember(settle, 0, from!, result)
      if ("suspended" in settled) return settled.suspended
      const value = settled.value
      const tag = typeof value === "object" && value !== null && "_tag" in value ? String(value._tag) : undefined
      const handler = tag === undefined ? undefined : table.get(tag)
      if (handler === undefined) {
        return yield* new BranchNotRouted({ branch: name, tag: tag ?? `(no _tag in ${typeof value})`, cases: [...table.keys()] })
      }
      if (isRunnable(handler)) return finishCase(settle, members.indexOf(handler, 1), yield* handler.runEffect(value))
      return settle.complete(yield* functionStep(name, `case ${tag}`, (signal) => (handler as (v: unknown, s: AbortSignal) => MaybeEffect<unknown>)(value, signal)))
    })
  return makeComposite(name, "branch", members, {
    run: (input, settle) => Effect.flatMap(from!.runEffect(input), (result) => route(settle, result)),
    resume: (snapshot, decisions, settle) =>
      Effect.flatMap(memberAt(name, members, snapshot), (member) =>
        Effect.flatMap(member.resume(snapshot.state.member, decisions), (result) =>
          snapshot.state.stage === 0 ? route(settle, result) : Effect.succeed(finishCase(settle, snapshot.state.stage, result))))
  }) as any
}
