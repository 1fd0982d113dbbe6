/**
 * Child runs that suspended, in the calling run: an agent used as a tool whose child waits for a
 * decision, and a handoff target that does. The calling run suspends too; its snapshot holds the
 * child's (`state.children`, `state.handoff`); the calls the child waits on are listed as the caller's
 * with ids `<caller's call id>/<child's call id>`; a resume hands the decisions meant for the child to
 * the child's own resume, which checks them against its own snapshot (the only source of truth for
 * them) before anything runs. Kept beside the run context (by context), as the snapshot's part of it.
 */
import * as Effect from "effect/Effect"
import type { Decisions } from "../dsl/decision.ts"
import { childAgentOf } from "../dsl/child-suspension.ts"
import { decodeSnapshotValue, type RunSnapshot } from "../dsl/run-snapshot.ts"
import { DecisionsInvalid, type SnapshotInvalid } from "../errors.ts"
import type { SkillPlan } from "./plan.ts"
import type { RunContext } from "./run-context.ts"
import type { Steps } from "../internal/steps.ts"

/** A suspended child of one call of the run, as the snapshot stores it. */
export type ChildEntry = NonNullable<RunSnapshot["state"]["children"]>[number]

interface ChildState {
  /** Children suspended in this run (for its snapshot), by the caller's call id. */
  readonly suspended: Map<string, ChildEntry>
  /** Children to resume when their call runs again, by the caller's call id. */
  readonly resumes: Map<string, { readonly snapshot: RunSnapshot; readonly decisions: Decisions }>
}

const states = new WeakMap<RunContext, ChildState>()

const stateOf = (ctx: RunContext): ChildState => {
  let state = states.get(ctx)
  if (state === undefined) states.set(ctx, (state = { suspended: new Map(), resumes: new Map() }))
  return state
}

/** The separator of a child's waiting call id under the caller's call id. */
export const childIdSeparator = "/"

/** Records that the child of `callId` suspended with `snapshot` (for the caller's snapshot). */
export const childSuspended = (ctx: RunContext, entry: ChildEntry): void => {
  stateOf(ctx).suspended.set(entry.id, entry)
}

/** The suspended children, for the snapshot (absent when none). */
export const childEntries = (ctx: RunContext): ReadonlyArray<ChildEntry> | undefined => {
  const suspended = states.get(ctx)?.suspended
  return suspended === undefined || suspended.size === 0 ? undefined : [...suspended.values()]
}

/** Arms the resumes of the children given at resume. */
export const armChildResumes = (ctx: RunContext, resumes: ReadonlyMap<string, { readonly snapshot: RunSnapshot; readonly decisions: Decisions }>): void => {
  for (const [id, resume] of resumes) stateOf(ctx).resumes.set(id, resume)
}

/** The child to resume for call `id`, taken (once). */
export const takeChildResume = (ctx: RunContext, id: string): { readonly snapshot: RunSnapshot; readonly decisions: Decisions } | undefined => {
  const resumes = states.get(ctx)?.resumes
  const resume = resumes?.get(id)
  resumes?.delete(id)
  return resume
}

/** True when `id` names a waiting call of one of the snapshot's children. */
export const isChildCallId = (snapshot: RunSnapshot, id: string): boolean =>
  (snapshot.state.children ?? []).some((child) => id.startsWith(`${child.id}${childIdSeparator}`))

/**
 * The children of the snapshot with the decisions meant for each (their ids without the prefix). A
 * child must belong to a pending call of the snapshot, of a tool that runs an agent; its snapshot must
 * be one. The child's own resume checks the decisions against it.
 */
export const childResumes = (
  agent: string,
  skill: SkillPlan,
  snapshot: RunSnapshot,
  decisions: Decisions
): Effect.Effect<ReadonlyMap<string, { readonly snapshot: RunSnapshot; readonly decisions: Decisions }>, DecisionsInvalid | SnapshotInvalid> =>
  Effect.gen(() => childResumesSteps(agent, skill, snapshot, decisions))

function* childResumesSteps(agent: string, skill: SkillPlan, snapshot: RunSnapshot, decisions: Decisions): Steps<ReadonlyMap<string, { readonly snapshot: RunSnapshot; readonly decisions: Decisions }>, DecisionsInvalid | SnapshotInvalid> {
  const out = new Map<string, { readonly snapshot: RunSnapshot; readonly decisions: Decisions }>()
  for (const child of snapshot.state.children ?? []) {
    const refuse = (reason: string) => Effect.fail(new DecisionsInvalid({ agent, toolCallId: child.id, reason }))
    const calls = snapshot.state.pending.filter((c) => c.id === child.id)
    if (calls.length !== 1 || calls[0]!.name !== child.tool) return yield* refuse(`the snapshot's suspended child does not match a pending call of "${child.tool}": was it edited?`)
    const tool = skill.tools.get(child.tool)
    if (tool === undefined || childAgentOf(tool) === undefined) return yield* refuse(`"${child.tool}" is not an agent used as a tool of the skill`)
    const prefix = `${child.id}${childIdSeparator}`
    // No prototype: a child's call id may be any text, `__proto__` included.
    const mine: Record<string, Decisions[string]> = Object.create(null)
    for (const [id, decision] of Object.entries(decisions)) if (id.startsWith(prefix)) mine[id.slice(prefix.length)] = decision
    out.set(child.id, { snapshot: yield* decodeSnapshotValue(child.snapshot), decisions: mine })
  }
  return out
}
