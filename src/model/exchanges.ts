/**
 * A transcript read as exchanges: each message with the tool results that follow it. An assistant
 * message that calls tools is followed by the results of its calls (providers require it); the
 * transcripts a run leaves behind when it is stopped or fails may break that rule, and the readers
 * that mend them (an interrupted turn answers calls left without a result, a session's history drops
 * them) walk a transcript this way.
 */
import type { LlmMessage } from "./messages.ts"

/** A tool result message. */
export type ToolResultMessage = Extract<LlmMessage, { readonly role: "tool" }>

/**
 * A message and the tool results right after it. `results` is empty unless `message` is an assistant
 * message with tool calls; a tool result that follows anything else is an exchange of its own.
 */
export interface Exchange {
  readonly message: LlmMessage
  readonly results: ReadonlyArray<ToolResultMessage>
}

/**
 * The exchanges of `messages`, in order; their messages and results, read in order, are `messages`.
 *
 * @example
 * ```ts
 * for (const { message, results } of exchangesOf(transcript)) if (message.role === "assistant") count += results.length
 * ```
 */
export function* exchangesOf(messages: ReadonlyArray<LlmMessage>): Generator<Exchange> {
  let i = 0
  while (i < messages.length) {
    const message = messages[i]!
    i++
    const results: Array<ToolResultMessage> = []
    if (message.role === "assistant" && message.toolCalls !== undefined) {
      while (i < messages.length && messages[i]!.role === "tool") results.push(messages[i++] as ToolResultMessage)
    }
    yield { message, results }
  }
}
