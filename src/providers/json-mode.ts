/**
 * Tool calling for models without native tool support. `jsonMode(client)` wraps any `ModelClient`:
 * from the offered tools and the final answer's Schema it composes one JSON Schema
 * `{ output, calls: [{ _tool, _reasoningForCall?, ...args }] }`, asks the model for a single JSON
 * object matching it (tools are not sent natively), and turns the reply into tool calls or a final
 * answer. Earlier tool calls and results in the transcript are rewritten as plain messages, so the
 * wrapped model never sees a native tool message either.
 *
 * Arguments are not checked here: each call goes through the tool-call pipeline, where invalid
 * arguments are routed to the recovery handlers as for any model. A reply that is not such an object
 * at all (not JSON, no `calls` and no `output`, an unknown `_tool`) is sent back to the model with the
 * issues, like invalid arguments under the default feedback policy, up to `maxRepairs` times, then
 * fails the call with `ModelError` (whose `usage` is what the replies cost). The response carries the
 * usage of every reply, the ones sent back included, so corrections count against the run's token
 * budget. `_reasoningForCall` becomes the
 * response's `content`, which the `ModelResponse` event records.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { AgentConfigError, ModelError } from "../errors.ts"
import { jsonOrUndefined } from "../internal/json-or-undefined.ts"
import { parseLenientJson } from "../internal/lenient-json.ts"
import type { JsonSchemaObject, LlmMessage, LlmResponse, ModelRequest, ToolCall, ToolDefinition, Usage } from "../model/messages.ts"
import type { ModelClient } from "../model/model-client.ts"
import { shownValue } from "../internal/shown-value.ts"

/** Options of {@link jsonMode}. */
export interface JsonModeOptions {
  /** The Schema of the final answer, composed as `output` (default: a string). */
  readonly output?: Schema.Codec<any, any, never, never>
  /** How many times a malformed reply is sent back with its issues before the call fails: 0 to 100 (default 2). */
  readonly maxRepairs?: number
}

/** The names the envelope reserves in each call object. */
export const jsonModeKeys = { tool: "_tool", reasoning: "_reasoningForCall" } as const

/**
 * Wraps a model without native tool calling (JSON mode) so agents can use tools with it.
 *
 * @example
 * ```ts
 * const client = jsonMode(ollama("llama3.2:1b"), { output: Schema.Struct({ answer: Schema.Finite }) })
 * const calc = agent("calc").model(client).tools({ add })
 * ```
 */
export const jsonMode = (client: ModelClient, options: JsonModeOptions = {}): ModelClient => {
  const output = options.output === undefined ? { type: "string" } : outputSchema(options.output)
  const maxRepairs = repairsOf(options.maxRepairs)
  return {
    // Spans and metrics name the wrapped model's provider and model.
    ...(client.metadata === undefined ? {} : { metadata: client.metadata }),
    chat: (request) =>
      Effect.gen(function*() {
        const envelope = composeEnvelope(request.tools, request.toolChoice, output)
        const messages: Array<LlmMessage> = [
          ...rewriteTranscript(request.messages),
          { role: "system", content: instructions(envelope) }
        ]
        // Every reply is paid for, the ones sent back for correction too: the response carries their sum.
        let spent: Usage | undefined
        for (let attempt = 0;; attempt++) {
          const reply = yield* client.chat({ messages: [...messages], tools: [], ...(request.temperature === undefined ? {} : { temperature: request.temperature }) }).pipe(
            // A failure after replies that were paid for carries them (and its own, if any).
            Effect.mapError((error) => (spent === undefined ? error : error.withUsage(addUsage(spent, error.usage)!)))
          )
          spent = addUsage(spent, reply.usage)
          if (reply._tag === "ToolCalls") return withUsage(reply, spent)
          const parsed = parseReply(reply.content, request.tools, request.messages.length)
          if (parsed._tag === "Response") return withUsage(withReplyMeta(parsed.response, reply), spent)
          if (attempt >= maxRepairs) {
            return yield* new ModelError({
              provider: "json-mode",
              reason: `the model's reply is not a valid JSON-mode answer after ${maxRepairs} correction(s): ${parsed.issues}`,
              ...(spent === undefined ? {} : { usage: spent })
            })
          }
          messages.push({ role: "assistant", content: reply.content })
          messages.push({ role: "user", content: `Your reply was not valid: ${parsed.issues}\nReply again with one JSON object that matches the schema.` })
        }
      })
  }
}

/**
 * The composed JSON Schema for a request: `output` and, when tools are offered, `calls`, an array
 * whose items are one object per tool (`_tool` its name, then its arguments).
 */
export const composeEnvelope = (tools: ReadonlyArray<ToolDefinition>, toolChoice: ModelRequest["toolChoice"], output: JsonSchemaObject): JsonSchemaObject => {
  const offered = toolChoice === "none" ? [] : typeof toolChoice === "object" ? tools.filter((t) => t.name === toolChoice.tool) : tools
  const defs: Record<string, unknown> = {}
  const items = offered.map((t) => {
    const { $defs, ...parameters } = t.parameters as Record<string, unknown>
    const prefix = `${t.name}__`
    if (typeof $defs === "object" && $defs !== null) {
      for (const [name, def] of Object.entries($defs)) defs[prefix + name] = renameRefs(def, prefix)
    }
    const renamed = renameRefs(parameters, prefix) as Record<string, unknown>
    const properties = (renamed.properties ?? {}) as Record<string, unknown>
    const required = Array.isArray(renamed.required) ? renamed.required : []
    return {
      ...renamed,
      type: "object",
      ...(t.description === undefined ? {} : { description: t.description }),
      properties: {
        [jsonModeKeys.tool]: { const: t.name },
        [jsonModeKeys.reasoning]: { type: "string", description: "Why this call (optional)" },
        ...properties
      },
      required: [jsonModeKeys.tool, ...required]
    }
  })
  const mustCall = offered.length > 0 && (toolChoice === "required" || typeof toolChoice === "object")
  const properties: Record<string, unknown> = mustCall ? {} : { output }
  if (items.length > 0) {
    properties.calls = { type: "array", items: items.length === 1 ? items[0] : { anyOf: items }, ...(mustCall ? { minItems: 1 } : {}) }
  }
  return {
    type: "object",
    properties,
    required: mustCall ? ["calls"] : [],
    additionalProperties: false,
    ...(Object.keys(defs).length === 0 ? {} : { $defs: defs })
  } as JsonSchemaObject
}

const renameRefs = (node: unknown, prefix: string): unknown => {
  if (Array.isArray(node)) return node.map((child) => renameRefs(child, prefix))
  if (typeof node !== "object" || node === null) return node
  return Object.fromEntries(Object.entries(node).map(([key, value]) =>
    key === "$ref" && typeof value === "string" && value.startsWith("#/$defs/")
      ? [key, `#/$defs/${prefix}${value.slice("#/$defs/".length)}`]
      : [key, renameRefs(value, prefix)]
  ))
}

const outputSchema = (schema: Schema.Codec<any, any, never, never>): JsonSchemaObject => {
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  return Object.keys(document.definitions).length === 0 ? document.schema : { ...document.schema, $defs: document.definitions }
}

const instructions = (envelope: JsonSchemaObject): string => {
  const properties = envelope.properties as Record<string, unknown>
  const howToCall =
    `To use tools, list them in "calls": each call is an object whose "${jsonModeKeys.tool}" names the tool, with the tool's arguments beside it, and optionally "${jsonModeKeys.reasoning}". You will get the results.`
  return [
    "Reply with exactly one JSON object and nothing else, matching this JSON Schema:",
    JSON.stringify(envelope),
    !("calls" in properties)
      ? `Put the final answer in "output".`
      : !("output" in properties)
      ? `${howToCall} You must call at least one tool now.`
      : `${howToCall} When you have the final answer, put it in "output" and leave "calls" out.`
  ].join("\n")
}

/** Tool calls and results as plain messages, for a model that has never seen native tool messages. */
const rewriteTranscript = (messages: ReadonlyArray<LlmMessage>): Array<LlmMessage> =>
  messages.map((m): LlmMessage => {
    if (m.role === "assistant" && m.toolCalls !== undefined && m.toolCalls.length > 0) {
      const calls = m.toolCalls.map((c) => ({ [jsonModeKeys.tool]: c.name, ...argumentsObject(c.arguments) }))
      return { role: "assistant", content: JSON.stringify({ calls }) }
    }
    if (m.role === "tool") return { role: "user", content: `Result of ${m.name} (${m.toolCallId}):\n${m.content}` }
    return m
  })

const argumentsObject = (raw: unknown): Record<string, unknown> => {
  const value = typeof raw === "string" ? jsonOrUndefined(raw) : raw
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : { arguments: raw }
}

type Parsed = { readonly _tag: "Response"; readonly response: LlmResponse } | { readonly _tag: "Malformed"; readonly issues: string }

const fence = /^```[a-zA-Z]*\s*\n([\s\S]*?)\n?```$/

/** Turns a reply into tool calls or a final answer; `turn` keeps call ids unique within a run. */
export const parseReply = (content: string, tools: ReadonlyArray<ToolDefinition>, turn: number): Parsed => {
  const trimmed = content.trim()
  const body = fence.exec(trimmed)?.[1] ?? trimmed
  // Strict JSON first; else the first JSON object in the text (a fence followed by "Hope this helps",
  // prose around it), trailing commas tolerated. Every call's arguments are decoded by its tool's Schema.
  const value = parseLenientJson(body)?.value
  // Tool calls are only read from a reply that opens with them (the object, or a fence around it):
  // prose that shows or refuses a call ("a deletion would look like {"calls": …}") is no call.
  if (typeof value === "object" && value !== null && "calls" in value && !/^(?:```[a-zA-Z]*\s*)?\{/.test(trimmed)) {
    return { _tag: "Malformed", issues: "tool calls must open the reply (the JSON object, or a fence around it), not sit inside prose" }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { _tag: "Malformed", issues: "expected one JSON object" }
  }
  const record = value as Record<string, unknown>
  const calls = record.calls
  if (calls !== undefined && !Array.isArray(calls)) return { _tag: "Malformed", issues: `"calls" must be an array` }
  if (Array.isArray(calls) && calls.length > 0) {
    const names = new Set(tools.map((t) => t.name))
    const out: Array<ToolCall> = []
    const reasons: Array<string> = []
    const issues: Array<string> = []
    calls.forEach((call, i) => {
      if (typeof call !== "object" || call === null || Array.isArray(call)) return void issues.push(`calls[${i}] must be an object`)
      const { [jsonModeKeys.tool]: name, [jsonModeKeys.reasoning]: reasoning, ...args } = call as Record<string, unknown>
      if (typeof name !== "string" || !names.has(name)) {
        return void issues.push(`calls[${i}]."${jsonModeKeys.tool}" must name one of the tools: ${[...names].join(", ") || "(none)"}`)
      }
      if (typeof reasoning === "string" && reasoning.trim() !== "") reasons.push(`${name}: ${reasoning}`)
      out.push({ id: `json_${turn}_${i}`, name, arguments: JSON.stringify(args) })
    })
    if (issues.length > 0) return { _tag: "Malformed", issues: issues.join("; ") }
    return { _tag: "Response", response: reasons.length === 0 ? { _tag: "ToolCalls", calls: out } : { _tag: "ToolCalls", calls: out, content: reasons.join("\n") } }
  }
  if (!("output" in record)) return { _tag: "Malformed", issues: `expected "calls" with at least one call, or "output"` }
  const answer = record.output
  return { _tag: "Response", response: { _tag: "Text", content: typeof answer === "string" ? answer : JSON.stringify(answer) } }
}

/** `maxRepairs` as a count: a whole number in [0, 100] (NaN or Infinity would never stop asking). */
const repairsOf = (maxRepairs: number | undefined): number => {
  if (maxRepairs === undefined) return 2
  if (typeof maxRepairs !== "number" || !Number.isFinite(maxRepairs) || maxRepairs < 0 || maxRepairs > 100) {
    throw new AgentConfigError({ subject: "jsonMode(client, { maxRepairs })", reason: `must be a number in [0, 100], got ${shownValue(maxRepairs)}` })
  }
  return Math.floor(maxRepairs)
}

const addUsage = (total: Usage | undefined, usage: Usage | undefined): Usage | undefined => {
  if (usage === undefined) return total
  if (total === undefined) return usage
  const sum = (a: number | undefined, b: number | undefined) => (a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0))
  const cached = sum(total.cachedInputTokens, usage.cachedInputTokens)
  const reasoning = sum(total.reasoningTokens, usage.reasoningTokens)
  return {
    inputTokens: total.inputTokens + usage.inputTokens,
    outputTokens: total.outputTokens + usage.outputTokens,
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning })
  }
}

const withUsage = (response: LlmResponse, usage: Usage | undefined): LlmResponse =>
  usage === undefined || usage === response.usage ? response : { ...response, usage }

/** The parsed response with what the wrapped model's reply said besides its content: usage, response id and model. */
const withReplyMeta = (response: LlmResponse, reply: LlmResponse): LlmResponse => ({
  ...response,
  ...(reply.usage === undefined ? {} : { usage: reply.usage }),
  ...(reply.responseId === undefined ? {} : { responseId: reply.responseId }),
  ...(reply.responseModel === undefined ? {} : { responseModel: reply.responseModel })
})
