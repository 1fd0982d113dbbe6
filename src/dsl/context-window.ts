/**
 * The context window of a session: which earlier messages a new run sees. History is cut into turns
 * (a user message and everything after it up to the next one), and whole turns are kept from the most
 * recent back, so a tool call and its result are never split and no run starts on an orphaned result.
 */
import { isRecord } from "../internal/is-record.ts"
import type { LlmMessage } from "../model/messages.ts"
import { kindOf, nearMiss } from "./builder-validation.ts"

/**
 * Keep the last `lastTurns` turns, or as many recent turns as fit in `maxTokens` (estimated as
 * characters / 4). Without a policy, everything is kept.
 *
 * @example
 * ```ts
 * const policy: ContextWindow = { lastTurns: 10 }
 * ```
 */
export type ContextWindow = { readonly lastTurns: number } | { readonly maxTokens: number }

/**
 * What is wrong with `window` as a session's context window, or undefined when it is one: exactly one
 * of `lastTurns` (a whole number of turns, at least 1) and `maxTokens` (a number above 0). A window
 * that keeps nothing (`{ lastTurns: 0 }`) is refused rather than read as "drop the whole conversation".
 *
 * @example
 * ```ts
 * contextWindowProblem({ lastTurn: 1 }) // "unknown key `lastTurn` (did you mean `lastTurns`?); a window is { lastTurns } or { maxTokens }"
 * ```
 */
export const contextWindowProblem = (window: unknown): string | undefined => {
  const shape = "a window is { lastTurns: n } (the last n turns) or { maxTokens: n } (the recent turns that fit), or no window for the whole conversation"
  if (!isRecord(window)) return `${shape}; got ${kindOf(window)}`
  const keys = Object.keys(window)
  for (const key of keys) {
    if (key !== "lastTurns" && key !== "maxTokens") return `unknown key \`${key}\`${nearMiss(key, ["lastTurns", "maxTokens"])}; ${shape}`
  }
  if (keys.length !== 1) return `${keys.length === 0 ? "no key" : "both keys"}: ${shape}`
  if ("lastTurns" in window) {
    const n = window.lastTurns
    return typeof n === "number" && Number.isInteger(n) && n >= 1 ? undefined : `\`lastTurns\` must be a whole number of turns, at least 1 (0 would keep no history at all), got ${typeof n === "number" ? n : kindOf(n)}`
  }
  const n = window.maxTokens
  return typeof n === "number" && n > 0 ? undefined : `\`maxTokens\` must be a number above 0 (0 would keep no history at all), got ${typeof n === "number" ? n : kindOf(n)}`
}

/** The turns of a history: each starts at a user message (leading messages form a turn of their own). */
export const turnsOf = (history: ReadonlyArray<LlmMessage>): ReadonlyArray<ReadonlyArray<LlmMessage>> => {
  const turns: Array<Array<LlmMessage>> = []
  for (const message of history) {
    if (message.role === "user" || turns.length === 0) turns.push([message])
    else turns[turns.length - 1]!.push(message)
  }
  return turns
}

/** A rough token count of a message: characters / 4, tool calls included. */
export const estimateTokens = (message: LlmMessage): number =>
  Math.ceil((message.content.length + (message.role === "assistant" ? JSON.stringify(message.toolCalls ?? []).length : 0)) / 4)

/**
 * The part of `history` a new run sees under `window`.
 *
 * @example
 * ```ts
 * applyWindow(history, { lastTurns: 2 }) // the last two user turns, with their tool calls and answers
 * ```
 */
export const applyWindow = (history: ReadonlyArray<LlmMessage>, window: ContextWindow | undefined): ReadonlyArray<LlmMessage> => {
  if (window === undefined) return history
  const turns = turnsOf(history)
  if ("lastTurns" in window) return turns.slice(Math.max(0, turns.length - Math.max(0, Math.floor(window.lastTurns)))).flat()
  const kept: Array<ReadonlyArray<LlmMessage>> = []
  let used = 0
  for (let i = turns.length - 1; i >= 0; i--) {
    const cost = turns[i]!.reduce((sum, m) => sum + estimateTokens(m), 0)
    if (used + cost > window.maxTokens) break
    used += cost
    kept.unshift(turns[i]!)
  }
  return kept.flat()
}
