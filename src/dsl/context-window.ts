/**
 * The context window of a session: which earlier messages a new run sees. History is cut into turns
 * (a user message and everything after it up to the next one), and whole turns are kept from the most
 * recent back, so a tool call and its result are never split and no run starts on an orphaned result.
 */
import type { LlmMessage } from "../model/messages.ts"

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
