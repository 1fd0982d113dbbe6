/**
 * Budgets: how many model turns and tool calls one run may spend before it stops with
 * `BudgetExceeded`. Checked before every model call and before every tool execution.
 */
import { AgentConfigError } from "../errors.ts"

/** The limits of one run. */
export interface Budget {
  /** Model calls per run. Default 8, as in the Kotlin reference. */
  readonly maxTurns: number
  /** Tool executions per run (calls refused before execution do not count). Default: unlimited. */
  readonly maxToolCalls: number
}

/** What `.budget(...)` accepts: any subset of {@link Budget}. */
export type BudgetOptions = Partial<Budget>

/**
 * The default budget: 8 turns, unlimited tool calls.
 *
 * @example
 * ```ts
 * defaultBudget.maxTurns // 8
 * ```
 */
export const defaultBudget: Budget = Object.freeze({ maxTurns: 8, maxToolCalls: Number.POSITIVE_INFINITY })

/** Merges options into a budget, refusing limits that are not positive whole numbers. */
export const mergeBudget = (agent: string, base: Budget, options: BudgetOptions): Budget => {
  const merged = { ...base, ...options }
  for (const key of ["maxTurns", "maxToolCalls"] as const) {
    const value = merged[key]
    const valid = value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= 1)
    if (!valid) {
      throw new AgentConfigError({ subject: `agent "${agent}"`, reason: `budget ${key} must be a whole number >= 1, got ${String(value)}` })
    }
  }
  return Object.freeze(merged)
}
