/**
 * The provider-neutral messages as Effect Schemas: what a snapshot's transcript, a session store's
 * history and a durable run's recorded answers are checked against when they are read back. One
 * definition, so that a field a message can carry (an assistant's `reasoning`) is accepted everywhere
 * a message is read.
 */
import * as Schema from "effect/Schema"

/**
 * A tool call (`ToolCall`): its id, the tool's name and the arguments as JSON text.
 *
 * @example
 * ```ts
 * Schema.decodeUnknownSync(ToolCallSchema)({ id: "c1", name: "add", arguments: "{\"a\":1}" })
 * ```
 */
export const ToolCallSchema = Schema.Struct({ id: Schema.String, name: Schema.String, arguments: Schema.String })

/**
 * A part of a model's reasoning (`ReasoningPart`): its thinking (with the provider's signature, when
 * it gives one) or a redacted block.
 *
 * @example
 * ```ts
 * Schema.decodeUnknownSync(ReasoningPartSchema)({ _tag: "Thinking", text: "2 + 2 is 4", signature: "sig" })
 * ```
 */
export const ReasoningPartSchema = Schema.Union([
  Schema.Struct({ _tag: Schema.Literal("Thinking"), text: Schema.String, signature: Schema.optionalKey(Schema.String) }),
  Schema.Struct({ _tag: Schema.Literal("Redacted"), data: Schema.String })
])

/**
 * A message of a conversation (`LlmMessage`): system, user, assistant (with its tool calls and its
 * reasoning, which providers such as Anthropic need back on the next request) or a tool's result.
 *
 * @example
 * ```ts
 * Schema.decodeUnknownSync(LlmMessageSchema)({ role: "assistant", content: "", toolCalls: [], reasoning: [{ _tag: "Redacted", data: "…" }] })
 * ```
 */
export const LlmMessageSchema = Schema.Union([
  Schema.Struct({ role: Schema.Literals(["system", "user"]), content: Schema.String }),
  Schema.Struct({
    role: Schema.Literal("assistant"),
    content: Schema.String,
    toolCalls: Schema.optionalKey(Schema.Array(ToolCallSchema)),
    reasoning: Schema.optionalKey(Schema.Array(ReasoningPartSchema))
  }),
  Schema.Struct({ role: Schema.Literal("tool"), toolCallId: Schema.String, name: Schema.String, content: Schema.String })
])
