/**
 * The snapshot of a composite that suspended because one of its members waits for a human decision:
 * plain JSON data naming the composite, its kind and the fingerprint of its shape, where it stopped
 * (`state.stage`) and the member's own snapshot (`state.member`). It is signed (HMAC-SHA256 over its
 * RFC 8785 canonical JSON, as run snapshots are) when the composite signs: with its own
 * `.signSnapshots(secret)`, or else with the secret of the first member that signs its snapshots.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type AgentDefinition, AgentDefinitionKey, mayNeedApproval } from "../dsl/agent-definition.ts"
import type { Decisions } from "../dsl/decision.ts"
import { resumeCheckOf } from "../dsl/resume-check.ts"
import type { PendingApproval } from "../dsl/run-outcome.ts"
import { DefinitionChanged, SnapshotInvalid, SnapshotRejected } from "../errors.ts"
import { canonicalJson } from "../internal/canonical-json.ts"
import { checkSignature, signText } from "../internal/hmac-signature.ts"
import { lazyPackage } from "../internal/lazy-package.ts"
import type { AnyRunnable } from "./runnable.ts"

const crypto = lazyPackage<typeof import("node:crypto")>("node:crypto")

const Stage = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Amount = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * The Schema of a composite snapshot (version 1).
 *
 * @example
 * ```ts
 * const snapshot = Schema.decodeUnknownSync(CompositeSnapshotSchema)(JSON.parse(text))
 * ```
 */
export const CompositeSnapshotSchema = Schema.Struct({
  version: Schema.Literal(1),
  composite: Schema.String,
  kind: Schema.Literals(["pipeline", "parallel", "forum", "loop", "branch"]),
  fingerprint: Schema.String,
  state: Schema.Struct({
    /** The index of the member that suspended (a pipeline's stage; the first one, when several wait at once). */
    stage: Stage,
    /** The member's own snapshot (a run snapshot, or a nested composite's snapshot). */
    member: Schema.Json,
    /** A loop's outputs of the iterations before the one that suspended. */
    iterations: Schema.optionalKey(Schema.Array(Schema.Json)),
    /** Members run at once (a parallel's, a forum's participants): the others that wait, each with its snapshot. */
    waiting: Schema.optionalKey(Schema.Array(Schema.Struct({ stage: Stage, member: Schema.Json }))),
    /** Members run at once: the outputs of those that completed (as JSON), not run again at resume. */
    outputs: Schema.optionalKey(Schema.Array(Schema.Struct({ stage: Stage, output: Schema.Json }))),
    /** A forum's input (as JSON), for the captain's brief once its waiting participants continue. */
    input: Schema.optionalKey(Schema.Json),
    /** A parallel with `onFailure: "collect"`: the errors of those that failed (as JSON: `_tag`, `message`, fields). */
    failures: Schema.optionalKey(Schema.Array(Schema.Struct({ stage: Stage, error: Schema.Json }))),
    /**
     * A composite with a budget: what the runs under it spent before it suspended (tokens, tool calls,
     * wall time in milliseconds), charged again at resume, so its limits bound the whole run.
     */
    spent: Schema.optionalKey(Schema.Struct({ tokens: Amount, toolCalls: Amount, elapsedMs: Amount }))
  }),
  /** HMAC of the rest, when the composite signs. */
  signature: Schema.optionalKey(Schema.String)
})

/** A composite between two members, waiting for decisions on its member's calls. */
export type CompositeSnapshot = typeof CompositeSnapshotSchema.Type

/**
 * What a composite whose member may wait for approval returns when it does: the member's waiting
 * calls (their ids as the member lists them) and the composite's snapshot. `composite.resume(snapshot,
 * decisions)` continues the member, then the rest of the composite.
 *
 * @example
 * ```ts
 * const result = await flow.run("pay bob")
 * if (result._tag === "Suspended") await save(JSON.stringify(result.snapshot))
 * ```
 */
export interface CompositeSuspended {
  readonly _tag: "Suspended"
  readonly pending: ReadonlyArray<PendingApproval>
  readonly snapshot: CompositeSnapshot
}

/** The marker a composite carries so a parent composite can tell whether it may suspend and how it signs. */
export const CompositeSuspension = Symbol.for("effect-agent-dsl/CompositeSuspension")

/** What a composite tells its parents about suspension. */
export interface SuspensionInfo {
  readonly mayNeedApproval: boolean
  readonly secret: string | undefined
  readonly shape: unknown
  /** Validates a resume of this composite from `snapshot` with `decisions`, running nothing. */
  readonly check: (snapshot: unknown, decisions: Decisions) => Effect.Effect<void, unknown>
}

const definitionOf = (member: AnyRunnable): AgentDefinition | undefined =>
  (member as unknown as { readonly [AgentDefinitionKey]?: AgentDefinition })[AgentDefinitionKey]

const infoOf = (member: AnyRunnable): SuspensionInfo | undefined =>
  (member as unknown as { readonly [CompositeSuspension]?: SuspensionInfo })[CompositeSuspension]

/** True when a member's run may end `Suspended`: an agent with a tool that may need approval, or such a composite. */
export const memberMayNeedApproval = (member: AnyRunnable): boolean => {
  const info = infoOf(member)
  if (info !== undefined) return info.mayNeedApproval
  const definition = definitionOf(member)
  return definition !== undefined && typeof (member as { resume?: unknown }).resume === "function" && mayNeedApproval(definition)
}

/**
 * Validates a resume of `member` from its own `snapshot` with `decisions`, running nothing: an agent's
 * decisions bound to its exact pending calls (edits decoded by the tool's Schema), a composite's
 * checked down to its waiting members. A member whose factory gives no check (a foreign runnable)
 * checks its decisions when it resumes.
 */
export const checkMemberResume = (member: AnyRunnable, snapshot: unknown, decisions: Decisions): Effect.Effect<void, unknown> => {
  const check = infoOf(member)?.check ?? resumeCheckOf(member)
  return check === undefined ? Effect.void : check(snapshot, decisions)
}

/** The secret a member signs its snapshots with, if any. */
export const memberSecret = (member: AnyRunnable): string | undefined =>
  infoOf(member)?.secret ?? definitionOf(member)?.snapshotSecret

/** The shape of a member, for the composite's fingerprint: a composite's own shape, else its name. */
export const memberShape = (member: AnyRunnable): unknown => infoOf(member)?.shape ?? { member: member.name }

/** The fingerprint of a shape: sha256 of its canonical JSON, 16 hex digits. */
export const fingerprintOf = (shape: unknown): string => crypto().createHash("sha256").update(canonicalJson(shape)).digest("hex").slice(0, 16)

const unsigned = (snapshot: CompositeSnapshot): CompositeSnapshot => {
  const { signature: _, ...rest } = snapshot
  return rest
}

/** The snapshot signed with `secret` (`v2.<key id>.<hmac>`), or as is without one. */
export const signCompositeSnapshot = (snapshot: CompositeSnapshot, secret: string | undefined): CompositeSnapshot =>
  secret === undefined ? snapshot : { ...unsigned(snapshot), signature: signText(secret, canonicalJson(unsigned(snapshot))) }

const decode = Schema.decodeUnknownEffect(CompositeSnapshotSchema)

/**
 * The composite snapshot in `value` (the snapshot, its parsed JSON or its JSON text), checked against
 * the composite that resumes it: its signature when it signs, its name, kind and fingerprint.
 */
export const checkCompositeSnapshot = (
  expected: { readonly name: string; readonly kind: CompositeSnapshot["kind"]; readonly fingerprint: string; readonly secret: string | undefined },
  value: unknown
): Effect.Effect<CompositeSnapshot, SnapshotInvalid | SnapshotRejected | DefinitionChanged> =>
  Effect.gen(function*() {
    let parsed: unknown = value
    if (typeof value === "string") {
      try {
        parsed = JSON.parse(value)
      } catch (error) {
        return yield* new SnapshotInvalid({ issues: `not JSON: ${String(error)}` })
      }
    }
    const snapshot = yield* decode(parsed, { errors: "all", onExcessProperty: "error" }).pipe(
      Effect.mapError((error) => new SnapshotInvalid({ issues: error.message }))
    )
    if (expected.secret !== undefined) {
      const check = checkSignature(snapshot.signature, expected.secret, ["v2"], () => canonicalJson(unsigned(snapshot)))
      if (check !== "valid") return yield* new SnapshotRejected({ agent: expected.name, reason: check })
    }
    const refuse = (found: string, reason: string) =>
      Effect.fail(new DefinitionChanged({ agent: expected.name, expected: expected.fingerprint, found, reason }))
    if (snapshot.composite !== expected.name || snapshot.kind !== expected.kind) {
      return yield* refuse(snapshot.composite, `the snapshot belongs to ${snapshot.kind} "${snapshot.composite}"`)
    }
    if (snapshot.fingerprint !== expected.fingerprint) {
      return yield* refuse(snapshot.fingerprint, `the composite changed since the snapshot (fingerprint ${snapshot.fingerprint}, now ${expected.fingerprint})`)
    }
    return snapshot
  })
