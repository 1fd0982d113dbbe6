/**
 * Decisions bound to the wait they were checked against. `decide` checks decisions against the
 * snapshot in the wait's row (`agent_approval_waits`), which any process can read, while the run goes
 * on from the snapshot its replay computes: a row edited after it was written (or a validly signed
 * snapshot of another wait put in its place) would have a reviewer approve one call and the run
 * resume another. So `decide` hands the run, with the decisions, a SHA-256 of the row's snapshot as it
 * checked it, and the run applies them only when its own snapshot has the same one; otherwise nothing
 * of them runs and the run waits again, its own pending calls in a new wait's row.
 *
 * The binding covers the whole snapshot but for what a replay computes afresh and cannot change what
 * runs: the time spent (`state.elapsedMs`) and the signature over it, in the snapshot and in the
 * snapshots of suspended children and handoff targets it carries.
 */
import * as Schema from "effect/Schema"
import { type RunSnapshot, RunSnapshotSchema } from "../dsl/run-snapshot.ts"
import { canonicalJson } from "../internal/canonical-json.ts"
import { isRecord } from "../internal/is-record.ts"
import { lazyPackage } from "../internal/lazy-package.ts"
import { DecisionsSchema } from "./schemas.ts"

const crypto = lazyPackage<typeof import("node:crypto")>("node:crypto")
const encodeSnapshot = Schema.encodeSync(RunSnapshotSchema)

/**
 * What a wait's durable deferred (and its row, once taken) holds: the decisions with the binding of
 * the snapshot `decide` checked them against, or plain decisions (a cancellation wakes the run with
 * `{}`; decisions recorded by an earlier version carry no binding).
 */
export const CheckedDecisionsSchema = Schema.Union([
  Schema.Struct({ decisions: DecisionsSchema, checked: Schema.String }),
  DecisionsSchema
])

/** A value of {@link CheckedDecisionsSchema}. */
export type CheckedDecisions = typeof CheckedDecisionsSchema.Type

/** Whether `value` carries the binding of the snapshot its decisions were checked against. */
export const isBound = (value: CheckedDecisions): value is { readonly decisions: typeof DecisionsSchema.Type; readonly checked: string } =>
  typeof (value as { readonly checked?: unknown }).checked === "string" && isRecord((value as { readonly decisions?: unknown }).decisions)

/** A snapshot's JSON without what a replay computes afresh: its time spent and its signature, nested snapshots included. */
const steady = (snapshot: unknown): unknown => {
  if (!isRecord(snapshot) || !isRecord(snapshot["state"])) return snapshot
  const { signature: _signature, state, ...rest } = snapshot
  const { elapsedMs: _elapsed, children, handoff, ...others } = state as Record<string, unknown>
  return {
    ...rest,
    state: {
      ...others,
      ...(Array.isArray(children) ? { children: children.map((child) => (isRecord(child) ? { ...child, snapshot: steady(child["snapshot"]) } : child)) } : {}),
      ...(isRecord(handoff) ? { handoff: { ...handoff, snapshot: steady(handoff["snapshot"]) } } : {})
    }
  }
}

/**
 * The binding of a wait's snapshot: a SHA-256 of its steady part's canonical JSON (RFC 8785), the
 * same for the row's copy read back in any key order and for the snapshot a replay computes.
 */
export const waitBinding = (snapshot: RunSnapshot): string =>
  crypto().createHash("sha256").update(canonicalJson(steady(encodeSnapshot(snapshot)))).digest("hex")
