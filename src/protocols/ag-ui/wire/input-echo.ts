/**
 * The input's messages as the closing `MESSAGES_SNAPSHOT` repeats them: as the client sent them, made
 * to fit AG-UI's message shapes. The input is read leniently (clients send `content: null`, tool calls
 * without `type`, an activity message without its content), but a snapshot is checked by the client
 * against `@ag-ui/core`'s schemas, and one message that does not fit fails the whole run there. So a
 * `null` where AG-UI has an optional field is left out, a tool call gets `type: "function"`, a field
 * AG-UI types (`name`, `encryptedValue`, `subagentRunId`, a tool message's `error`: strings;
 * `metadata`: an object) that holds something else is left out, a content part AG-UI does not know (a
 * text part without its text, a type of its own) is left out, and an activity or reasoning message
 * without the content AG-UI requires is left out of the snapshot. Any other field is kept as sent.
 */
import type { AgUiInputMessage } from "./ag-ui-event.ts"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const optionalString = (record: Record<string, unknown>, key: string) => !(key in record) || typeof record[key] === "string"

/** Where a media part's bytes are (AG-UI's `PartSource`): inline data with its type, a URL, a provider's file. */
const fitsSource = (source: unknown): boolean =>
  isRecord(source) && typeof source["value"] === "string" &&
  (source["type"] === "data"
    ? typeof source["mimeType"] === "string"
    : (source["type"] === "url" || source["type"] === "file") && optionalString(source, "mimeType") && optionalString(source, "provider"))

/** The content parts AG-UI knows: a text part with its text; an image, audio, video or document part with its source. */
const fitsPart = (part: unknown): boolean => {
  if (!isRecord(part) || !optionalString(part, "id") || part["metadata"] === null) return false
  if (part["type"] === "text") return typeof part["text"] === "string"
  return ["image", "audio", "video", "document"].includes(part["type"] as string) && fitsSource(part["source"])
}

const stringFields = ["name", "encryptedValue", "subagentRunId"] as const
const optionalFields = ["content", "toolCalls", "error", ...stringFields, "metadata"] as const

/**
 * `message` in AG-UI's shape for a `MESSAGES_SNAPSHOT`, or undefined when it has none (an activity or
 * reasoning message without its content).
 *
 * @example
 * ```ts
 * echoedMessage({ id: "a1", role: "assistant", content: null, toolCalls: [{ id: "c", function: { name: "f", arguments: "{}" } }] })
 * // { id: "a1", role: "assistant", toolCalls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] }
 * ```
 */
export const echoedMessage = (message: AgUiInputMessage): AgUiInputMessage | undefined => {
  const out: Record<string, unknown> = { ...message }
  for (const key of optionalFields) if (out[key] === null) delete out[key]
  for (const key of stringFields) if (key in out && typeof out[key] !== "string") delete out[key]
  if ("metadata" in out && !isRecord(out["metadata"])) delete out["metadata"]
  switch (message.role) {
    case "assistant":
      if (Array.isArray(out["toolCalls"])) out["toolCalls"] = out["toolCalls"].map((call) => (isRecord(call) ? { ...call, type: "function" } : call))
      break
    case "user":
    case "tool":
      if (Array.isArray(out["content"])) out["content"] = out["content"].filter(fitsPart)
      if (message.role === "tool" && "error" in out && typeof out["error"] !== "string") delete out["error"]
      break
    case "activity":
      if (typeof out["activityType"] !== "string" || !isRecord(out["content"])) return undefined
      break
    case "reasoning":
      if (typeof out["content"] !== "string") return undefined
      break
  }
  return out as AgUiInputMessage
}

/**
 * The input's messages for a `MESSAGES_SNAPSHOT` (`echoedMessage` of each; those without a shape left out).
 *
 * @example
 * ```ts
 * const snapshot = { type: "MESSAGES_SNAPSHOT", messages: [...echoedMessages(input.messages), ...runMessages] }
 * ```
 */
export const echoedMessages = (messages: ReadonlyArray<AgUiInputMessage>): Array<AgUiInputMessage> => {
  const out: Array<AgUiInputMessage> = []
  for (const message of messages) {
    const echoed = echoedMessage(message)
    if (echoed !== undefined) out.push(echoed)
  }
  return out
}
