/**
 * `text` parsed as JSON, or undefined when it is not JSON (for a caller to which text that is not JSON
 * means nothing: a JSON value or nothing).
 *
 * @example
 * ```ts
 * jsonOrUndefined('{"a":1}') // { a: 1 }
 * jsonOrUndefined("<html>") // undefined
 * ```
 */
export const jsonOrUndefined = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
