/**
 * The provider-neutral protocol between the runtime and a model: messages, tool calls, responses and
 * the canonical tool definitions sent with every request. Each provider maps these to its wire format.
 *
 * What a client hands the loop is normalised: a tool call's `arguments` is the JSON text the model
 * sent and its `id` is unique in the response. Adapters normalise their wire (Ollama sends objects and
 * no ids); user-supplied responses (`ModelClient.fromFunction`, `scriptedModel`) are written in the
 * looser `LlmResponseInit` and normalised by the client.
 */
import type * as JsonSchema from "effect/JsonSchema"

/**
 * One tool invocation requested by the model. `arguments` is the raw JSON text the model sent (the
 * tool decodes it); `id` is unique within its response (assigned by the client when the wire has none).
 */
export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

/**
 * A tool call as users write it in scripts and `fromFunction` answers: `arguments` may be an object
 * (serialised to JSON once, by the client) and `id` may be left out (the client assigns one).
 *
 * @example
 * ```ts
 * const call: ToolCallInit = { name: "add", arguments: { a: 3, b: 5 } }
 * ```
 */
export interface ToolCallInit {
  readonly id?: string
  readonly name: string
  readonly arguments: unknown
}

/** A message in the conversation, in the order the model sees it. */
export type LlmMessage =
  | { readonly role: "system" | "user"; readonly content: string }
  | {
    readonly role: "assistant"
    readonly content: string
    readonly toolCalls?: ReadonlyArray<ToolCall>
    /** The model's reasoning on that turn, sent back to providers that want it (Ollama, Anthropic). */
    readonly reasoning?: ReadonlyArray<ReasoningPart>
  }
  | { readonly role: "tool"; readonly toolCallId: string; readonly name: string; readonly content: string }

/** Token counts reported by a provider, when it reports them. */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
  /** Of `inputTokens`, those read from the provider's prompt cache (when reported). */
  readonly cachedInputTokens?: number
  /** Of `outputTokens`, those spent on hidden reasoning (when reported). */
  readonly reasoningTokens?: number
}

/**
 * Why the model stopped, normalised across providers: a natural end (`stop`), tool calls, the output
 * token limit (`length`), a provider's content filter, a refusal, or anything else (`other`).
 */
export type FinishReason = "stop" | "tool-calls" | "length" | "content-filter" | "refusal" | "other"

/**
 * A piece of the model's reasoning: visible thinking (with the provider's signature when it signs it,
 * as Anthropic does), or a redacted block that must be sent back as it came.
 */
export type ReasoningPart =
  | { readonly _tag: "Thinking"; readonly text: string; readonly signature?: string }
  | { readonly _tag: "Redacted"; readonly data: string }

/** Fields every response may carry besides its content. */
interface ResponseMeta {
  readonly usage?: Usage
  readonly finishReason?: FinishReason
  readonly reasoning?: ReadonlyArray<ReasoningPart>
  /** The provider's id for this answer (OpenAI `chatcmpl-…`, Anthropic `msg_…`), when it sends one. */
  readonly responseId?: string
  /** The model that answered, as the provider names it (often more precise than the one asked for). */
  readonly responseModel?: string
}

/** What a model answers: a final text, or tool calls (optionally with some text beside them). */
export type LlmResponse =
  | ({ readonly _tag: "Text"; readonly content: string } & ResponseMeta)
  | ({
    readonly _tag: "ToolCalls"
    readonly calls: ReadonlyArray<ToolCall>
    readonly content?: string
  } & ResponseMeta)

/**
 * A response as users write it (see {@link ToolCallInit}); `ModelClient.fromFunction` and
 * `scriptedModel` normalise it into an `LlmResponse`.
 *
 * @example
 * ```ts
 * const step: LlmResponseInit = { _tag: "ToolCalls", calls: [{ name: "add", arguments: { a: 1, b: 2 } }] }
 * ```
 */
export type LlmResponseInit =
  | ({ readonly _tag: "Text"; readonly content: string; readonly usage?: Usage } & ResponseInfo)
  | ({
    readonly _tag: "ToolCalls"
    readonly calls: ReadonlyArray<ToolCallInit>
    readonly content?: string
    readonly usage?: Usage
  } & ResponseInfo)

/**
 * What the provider says about the answer itself: its id and the model that gave it (reported on
 * spans as `gen_ai.response.id` and `gen_ai.response.model`).
 *
 * @example
 * ```ts
 * const info: ResponseInfo = { responseId: "chatcmpl-B9MH", responseModel: "gpt-4o-mini-2024-07-18" }
 * ```
 */
export type ResponseInfo = Pick<ResponseMeta, "responseId" | "responseModel">

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

/**
 * Native structured output: the final text must be JSON matching `schema`. Mapped to OpenAI
 * `response_format: { type: "json_schema", json_schema: { name, schema, strict } }`, Ollama `format`,
 * and the AI SDK's `responseFormat`; providers without it ignore it (the answer is still decoded).
 */
export interface ResponseFormat {
  readonly type: "json_schema"
  readonly name: string
  readonly schema: JsonSchemaObject
  readonly strict?: boolean
}

/** One call to a model. */
export interface ModelRequest {
  readonly messages: ReadonlyArray<LlmMessage>
  readonly tools: ReadonlyArray<ToolDefinition>
  readonly toolChoice?: ToolChoice
  readonly temperature?: number
  /** Ask for a JSON answer matching a schema (native structured output). */
  readonly responseFormat?: ResponseFormat
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
 * Builds a tool-calls response for a script or a `fromFunction` client, which normalise it (object
 * arguments to JSON text, missing ids assigned).
 *
 * @example
 * ```ts
 * const step = toolCalls([{ id: "c1", name: "add", arguments: { a: 3, b: 5 } }])
 * ```
 */
export const toolCalls = (calls: ReadonlyArray<ToolCallInit>, content?: string): LlmResponseInit =>
  content === undefined ? { _tag: "ToolCalls", calls } : { _tag: "ToolCalls", calls, content }
