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

/** A JSON value's own keys, when it is an object (not an array). */
const recordOf = (value: unknown): Record<string, unknown> | undefined => (isRecord(value) ? value : undefined)

/** The ids of a snapshot's entries (`state.pending`, `state.awaiting`), as its JSON holds them. */
const idsOf = (list: unknown): Array<string> =>
  Array.isArray(list) ? list.flatMap((entry) => (typeof recordOf(entry)?.id === "string" ? [recordOf(entry)!.id as string] : [])) : []

/** Where a waiting call was raised, when not by the run itself: see {@link routeOf}. */
export interface Route {
  /** The run whose events made the call, and the call's id there. */
  readonly runId: string
  readonly callId: string
  /** The innermost agent used as a tool on the way (AG-UI's `subagentRunId`); none for a handoff alone. */
  readonly subagentRunId: string | undefined
}

/**
 * Which run made a waiting call of `snapshot` listed as `listed`: a handoff target's (whose waiting
 * calls are the run's), a suspended child's (an agent used as a tool, listed as the runtime lists it:
 * `childListing`), at any depth; undefined for the run's own call. Read from the snapshot's JSON, so
 * the protocols name the call as the stream that made it showed it.
 *
 * @example
 * ```ts
 * routeOf(snapshot, "p1/k1") // { runId: "run_child", callId: "k1", subagentRunId: "run_child" }
 * ```
 */
export const routeOf = (snapshot: unknown, listed: string): Route | undefined => {
  const state = recordOf(recordOf(snapshot)?.state)
  if (state === undefined) return undefined
  const runIdOf = (inner: unknown) => recordOf(recordOf(inner)?.state)?.runId
  const handoff = recordOf(state.handoff)
  if (handoff !== undefined) {
    const target = runIdOf(handoff.snapshot)
    const inner = routeOf(handoff.snapshot, listed)
    return inner ?? (typeof target === "string" ? { runId: target, callId: listed, subagentRunId: undefined } : undefined)
  }
  const children = (Array.isArray(state.children) ? state.children : []).flatMap((child) => {
    const entry = recordOf(child)
    return typeof entry?.id === "string" ? [{ callId: entry.id, snapshot: entry.snapshot }] : []
  })
  const route = childListing(idsOf(state.pending), children.map((child) => ({ callId: child.callId, ids: childAwaiting(child.snapshot as Schema.Json).map((a) => a.id) }))).get(listed)
  const child = route === undefined ? undefined : children.find((c) => c.callId === route.callId)
  const runId = runIdOf(child?.snapshot)
  if (route === undefined || typeof runId !== "string") return undefined
  const inner = routeOf(child!.snapshot, route.id)
  return { runId: inner?.runId ?? runId, callId: inner?.callId ?? route.id, subagentRunId: inner?.subagentRunId ?? runId }
}
