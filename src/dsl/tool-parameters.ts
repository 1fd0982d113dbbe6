/**
 * Derives a tool's JSON Schema `parameters` and its argument decoder from one Effect Schema, so the
 * contract sent to the model and the check applied to its answer can never drift apart.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
// The module itself, not the `effect/ai` barrel: that one loads ~120 more modules (http, rpc, workers, sql).
import * as OpenAiStructuredOutput from "effect/ai/OpenAiStructuredOutput"
import { costGuard } from "../internal/decode-cost.ts"
import { unreadableFromJson } from "../internal/json-readable.ts"
import { declaresPrototypeKey } from "../internal/prototype-free.ts"
import { strictOptions, strictResultDecoder } from "../internal/strict-decode.ts"
import type { JsonSchemaObject } from "../model/messages.ts"

/** The Schemas accepted as tool arguments: codecs without service requirements. */
export type ArgsSchema = Schema.Codec<any, any, never, never>

/** Decodes raw model arguments (a JSON string or an object) into typed args, or a readable report. */
export type ArgsDecoder<Args> = (raw: unknown) => Result.Result<Args, string>

/** The JSON Schema for the model plus the decoder that enforces exactly that contract. */
export interface ToolParameters<Args> {
  readonly jsonSchema: JsonSchemaObject
  readonly decode: ArgsDecoder<Args>
  /** The codec between decoded args and the JSON the model sends (strict mode: optional keys as null). */
  readonly codec: Schema.ConstraintCodec<Args, unknown, never, never>
}

/**
 * Builds `parameters` and the decoder. In strict mode the JSON Schema follows OpenAI's strict subset
 * (every key required, optional keys nullable) and the decoder maps `null` back to an absent key.
 * Throws a plain `Error` when the Schema cannot describe a JSON object; the caller turns it into a
 * configuration error naming the tool.
 */
export const toolParameters = <S extends ArgsSchema>(
  schema: S,
  options: { readonly strict: boolean }
): ToolParameters<S["Type"]> => {
  const { codec, jsonSchema } = options.strict ? strictContract(schema) : standardContract(schema)
  if (jsonSchema.type !== "object") {
    throw new Error(`arguments must be described by an object Schema (Schema.Struct), got ${describeRoot(jsonSchema)}`)
  }
  const unreadable = unreadableFromJson(schema)
  if (unreadable !== undefined) {
    throw new Error(`the arguments' field at ${unreadable} cannot come from JSON (a Schema.declare without a JSON encoding, such as a function or a class instance): the model sends JSON, so no call could fill it; use a Schema that JSON can give (Schema.String, Schema.Date, Schema.Json, …)`)
  }
  return { jsonSchema, decode: argsDecoder(codec), codec }
}

/**
 * The decoder of a tool's raw arguments (a JSON string or an object) through `codec`. JSON text is
 * parsed with `JSON.parse` and decoded as an object (the fast path); when either fails, the JSON-text
 * decoder runs instead, so a refusal reads exactly as Schema's own report. `""` means no arguments
 * (OpenAI-compatible servers send it).
 *
 * @example
 * ```ts
 * const decode = argsDecoder(Schema.toCodecJson(Schema.Struct({ a: Schema.Finite })))
 * decode('{"a":1}') // Result.succeed({ a: 1 })
 * ```
 */
export const argsDecoder = <A>(codec: Schema.ConstraintCodec<A, unknown, never, never>): ArgsDecoder<A> => {
  const strictDecode = strictResultDecoder(codec)
  const decodeText = Schema.decodeUnknownResult(Schema.fromJsonString(codec))
  // A Schema that cannot finish on a value (arguments nested deeper than the stack goes through a
  // recursive Schema) refuses it, never throws: the model is told, the tool does not run.
  const guarded = <I>(decode: (input: I) => Result.Result<A, Schema.SchemaError>) => (input: I): Result.Result<A, string> => {
    try {
      return Result.mapError(decode(input), (error) => error.message)
    } catch (error) {
      return Result.fail(`the arguments could not be checked: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  const decodeObject = guarded(strictDecode)
  // The JSON-text decoder reads plain objects, whose prototype answers for a declared `constructor`:
  // for such a Schema the object decode's own report is the one to give (`prototype-free.ts`).
  const ownKeysOnly = declaresPrototypeKey(codec.ast)
  const report = guarded((raw: string) => decodeText(raw, strictOptions))
  // A Schema whose unions may try one value many times (a recursive one from an MCP server's JSON
  // Schema, say) refuses arguments that would cost more than their size allows (`decode-cost.ts`).
  const tooCostly = costGuard(codec.ast, (limit) =>
    `checking them would try this tool's alternatives (anyOf/oneOf) over their parts more than ${limit} times: send them less nested or split the call`)
  const refusal = (value: unknown): Result.Result<A, string> | undefined => {
    const reason = tooCostly?.(value)
    return reason === undefined ? undefined : Result.fail(`the arguments could not be checked: ${reason}`)
  }
  return (raw) => {
    if (typeof raw !== "string") return refusal(raw) ?? decodeObject(raw)
    if (raw.trim() === "") return decodeObject({})
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      return report(raw)
    }
    const refused = refusal(parsed)
    if (refused !== undefined) return refused
    const decoded = decodeObject(parsed)
    return Result.isSuccess(decoded) || ownKeysOnly ? decoded : report(raw)
  }
}

interface Contract<T> {
  readonly codec: Schema.ConstraintCodec<T, unknown, never, never>
  readonly jsonSchema: JsonSchemaObject
}

const standardContract = <S extends ArgsSchema>(schema: S): Contract<S["Type"]> => {
  if (isEmptyStruct(schema.ast)) {
    // Schema renders `Struct({})` as "any non-null value"; a tool without arguments takes `{}`.
    return { codec: Schema.toCodecJson(schema), jsonSchema: { type: "object", properties: {}, additionalProperties: false } }
  }
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const definitions = Object.keys(document.definitions).length === 0 ? {} : { $defs: document.definitions }
  const jsonSchema: JsonSchemaObject = { ...document.schema, ...definitions }
  return { codec: Schema.toCodecJson(schema), jsonSchema }
}

const strictContract = <S extends ArgsSchema>(schema: S): Contract<S["Type"]> => OpenAiStructuredOutput.toCodecOpenAI(schema)

const isEmptyStruct = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isObjects(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0

const describeRoot = (jsonSchema: JsonSchemaObject): string =>
  typeof jsonSchema.type === "string" ? `"${jsonSchema.type}"` : JSON.stringify(jsonSchema)
