/**
 * Budget soft landing: what happens when a run reaches a countable limit (turns, tool calls, tokens,
 * repetitions of one tool). By default it stops with `BudgetExceeded`; a policy may instead `extend`
 * the limit (bounded: all extensions of a limit together at most the limit itself, so never more than
 * twice the configured budget) or ask for a `finalAnswer` (one last model call without tools, whose
 * answer ends the run). Durations are not negotiable: they are timeouts.
 */
import * as Data from "effect/Data"
import type { BudgetReason } from "../errors.ts"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"

/** What the policy decided. */
export type BudgetDecision = Data.TaggedEnum<{
  Fail: {}
  Extend: { readonly by: number }
  FinalAnswer: {}
}>

const BudgetDecisionEnum = Data.taggedEnum<BudgetDecision>()

/**
 * The decisions: `BudgetPolicy.fail`, `BudgetPolicy.extend(by)`, `BudgetPolicy.finalAnswer`.
 *
 * @example
 * ```ts
 * agent("a").budgetPolicy(({ reason, extended }) => (reason === "turns" && extended === 0 ? BudgetPolicy.extend(2) : BudgetPolicy.finalAnswer))
 * ```
 */
export const BudgetPolicy = {
  fail: BudgetDecisionEnum.Fail() as BudgetDecision,
  extend: (by: number): BudgetDecision => BudgetDecisionEnum.Extend({ by: Math.max(0, Math.floor(by)) }),
  finalAnswer: BudgetDecisionEnum.FinalAnswer() as BudgetDecision,
  $is: BudgetDecisionEnum.$is,
  $match: BudgetDecisionEnum.$match
} as const

/** What the policy sees: the limit reached, its use, and how much it was extended already. */
export interface BudgetLimitContext {
  readonly agent: string
  readonly reason: BudgetReason
  readonly limit: number
  readonly used: number
  /** The sum of the extensions granted so far for this limit. */
  readonly extended: number
}

/**
 * A budget policy: sync, async or an Effect. One that throws or fails counts as `fail`.
 *
 * @example
 * ```ts
 * const policy: BudgetLimitPolicy = () => BudgetPolicy.finalAnswer
 * ```
 */
export type BudgetLimitPolicy = (context: BudgetLimitContext) => MaybeEffect<BudgetDecision>
