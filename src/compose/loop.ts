/**
 * `loop(name, body, { until, maxIterations })`: the body's output is fed back as its next input until
 * `until` accepts an output. The cap is required (the Kotlin reference's loop has none): reaching it
 * fails with `LoopLimitExceeded`, which carries every output so far.
 */
import * as Effect from "effect/Effect"
import type { AgentTypeError } from "../dsl/agent-type-error.ts"
import { AgentConfigError } from "../errors.ts"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import { checkName, type Composite, makeComposite } from "./composite.ts"
import { LoopLimitExceeded, type StepFailed } from "./errors.ts"
import { functionStep } from "./function-step.ts"
import { checkCount, checkMembers } from "./placement.ts"
import type { AnyRunnable, ErrorOf, InputOf, OutputOf, RequirementsOf, Same } from "./runnable.ts"

/** When to stop, and the most iterations allowed. */
export interface LoopOptions<T> {
  /** Accepts the output of iteration `iteration` (1-based) to stop; may be async or an Effect. */
  readonly until: (output: T, iteration: number) => MaybeEffect<boolean>
  /** Required: a whole number ≥ 1. */
  readonly maxIterations: number
}

/** The body must output what it takes. */
export type LoopBody<B> = Same<InputOf<B>, OutputOf<B>> extends true ? B
  : AgentTypeError<"a loop's body must output the same type it takes, so its output can be its next input">

/**
 * Runs `body` repeatedly on its own output.
 *
 * @example
 * ```ts
 * const polished = loop("polish", editor, { until: (draft) => draft.length < 500, maxIterations: 5 })
 * ```
 */
export const loop = <const B extends AnyRunnable>(
  name: string,
  body: LoopBody<B>,
  options: LoopOptions<OutputOf<B>>
): Composite<InputOf<B>, OutputOf<B>, ErrorOf<B> | LoopLimitExceeded | StepFailed, RequirementsOf<B>> => {
  checkName("loop", name)
  const subject = `loop "${name}"`
  const [member] = checkMembers(subject, [body], "body")
  const maxIterations = checkCount(subject, "maxIterations", options?.maxIterations)
  if (typeof options.until !== "function") throw new AgentConfigError({ subject, reason: "`until` must be a function" })
  return makeComposite(name, "loop", [member!], (input) =>
    Effect.gen(function*() {
      const iterations: Array<unknown> = []
      let value = input
      while (iterations.length < maxIterations) {
        value = yield* member!.runEffect(value)
        iterations.push(value)
        const done = yield* functionStep(name, `until (iteration ${iterations.length})`, () => options.until(value as OutputOf<B>, iterations.length))
        if (done === true) return value
      }
      return yield* new LoopLimitExceeded({ loop: name, maxIterations, iterations })
    })) as any
}
