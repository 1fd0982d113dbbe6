/**
 * The typed final answer: how the model is told the output Schema, and how its answer is decoded.
 * Object Schemas get a `submit` tool whose parameters are the Schema (guided generation); any Schema
 * also accepts a final text that decodes: bare JSON, JSON in a Markdown fence, or plain text for
 * string-like Schemas.
 */
import { Result, Schema } from "effect"
import { submitToolName } from "../dsl/agent-definition.ts"
import type { JsonSchemaObject, ToolDefinition } from "../model/messages.ts"

type OutputSchema = Schema.Codec<any, any, never, never>

/** Everything derived from one output Schema, computed once per Schema. */
export interface OutputContract {
  readonly jsonSchema: JsonSchemaObject
  /** The `submit` tool, for object Schemas only. */
  readonly submitTool: ToolDefinition | undefined
  /** Decodes a final text. */
  readonly decodeText: (text: string) => Result.Result<unknown, string>
  /** Decodes the arguments of a `submit` call (the JSON text the model sent). */
  readonly decodeSubmission: (raw: string) => Result.Result<unknown, string>
}

const contracts = new WeakMap<OutputSchema, OutputContract>()

/** The contract for `schema`, cached. */
export const outputContract = (schema: OutputSchema): OutputContract => {
  const cached = contracts.get(schema)
  if (cached !== undefined) return cached
  const contract = makeContract(schema)
  contracts.set(schema, contract)
  return contract
}

const fence = /^```[a-zA-Z]*\s*\n([\s\S]*?)\n?```$/

const makeContract = (schema: OutputSchema): OutputContract => {
  const jsonSchema: JsonSchemaObject = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" }).schema
  const decodeCodec = Schema.decodeUnknownResult(Schema.toCodecJson(schema))
  const decode = (input: unknown) =>
    Result.mapError(decodeCodec(input, { errors: "all", onExcessProperty: "error" }), (error) => error.message)
  const parse = (text: string) => {
    try {
      return Result.succeed<unknown>(JSON.parse(text))
    } catch {
      return Result.fail("not valid JSON")
    }
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
  const submitTool: ToolDefinition | undefined = jsonSchema.type === "object"
    ? Object.freeze({
      type: "function",
      name: submitToolName,
      description: "Submit the final answer. Call it once, when you have the answer.",
      parameters: jsonSchema
    })
    : undefined
  return { jsonSchema, submitTool, decodeText, decodeSubmission }
}
