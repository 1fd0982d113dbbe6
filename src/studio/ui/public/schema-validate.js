// @ts-check
/**
 * Checks a value against a JSON Schema before the studio sends it (edited tool arguments, an agent's
 * input), so a typo is shown next to its field instead of coming back as a 400. It covers the
 * keywords Effect's `Schema.toJsonSchemaDocument` emits (type, properties, required,
 * additionalProperties, items, prefixItems, enum, const, anyOf/oneOf/allOf, $ref into $defs, string
 * and number bounds, pattern); other keywords are left to the server, which decodes with the tool's
 * own Schema and stays the authority. Written here rather than vendoring Ajv (~120 KB minified,
 * and it compiles validators with `new Function`, which a strict Content-Security-Policy refuses).
 *
 * @example
 * validate({ type: "object", required: ["a"], properties: { a: { type: "number" } } }, { a: "x" })
 * // → [{ path: "a", message: "expected a number" }]
 */

/** @typedef {{ [key: string]: unknown }} Schema */
/** @typedef {{ path: string, message: string }} Issue */

/**
 * @param {unknown} value
 * @returns {string}
 */
const typeOf = (value) => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number"
  return typeof value
}

/**
 * @param {string} expected
 * @param {unknown} value
 */
const hasType = (expected, value) => {
  const actual = typeOf(value)
  if (expected === "number") return actual === "number" || actual === "integer"
  return actual === expected
}

/**
 * @param {string} path
 * @param {string | number} key
 */
const join = (path, key) => (typeof key === "number" ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`)

/** @param {unknown} value */
const isSchema = (value) => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
const equal = (a, b) => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keysA = Object.keys(a)
  const keysB = Object.keys(b)
  return keysA.length === keysB.length && keysA.every((key) => equal(/** @type {any} */ (a)[key], /** @type {any} */ (b)[key]))
}

/**
 * Resolves a local `$ref` (`#/$defs/Name`, `#/definitions/Name`) against the root document.
 * @param {Schema} root
 * @param {string} ref
 * @returns {Schema | undefined}
 */
const resolveRef = (root, ref) => {
  if (!ref.startsWith("#")) return undefined
  /** @type {unknown} */
  let at = root
  for (const part of ref.slice(1).split("/").filter((segment) => segment !== "")) {
    const key = decodeURIComponent(part.replace(/~1/g, "/").replace(/~0/g, "~"))
    if (!isSchema(at)) return undefined
    at = /** @type {Schema} */ (at)[key]
  }
  return isSchema(at) ? /** @type {Schema} */ (at) : undefined
}

/**
 * @param {Schema} root
 * @param {unknown} schema
 * @param {unknown} value
 * @param {string} path
 * @param {Issue[]} issues
 * @param {number} depth
 */
const check = (root, schema, value, path, issues, depth) => {
  if (schema === true || schema === undefined) return
  if (schema === false) {
    issues.push({ path, message: "no value is allowed here" })
    return
  }
  if (!isSchema(schema) || depth > 64) return
  const s = /** @type {Schema} */ (schema)
  if (typeof s.$ref === "string") {
    const target = resolveRef(root, s.$ref)
    if (target !== undefined) check(root, target, value, path, issues, depth + 1)
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type.map(String) : [String(s.type)]
    if (!types.some((type) => hasType(type, value))) {
      issues.push({ path, message: `expected ${types.map((type) => (type === "integer" ? "an integer" : type === "array" || type === "object" ? `an ${type}` : `a ${type}`)).join(" or ")}` })
      return
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((option) => equal(option, value))) {
    issues.push({ path, message: `expected one of ${s.enum.map((option) => JSON.stringify(option)).join(", ")}` })
  }
  if ("const" in s && !equal(s.const, value)) issues.push({ path, message: `expected ${JSON.stringify(s.const)}` })
  if (Array.isArray(s.allOf)) for (const part of s.allOf) check(root, part, value, path, issues, depth + 1)
  for (const keyword of ["anyOf", "oneOf"]) {
    const options = s[keyword]
    if (!Array.isArray(options)) continue
    const matching = options.filter((option) => {
      /** @type {Issue[]} */
      const found = []
      check(root, option, value, path, found, depth + 1)
      return found.length === 0
    })
    if (matching.length === 0 || (keyword === "oneOf" && matching.length > 1)) {
      issues.push({ path, message: matching.length === 0 ? "matches none of the allowed forms" : "matches more than one allowed form" })
    }
  }
  if (typeof value === "string") {
    const length = [...value].length
    if (typeof s.minLength === "number" && length < s.minLength) issues.push({ path, message: `must have at least ${s.minLength} character${s.minLength === 1 ? "" : "s"}` })
    if (typeof s.maxLength === "number" && length > s.maxLength) issues.push({ path, message: `must have at most ${s.maxLength} characters` })
    if (typeof s.pattern === "string") {
      try {
        if (!new RegExp(s.pattern, "u").test(value)) issues.push({ path, message: `must match ${s.pattern}` })
      } catch {
        // a pattern this browser cannot compile is the server's to check
      }
    }
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum) issues.push({ path, message: `must be ≥ ${s.minimum}` })
    if (typeof s.maximum === "number" && value > s.maximum) issues.push({ path, message: `must be ≤ ${s.maximum}` })
    if (typeof s.exclusiveMinimum === "number" && value <= s.exclusiveMinimum) issues.push({ path, message: `must be > ${s.exclusiveMinimum}` })
    if (typeof s.exclusiveMaximum === "number" && value >= s.exclusiveMaximum) issues.push({ path, message: `must be < ${s.exclusiveMaximum}` })
    if (typeof s.multipleOf === "number" && s.multipleOf > 0 && Math.abs(value / s.multipleOf - Math.round(value / s.multipleOf)) > 1e-9) issues.push({ path, message: `must be a multiple of ${s.multipleOf}` })
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems) issues.push({ path, message: `must have at least ${s.minItems} item${s.minItems === 1 ? "" : "s"}` })
    if (typeof s.maxItems === "number" && value.length > s.maxItems) issues.push({ path, message: `must have at most ${s.maxItems} items` })
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : []
    value.forEach((item, index) => {
      const itemSchema = index < prefix.length ? prefix[index] : s.items
      check(root, itemSchema, item, join(path, index), issues, depth + 1)
    })
  }
  if (typeOf(value) === "object") {
    const object = /** @type {{ [key: string]: unknown }} */ (value)
    const properties = isSchema(s.properties) ? /** @type {Schema} */ (s.properties) : {}
    if (Array.isArray(s.required)) {
      for (const key of s.required) if (!(String(key) in object)) issues.push({ path: join(path, String(key)), message: "is required" })
    }
    for (const [key, item] of Object.entries(object)) {
      if (key in properties) check(root, properties[key], item, join(path, key), issues, depth + 1)
      else if (s.additionalProperties === false) issues.push({ path: join(path, key), message: "is not an allowed property" })
      else if (isSchema(s.additionalProperties)) check(root, s.additionalProperties, item, join(path, key), issues, depth + 1)
    }
  }
}

/**
 * The issues of `value` against `schema` (empty when it conforms, as far as these keywords go).
 * @param {unknown} schema
 * @param {unknown} value
 * @returns {Issue[]}
 */
export const validate = (schema, value) => {
  /** @type {Issue[]} */
  const issues = []
  check(isSchema(schema) ? /** @type {Schema} */ (schema) : {}, schema, value, "", issues, 0)
  return issues
}

/**
 * The schema a `$ref` points at, or the schema itself.
 * @param {Schema} root
 * @param {unknown} schema
 * @returns {Schema}
 */
export const deref = (root, schema) => {
  let current = isSchema(schema) ? /** @type {Schema} */ (schema) : {}
  for (let hops = 0; hops < 16 && typeof current.$ref === "string"; hops++) {
    const target = resolveRef(root, current.$ref)
    if (target === undefined) break
    current = target
  }
  return current
}
