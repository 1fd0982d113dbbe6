/**
 * A child run's suspension as a recorded tool outcome. An agent called as a tool whose child waits for
 * a decision answers a `ChildSuspension` (its waiting calls and its snapshot) instead of a result; a
 * durable run records that answer as JSON under a key of this library, and reads it back as a
 * `ChildSuspension` (on the first execution and on every replay), so the calling run suspends, and its
 * resume continues the child, exactly as a plain run does.
 */
import * as Schema from "effect/Schema"
import { ChildSuspension } from "../dsl/child-suspension.ts"
import { RunSnapshotSchema } from "../dsl/run-snapshot.ts"
import { resultAsJson } from "./schemas.ts"

const marker = "effect-agent-dsl/ChildSuspension"
const encodeSnapshot = Schema.encodeSync(RunSnapshotSchema)
const decodeSnapshot = Schema.decodeUnknownSync(RunSnapshotSchema)

/** A tool's result as JSON to record: a `ChildSuspension` under its marker, anything else as `resultAsJson` does. */
export const toolResultAsJson = (value: unknown): Schema.Json =>
  value instanceof ChildSuspension
    ? { [marker]: { pending: resultAsJson(value.pending), snapshot: encodeSnapshot(value.snapshot) as Schema.Json } }
    : resultAsJson(value)

/** A recorded tool result: a `ChildSuspension` again when it was one. */
export const toolResultFromJson = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null || !(marker in value)) return value
  const recorded = (value as Record<string, { readonly pending: ReadonlyArray<any>; readonly snapshot: unknown }>)[marker]!
  return new ChildSuspension(recorded.pending, decodeSnapshot(recorded.snapshot))
}
