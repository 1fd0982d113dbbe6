/**
 * Internal: a short, single-line description of any thrown value, for error messages, hook-failure
 * logs and the feedback a model gets when a tool fails.
 */

/** `Error`s by their message, strings as they are, anything else as JSON (or `String(...)`). */
export const describeCause = (cause: unknown): string => {
  try {
    if (cause instanceof Error) return String(cause.message)
    if (typeof cause === "string") return cause
    return JSON.stringify(cause) ?? String(cause)
  } catch {
    // Cyclic, BigInt-holding, or a null-prototype object without toString; or a throwing getter.
    try {
      return String(cause)
    } catch {
      return Object.prototype.toString.call(cause)
    }
  }
}
