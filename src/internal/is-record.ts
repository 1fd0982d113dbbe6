/**
 * Internal: whether a value is a record of fields (a JSON object): an object, not `null`, not an
 * array. One check for every reader of values that came from JSON or a plain JavaScript caller.
 */
export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)
