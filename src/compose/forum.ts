/**
 * `forum(name, participants, captain)`: the participants answer the same input concurrently, then the
 * captain decides, seeing the input and every participant's answer (the Kotlin reference's captain sees
 * neither). The captain is an agent taking the typed brief, an agent taking text (it then gets the brief
 * rendered as text), or a function of the brief.
 */
import * as Effect from "effect/Effect"
import type { AgentTypeError } from "../dsl/agent-type-error.ts"
import { AgentDefinitionKey, definitionOf } from "../dsl/agent.ts"
import { AgentConfigError, SnapshotInvalid } from "../errors.ts"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import { checkMemberResume } from "./composite-snapshot.ts"
import { checkName, type Composite, makeComposite, memberAt, type Outcome, type Settle, settleMember, type ValueOf } from "./composite.ts"
import { asJson, checkConcurrently, type Concurrent, isConcurrentSuspension, resumeConcurrently, runConcurrently } from "./concurrent-members.ts"
import { type StepFailed } from "./errors.ts"
import { functionStep, type StepValue } from "./function-step.ts"
import { checkCount, checkMembers } from "./placement.ts"
import type { Outputs, SameInput } from "./parallel.ts"
import { type AnyRunnable, type ErrorOf, type InputOf, isRunnable, type OutputOf, type RequirementsOf, type Same } from "./runnable.ts"

/** What the captain sees: the input and each participant's answer, in the order given. */
export interface ForumBrief<In, Answers extends ReadonlyArray<unknown>> {
  readonly input: In
  readonly answers: { readonly [I in keyof Answers]: { readonly participant: string; readonly answer: Answers[I] } }
}

type Members = readonly [AnyRunnable, ...ReadonlyArray<AnyRunnable>]
type BriefOf<Ps extends Members> = ForumBrief<InputOf<Ps[0]>, Outputs<Ps>>

/** A captain: an agent taking the brief or text, or a function of the brief. */
export type CheckCaptain<Ps extends Members, C> = C extends AnyRunnable
  ? Same<InputOf<C>, string> extends true ? C
  : Same<InputOf<C>, BriefOf<Ps>> extends true ? C
  : AgentTypeError<"the captain must take text or the forum's brief { input, answers: [{ participant, answer }] }">
  : C extends (brief: BriefOf<Ps>, signal: AbortSignal) => unknown ? C
  : AgentTypeError<"the captain must be an agent or a function of the brief">

/** The captain's output. */
export type CaptainOutput<C> = C extends AnyRunnable ? OutputOf<C> : C extends (...args: any) => infer R ? StepValue<R> : never

/**
 * Participants answer concurrently (at most `concurrency` at once; the first failure interrupts the
 * others), then the captain decides. A participant or captain agent that may wait for a human decision
 * makes the result `Completed<Out> | CompositeSuspended`. While participants wait, the forum suspends as
 * a whole, as a parallel does (their calls named `<participant index>/<call id>`, the answers of the
 * others in its snapshot); `resume(snapshot, decisions)` checks every participant's decisions before
 * any continues, continues the waiting ones, then the captain decides without asking the others again.
 * A captain that waits suspends the forum too; its resume continues the captain (the answers are in
 * its snapshot). The captain sees each participant's completed answer, never a suspension.
 *
 * @example
 * ```ts
 * const panel = forum("panel", [optimist, pessimist], (brief) => brief.answers.map((a) => a.answer).join("\n"))
 * const verdict = await forum("review", [security, performance], judge).run(diff) // judge: an agent
 * ```
 */
export const forum = <
  const Ps extends Members,
  const C extends AnyRunnable | ((brief: BriefOf<Ps>, signal: AbortSignal) => MaybeEffect<unknown>)
>(
  name: string,
  participants: SameInput<Ps>,
  captain: CheckCaptain<Ps, C>,
  options: { readonly concurrency?: number } = {}
): Composite<
  InputOf<Ps[0]>,
  Outcome<CaptainOutput<C> | OutputOf<Ps[number]>, ValueOf<CaptainOutput<C>>>,
  ErrorOf<Ps[number]> | (C extends AnyRunnable ? ErrorOf<C> : StepFailed),
  RequirementsOf<Ps[number]> | (C extends AnyRunnable ? RequirementsOf<C> : never)
> => {
  checkName("forum", name)
  const subject = `forum "${name}"`
  const members = checkMembers(subject, participants as ReadonlyArray<unknown>, "participant")
  const concurrency = checkCount(subject, "concurrency", options.concurrency ?? Infinity, true)
  const decide = captain as unknown
  if (isRunnable(decide) && members.includes(decide)) {
    throw new AgentConfigError({ subject, reason: `"${decide.name}" cannot be both a participant and the captain` })
  }
  if (!isRunnable(decide) && typeof decide !== "function") {
    throw new AgentConfigError({ subject, reason: "the captain must be an agent, a composite or a function" })
  }
  const children = isRunnable(decide) ? [...members, decide] : members
  const captainIndex = members.length
  const decided = (settle: Settle, result: unknown) => {
    const settled = settleMember(settle, captainIndex, decide as AnyRunnable, result)
    return "suspended" in settled ? settled.suspended : settle.complete(settled.value)
  }
  /** The input is kept in a participants' suspension: the captain's brief needs it once they continue. */
  const at = (input: unknown) => ({ concurrency, collect: false, keep: () => ({ input: asJson(name, input) }) })
  /** The captain decides on the participants' answers, unless some participant waits. */
  const answered = (input: unknown, settle: Settle, outcome: Concurrent) =>
    Effect.gen(function*() {
      if ("suspended" in outcome) return outcome.suspended
      const brief = { input, answers: outcome.values.map((answer, i) => ({ participant: members[i]!.name, answer })) }
      if (typeof decide === "function") {
        return settle.complete(yield* functionStep(name, "captain", (signal) => (decide as (b: unknown, s: AbortSignal) => MaybeEffect<unknown>)(brief, signal)))
      }
      const takesText = captainTakesText(decide as AnyRunnable)
      return decided(settle, yield* (decide as AnyRunnable).runEffect(takesText ? renderBrief(brief) : brief))
    })
  const captainOnly = (issues: string) => Effect.fail(new SnapshotInvalid({ issues }))
  const noInput = () => captainOnly(`a suspension of the participants of forum "${name}" keeps the forum's input`)
  return makeComposite(name, "forum", children, {
    run: (input, settle) => Effect.flatMap(runConcurrently(name, members, input, at(input), settle), (outcome) => answered(input, settle, outcome)),
    resume: (snapshot, decisions, settle) => {
      if (isConcurrentSuspension(snapshot)) {
        const input = snapshot.state.input
        if (input === undefined) return noInput()
        return Effect.flatMap(resumeConcurrently(name, members, snapshot, decisions, at(input), settle), (outcome) => answered(input, settle, outcome))
      }
      return snapshot.state.stage !== captainIndex || !isRunnable(decide)
        ? captainOnly(`only a participant or the captain of forum "${name}" can have suspended`)
        : Effect.flatMap(memberAt(name, children, snapshot), (captain) =>
          Effect.map(captain.resume(snapshot.state.member, decisions), (result) => decided(settle, result)))
    },
    // Everything the resume refuses, refused by the check too (a parallel around this forum checks it
    // before any of its other members continues).
    check: (snapshot, decisions) =>
      isConcurrentSuspension(snapshot)
        ? snapshot.state.input === undefined ? noInput() : checkConcurrently(name, members, snapshot, decisions)
        : snapshot.state.stage !== captainIndex || !isRunnable(decide)
        ? captainOnly(`only a participant or the captain of forum "${name}" can have suspended`)
        : Effect.flatMap(memberAt(name, children, snapshot), (captain) => checkMemberResume(captain, snapshot.state.member, decisions))
  }) as any
}

/** Agents without an input Schema take text; composites and typed agents take the brief itself. */
const captainTakesText = (captain: AnyRunnable): boolean =>
  AgentDefinitionKey in captain && definitionOf(captain as Parameters<typeof definitionOf>[0]).input === undefined

const asText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value) ?? String(value))

/** The brief as a text captain reads it. */
export const renderBrief = (brief: { readonly input: unknown; readonly answers: ReadonlyArray<{ readonly participant: string; readonly answer: unknown }> }): string =>
  [
    `Question:\n${asText(brief.input)}`,
    `Answers (${brief.answers.length}):`,
    ...brief.answers.map((a, i) => `${i + 1}. ${a.participant}:\n${asText(a.answer)}`),
    "Decide, using the answers above."
  ].join("\n\n")
