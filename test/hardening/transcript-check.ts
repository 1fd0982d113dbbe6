/**
 * A check on transcripts handed to a model: every call of an assistant message has exactly one tool
 * result, between that message and the next non-tool message (the rule OpenAI-compatible APIs enforce
 * with a 400). Shared by the hardening tests and the properties.
 */
import type { LlmMessage } from "../../src/index.ts"

/** The calls that do not have exactly one result, as readable lines (empty when the transcript is sound). */
export const unansweredCalls = (messages: ReadonlyArray<LlmMessage>): Array<string> => {
  const problems: Array<string> = []
  messages.forEach((message, i) => {
    if (message.role !== "assistant" || message.toolCalls === undefined) return
    const end = messages.findIndex((m, j) => j > i && m.role !== "tool")
    const results = messages.slice(i + 1, end === -1 ? undefined : end)
    for (const call of message.toolCalls) {
      const n = results.filter((r) => r.role === "tool" && r.toolCallId === call.id).length
      if (n !== 1) problems.push(`${call.name} (${call.id}): ${n} results`)
    }
  })
  return problems
}
