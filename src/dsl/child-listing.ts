/**
 * How a run lists its suspended children's waiting calls: `<caller's call id>/<child's call id>`, with
 * `#2`, `#3`, … after it when that is already the id of one of the run's own pending calls or of a
 * call listed before. Read from a snapshot's JSON, so the runtime (which routes decisions by it) and
 * the protocols (which tell the client which child raised a call) list alike.
 */
import type * as Schema from "effect/Schema"
import { isRecord } from "../internal/is-record.ts"

/** The separator of a child's waiting call id under the caller's call id. */
export const childIdSeparator = "/"

/** A child's waiting call as this run lists it: the child (by the call that runs it) and the child's own id. */
export interface ChildRoute {
  readonly callId: string
  readonly id: string
}

/**
 * The ids under which a run lists its children's waiting calls, in order: `<call id>/<child's id>`,
 * unless that is the id of one of the run's own pending calls (`own`) or of a call listed before, then
 * with `#2`, `#3`, … after it. The same snapshot always gives the same listing.
 *
 * @example
 * ```ts
 * childListing(["p1", "p1/x"], [{ callId: "p1", ids: ["c1", "x"] }]) // p1/c1 → (p1, c1), p1/x#2 → (p1, x)
 * ```
 */
export const childListing = (
  own: ReadonlyArray<string>,
  children: ReadonlyArray<{ readonly callId: string; readonly ids: ReadonlyArray<string> }>
): ReadonlyMap<string, ChildRoute> => {
  const taken = new Set(own)
  const routes = new Map<string, ChildRoute>()
  for (const child of children) {
    for (const id of child.ids) {
      const base = `${child.callId}${childIdSeparator}${id}`
      let listed = base
      for (let n = 2; taken.has(listed); n++) listed = `${base}#${n}`
      taken.add(listed)
      routes.set(listed, { callId: child.callId, id })
    }
  }
  return routes
}

/** A child snapshot's waiting calls, read from its JSON (a malformed one lists none; its decoding refuses it later). */
export const childAwaiting = (snapshot: Schema.Json): ReadonlyArray<{ readonly id: string; readonly tool: unknown; readonly args: unknown; readonly reason: unknown }> => {
  const state = isRecord(snapshot) ? snapshot.state : undefined
  const awaiting = isRecord(state) ? state.awaiting : undefined
  if (!Array.isArray(awaiting)) return []
  return awaiting.flatMap((entry) => (isRecord(entry) && typeof entry.id === "string" ? [{ id: entry.id, tool: entry.tool, args: entry.args, reason: entry.reason }] : []))
}

