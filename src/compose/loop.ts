/**
 * `loop(name, body, { until, maxIterations })`: the body's output is fed back as its next input until
 * `until` accepts an output. The cap is required (the Kotlin reference's loop has none): reaching it
 * fails with `LoopLimitExceeded`, which carries every output so far.
 */
import * as Effect from "effect/Effect"
import type { AgentTypeError } from "../dsl/agent-type-error.ts"
import { AgentConfigError, SnapshotInvalid } from "../errors.ts"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import { checkMemberResume, type CompositeSnapshot } from "./composite-snapshot.ts"
import { checkName, type Composite, makeComposite, memberAt, type Outcome, type Settle, settleMember, type ValueOf } from "./composite.ts"
import { asJson, keepingJson } from "./concurrent-members.ts"
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

/** The body must output what it takes (its completed output, for a body that may suspend). */
export type LoopBody<B> = Same<InputOf<B>, ValueOf<OutputOf<B>>> extends true ? B
  : AgentTypeError<"a loop's body must output the same type it takes, so its output can be its next input">

/**
 * Runs `body` repeatedly on its own output. When the body may wait for a human decision, the result
 * is `Completed<Out> | CompositeSuspended`: an iteration that suspends suspends the loop (its snapshot
 * holds the outputs of the iterations before it), and `resume(snapshot, decisions)` continues that
 * iteration, then the loop. The cap and `until` (its source text) are part of the loop's fingerprint: a
 * loop changed since the snapshot refuses it with `DefinitionChanged`.
 *
 * @example
 * ```ts
 * const polished = loop("polish", editor, { until: (draft) => draft.length < 500, maxIterations: 5 })
 * ```
 */
export const loop = <const B extends AnyRunnable>(
  name: string,
  body: LoopBody<B>,
  options: LoopOptions<ValueOf<OutputOf<B>>>
): Composite<InputOf<B>, Outcome<OutputOf<B>, ValueOf<OutputOf<B>>>, ErrorOf<B> | LoopLimitExceeded | StepFailed, RequirementsOf<B>> => {
  checkName("loop", name)
  const subject = `loop "${name}"`
  const [member] = checkMembers(subject, [body], "body")
  const maxIterations = checkCount(subject, "maxIterations", options?.maxIterations)
  if (typeof options.until !== "function") throw new AgentConfigError({ subject, reason: "`until` must be a function" })
  /** Goes on from the body's result `first`, after the outputs `iterations` of the iterations before it. */
  const iterate = (settle: Settle, iterations: Array<unknown>, first: unknown) =>
    Effect.gen(function*() {
      let result = first
      for (;;) {
        // The outputs kept as JSON, so a resume here and one in another process (or after a signature
        // check) see the same; one that is not JSON fails the suspension (`SnapshotInvalid`).
        const settled = yield* keepingJson(() => settleMember(settle, 0, member!, result, () => ({ iterations: iterations.map((output) => asJson(name, output)) })))
        if ("suspended" in settled) return settled.suspended
        const value = settled.value
        iterations.push(value)
        const done = yield* functionStep(name, `until (iteration ${iterations.length})`, () => options.until(value as never, iterations.length))
        if (done === true) return settle.complete(value)
        if (iterations.length >= maxIterations) return yield* new LoopLimitExceeded({ loop: name, maxIterations, iterations })
        result = yield* member!.runEffect(value)
      }
    })
  /** The body of a snapshot that can be this loop's: one suspended within the cap. */
  const suspendedBody = (snapshot: CompositeSnapshot) => {
    const before = snapshot.state.iterations ?? []
    return before.length >= maxIterations
      ? Effect.fail(new SnapshotInvalid({ issues: `loop "${name}" cannot have suspended after ${before.length} iteration(s) of at most ${maxIterations}` }))
      : memberAt(name, [member!], snapshot)
  }
  return makeComposite(name, "loop", [member!], {
    // A snapshot is resumed only by a loop of the same cap and the same `until` (by its source text:
    // two closures of one source over other captured values look the same).
    shape: { maxIterations, until: String(options.until) },
    run: (input, settle) => Effect.flatMap(member!.runEffect(input), (result) => iterate(settle, [], result)),
    resume: (snapshot, decisions, settle) =>
      Effect.flatMap(suspendedBody(snapshot), (body) =>
        Effect.flatMap(body.resume(snapshot.state.member, decisions), (result) => iterate(settle, [...(snapshot.state.iterations ?? [])], result))),
    // Everything the resume refuses, refused by the check too: a parallel or forum around this loop
    // checks it before any of its other members continues.
    check: (snapshot, decisions) => Effect.flatMap(suspendedBody(snapshot), (body) => checkMemberResume(body, snapshot.state.member, decisions))
  }) as any
}
