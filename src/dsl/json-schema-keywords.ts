/**
 * The forms a JSON Schema's validation keywords must have (JSON Schema 2020-12's meta-schema, and
 * draft-07's where it differs), checked before Effect's importer reads the document: the importer
 * drops a keyword whose value it cannot read (`minimum: 5, exclusiveMinimum: true` from draft-04,
 * `type: "strng"`, `enum: "a"`, `minLength: "5"`, draft-07's array `items` in a 2020-12 document), and
 * a keyword dropped is a constraint the tool's arguments are no longer held to. Hand-written because
 * none of the libraries this package builds on checks a schema against its meta-schema (the MCP SDK's
 * AJV is an optional peer's dependency, not ours to import), and only the validation keywords matter
 * here: annotations (`title`, `description`, `examples`, `default`) are left as they are.
 */
import { isRecord } from "../internal/is-record.ts"

/** Which dialect's forms apply: draft-07 (declared by `$schema`) or 2020-12 (the default). */
export type JsonSchemaDialect = "draft-07" | "2020-12"

const typeNames = new Set(["null", "boolean", "object", "array", "number", "string", "integer"])

/** Keywords whose value is one schema. */
const schemaKeywords = ["additionalProperties", "propertyNames", "contains", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties"]
/** Keywords whose value is a non-empty array of schemas. */
const schemaListKeywords = ["allOf", "anyOf", "oneOf"]
/** Keywords whose value is an object of schemas. */
const schemaMapKeywords = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]
/** Keywords whose value is a non-negative integer. */
const countKeywords = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains"]
/** Keywords whose value is a number. */
const numberKeywords = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]

const isCount = (value: unknown): boolean => typeof value === "number" && Number.isSafeInteger(value) && value >= 0
const isStringList = (value: unknown): boolean => Array.isArray(value) && value.every((item) => typeof item === "string")
const isSchema = (value: unknown): boolean => typeof value === "boolean" || isRecord(value)
const pointer = (at: string, key: string | number) => `${at}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`

/**
 * The first keyword of `root` (or of a schema below it) whose value is not of its keyword's form, as
 * "`keyword` at pointer must be …, got …"; undefined when every one is. Walked without recursion (a
 * schema from outside may be nested deeper than the stack goes).
 *
 * @example
 * ```ts
 * malformedKeyword({ type: "object", properties: { n: { type: "integer", minimum: 5, exclusiveMinimum: true } } }, "2020-12")
 * // "`exclusiveMinimum` at #/properties/n must be a number (draft-04's boolean form is not JSON Schema 2020-12 or draft-07), got true"
 * ```
 */
export const malformedKeyword = (root: unknown, dialect: JsonSchemaDialect): string | undefined => {
  const stack: Array<readonly [schema: unknown, at: string]> = [[root, "#"]]
  while (stack.length > 0) {
    const [schema, at] = stack.pop()!
    if (typeof schema === "boolean") continue
    if (!isRecord(schema)) return `the schema at ${at} must be an object or a boolean, got ${shown(schema)}`
    const problem = keywordProblem(schema, at, dialect)
    if (problem !== undefined) return problem
    for (const [child, childAt] of subschemas(schema, at, dialect)) stack.push([child, childAt])
  }
  return undefined
}

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

const must = (keyword: string, at: string, form: string, value: unknown) => `\`${keyword}\` at ${at} must be ${form}, got ${shown(value)}`

/** The first keyword of `schema` itself (not of its subschemas) whose value is not of its form. */
const keywordProblem = (schema: Readonly<Record<string, unknown>>, at: string, dialect: JsonSchemaDialect): string | undefined => {
  const has = (keyword: string) => Object.hasOwn(schema, keyword)
  if (has("type")) {
    const type = schema.type
    const names = Array.isArray(type) ? type : [type]
    if (names.length === 0 || !names.every((name) => typeof name === "string" && typeNames.has(name)) || new Set(names).size !== names.length) {
      return must("type", at, `one of ${[...typeNames].join(", ")}, or a non-empty array of them without repeats`, type)
    }
  }
  for (const keyword of numberKeywords) {
    if (!has(keyword) || (typeof schema[keyword] === "number" && Number.isFinite(schema[keyword]))) continue
    const draft04 = typeof schema[keyword] === "boolean" && keyword.startsWith("exclusive")
    return must(keyword, at, draft04 ? "a number (draft-04's boolean form is not JSON Schema 2020-12 or draft-07)" : "a number", schema[keyword])
  }
  if (has("multipleOf") && !(typeof schema.multipleOf === "number" && Number.isFinite(schema.multipleOf) && schema.multipleOf > 0)) {
    return must("multipleOf", at, "a number above 0", schema.multipleOf)
  }
  for (const keyword of countKeywords) {
    if (has(keyword) && !isCount(schema[keyword])) return must(keyword, at, "a whole number of at least 0", schema[keyword])
  }
  if (has("pattern") && typeof schema.pattern !== "string") return must("pattern", at, "a string (a regular expression)", schema.pattern)
  if (has("uniqueItems") && typeof schema.uniqueItems !== "boolean") return must("uniqueItems", at, "a boolean", schema.uniqueItems)
  if (has("enum") && !Array.isArray(schema.enum)) return must("enum", at, "an array of the allowed values", schema.enum)
  if (has("required") && !isStringList(schema.required)) return must("required", at, "an array of property names", schema.required)
  if (has("$ref") && typeof schema.$ref !== "string") return must("$ref", at, "a string", schema.$ref)
  if (has("dependentRequired")) {
    const value = schema.dependentRequired
    if (!isRecord(value) || !Object.values(value).every(isStringList)) return must("dependentRequired", at, "an object of arrays of property names", value)
  }
  if (has("dependencies")) {
    const value = schema.dependencies
    if (!isRecord(value) || !Object.values(value).every((v) => isStringList(v) || isSchema(v))) {
      return must("dependencies", at, "an object of schemas or arrays of property names", value)
    }
  }
  for (const keyword of schemaKeywords) {
    if (has(keyword) && !isSchema(schema[keyword])) return must(keyword, at, "a schema (an object or a boolean)", schema[keyword])
  }
  for (const keyword of schemaListKeywords) {
    const value = schema[keyword]
    if (has(keyword) && !(Array.isArray(value) && value.length > 0)) return must(keyword, at, "a non-empty array of schemas", value)
  }
  for (const keyword of schemaMapKeywords) {
    if (has(keyword) && !isRecord(schema[keyword])) return must(keyword, at, "an object of schemas", schema[keyword])
  }
  if (has("prefixItems") && !Array.isArray(schema.prefixItems)) return must("prefixItems", at, "an array of schemas", schema.prefixItems)
  if (has("items")) {
    const items = schema.items
    if (Array.isArray(items) && dialect === "2020-12") {
      return must("items", at, "a schema in JSON Schema 2020-12 (an array is draft-07's tuple form: use `prefixItems`, or declare `\"$schema\": \"http://json-schema.org/draft-07/schema#\"`)", items)
    }
    if (!Array.isArray(items) && !isSchema(items)) return must("items", at, "a schema (an object or a boolean)", items)
  }
  if (has("additionalItems") && !isSchema(schema.additionalItems)) return must("additionalItems", at, "a schema (an object or a boolean)", schema.additionalItems)
  return undefined
}

/** The schemas directly below `schema`, with their pointers. */
const subschemas = (schema: Readonly<Record<string, unknown>>, at: string, dialect: JsonSchemaDialect): ReadonlyArray<readonly [unknown, string]> => {
  const out: Array<readonly [unknown, string]> = []
  for (const keyword of [...schemaKeywords, "additionalItems"]) {
    if (Object.hasOwn(schema, keyword)) out.push([schema[keyword], pointer(at, keyword)])
  }
  for (const keyword of [...schemaListKeywords, "prefixItems"]) {
    const list = schema[keyword]
    if (Array.isArray(list)) list.forEach((child, i) => out.push([child, pointer(pointer(at, keyword), i)]))
  }
  for (const keyword of schemaMapKeywords) {
    const map = schema[keyword]
    if (isRecord(map)) for (const [name, child] of Object.entries(map)) out.push([child, pointer(pointer(at, keyword), name)])
  }
  const items = schema.items
  if (Array.isArray(items) && dialect === "draft-07") items.forEach((child, i) => out.push([child, pointer(pointer(at, "items"), i)]))
  else if (Object.hasOwn(schema, "items") && !Array.isArray(items)) out.push([items, pointer(at, "items")])
  const dependencies = schema.dependencies
  if (isRecord(dependencies)) {
    for (const [name, child] of Object.entries(dependencies)) if (!Array.isArray(child)) out.push([child, pointer(pointer(at, "dependencies"), name)])
  }
  return out
}
