/**
 * `pipeline(name, a, b, c)`: each stage's output is the next stage's input, as the typed value (a typed
 * agent's output object reaches the next agent as that object, not as text). Adjacent types must be
 * equal: a mismatch is a compile error at the stage that does not fit.
 */
import type { AgentTypeError } from "../dsl/agent-type-error.ts"
import { AgentConfigError } from "../errors.ts"
import { checkName, type Composite, type Outcome, pipelineOf, type ValueOf } from "./composite.ts"
import { type AnyRunnable, type ErrorOf, type InputOf, isRunnable, type OutputOf, type RequirementsOf, type Same } from "./runnable.ts"

/** Each stage after the first must take exactly the previous stage's output (its completed output, for a stage that may suspend). */
export type CheckStages<Stages extends ReadonlyArray<AnyRunnable>> = {
  readonly [I in keyof Stages]: I extends `${infer N extends number}`
    ? N extends 0 ? Stages[I]
    : Same<InputOf<Stages[I]>, ValueOf<OutputOf<Stages[Before[N]]>>> extends true ? Stages[I]
    : AgentTypeError<`stage ${N} takes another input type than stage ${Before[N]} outputs: adjacent stages must have equal types`>
    : Stages[I]
}

/** `Before[n]` is n - 1. */
type Before = [never, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]

type Last<T extends ReadonlyArray<unknown>> = T extends readonly [...ReadonlyArray<unknown>, infer L] ? L : never

/**
 * Runs `stages` one after the other. At least two stages; up to 17 are type-checked pairwise. When a
 * stage may wait for a human decision (an agent with a tool that needs approval), the pipeline's
 * result is `Completed<Out> | CompositeSuspended`: a stage that suspends suspends the pipeline, whose
 * `resume(snapshot, decisions)` continues that stage, then the stages after it.
 *
 * @example
 * ```ts
 * const research = pipeline("research", planner, searcher, writer) // planner's output → searcher's input → …
 * const report = await research.run("What changed in Effect 4?")
 * ```
 */
export const pipeline = <const Stages extends readonly [AnyRunnable, AnyRunnable, ...ReadonlyArray<AnyRunnable>]>(
  name: string,
  ...stages: CheckStages<Stages>
): Composite<InputOf<Stages[0]>, Outcome<OutputOf<Stages[number]>, ValueOf<OutputOf<Last<Stages>>>>, ErrorOf<Stages[number]>, RequirementsOf<Stages[number]>> => {
  checkName("pipeline", name)
  const list = stages as unknown as ReadonlyArray<unknown>
  if (list.length < 2) throw new AgentConfigError({ subject: `pipeline "${name}"`, reason: "a pipeline needs at least two stages" })
  list.forEach((stage, i) => {
    if (!isRunnable(stage)) throw new AgentConfigError({ subject: `pipeline "${name}"`, reason: `stage ${i} is not an agent or a composite` })
  })
  return pipelineOf(name, list as ReadonlyArray<AnyRunnable>)
}
