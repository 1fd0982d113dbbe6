/**
 * Human decisions on tool calls that wait for approval: `approve` (run it as proposed), `deny(reason)`
 * (it never runs; the model is told why and goes on), `edit(args)` (run it with other arguments, decoded
 * again with the tool's Schema). `agent.resume(snapshot, decisions)` takes one per waiting call, keyed
 * by the call's id. A decision binds to the call the snapshot waits on (its id, its tool and, for an
 * approval, the pending call's own arguments) and is taken once: decisions not applied yet travel in
 * the next snapshot and cannot be changed.
 */
import * as Data from "effect/Data"

/** One decision about one waiting call. */
export type Decision = Data.TaggedEnum<{
  Approve: {}
  Deny: { readonly reason: string }
  Edit: { readonly args: unknown }
}>

const DecisionEnum = Data.taggedEnum<Decision>()

/**
 * The decisions: `Decision.approve`, `Decision.deny(reason)`, `Decision.edit(args)`.
 *
 * @example
 * ```ts
 * const decisions: Decisions = { call_1: Decision.approve, call_2: Decision.deny("not this account") }
 * ```
 */
export const Decision = {
  approve: DecisionEnum.Approve() as Decision,
  deny: (reason: string): Decision => DecisionEnum.Deny({ reason: String(reason) }),
  edit: (args: unknown): Decision => DecisionEnum.Edit({ args }),
  $is: DecisionEnum.$is,
  $match: DecisionEnum.$match
} as const

/**
 * One decision per waiting call, by call id.
 *
 * @example
 * ```ts
 * const decisions: Decisions = Object.fromEntries(suspended.pending.map((p) => [p.id, Decision.approve]))
 * ```
 */
export type Decisions = Readonly<Record<string, Decision>>
