/**
 * Internal: a JSON Schema's `pattern`s checked in linear time. Effect's JSON Schema import applies a
 * pattern with the native `RegExp`, which backtracks: a pattern such as `^(a+)+$` against forty `a`s and
 * a `!` holds the process for minutes, and nothing can interrupt a running regular expression. A JSON
 * Schema tool's arguments, and an MCP server's (whose schemas come from outside), are checked before
 * the tool runs, so a hostile schema with a hostile argument could freeze the process.
 *
 * Here the imported Schema is lowered to Effect's representation and revived with the same checks but
 * the patterns' compiled by RE2 (`re2js`, a pure-JavaScript port of RE2, linear in the input: no
 * backtracking). Why not hand-written: RE2 is the well-kept answer to this problem. RE2 has no
 * lookaround and no backreferences: a pattern using them keeps the native `RegExp` (and its risk).
 * RE2's `\s` is ASCII whitespace (ECMAScript's also matches Unicode spaces); the rest of the syntax a
 * JSON Schema pattern uses reads the same.
 */
import * as Schema from "effect/Schema"
import * as SchemaRepresentation from "effect/SchemaRepresentation"
import { RE2JS } from "re2js"

const PatternPayload = Schema.Struct({ source: Schema.String, flags: Schema.String })

/** A pattern as a linear-time test, or undefined when RE2 cannot compile it (lookaround, backreferences). */
const linearTest = (source: string): ((input: string) => boolean) | undefined => {
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(source)
  } catch {
    return undefined
  }
  return (input) => compiled.matcher(input).find()
}

const linearPatternReviver = SchemaRepresentation.makeReviverFilter("effect/schema/isPattern", PatternPayload, ({ annotations, payload }) => {
  const test = linearTest(payload.source)
  if (test === undefined) return Schema.isPattern(new RegExp(payload.source, payload.flags), annotations)
  return Schema.makeFilter((input: string) => test(input), {
    expected: `a string matching the RegExp ${payload.source}`,
    arbitraryConstraint: { patterns: [payload] },
    ...annotations
  })
})

// The checks Effect's JSON Schema import revives (`fromJsonSchemaDocument`), with the pattern's replaced.
const revivers = [
  SchemaRepresentation.JsonReviver,
  linearPatternReviver,
  SchemaRepresentation.isFiniteReviver,
  SchemaRepresentation.isGreaterThanReviver,
  SchemaRepresentation.isGreaterThanOrEqualToReviver,
  SchemaRepresentation.isLessThanReviver,
  SchemaRepresentation.isLessThanOrEqualToReviver,
  SchemaRepresentation.isMultipleOfReviver,
  SchemaRepresentation.isIntReviver,
  SchemaRepresentation.isMinLengthReviver,
  SchemaRepresentation.isMaxLengthReviver,
  SchemaRepresentation.isMinCodePointsReviver,
  SchemaRepresentation.isMaxCodePointsReviver,
  SchemaRepresentation.isMinPropertiesReviver,
  SchemaRepresentation.isMaxPropertiesReviver,
  SchemaRepresentation.isPropertyNamesReviver,
  SchemaRepresentation.isUniqueReviver
]

/**
 * `schema` (imported from a JSON Schema) with its patterns checked by RE2 in linear time; the same
 * Schema otherwise.
 *
 * @example
 * ```ts
 * const imported = SchemaRepresentation.fromJsonSchemaDocument(document, { patterns: "apply" })
 * const safe = withLinearPatterns(imported) // `^(a+)+$` no longer backtracks
 * ```
 */
export const withLinearPatterns = (schema: Schema.Top): Schema.Top =>
  SchemaRepresentation.fromRepresentation(SchemaRepresentation.toRepresentation(schema.ast), { revivers })
