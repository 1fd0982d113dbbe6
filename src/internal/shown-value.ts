/**
 * Internal: a value as a configuration error shows it. A string is quoted, so `"5"` (text from a plain
 * JavaScript caller or a form) is told from the number `5`; numbers, booleans, `null` and `undefined`
 * as they are (a `Date` too); anything else by its kind.
 */
export const shownValue = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)
    case "number":
    case "boolean":
    case "undefined":
      return String(value)
    case "bigint":
      return `${value}n`
    case "function":
      return "a function"
    case "symbol":
      return "a symbol"
    default:
      return value === null ? "null" : value instanceof Date ? String(value) : Array.isArray(value) ? "an array" : "an object"
  }
}
