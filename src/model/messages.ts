/**
 * The provider-neutral protocol between the runtime and a model: messages, tool calls, responses and
 * the canonical tool definitions sent with every request. Each provider maps these to its wire format.
 */
import type { JsonSchema } from "effect"

/** One tool invocation requested by the model. `arguments` is raw: a JSON string or an object. */
export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: unknown
}

/** A message in the conversation, in the order the model sees it. */
export type LlmMessage =
  | { readonly role: "system" | "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls?: ReadonlyArray<ToolCall> }
  | { readonly role: "tool"; readonly toolCallId: string; readonly name: string; readonly content: string }

/** Token counts reported by a provider, when it reports them. */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
}

/** What a model answers: a final text, or tool calls (optionally with some text beside them). */
export type LlmResponse =
  | { readonly _tag: "Text"; readonly content: string; readonly usage?: Usage }
  | {
    readonly _tag: "ToolCalls"
    readonly calls: ReadonlyArray<ToolCall>
    readonly content?: string
    readonly usage?: Usage
  }

/** A JSON Schema object (draft 2020-12), as generated from an Effect Schema. */
export type JsonSchemaObject = JsonSchema.JsonSchema

/**
 * The canonical definition of a tool: the authoritative contract sent to providers. `parameters` is
 * generated from the tool's Schema and never mutated afterwards.
 */
export interface ToolDefinition {
  readonly type: "function"
  readonly name: string
  readonly description?: string
  readonly parameters: JsonSchemaObject
  readonly strict?: boolean
}

/** How the model may use tools on this call: freely, at least one, none, or one named tool. */
export type ToolChoice = "auto" | "required" | "none" | { readonly tool: string }

/** One call to a model. */
export interface ModelRequest {
  readonly messages: ReadonlyArray<LlmMessage>
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly toolChoice?: ToolChoice
  readonly temperature?: number
}

/**
 * Builds a text response.
 *
 * @example
 * ```ts
 * const answer = text("16")
 * ```
 */
export const text = (content: string, usage?: Usage): LlmResponse =>
  usage === undefined ? { _tag: "Text", content } : { _tag: "Text", content, usage }

/**
 * Builds a tool-calls response.
 *
 * @example
 * ```ts
 * const step = toolCalls([{ id: "c1", name: "add", arguments: { a: 3, b: 5 } }])
 * ```
 */
export const toolCalls = (calls: ReadonlyArray<ToolCall>, content?: string): LlmResponse =>
  content === undefined ? { _tag: "ToolCalls", calls } : { _tag: "ToolCalls", calls, content }
