/**
 * The conversation an AG-UI stream builds: the messages before the run (as the client sent them)
 * followed by the messages the run's events make, folded the way an AG-UI client folds them (text
 * into its assistant message, a tool call into its parent assistant message, a tool result as a tool
 * message). `toAgUiEvents` sends it as the `MESSAGES_SNAPSHOT` before `RUN_FINISHED`. Reasoning is
 * left out: a client keeps its reasoning messages when a snapshot has none.
 */
import type { AgUiEvent, AgUiInputMessage, AgUiMessage } from "./ag-ui-event.ts"

interface Call {
  readonly id: string
  readonly type: "function"
  readonly function: { readonly name: string; arguments: string }
}
interface Assistant {
  readonly id: string
  readonly role: "assistant"
  content: string
  readonly toolCalls: Array<Call>
}
type Built = Assistant | Extract<AgUiMessage, { readonly role: "tool" }>

/** A fold of a stream's events into its conversation. */
export interface MessagesFold {
  readonly add: (event: AgUiEvent) => void
  /** The conversation so far: the messages before the run, then the run's. */
  readonly messages: () => ReadonlyArray<AgUiMessage | AgUiInputMessage>
}

/** A fold starting from `before` (the input's messages, kept as sent). */
export const messagesFold = (before: ReadonlyArray<AgUiInputMessage>): MessagesFold => {
  const built: Array<Built> = []
  const assistants = new Map<string, Assistant>()
  const calls = new Map<string, Call>()
  const assistant = (id: string): Assistant => {
    let message = assistants.get(id)
    if (message === undefined) {
      message = { id, role: "assistant", content: "", toolCalls: [] }
      assistants.set(id, message)
      built.push(message)
    }
    return message
  }
  const add = (event: AgUiEvent): void => {
    switch (event.type) {
      case "TEXT_MESSAGE_START":
        assistant(event.messageId)
        break
      case "TEXT_MESSAGE_CONTENT":
        assistant(event.messageId).content += event.delta
        break
      case "TOOL_CALL_START": {
        if (calls.has(event.toolCallId)) break
        const call: Call = { id: event.toolCallId, type: "function", function: { name: event.toolCallName, arguments: "" } }
        calls.set(call.id, call)
        assistant(event.parentMessageId ?? event.toolCallId).toolCalls.push(call)
        break
      }
      case "TOOL_CALL_ARGS": {
        const call = calls.get(event.toolCallId)
        if (call !== undefined) call.function.arguments += event.delta
        break
      }
      case "TOOL_CALL_RESULT":
        built.push({ id: event.messageId, role: "tool", toolCallId: event.toolCallId, content: event.content })
        break
      default:
        break
    }
  }
  const messages = (): ReadonlyArray<AgUiMessage | AgUiInputMessage> => [
    ...before,
    ...built.flatMap((m): Array<AgUiMessage> => {
      if (m.role === "tool") return [m]
      if (m.content === "" && m.toolCalls.length === 0) return []
      return [{
        id: m.id,
        role: "assistant",
        ...(m.content === "" ? {} : { content: m.content }),
        ...(m.toolCalls.length === 0 ? {} : { toolCalls: m.toolCalls.map((c) => ({ id: c.id, type: c.type, function: { ...c.function } })) })
      }]
    })
  ]
  return { add, messages }
}
