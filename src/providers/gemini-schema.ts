/**
 * A tool's JSON Schema (draft 2020-12, as generated from its Effect Schema) converted to the schema
 * subset Gemini's function declarations accept (an OpenAPI 3.0 `Schema` object). What Gemini refuses
 * and what becomes of it here:
 * - `$ref` / `$defs`: inlined (a recursive reference cannot be: the tool is refused, naming the path);
 * - `type: [T, "null"]` and `anyOf` with a `null` branch: `type: T` with `nullable: true`;
 * - `oneOf`: `anyOf`; `const`: a one-value `enum`; `allOf`: refused (it has no equivalent);
 * - `enum` of numbers or booleans: Gemini's enums are strings only, so the enum is dropped and its
 *   values written into the description;
 * - `properties: {}` (an object without properties): dropped, as Gemini refuses an empty one; a tool
 *   without parameters is declared without `parameters`;
 * - `format` other than `enum`, `date-time` (strings), `int32`, `int64` (integers), `float`, `double`:
 *   dropped; `exclusiveMinimum`/`exclusiveMaximum`, `additionalProperties`, `patternProperties`,
 *   `prefixItems`, `$schema`, `$id` and any other keyword outside the subset: dropped.
 * Dropped constraints still hold: the loop decodes every call's arguments with the tool's own Schema
 * and sends the model a readable error when they do not decode.
 */

/** Why a tool's schema cannot be sent to Gemini. */
export class GeminiSchemaError extends Error {
  constructor(readonly path: string, readonly detail: string) {
    super(`${detail} at ${path === "" ? "the root" : path}`)
  }
}

type Json = Record<string, unknown>

const kept = new Set([
  "type",
  "format",
  "description",
  "nullable",
  "enum",
  "properties",
  "required",
  "items",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "title",
  "minProperties",
  "maxProperties",
  "anyOf",
  "propertyOrdering",
  "default",
  "example"
])
const formats: Record<string, ReadonlySet<string>> = {
  string: new Set(["enum", "date-time"]),
  integer: new Set(["int32", "int64"]),
  number: new Set(["float", "double"])
}

/**
 * Converts a tool's parameters; throws a {@link GeminiSchemaError} for a schema Gemini cannot take.
 *
 * @example
 * ```ts
 * toGeminiSchema({ type: "object", properties: { a: { type: ["number", "null"] } }, additionalProperties: false })
 * // { type: "object", properties: { a: { type: "number", nullable: true } } }
 * ```
 */
export const toGeminiSchema = (schema: unknown): Json => convert(schema, schema, "", [])

const convert = (node: unknown, root: unknown, path: string, refs: ReadonlyArray<string>): Json => {
  if (node === true || node === undefined) return {}
  if (typeof node !== "object" || node === null || Array.isArray(node)) throw new GeminiSchemaError(path, "not a schema object")
  const source = node as Json
  if (typeof source.$ref === "string") {
    const ref = source.$ref
    if (refs.includes(ref)) throw new GeminiSchemaError(path, `the recursive reference ${ref} cannot be inlined`)
    const { $ref: _, ...rest } = source
    return { ...convert(resolve(root, ref, path), root, path, [...refs, ref]), ...convert(rest, root, path, refs) }
  }
  if (source.allOf !== undefined) throw new GeminiSchemaError(path, "allOf has no equivalent in Gemini's schema")
  const out: Json = {}
  let description = typeof source.description === "string" ? source.description : undefined
  // type, with null as `nullable`.
  const types = Array.isArray(source.type) ? source.type : source.type === undefined ? [] : [source.type]
  const nonNull = types.filter((t) => t !== "null")
  if (types.includes("null")) out.nullable = true
  if (nonNull.length === 1) out.type = nonNull[0]
  else if (nonNull.length > 1) out.anyOf = nonNull.map((t) => ({ type: t }))
  // anyOf / oneOf, a null branch as `nullable`.
  const union = (source.anyOf ?? source.oneOf) as ReadonlyArray<unknown> | undefined
  if (Array.isArray(union)) {
    const branches = union.filter((b) => !(typeof b === "object" && b !== null && (b as Json).type === "null"))
    if (branches.length < union.length) out.nullable = true
    const converted = branches.map((b, i) => convert(b, root, `${path}/anyOf/${i}`, refs))
    if (converted.length === 1) Object.assign(out, converted[0])
    else if (converted.length > 1) out.anyOf = converted
  }
  // enum / const: strings only.
  const values = source.const !== undefined ? [source.const] : Array.isArray(source.enum) ? source.enum : undefined
  if (values !== undefined) {
    if (values.every((v) => typeof v === "string")) {
      out.enum = values
      out.type ??= "string"
    } else {
      const listed = values.map((v) => JSON.stringify(v)).join(", ")
      description = description === undefined ? `One of: ${listed}.` : `${description} (one of: ${listed})`
    }
  }
  for (const [key, value] of Object.entries(source)) {
    if (!kept.has(key) || key in out || key === "type" || key === "anyOf" || key === "enum" || key === "description") continue
    if (key === "properties" && typeof value === "object" && value !== null) {
      if (Object.keys(value).length === 0) continue
      out.properties = Object.fromEntries(Object.entries(value as Json).map(([name, sub]) => [name, convert(sub, root, `${path}/properties/${name}`, refs)]))
    } else if (key === "items") {
      out.items = convert(value, root, `${path}/items`, refs)
    } else if (key === "format") {
      if (typeof out.type === "string" && formats[out.type]?.has(String(value)) === true) out.format = value
    } else if (key === "required") {
      if (Array.isArray(value) && value.length > 0) out.required = value
    } else out[key] = value
  }
  if (description !== undefined) out.description = description
  return out
}

const resolve = (root: unknown, ref: string, path: string): unknown => {
  if (!ref.startsWith("#/")) throw new GeminiSchemaError(path, `the external reference ${ref} cannot be inlined`)
  let node: unknown = root
  for (const segment of ref.slice(2).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))) {
    node = typeof node === "object" && node !== null ? (node as Json)[segment] : undefined
  }
  if (node === undefined) throw new GeminiSchemaError(path, `the reference ${ref} points nowhere`)
  return node
}
