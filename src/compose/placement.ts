/**
 * Construction-time checks shared by the operators: every member is a runnable, and no runnable value is
 * placed twice where its answers would be ambiguous (parallel branches, forum participants and captain).
 */
import { kindOf } from "../dsl/builder-validation.ts"
import { AgentConfigError } from "../errors.ts"
import { type AnyRunnable, isRunnable } from "./runnable.ts"
import { shownValue } from "../internal/shown-value.ts"

/** Throws `AgentConfigError` unless `members` is an array of distinct runnables. */
export const checkMembers = (subject: string, members: ReadonlyArray<unknown>, role: string): ReadonlyArray<AnyRunnable> => {
  if (!Array.isArray(members)) {
    throw new AgentConfigError({ subject, reason: `its members must be an array of agents or composites ([a, b]), got ${kindOf(members)}` })
  }
  const seen = new Set<unknown>()
  members.forEach((member, i) => {
    if (!isRunnable(member)) throw new AgentConfigError({ subject, reason: `${role} ${i} is not an agent or a composite` })
    if (seen.has(member)) {
      throw new AgentConfigError({
        subject,
        reason: `"${member.name}" is placed twice (as ${role} ${i}): its answers could not be told apart; build a second agent instead`
      })
    }
    seen.add(member)
  })
  return members as ReadonlyArray<AnyRunnable>
}

/** Throws `AgentConfigError` unless `n` is a whole number ≥ 1 (or `Infinity` where `unbounded` is allowed). */
export const checkCount = (subject: string, option: string, n: unknown, unbounded = false): number => {
  if (typeof n === "number" && ((Number.isInteger(n) && n >= 1) || (unbounded && n === Infinity))) return n
  throw new AgentConfigError({ subject, reason: `${option} must be a whole number ≥ 1${unbounded ? " or Infinity" : ""}, got ${shownValue(n)}` })
}
