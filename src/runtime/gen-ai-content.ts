/**
 * Content capture for GenAI spans: prompts, completions, tool arguments and results, in the shapes
 * of the OpenTelemetry GenAI conventions (`gen_ai.system_instructions`, `gen_ai.input.messages`,
 * `gen_ai.output.messages`: JSON arrays of `{ role, parts }`; `gen_ai.tool.call.arguments` and
 * `gen_ai.tool.call.result`). Content is personal data more often than not, so it is off unless
 * asked for: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` in the environment, or the
 * `CaptureMessageContent` reference provided as `true`.
 */
import type { LlmMessage, LlmResponse, ToolCall } from "../model/messages.ts"
import { finishReasonOf, genAiFinishReason } from "./gen-ai-spans.ts"

export { CaptureMessageContent, captureContentVariable, captureFlag } from "../internal/capture-content.ts"

type Part =
  | { readonly type: "text"; readonly content: string }
  | { readonly type: "reasoning"; readonly content: string }
  | { readonly type: "tool_call"; readonly id: string; readonly name: string; readonly arguments: unknown }
  | { readonly type: "tool_call_response"; readonly id: string; readonly response: string }

interface ChatMessage {
  readonly role: "user" | "assistant" | "tool"
  readonly parts: ReadonlyArray<Part>
  readonly finish_reason?: string
}

/**
 * A call's arguments as the model sent them: the JSON value when it parses, else the raw text. `checked`:
 * the raw text also when the value cannot be written back as JSON.
 */
const argumentsOf = (call: ToolCall, checked: boolean): unknown => {
  try {
    const value = JSON.parse(call.arguments)
    if (checked) JSON.stringify(value)
    return value
  } catch {
    return call.arguments
  }
}

const callParts = (calls: ReadonlyArray<ToolCall> | undefined, checked: boolean): Array<Part> =>
  (calls ?? []).map((call) => ({ type: "tool_call", id: call.id, name: call.name, arguments: argumentsOf(call, checked) }))

const assistantParts = (
  content: string | undefined,
  reasoning: LlmResponse["reasoning"],
  calls: ReadonlyArray<ToolCall> | undefined,
  checked: boolean
): Array<Part> => [
  ...(reasoning ?? []).flatMap((r): Array<Part> => (r._tag === "Thinking" ? [{ type: "reasoning", content: r.text }] : [])),
  ...(content === undefined || content === "" ? [] : [{ type: "text" as const, content }]),
  ...callParts(calls, checked)
]

/**
 * JSON text of the content `build` makes. If it cannot be written (arguments nested deeper than
 * `JSON.stringify`'s stack: valid JSON a model may send), it is built again `checked`, each such call's
 * arguments as the text the model sent: capture must never fail the call it describes.
 */
const encodeContent = (build: (checked: boolean) => unknown): string => {
  try {
    return JSON.stringify(build(false))
  } catch {
    return JSON.stringify(build(true))
  }
}

/**
 * The request's messages as the two content attributes of a `chat` span: the system prompts as
 * `gen_ai.system_instructions`, the rest as `gen_ai.input.messages` (both JSON text).
 *
 * @example
 * ```ts
 * inputContent([{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }])
 * // { "gen_ai.system_instructions": '[{"type":"text","content":"Be brief."}]', "gen_ai.input.messages": '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]' }
 * ```
 */
export const inputContent = (messages: ReadonlyArray<LlmMessage>): Record<string, string> => {
  const system: Array<Part> = []
  for (const message of messages) if (message.role === "system") system.push({ type: "text", content: message.content })
  return {
    ...(system.length === 0 ? {} : { "gen_ai.system_instructions": JSON.stringify(system) }),
    "gen_ai.input.messages": encodeContent((checked) => inputMessages(messages, checked))
  }
}

const inputMessages = (messages: ReadonlyArray<LlmMessage>, checked: boolean): Array<ChatMessage> => {
  const input: Array<ChatMessage> = []
  for (const message of messages) {
    switch (message.role) {
      case "user":
        input.push({ role: "user", parts: [{ type: "text", content: message.content }] })
        break
      case "assistant":
        input.push({ role: "assistant", parts: assistantParts(message.content, message.reasoning, message.toolCalls, checked) })
        break
      case "tool":
        input.push({ role: "tool", parts: [{ type: "tool_call_response", id: message.toolCallId, response: message.content }] })
        break
    }
  }
  return input
}

/** The answer as `gen_ai.output.messages` (JSON text): one assistant message with its finish reason. */
export const outputContent = (response: LlmResponse): Record<string, string> => {
  const calls = response._tag === "ToolCalls" ? response.calls : undefined
  const finishReason = genAiFinishReason(finishReasonOf(response))
  const messages = (checked: boolean): Array<ChatMessage> => [
    { role: "assistant", parts: assistantParts(response.content, response.reasoning, calls, checked), finish_reason: finishReason }
  ]
  return { "gen_ai.output.messages": encodeContent(messages) }
}

/** A tool call's arguments as `gen_ai.tool.call.arguments`: the text the model sent. */
export const toolArgumentsContent = (call: ToolCall): Record<string, string> => ({ "gen_ai.tool.call.arguments": call.arguments })

/** A tool result message's content as `gen_ai.tool.call.result`. */
export const toolResultContent = (result: LlmMessage): Record<string, string> =>
  result.role === "tool" ? { "gen_ai.tool.call.result": result.content } : {}
