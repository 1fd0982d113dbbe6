/**
 * Tools described by a JSON Schema the author (or an MCP server) wrote. The document is stored
 * verbatim and deep-frozen: it is what models see. At registration it is compiled once, by Effect's own
 * importer (`SchemaRepresentation.fromJsonSchemaDocument`), into an Effect Schema; that Schema decodes
 * every call, so invalid arguments get the same readable issues (with paths), the same repairs and the
 * same recovery routing as tools written with Effect Schemas.
 *
 * What the importer cannot enforce (object-valued `enum`/`const`, `not`, `if`/`then`/`else`,
 * `dependentRequired`, `contains`, `unevaluated*`, pointers below a definition) is refused at
 * registration with the importer's explanation, never silently accepted; so is a validation keyword
 * whose value is not of its form (`json-schema-keywords.ts`), which the importer would drop. Remote `$ref`s are refused
 * before that: a tool's contract never depends on the network.
 */
import * as JsonSchema from "effect/JsonSchema"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaRepresentation from "effect/SchemaRepresentation"
import { withLinearPatterns } from "../internal/linear-patterns.ts"
import type { JsonSchemaObject } from "../model/messages.ts"
import { argsDecoder, type ArgsSchema } from "./tool-parameters.ts"
import { isRecord } from "../internal/is-record.ts"
import { type JsonSchemaDialect, malformedKeyword } from "./json-schema-keywords.ts"

/** A JSON Schema 2020-12 (or draft-07, when its `$schema` says so) for a tool's arguments. */
export type ToolJsonSchema = JsonSchemaObject

/** The compiled form of a JSON Schema: the verbatim document, the Schema enforcing it and its decoder. */
export interface JsonSchemaContract {
  /** The author's document, deep-frozen, as sent to models. */
  readonly jsonSchema: JsonSchemaObject
  /** The Effect Schema the document was compiled into. */
  readonly schema: ArgsSchema
  readonly decode: (raw: unknown) => Result.Result<unknown, string>
  readonly codec: Schema.ConstraintCodec<unknown, unknown, never, never>
}


const draft07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/
const draft2020 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/

/**
 * Compiles `document` into a validator. Throws a plain `Error` explaining what is refused (the caller
 * names the tool): a remote `$ref`, an unknown `$schema` dialect, a root that is not an object schema,
 * a keyword the importer cannot enforce, or (with `strict`) a schema outside OpenAI's strict subset.
 *
 * @example
 * ```ts
 * const contract = compileJsonSchema({ type: "object", properties: { q: { type: "string" } }, required: ["q"] }, { strict: false })
 * contract.decode('{"q":"hi"}') // Result.succeed({ q: "hi" })
 * ```
 */
export const compileJsonSchema = (document: unknown, options: { readonly strict: boolean }): JsonSchemaContract => {
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    throw new Error("`parameters` must be a JSON Schema object")
  }
  const verbatim = deepFreeze(structuredClone(document) as JsonSchemaObject)
  const remote = findRemoteRef(verbatim, [])
  if (remote !== undefined) {
    throw new Error(`remote $ref ${JSON.stringify(remote.ref)} at ${remote.path} is refused: only local references (#/$defs/Name) are resolved`)
  }
  const loop = findReferenceLoop(verbatim)
  if (loop !== undefined) {
    throw new Error(`the $ref chain ${loop.join(" → ")} comes back to itself without reading deeper into the value: it cannot be validated`)
  }
  if (verbatim.type !== "object") {
    throw new Error(`arguments must be described by an object schema ({ "type": "object", ... }), got ${JSON.stringify(verbatim.type ?? "no type")}`)
  }
  if (options.strict) {
    const problems = strictProblems(verbatim, "#")
    if (problems.length > 0) throw new Error(`not compatible with OpenAI strict mode:\n${problems.join("\n")}`)
  }
  const declared = verbatim.$schema
  const dialect: JsonSchemaDialect | undefined = declared === undefined || (typeof declared === "string" && draft2020.test(declared))
    ? "2020-12"
    : typeof declared === "string" && draft07.test(declared)
    ? "draft-07"
    : undefined
  if (dialect === undefined) throw new Error(`unsupported $schema ${JSON.stringify(declared)}: use JSON Schema 2020-12 or draft-07`)
  // The importer drops a keyword whose value it cannot read: refused here instead, never a constraint lost.
  const malformed = malformedKeyword(verbatim, dialect)
  if (malformed !== undefined) throw new Error(`cannot be validated: ${malformed}`)
  const imported: JsonSchema.Document<"draft-2020-12"> = dialect === "2020-12" ? JsonSchema.fromSchemaDraft2020_12(verbatim) : JsonSchema.fromSchemaDraft07(verbatim)
  let schema: ArgsSchema
  try {
    // Patterns run in linear time (RE2): a schema from outside (an MCP server's) cannot freeze the process.
    schema = withLinearPatterns(SchemaRepresentation.fromJsonSchemaDocument(imported, { patterns: "apply" })) as unknown as ArgsSchema
  } catch (error) {
    throw new Error(`cannot be validated: ${error instanceof Error ? error.message : String(error)}`)
  }
  const codec = Schema.toCodecJson(schema) as unknown as Schema.ConstraintCodec<unknown, unknown, never, never>
  return Object.freeze({ jsonSchema: verbatim, schema, decode: argsDecoder(codec), codec })
}

/** True when `u` looks like a JSON Schema document rather than an Effect Schema. */
export const isJsonSchemaDocument = (u: unknown): u is JsonSchemaObject =>
  typeof u === "object" && u !== null && !Array.isArray(u) && !Schema.isSchema(u)

/**
 * A loop of references that comes back to where it started without reading any deeper into the value:
 * through bare `$ref`s (`#/$defs/A` → `#/$defs/B` → `#/$defs/A`) or through the subschemas of
 * `allOf`/`anyOf`/`oneOf`, which apply to the same value (`A: { anyOf: [{ type: "string" }, { $ref: A }] }`).
 * A validator following it would never stop (for some value or every one), so it is refused; a
 * recursive schema whose references sit below `properties` or `items` (a tree's
 * `children: { items: { $ref } }`) reads one level deeper at each turn and is fine. Walked without
 * recursion: a schema from outside may be nested deeper than the stack.
 */
const findReferenceLoop = (root: JsonSchemaObject): ReadonlyArray<string> | undefined => {
  const resolve = (ref: string): unknown => {
    if (ref === "#") return root
    const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref)
    if (match === null) return undefined
    const defs = root[match[1]!]
    const name = match[2]!.replaceAll("~1", "/").replaceAll("~0", "~")
    return isRecord(defs) && Object.hasOwn(defs, name) ? defs[name] : undefined
  }
  // The schemas that apply to the same value as `node` (its reference, its allOf/anyOf/oneOf), by pointer.
  const sameValue = (node: unknown, at: string): ReadonlyArray<readonly [schema: object, at: string]> => {
    if (!isRecord(node)) return []
    const out: Array<readonly [object, string]> = []
    if (typeof node.$ref === "string") {
      const target = resolve(node.$ref)
      if (isRecord(target)) out.push([target, node.$ref])
    }
    for (const key of ["allOf", "anyOf", "oneOf"]) {
      const list = node[key]
      if (Array.isArray(list)) list.forEach((child, i) => isRecord(child) && out.push([child, `${at}/${key}/${i}`]))
    }
    return out
  }
  const starts: Array<readonly [object, string]> = [[root, "#"]]
  for (const key of ["$defs", "definitions"]) {
    const defs = root[key]
    if (!isRecord(defs)) continue
    for (const [name, def] of Object.entries(defs)) {
      if (isRecord(def)) starts.push([def, `#/${key}/${name.replaceAll("~", "~0").replaceAll("/", "~1")}`])
    }
  }
  const done = new Set<object>()
  for (const [start, at] of starts) {
    if (done.has(start)) continue
    // Depth-first: `path` holds the schemas from `start` to the one being read, each with what is left of its list.
    const path: Array<{ readonly schema: object; readonly at: string; readonly next: ReadonlyArray<readonly [object, string]>; index: number }> = []
    const onPath = new Map<object, number>()
    const enter = (schema: object, pointer: string) => {
      onPath.set(schema, path.length)
      path.push({ schema, at: pointer, next: sameValue(schema, pointer), index: 0 })
    }
    enter(start, at)
    while (path.length > 0) {
      const top = path[path.length - 1]!
      if (top.index === top.next.length) {
        path.pop()
        onPath.delete(top.schema)
        done.add(top.schema)
        continue
      }
      const [schema, pointer] = top.next[top.index++]!
      const back = onPath.get(schema)
      if (back !== undefined) return [...path.slice(back).map((p) => p.at), pointer]
      if (!done.has(schema)) enter(schema, pointer)
    }
  }
  return undefined
}

const findRemoteRef = (node: unknown, path: ReadonlyArray<string>): { readonly ref: string; readonly path: string } | undefined => {
  if (typeof node !== "object" || node === null) return undefined
  if (Array.isArray(node)) {
    for (const [i, child] of node.entries()) {
      const found = findRemoteRef(child, [...path, String(i)])
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const [key, child] of Object.entries(node)) {
    if ((key === "$ref" || key === "$dynamicRef") && typeof child === "string" && !child.startsWith("#")) {
      return { ref: child, path: `#/${path.join("/")}` }
    }
    // `const`, `enum`, `examples` and `default` hold instances, not schemas.
    if (key === "const" || key === "enum" || key === "examples" || key === "default") continue
    const found = findRemoteRef(child, [...path, key])
    if (found !== undefined) return found
  }
  return undefined
}

/** Keywords OpenAI's strict mode does not accept. */
const strictUnsupported = [
  "allOf",
  "not",
  "if",
  "then",
  "else",
  "dependentRequired",
  "dependentSchemas",
  "patternProperties",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "minProperties",
  "maxProperties",
  "contains",
  "uniqueItems"
]

/** Where `node` leaves OpenAI's strict subset: closed objects, every property required, no unsupported keywords. */
const strictProblems = (node: unknown, path: string): Array<string> => {
  if (typeof node !== "object" || node === null || Array.isArray(node)) return []
  const schema = node as Record<string, unknown>
  const problems: Array<string> = []
  for (const keyword of strictUnsupported) {
    if (keyword in schema) problems.push(`${path}: "${keyword}" is not supported in strict mode`)
  }
  const isObject = schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object")) || "properties" in schema
  if (isObject) {
    if (schema.additionalProperties !== false) problems.push(`${path}: objects must set "additionalProperties": false`)
    const properties = isRecord(schema.properties) ? Object.keys(schema.properties) : []
    const required = Array.isArray(schema.required) ? schema.required : []
    const missing = properties.filter((key) => !required.includes(key))
    if (missing.length > 0) {
      problems.push(`${path}: every property must be required (make optional ones nullable): ${missing.join(", ")}`)
    }
  }
  for (const [childPath, child] of subschemas(schema, path)) problems.push(...strictProblems(child, childPath))
  return problems
}

/** The direct subschemas of a schema, with their JSON pointers. */
const subschemas = (schema: Record<string, unknown>, path: string): Array<readonly [string, unknown]> => {
  const out: Array<readonly [string, unknown]> = []
  for (const key of ["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"]) {
    const map = schema[key]
    if (isRecord(map)) for (const [name, child] of Object.entries(map)) out.push([`${path}/${key}/${name}`, child])
  }
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems", "items"]) {
    const list = schema[key]
    if (Array.isArray(list)) list.forEach((child, i) => out.push([`${path}/${key}/${i}`, child]))
  }
  for (const key of ["items", "additionalProperties", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"]) {
    const child = schema[key]
    if (isRecord(child)) out.push([`${path}/${key}`, child])
  }
  return out
}


const deepFreeze = <T>(value: T): T => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
