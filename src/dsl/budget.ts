/**
 * Budgets: what one run may spend before it stops with `BudgetExceeded`. Turns, tokens and tool calls
 * are checked before the model call or tool execution they would pay for; durations bound work
 * **while it runs** (an Effect timeout interrupts it and aborts its HTTP request or tool signal).
 */
import * as Duration from "effect/Duration"
import { AgentConfigError } from "../errors.ts"
import { shownValue } from "../internal/shown-value.ts"
import { durationMillis } from "../internal/duration-millis.ts"

/** The limits of one run; durations in milliseconds; `Infinity` means unlimited. */
export interface Budget {
  /** Model calls per run (a model-routed skill choice counts). Default 8, as in the Kotlin reference. */
  readonly maxTurns: number
  /** Tool executions per run (calls refused before execution do not count). Default 32. */
  readonly maxToolCalls: number
  /** Wall time of the whole run, enforced while a model call or tool runs. Default 5 minutes. */
  readonly maxDuration: number
  /** Wall time of one tool execution. Default: unlimited. */
  readonly perToolTimeout: number
  /** Input + output tokens reported by the model over the run. Default: unlimited. */
  readonly maxTokens: number
  /** Executions of the same tool in a row, across turns; another tool resets the count. Default: unlimited. */
  readonly maxConsecutiveSameTool: number
  /**
   * Wall time one hook (listener) may take before it is abandoned (its signal aborted) and reported
   * as a `HookFailed`. Default 5 seconds. Hooks inside the run are also bounded by `maxDuration`; the
   * hooks after it ended (`BudgetExceeded`, `RunEnd`, `onError`) by this alone, each listener in turn.
   */
  readonly hookTimeout: number
  /** Size in bytes (UTF-8) of one tool call's raw arguments, checked before parsing. Default 1 MiB. */
  readonly maxToolArgsBytes: number
  /**
   * How many tool calls of one model response run at once. Default 1 (one after the other): tools may
   * have side effects whose order the model meant ("create" then "update" in one response), and hooks,
   * the "same tool in a row" count and traces keep their sequential meaning. Raise it for independent,
   * slow tools (HTTP lookups). Results are appended in call order either way; tool-call budgets are
   * checked and charged atomically, so they stay exact; a run driven step by step (`runUntil`) stays sequential.
   */
  readonly toolConcurrency: number
}

/** What `.budget(...)` accepts: any subset; durations as Effect `Duration` inputs ("30 seconds", 5000). */
export interface BudgetOptions {
  readonly maxTurns?: number
  readonly maxToolCalls?: number
  readonly maxDuration?: Duration.Input
  readonly perToolTimeout?: Duration.Input
  readonly maxTokens?: number
  readonly maxConsecutiveSameTool?: number
  readonly hookTimeout?: Duration.Input
  readonly maxToolArgsBytes?: number
  readonly toolConcurrency?: number
}

/**
 * The default budget: 8 turns, 32 tool calls, 5 minutes; no per-tool timeout, token or repetition limit;
 * hooks bounded by 5 seconds each, a call's raw arguments by 1 MiB.
 *
 * @example
 * ```ts
 * defaultBudget.maxTurns // 8
 * ```
 */
export const defaultBudget: Budget = Object.freeze({
  maxTurns: 8,
  maxToolCalls: 32,
  maxDuration: 5 * 60 * 1000,
  perToolTimeout: Number.POSITIVE_INFINITY,
  maxTokens: Number.POSITIVE_INFINITY,
  maxConsecutiveSameTool: Number.POSITIVE_INFINITY,
  hookTimeout: 5_000,
  maxToolArgsBytes: 1024 * 1024,
  toolConcurrency: 1
})

const counts = ["maxTurns", "maxToolCalls", "maxTokens", "maxConsecutiveSameTool", "maxToolArgsBytes", "toolConcurrency"] as const
const durations = ["maxDuration", "perToolTimeout", "hookTimeout"] as const

/** Merges options into a budget, refusing limits that are not positive whole numbers or durations. */
export const mergeBudget = (agent: string, base: Budget, options: BudgetOptions): Budget => {
  const fail = (key: string, value: unknown, what: string) =>
    new AgentConfigError({ subject: `agent "${agent}"`, reason: `budget ${key} must be ${what}, got ${shownValue(value)}` })
  const merged: { -readonly [K in keyof Budget]: number } = { ...base }
  for (const key of counts) {
    const value = options[key]
    if (value === undefined) continue
    if (!(value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= 1))) throw fail(key, value, "a whole number >= 1")
    merged[key] = value
  }
  for (const key of durations) {
    const value = options[key]
    if (value === undefined) continue
    const millis = durationMillis(value)
    if (!(millis > 0)) throw fail(key, value, "a positive duration")
    merged[key] = millis
  }
  return Object.freeze(merged)
}
