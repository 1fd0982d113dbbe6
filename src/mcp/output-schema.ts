/**
 * A tool's `outputSchema` checked in linear time. The SDK's `Client` would check `structuredContent`
 * itself, with ajv: its `pattern`s run as backtracking JavaScript regular expressions (`^(a+)+$`
 * against `"aaaa…!"` holds the process, and nothing can interrupt a running regular expression), and it
 * compiles every listed output schema when tools are listed, so one schema it cannot compile (a
 * dangling `$ref`) fails the listing of the whole server. The client is therefore given
 * {@link uncheckedOutput}, which checks nothing, and the connection checks a result here instead: the
 * schema compiled like an input schema (`compileJsonSchema`, patterns by RE2), once per listed tool.
 */
import type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js"
import * as Result from "effect/Result"
import { compileJsonSchema } from "../dsl/json-schema-tool.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { strictResultDecoder } from "../internal/strict-decode.ts"

/** A compiled output check: the value, or the issues that refuse it. */
export type OutputCheck = (structured: unknown) => Result.Result<unknown, string>

/**
 * The SDK client's validator: accepts everything, compiles nothing (see the module header). The SDK
 * still requires `structuredContent` of a tool that declares an `outputSchema`.
 *
 * @example
 * ```ts
 * new Client(clientInfo, { jsonSchemaValidator: uncheckedOutput })
 * ```
 */
export const uncheckedOutput: jsonSchemaValidator = Object.freeze({
  getValidator: <T>(): JsonSchemaValidator<T> => (input) => ({ valid: true, data: input as T, errorMessage: undefined })
})

const compiled = new WeakMap<object, Result.Result<OutputCheck, string>>()

/**
 * The check of `outputSchema` (compiled once per schema object), or why it cannot be validated: a
 * dangling `$ref`, a keyword the importer cannot enforce, a root that is not an object schema.
 *
 * @example
 * ```ts
 * const check = outputCheck({ type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } })
 * Result.getOrThrow(check)({ s: "a".repeat(40) + "!" }) // a Failure, at once (RE2)
 * ```
 */
export const outputCheck = (outputSchema: Readonly<Record<string, unknown>>): Result.Result<OutputCheck, string> => {
  const known = compiled.get(outputSchema)
  if (known !== undefined) return known
  let made: Result.Result<OutputCheck, string>
  try {
    const decode = strictResultDecoder(compileJsonSchema(outputSchema, { strict: false }).codec)
    made = Result.succeed((structured) => {
      try {
        return Result.mapError(decode(structured), (error) => error.message)
      } catch (error) {
        // A value nested deeper than the stack goes through a recursive schema: refused, never a crash.
        return Result.fail(`it could not be checked: ${describeCause(error)}`)
      }
    })
  } catch (error) {
    made = Result.fail(`its outputSchema cannot be validated: ${describeCause(error)}`)
  }
  compiled.set(outputSchema, made)
  return made
}
