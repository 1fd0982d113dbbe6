/**
 * The input's messages as the closing `MESSAGES_SNAPSHOT` repeats them: as the client sent them, made
 * to fit AG-UI's message shapes. The input is read leniently (clients send `content: null`, tool calls
 * without `type`, an activity message without its content), but a snapshot is checked by the client
 * against `@ag-ui/core`'s schemas, and one field that does not fit fails the whole run there. So the
 * same rule holds at every level, a message, a tool call, a content part and its source: an optional
 * field AG-UI types (`name`, `encryptedValue`, `subagentRunId`, `id`, `mimeType`, `provider`, a tool
 * message's `error`: strings; `metadata`: an object, or on a content part anything but `null`) that
 * holds something else, `null` included, is left out; a tool call gets `type: "function"`; and what
 * lacks a field AG-UI requires is left out whole (a tool call without its id, name or arguments, a
 * content part of a type AG-UI does not know or without its text or source, an activity or reasoning
 * message without its content). Any other field is kept as sent.
 */
import type { AgUiInputMessage } from "./ag-ui-event.ts"
import { isRecord } from "../../../internal/is-record.ts"

type Fields = Record<string, unknown>


/** A copy of `record` without the optional fields whose value `fits` refuses. */
const withoutMisfits = (record: Fields, fits: Readonly<Record<string, (value: unknown) => boolean>>): Fields => {
  const out: Fields = { ...record }
  for (const [key, fit] of Object.entries(fits)) if (Object.hasOwn(out, key) && !fit(out[key])) delete out[key]
  return out
}

const isString = (u: unknown): boolean => typeof u === "string"
const notNull = (u: unknown): boolean => u !== null && u !== undefined

/** The optional fields a message may carry, by role (AG-UI's `BaseMessage` and its siblings). */
const messageFields: Readonly<Record<string, Readonly<Record<string, (value: unknown) => boolean>>>> = {
  assistant: { name: isString, encryptedValue: isString, subagentRunId: isString, metadata: isRecord, content: isString, toolCalls: Array.isArray },
  user: { name: isString, encryptedValue: isString, subagentRunId: isString, metadata: isRecord },
  tool: { encryptedValue: isString, subagentRunId: isString, metadata: isRecord, error: isString },
  activity: { subagentRunId: isString, metadata: isRecord },
  reasoning: { encryptedValue: isString, subagentRunId: isString, metadata: isRecord },
  system: { name: isString, encryptedValue: isString, subagentRunId: isString, metadata: isRecord },
  developer: { name: isString, encryptedValue: isString, subagentRunId: isString, metadata: isRecord }
}

/** A tool call in AG-UI's `ToolCall` shape, or undefined when it lacks its id, name or arguments. */
const echoedCall = (call: unknown): Fields | undefined => {
  if (!isRecord(call) || typeof call["id"] !== "string") return undefined
  const fn = call["function"]
  if (!isRecord(fn) || typeof fn["name"] !== "string" || typeof fn["arguments"] !== "string") return undefined
  return { ...withoutMisfits(call, { encryptedValue: isString, metadata: isRecord }), type: "function" }
}

/** Where a media part's bytes are (AG-UI's `PartSource`), or undefined when it is none. */
const echoedSource = (source: unknown): Fields | undefined => {
  if (!isRecord(source) || typeof source["value"] !== "string") return undefined
  switch (source["type"]) {
    case "data":
      return typeof source["mimeType"] === "string" ? source : undefined
    case "url":
      return withoutMisfits(source, { mimeType: isString })
    case "file":
      return withoutMisfits(source, { mimeType: isString, provider: isString })
    default:
      return undefined
  }
}

const mediaTypes: ReadonlySet<unknown> = new Set(["image", "audio", "video", "document"])

/** A content part AG-UI knows (text with its text; image, audio, video or document with its source), or undefined. */
const echoedPart = (part: unknown): Fields | undefined => {
  if (!isRecord(part)) return undefined
  const cleaned = withoutMisfits(part, { id: isString, metadata: notNull })
  if (part["type"] === "text") return typeof part["text"] === "string" ? cleaned : undefined
  if (!mediaTypes.has(part["type"])) return undefined
  const source = echoedSource(part["source"])
  return source === undefined ? undefined : { ...cleaned, source }
}

const present = <A>(values: ReadonlyArray<A | undefined>): Array<A> => values.filter((v): v is A => v !== undefined)

/**
 * `message` in AG-UI's shape for a `MESSAGES_SNAPSHOT`, or undefined when it has none (an activity or
 * reasoning message without its content).
 *
 * @example
 * ```ts
 * echoedMessage({ id: "a1", role: "assistant", content: null, toolCalls: [{ id: "c", function: { name: "f", arguments: "{}" }, metadata: null }] })
 * // { id: "a1", role: "assistant", toolCalls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] }
 * ```
 */
export const echoedMessage = (message: AgUiInputMessage): AgUiInputMessage | undefined => {
  const out = withoutMisfits(message, messageFields[message.role] ?? {})
  switch (message.role) {
    case "assistant":
      if (Array.isArray(out["toolCalls"])) out["toolCalls"] = present(out["toolCalls"].map(echoedCall))
      break
    case "user":
    case "tool":
      if (Array.isArray(out["content"])) out["content"] = present(out["content"].map(echoedPart))
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
