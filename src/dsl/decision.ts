/**
 * Human decisions on tool calls that wait for approval: `approve` (run it as proposed), `deny(reason)`
 * (it never runs; the model is told why and goes on), `edit(args)` (run it with other arguments, decoded
 * again with the tool's Schema). `agent.resume(snapshot, decisions)` takes one per waiting call, keyed
 * by the call's id. A decision binds to the call the snapshot waits on (its id, its tool and, for an
 * approval, the pending call's own arguments) and is taken once: decisions not applied yet travel in
 * the next snapshot and cannot be changed.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { DecisionsInvalid } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"

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

/**
 * The decisions given to a resume, read once into plain data (a record without prototype of
 * `{ _tag }`, `{ _tag, reason }` or `{ _tag, args }`), at the edge: an untyped caller may hand
 * anything, and what is not an object of decisions, or throws when read (a getter, a proxy trap), is
 * `DecisionsInvalid` naming what could not be read (`*` for the object itself, else the call id),
 * before anything runs. Everything after reads the copy, so a later change to the caller's object
 * changes nothing either. A value that is no decision is kept as is, for `resolveDecisions` to refuse.
 *
 * @example
 * ```ts
 * const read = yield* readDecisions("teller", untrusted) // DecisionsInvalid for a throwing getter
 * ```
 */
export const readDecisions = (agent: string, decisions: unknown): Effect.Effect<Decisions, DecisionsInvalid> =>
  Effect.suspend(() => {
    const refuse = (toolCallId: string, reason: string) => Effect.fail(new DecisionsInvalid({ agent, toolCallId, reason }))
    if (typeof decisions !== "object" || decisions === null || Array.isArray(decisions)) {
      return refuse("*", "decisions are an object from call ids to Decision.approve, Decision.deny(reason) or Decision.edit(args)")
    }
    let ids: ReadonlyArray<string>
    try {
      ids = Object.keys(decisions)
    } catch (error) {
      return refuse("*", `the decisions could not be read (${describeCause(error)}): give a plain object from call ids to decisions`)
    }
    // No prototype: a call id may be any text, `__proto__` included.
    const read: Record<string, Decisions[string]> = Object.create(null)
    for (const id of ids) {
      try {
        read[id] = decisionOf((decisions as Record<string, unknown>)[id]) as Decisions[string]
      } catch (error) {
        return refuse(id, `the decision for this call could not be read (${describeCause(error)}): give Decision.approve, Decision.deny(reason) or Decision.edit(args)`)
      }
    }
    return Effect.succeed(read)
  })

/** One decision as plain data (what `resolveDecisions` reads of it); throws what reading it throws. */
const decisionOf = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (!("_tag" in value)) return {}
  const tag = (value as { readonly _tag: unknown })._tag
  if (tag === "Deny") return { _tag: tag, reason: (value as { readonly reason?: unknown }).reason }
  if (tag === "Edit") return { _tag: tag, args: (value as { readonly args?: unknown }).args }
  return { _tag: tag }
}
