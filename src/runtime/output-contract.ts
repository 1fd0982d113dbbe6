/**
 * The typed final answer: how the model is told the output Schema, and how its answer is decoded.
 * Output strategies (chosen with {@link outputStrategy}, default `tool`):
 * - `tool`: object Schemas get a `submit` tool whose parameters are the Schema (guided generation);
 * - `native`: no `submit` tool; every request carries `responseFormat` (OpenAI `response_format:
 *   json_schema`, Ollama `format`, the AI SDK's `responseFormat`) and the final text is decoded;
 * - `auto`: `native` when the skill offers no tools (the answer is all that is asked), else `tool`.
 * Whatever the strategy, a final text that decodes is accepted: bare JSON, JSON in a Markdown fence,
 * or plain text for string-like Schemas, and a text that does not is corrected the same way.
 *
 * An output the model did not write (a deterministic skill's value, a handoff target's result) is
 * already in the Schema's decoded form: `checkValue` validates it against the Schema's type side
 * (`Schema.toType`: every refinement of the decoded type, no transformation run), not as JSON.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { isReservedName, outputToolNameKey, submitToolNameOf } from "../dsl/agent-definition.ts"
import { toolNamePattern } from "../dsl/tool.ts"
import { AgentConfigError } from "../errors.ts"
import { parseLenientJson } from "../internal/lenient-json.ts"
import { costGuard } from "../internal/decode-cost.ts"
import { strictResultDecoder } from "../internal/strict-decode.ts"
import type { JsonSchemaObject, ResponseFormat, ToolDefinition } from "../model/messages.ts"

type OutputSchema = Schema.Codec<any, any, never, never>

/** How a typed agent receives its answer: a `submit` tool, the provider's native JSON mode, or either. */
export type OutputStrategy = "tool" | "native" | "auto"

const strategyKey = "effect-agent-dsl/outputStrategy"

/**
 * The same output Schema, marked with the strategy a typed agent uses for it.
 *
 * @example
 * ```ts
 * const Answer = Schema.Struct({ n: Schema.Finite })
 * agent("calc", { output: outputStrategy(Answer, "native") }).model(openai("gpt-4o-mini"))
 * ```
 */
export const outputStrategy = <S extends OutputSchema>(schema: S, strategy: OutputStrategy): S =>
  schema.annotate({ [strategyKey]: strategy } as Parameters<S["annotate"]>[0]) as S

/**
 * The same output Schema, with the typed-answer tool named `name` instead of `submit` (the model sees
 * `name`; forcing `"output"` forces it). The name follows the tool-name rules and may not be a reserved
 * one; a tool of the agent or skill with the same name is refused when the agent is built.
 *
 * @example
 * ```ts
 * const Slots = outputToolName(Schema.Struct({ kind: Schema.String }), "submit_slots")
 * agent("search", { output: Slots }).model(openai("gpt-4o-mini"))
 * ```
 */
export const outputToolName = <S extends OutputSchema>(schema: S, name: string): S => {
  if (typeof name !== "string" || !toolNamePattern.test(name) || isReservedName(name)) {
    throw new AgentConfigError({
      subject: "outputToolName(schema, name)",
      reason: `${JSON.stringify(name)} is not a usable tool name: 1-64 letters, digits, '_' or '-', not memory_* nor a built-in tool`
    })
  }
  return schema.annotate({ [outputToolNameKey]: name } as Parameters<S["annotate"]>[0]) as S
}

const strategyOf = (schema: OutputSchema): OutputStrategy => {
  const value = (schema.ast as { annotations?: Record<string, unknown> }).annotations?.[strategyKey]
  return value === "native" || value === "auto" ? value : "tool"
}

/** Everything derived from one output Schema, computed once per Schema and strategy. */
export interface OutputContract {
  /** The output Schema itself (a durable run records a deterministic skill's value with its JSON codec). */
  readonly schema: OutputSchema
  readonly jsonSchema: JsonSchemaObject
  /** The `submit` tool: object Schemas under the `tool` strategy. */
  readonly submitTool: ToolDefinition | undefined
  /** The native structured-output request: object Schemas under the `native` strategy. */
  readonly responseFormat: ResponseFormat | undefined
  /** Decodes a final text. */
  readonly decodeText: (text: string) => Result.Result<unknown, string>
  /** Decodes the arguments of a `submit` call (the JSON text the model sent). */
  readonly decodeSubmission: (raw: string) => Result.Result<unknown, string>
  /**
   * Checks an output that is already a value of the Schema's type (a deterministic skill's, a handoff
   * target's): the type side, strictly (extra keys refused, as in an answer). Built on first use.
   */
  readonly checkValue: (value: unknown) => Result.Result<unknown, string>
}

const contracts = new WeakMap<OutputSchema, Map<"tool" | "native", OutputContract>>()

/**
 * The contract for `schema`, cached. `hasTools` (the skill offers tools) resolves the `auto` strategy.
 *
 * @example
 * ```ts
 * outputContract(outputStrategy(Answer, "native")).responseFormat // { type: "json_schema", name: "output", ... }
 * ```
 */
export const outputContract = (schema: OutputSchema, options: { readonly hasTools?: boolean } = {}): OutputContract => {
  const chosen = strategyOf(schema)
  const strategy = chosen === "auto" ? (options.hasTools === true ? "tool" : "native") : chosen
  let byStrategy = contracts.get(schema)
  if (byStrategy === undefined) contracts.set(schema, byStrategy = new Map())
  const cached = byStrategy.get(strategy)
  if (cached !== undefined) return cached
  const contract = makeContract(schema, strategy)
  byStrategy.set(strategy, contract)
  return contract
}

/** OpenAI's strict mode needs every property required and no extra properties, at every level. */
const strictCompatible = (schema: unknown): boolean => {
  if (typeof schema !== "object" || schema === null) return true
  const s = schema as Record<string, unknown>
  if (s.type === "object" || s.properties !== undefined) {
    const properties = Object.keys((s.properties ?? {}) as object)
    const required = new Set(Array.isArray(s.required) ? s.required : [])
    if (s.additionalProperties !== false || properties.some((p) => !required.has(p))) return false
  }
  return Object.values(s).every((v) => (Array.isArray(v) ? v.every(strictCompatible) : strictCompatible(v)))
}

const fence = /^```[a-zA-Z]*\s*\n([\s\S]*?)\n?```$/

/**
 * The JSON Schema of the answer, with the definitions it refers to: a Schema with an `identifier` or a
 * recursive one is rendered as `$ref`s into `$defs`, which must travel with it (a `$ref` to nothing is
 * refused by the provider). A root that is itself a `$ref` to an object (a recursive Schema) is that
 * object, so it still gets a `submit` tool.
 */
const answerJsonSchema = (schema: OutputSchema): JsonSchemaObject => {
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const definitions = document.definitions as Record<string, JsonSchemaObject>
  if (Object.keys(definitions).length === 0) return document.schema
  const ref = document.schema.$ref
  const root = typeof ref === "string" && ref.startsWith("#/$defs/") && Object.keys(document.schema).length === 1
    ? definitions[ref.slice("#/$defs/".length)]
    : undefined
  return { ...(root?.type === "object" ? root : document.schema), $defs: definitions }
}

const makeContract = (schema: OutputSchema, strategy: "tool" | "native"): OutputContract => {
  const jsonSchema = answerJsonSchema(schema)
  const codec = Schema.toCodecJson(schema) as Schema.ConstraintCodec<unknown, unknown, never, never>
  const decodeCodec = guarded(strictResultDecoder(codec))
  // A Schema whose unions may try one value many times refuses an answer that would cost more than
  // its size allows (`decode-cost.ts`), before decoding it.
  const tooCostly = costGuard(codec.ast, (limit) =>
    `checking it would try the answer Schema's alternatives (unions) over its parts more than ${limit} times: answer with a less nested value`)
  const decode = (input: unknown): Result.Result<unknown, string> => {
    const reason = tooCostly?.(input)
    return reason === undefined ? decodeCodec(input) : Result.fail(`the answer could not be checked: ${reason}`)
  }
  // A value that is already of the Schema's type is validated, not decoded: decoding the encoded
  // form would refuse a right value of a Schema with a transformation (`NumberFromString` wants "12",
  // the skill returns 12) and would run the transformation again. Made when first needed: a run that
  // only ever answers through the model never builds it.
  let checkType: ((input: unknown) => Result.Result<unknown, string>) | undefined
  const checkValue = (value: unknown): Result.Result<unknown, string> =>
    (checkType ??= guarded(strictResultDecoder(Schema.toType(schema) as Schema.ConstraintCodec<unknown, unknown, never, never>)))(value)
  // Strict JSON first; else the first JSON value in the text, trailing commas tolerated. The Schema decodes it either way.
  const parse = (text: string) => {
    const parsed = parseLenientJson(text)
    return parsed === undefined ? Result.fail("not valid JSON") : Result.succeed<unknown>(parsed.value)
  }
  const decodeText = (text: string): Result.Result<unknown, string> => {
    const trimmed = text.trim()
    const parsed = parse(fence.exec(trimmed)?.[1] ?? trimmed)
    if (Result.isSuccess(parsed)) {
      const fromJson = decode(parsed.success)
      if (Result.isSuccess(fromJson)) return fromJson
      const asText = decode(text)
      return Result.isSuccess(asText) ? asText : fromJson
    }
    const asText = decode(text)
    return Result.isSuccess(asText) ? asText : Result.fail(`The answer is not valid JSON.\n${asText.failure}`)
  }
  const decodeSubmission = (raw: string): Result.Result<unknown, string> => {
    const parsed = parse(raw)
    return Result.isSuccess(parsed) ? decode(parsed.success) : Result.fail("The arguments are not valid JSON.")
  }
  const isObject = jsonSchema.type === "object"
  const responseFormat: ResponseFormat | undefined = strategy === "native" && isObject
    ? Object.freeze({ type: "json_schema", name: "output", schema: jsonSchema, strict: strictCompatible(jsonSchema) })
    : undefined
  const submitTool: ToolDefinition | undefined = strategy === "tool" && isObject
    ? Object.freeze({
      type: "function",
      name: submitToolNameOf(schema),
      description: "Submit the final answer. Call it once, when you have the answer.",
      parameters: jsonSchema
    })
    : undefined
  return { schema, jsonSchema, submitTool, responseFormat, decodeText, decodeSubmission, checkValue }
}

/**
 * A strict decoder whose failure is its report. A value the Schema cannot finish on (nested deeper
 * than the stack goes through a recursive Schema, a transformation or a getter that throws) is
 * refused like any value that does not decode, never thrown.
 */
const guarded = (decoder: (input: unknown) => Result.Result<unknown, Schema.SchemaError>) => (input: unknown): Result.Result<unknown, string> => {
  try {
    return Result.mapError(decoder(input), (error) => error.message)
  } catch (error) {
    return Result.fail(`the answer could not be checked: ${error instanceof Error ? error.message : String(error)}`)
  }
}
