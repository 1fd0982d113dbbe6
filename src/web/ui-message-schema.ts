/**
 * The Schema of what `useChat` posts: the AI SDK's `UIMessage` (versions 5, 6 and 7), alone as an array
 * or inside the request body of its default transport (`{ id, messages, trigger, messageId }`).
 *
 * Only what a run needs is kept: text, tool parts (their name, call id, state, input, output or error
 * text, and approval), file parts (handed to the caller, not to the model) and step boundaries. Parts a
 * run has no use for (reasoning, sources, data, custom, steering) are recognised and dropped. A part of
 * any other kind is refused, unless `unknownParts: "ignore"` (for parts a later AI SDK may add).
 * Decoding keeps declared keys only, so keys such as `__proto__` or `constructor` in the body never
 * reach the result; every string and list is bounded by {@link UIMessageLimits}.
 */
import * as Schema from "effect/Schema"

/** Bounds on a request body; over any of them the body is refused with `UIMessagesInvalid`. */
export interface UIMessageLimits {
  /** Messages in the body. Default 1,000. */
  readonly maxMessages?: number
  /** Parts in one message. Default 1,000. */
  readonly maxParts?: number
  /** Characters in one string (a text, a file URL, an error text). Default 1,000,000. */
  readonly maxStringLength?: number
}

/** How parts of a kind the AI SDK does not document are treated: refused (default) or ignored. */
export type UnknownParts = "refuse" | "ignore"

/** The states a tool part can be in (AI SDK 5 has the first two and the `output-*` ones). */
export const toolStates = [
  "input-streaming",
  "input-available",
  "approval-requested",
  "approval-responded",
  "output-available",
  "output-error",
  "output-denied"
] as const

/** Documented parts that carry nothing a run uses. */
const droppedKinds = ["reasoning", "source-url", "source-document", "custom", "reasoning-file", "steering-message"] as const

/** Ids and tool names: short strings. */
const maxIdLength = 1_000

// Optional keys may be present and `undefined`: the AI SDK builds its messages so in memory
// (`readUIMessageStream`, `useChat`'s state, `DirectChatTransport`), and only JSON drops them.
const make = (limits: Required<UIMessageLimits>, unknownParts: UnknownParts) => {
  const Text = Schema.String.check(Schema.isMaxLength(limits.maxStringLength))
  const Id = Schema.String.check(Schema.isMaxLength(maxIdLength))
  const Approval = Schema.Struct({
    id: Id,
    approved: Schema.optional(Schema.Boolean),
    reason: Schema.optional(Text)
  })
  const toolFields = {
    toolCallId: Id,
    state: Schema.Literals(toolStates),
    input: Schema.optional(Schema.Json),
    output: Schema.optional(Schema.Json),
    errorText: Schema.optional(Text),
    approval: Schema.optional(Approval),
    // Read for one mark only (a child run's part, see `fromUIMessages`): any value is accepted.
    toolMetadata: Schema.optional(Schema.Unknown)
  }
  const members = [
    Schema.Struct({ type: Schema.Literal("text"), text: Text, providerMetadata: Schema.optional(Schema.Unknown) }),
    Schema.Struct({ type: Schema.Literal("step-start") }),
    Schema.Struct({ type: Schema.Literal("file"), mediaType: Text, url: Text, filename: Schema.optional(Text) }),
    // A tool part names its tool: "tool-" alone (or an empty `toolName`) is no call a model could have made.
    Schema.Struct({ type: Schema.TemplateLiteral(["tool-", Schema.String]).check(Schema.isMinLength(6), Schema.isMaxLength(maxIdLength)), ...toolFields }),
    Schema.Struct({ type: Schema.Literal("dynamic-tool"), toolName: Id.check(Schema.isMinLength(1)), ...toolFields }),
    Schema.Struct({ type: Schema.Union([Schema.Literals(droppedKinds), Schema.TemplateLiteral(["data-", Schema.String]).check(Schema.isMaxLength(maxIdLength))]) }),
    ...(unknownParts === "ignore" ? [Schema.Struct({ type: Id })] : [])
  ]
  const Part = Schema.Union(members)
  const Message = Schema.Struct({
    id: Schema.optionalKey(Id),
    role: Schema.Literals(["system", "user", "assistant"]),
    parts: Schema.Array(Part).check(Schema.isMaxLength(limits.maxParts))
  })
  const Messages = Schema.Array(Message).check(Schema.isMaxLength(limits.maxMessages))
  const Body = Schema.Union([
    Messages,
    Schema.Struct({
      messages: Messages,
      id: Schema.optionalKey(Id),
      trigger: Schema.optionalKey(Id),
      messageId: Schema.optionalKey(Id)
    })
  ])
  return Body
}

/** The decoded body: what `UIMessageBody` gives. */
export type UIMessageBody = Schema.Schema.Type<ReturnType<typeof make>>
/** One decoded message. */
export type DecodedUIMessage = Extract<UIMessageBody, ReadonlyArray<unknown>>[number]
/** One decoded part. */
export type DecodedUIPart = DecodedUIMessage["parts"][number]

export const defaultLimits: Required<UIMessageLimits> = { maxMessages: 1_000, maxParts: 1_000, maxStringLength: 1_000_000 }

let cached: { readonly key: string; readonly schema: ReturnType<typeof make> } | undefined

/**
 * The Schema of a request body under these limits (the last one made is kept, so a handler with fixed
 * options makes it once).
 *
 * @example
 * ```ts
 * const body = Schema.decodeUnknownSync(uiMessageBody(defaultLimits, "refuse"))(JSON.parse(text))
 * ```
 */
export const uiMessageBody = (limits: Required<UIMessageLimits>, unknownParts: UnknownParts): ReturnType<typeof make> => {
  const key = `${limits.maxMessages}/${limits.maxParts}/${limits.maxStringLength}/${unknownParts}`
  if (cached?.key !== key) cached = { key, schema: make(limits, unknownParts) }
  return cached.schema
}
