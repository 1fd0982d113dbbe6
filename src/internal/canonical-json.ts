/**
 * RFC 8785 JSON Canonicalization Scheme (JCS) for JSON values: object keys sorted by their UTF-16
 * code units (what `Array.prototype.sort` compares), no whitespace, and primitives serialised as
 * ECMAScript's `JSON.stringify` does (the RFC defines numbers and strings by it). Written here rather
 * than imported: for the plain JSON a snapshot holds the scheme is these few lines, the library keeps
 * no runtime dependency for it, and a property test checks it against `canonicalize` (the package of
 * the RFC's co-author) on arbitrary JSON, hostile keys and numbers included.
 */

/**
 * The canonical JSON text of `value` (JSON data: null, booleans, finite numbers, strings, arrays,
 * plain objects). Keys whose value is `undefined` are left out, as `JSON.stringify` does; a non-finite
 * number or any other value throws.
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [true, "x"] }) // '{"a":[true,"x"],"b":1}'
 * ```
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value)
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`canonical JSON has no ${value}`)
    return JSON.stringify(value)
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(",")}]`
  if (typeof value === "object") {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`
  }
  throw new TypeError(`canonical JSON has no ${typeof value}`)
}
