/**
 * Child runs that suspended, in the calling run: an agent used as a tool whose child waits for a
 * decision, and a handoff target that does. The calling run suspends too; its snapshot holds the
 * child's (`state.children`, `state.handoff`); the calls the child waits on are listed as the caller's
 * with ids `<caller's call id>/<child's call id>`; a resume hands the decisions meant for the child to
 * the child's own resume, which checks them against its own snapshot (the only source of truth for
 * them) before anything runs (a refusal names the call as the caller lists it), and announces them in
 * the caller's events (`ApprovalDecided`, as the caller announced the request). Kept beside the run
 * context (by context), as the snapshot's part of it.
 *
 * Which run a listed id belongs to is decided by the snapshot, never by the text of the id alone: the
 * run's own pending calls keep their ids (a model may choose `p1/x` beside `p1`), and a child's call
 * whose `<call id>/<child id>` is already one of them is listed with `#2` (`#3`, …) after it
 * (`childListing`), so every id of the pending list names one call and can be answered as listed.
 */
import * as Effect from "effect/Effect"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import type { Decisions } from "../dsl/decision.ts"
import type { ApprovalDecidedEvent } from "../dsl/events.ts"
import { childAgentOf } from "../dsl/child-suspension.ts"
import { childAwaiting, childIdSeparator, childListing, type ChildRoute } from "../dsl/child-listing.ts"
import { decodeSnapshotValue, type RunSnapshot } from "../dsl/run-snapshot.ts"
import { type AgentError, DecisionsInvalid } from "../errors.ts"
import type { SkillPlan } from "./plan.ts"
import type { ResolvedDecision, RunContext } from "./run-context.ts"
import type { Steps } from "../internal/steps.ts"

/** A suspended child of one call of the run, as the snapshot stores it. */
export type ChildEntry = NonNullable<RunSnapshot["state"]["children"]>[number]

/** A decision about a child's call, as the calling run announces it (`ApprovalDecided`, by the caller's id). */
export type ChildDecided = Pick<ApprovalDecidedEvent, "toolCallId" | "tool" | "decision" | "args" | "reason">

/**
 * A suspended child to resume: its snapshot and the decisions meant for it (by its own ids), checked,
 * and those decisions as the calling run announces them (by the calling run's ids).
 */
export interface ChildResume {
  readonly snapshot: RunSnapshot
  readonly decisions: Decisions
  readonly decided: ReadonlyArray<ChildDecided>
}

/** What checking a child's resume tells its caller: the child's decisions, and its own children's. */
export interface CheckedChild {
  readonly decided: ReadonlyMap<string, ResolvedDecision>
  readonly children: ReadonlyMap<string, ChildResume>
}

interface ChildState {
  /** Children suspended in this run (for its snapshot), by the caller's call id. */
  readonly suspended: Map<string, ChildEntry>
  /** Children to resume when their call runs again, by the caller's call id. */
  readonly resumes: Map<string, ChildResume>
}

const states = new WeakMap<RunContext, ChildState>()

const stateOf = (ctx: RunContext): ChildState => {
  let state = states.get(ctx)
  if (state === undefined) states.set(ctx, (state = { suspended: new Map(), resumes: new Map() }))
  return state
}

export { childAwaiting, childIdSeparator, childListing, type ChildRoute } from "../dsl/child-listing.ts"

/** How the snapshot lists its children's waiting calls: by listed id, the child and the child's own id. */
export const childRoutes = (snapshot: RunSnapshot): ReadonlyMap<string, ChildRoute> =>
  childListing(
    snapshot.state.pending.map((call) => call.id),
    (snapshot.state.children ?? []).map((child) => ({ callId: child.id, ids: childAwaiting(child.snapshot).map((a) => a.id) }))
  )

/** Records that the child of `callId` suspended with `snapshot` (for the caller's snapshot). */
export const childSuspended = (ctx: RunContext, entry: ChildEntry): void => {
  stateOf(ctx).suspended.set(entry.id, entry)
}

/** The suspended children, for the snapshot (absent when none). */
export const childEntries = (ctx: RunContext): ReadonlyArray<ChildEntry> | undefined => {
  const suspended = states.get(ctx)?.suspended
  return suspended === undefined || suspended.size === 0 ? undefined : [...suspended.values()]
}

/**
 * Arms the resumes of the children given at resume, and announces their decisions in this run
 * (`ApprovalDecided` with this run's ids), as it announced the requests: before the child runs them.
 */
export const armChildResumes = (ctx: RunContext, resumes: ReadonlyMap<string, ChildResume>): Effect.Effect<void> => {
  if (resumes.size === 0) return Effect.void
  for (const [id, resume] of resumes) stateOf(ctx).resumes.set(id, resume)
  return Effect.forEach([...resumes.values()].flatMap((resume) => resume.decided), (decided) => ctx.emit({ _tag: "ApprovalDecided", ...decided }), { discard: true })
}

/** The child to resume for call `id`, taken (once). */
export const takeChildResume = (ctx: RunContext, id: string): ChildResume | undefined => {
  const resumes = states.get(ctx)?.resumes
  const resume = resumes?.get(id)
  resumes?.delete(id)
  return resume
}

/**
 * The children of the snapshot with the decisions meant for each (by their own ids), each checked by
 * `check` against its own snapshot and definition. A child must belong to a pending call of the
 * snapshot, of a tool that runs an agent; its snapshot must be one. A decision goes to a child only
 * when its id lists one of that child's waiting calls (`childRoutes`), never by its prefix alone.
 */
export const childResumes = (
  agent: string,
  skill: SkillPlan,
  snapshot: RunSnapshot,
  decisions: Decisions,
  check: (definition: AgentDefinition, snapshot: RunSnapshot, decisions: Decisions) => Effect.Effect<CheckedChild, AgentError>
): Effect.Effect<ReadonlyMap<string, ChildResume>, AgentError> =>
  Effect.gen(() => childResumesSteps(agent, skill, snapshot, decisions, check))

function* childResumesSteps(
  agent: string,
  skill: SkillPlan,
  snapshot: RunSnapshot,
  decisions: Decisions,
  check: (definition: AgentDefinition, snapshot: RunSnapshot, decisions: Decisions) => Effect.Effect<CheckedChild, AgentError>
): Steps<ReadonlyMap<string, ChildResume>, AgentError> {
  const out = new Map<string, ChildResume>()
  const children = snapshot.state.children ?? []
  if (children.length === 0) return out
  const routes = [...childRoutes(snapshot)]
  for (const child of children) {
    const refuse = (reason: string) => Effect.fail(new DecisionsInvalid({ agent, toolCallId: child.id, reason }))
    const calls = snapshot.state.pending.filter((c) => c.id === child.id)
    if (calls.length !== 1 || calls[0]!.name !== child.tool) return yield* refuse(`the snapshot's suspended child does not match a pending call of "${child.tool}": was it edited?`)
    const tool = skill.tools.get(child.tool)
    const childAgent = tool === undefined ? undefined : childAgentOf(tool)
    if (childAgent === undefined) return yield* refuse(`"${child.tool}" is not an agent used as a tool of the skill`)
    // No prototype: a child's call id may be any text, `__proto__` included.
    const mine: Record<string, Decisions[string]> = Object.create(null)
    const listedAs = new Map<string, string>()
    for (const [listed, route] of routes) {
      if (route.callId !== child.id) continue
      listedAs.set(route.id, listed)
      if (Object.hasOwn(decisions, listed)) mine[route.id] = decisions[listed] as Decisions[string]
    }
    const childSnapshot = yield* decodeSnapshotValue(child.snapshot)
    const checked = yield* Effect.mapError(check(childAgent.definition, childSnapshot, mine), (error) => listedError(error, child.id, listedAs))
    const decided = childDecided(childSnapshot, checked).flatMap((d) => {
      const listed = listedAs.get(d.toolCallId)
      return listed === undefined ? [] : [{ ...d, toolCallId: listed }]
    })
    out.set(child.id, { snapshot: childSnapshot, decisions: mine, decided })
  }
  return out
}

/**
 * A child's refusal of a decision, naming the call as the calling run lists it (its listed id, which
 * the pending list shows; `<call id>/<child's id>` for a call of the child it does not list, such as
 * an edited entry of its snapshot), so the id can be looked up in that list. `*` stays.
 */
const listedError = (error: AgentError, callId: string, listedAs: ReadonlyMap<string, string>): AgentError =>
  error._tag !== "DecisionsInvalid" || error.toolCallId === "*"
    ? error
    : new DecisionsInvalid({ agent: error.agent, toolCallId: listedAs.get(error.toolCallId) ?? `${callId}${childIdSeparator}${error.toolCallId}`, reason: error.reason })

/** The decisions a checked child takes on the calls it lists as waiting (its own, and its children's), by its ids. */
const childDecided = (snapshot: RunSnapshot, checked: CheckedChild): ReadonlyArray<ChildDecided> => {
  const nested = new Map<string, ChildDecided>()
  for (const resume of checked.children.values()) for (const d of resume.decided) nested.set(d.toolCallId, d)
  return (snapshot.state.awaiting ?? []).flatMap((entry): ReadonlyArray<ChildDecided> => {
    const own = checked.decided.get(entry.id)
    if (own !== undefined) {
      return [own._tag === "Deny"
        ? { toolCallId: entry.id, tool: own.tool, decision: "deny", reason: own.reason }
        : { toolCallId: entry.id, tool: own.tool, decision: own.how === "edited" ? "edit" : "approve", args: own.args }]
    }
    const deeper = nested.get(entry.id)
    return deeper === undefined ? [] : [deeper]
  })
}
