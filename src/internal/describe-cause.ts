/**
 * Internal: a short, single-line description of any thrown value, for error messages, hook-failure
 * logs and the feedback a model gets when a tool fails.
 */

/** `Error`s by their message, strings as they are, anything else as JSON (or `String(...)`). */
export const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) return cause.message
  if (typeof cause === "string") return cause
  try {
    return JSON.stringify(cause) ?? String(cause)
  } catch {
    return String(cause)
  }
}
