/**
 * A run event as plain JSON, for the store, the wire and the file: tagged errors become
 * `{ _tag, message, ...their fields }`, BigInts strings, functions and symbols are dropped; a value JSON
 * cannot hold (a cycle) makes the event keep only its tag, run and agent, flagged `unserialisable`.
 */
import type { StoredEvent } from "../server/api.ts"

/** The JSON shape of one event. */
export type EventJson = StoredEvent["event"]

const replacer = (_key: string, value: unknown): unknown => {
  if (typeof value === "bigint") return value.toString()
  if (value instanceof Error) {
    const tag = (value as { readonly _tag?: unknown })._tag
    return { ...Object.fromEntries(Object.entries(value)), ...(typeof tag === "string" ? { _tag: tag } : { name: value.name }), message: value.message }
  }
  return value
}

/**
 * The JSON of `event` (any run event, delta or composite event).
 *
 * @example
 * ```ts
 * toEventJson({ _tag: "RunStart", agent: "calc", runId: "run_1", input: "2+2" }) // the same, as JSON
 * ```
 */
export const toEventJson = (event: unknown): EventJson => {
  try {
    const parsed = JSON.parse(JSON.stringify(event, replacer)) as unknown
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as { _tag?: unknown })._tag === "string") return parsed as EventJson
  } catch {
    // falls through to the reduced form
  }
  const source = (typeof event === "object" && event !== null ? event : {}) as Record<string, unknown>
  return {
    _tag: typeof source._tag === "string" ? source._tag : "Unknown",
    ...(typeof source.runId === "string" ? { runId: source.runId } : {}),
    ...(typeof source.agent === "string" ? { agent: source.agent } : {}),
    unserialisable: true
  }
}

/** True when `value` looks like a run event (an object with a string `_tag`). */
export const isEventJson = (value: unknown): value is EventJson =>
  typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as { _tag?: unknown })._tag === "string"
