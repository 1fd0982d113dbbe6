/**
 * The approval stage of the tool pipeline: between decoded arguments and execution. A call of a tool
 * that may need approval runs only when its `needsApproval` answers false for these exact arguments,
 * or when a human decided about this call (`approve`, or `edit` with arguments the Schema accepted).
 * Otherwise the run suspends: the call (and every later call of the same answer that also needs
 * approval) waits, and nothing after it runs until `resume` brings the decisions. The decisions bind
 * to the snapshot's pending calls themselves (`resolveDecisions`), never to its waiting entries alone;
 * those not applied yet travel in the next snapshot (`decidedEntries`); a child agent's suspension is
 * this run's (`suspendForChild`, `child-runs.ts`).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Decisions } from "../dsl/decision.ts"
import { type RunSnapshot, RunSnapshotSchema } from "../dsl/run-snapshot.ts"
import type { ChildSuspension } from "../dsl/child-suspension.ts"
import { childIdSeparator, childSuspended, isChildCallId } from "./child-runs.ts"
import { type AnyTool, ToolInternals } from "../dsl/tool.ts"
import { DecisionsInvalid } from "../errors.ts"
import type { ToolCall } from "../model/messages.ts"
import type { SkillPlan } from "./plan.ts"
import type { AwaitingCall, ResolvedDecision, RunContext } from "./run-context.ts"
import { canonicalJson } from "../internal/canonical-json.ts"
import type { Steps } from "../internal/steps.ts"

/** What the approval stage says about arguments about to run. */
export type Gate = "proceed" | "suspend"

/** True when `tool` needs a decision before running `args` in this call. */
const needsDecision = (ctx: RunContext, tool: AnyTool, call: ToolCall, args: unknown): Effect.Effect<boolean> => {
  const predicate = tool[ToolInternals].needsApproval
  if (predicate === undefined) return Effect.succeed(false)
  return predicate(args, { toolCallId: call.id, agent: ctx.agent, skill: ctx.skill.name })
}

/** The arguments as JSON for the snapshot: encoded with the tool's Schema, else as the model sent them. */
const jsonArgs = (tool: AnyTool, call: ToolCall, args: unknown): Schema.Json => {
  const asJson = (value: unknown): Schema.Json | undefined => {
    try {
      const json = JSON.parse(JSON.stringify(value)) as unknown
      return Schema.is(Schema.Json)(json) ? json : undefined
    } catch {
      return undefined
    }
  }
  if (tool.codec.json !== undefined) {
    try {
      const encoded = asJson(Schema.encodeUnknownSync(tool.codec.json)(args))
      if (encoded !== undefined) return encoded
    } catch {
      // fall through to the arguments as sent
    }
  }
  return asJson(args) ?? asJson(parseOrText(call.arguments)) ?? String(call.arguments)
}

const parseOrText = (raw: string): unknown => {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

/**
 * The approval stage for `args` of `call`: proceed when they were decided on (`decided`, the very
 * arguments a decision gave) or need no decision; else suspend, recording this call and the later
 * calls of the answer that need a decision too.
 */
export const approvalGate = (
  ctx: RunContext,
  tool: AnyTool,
  call: ToolCall,
  args: unknown,
  decided: { readonly args: unknown } | undefined
): Effect.Effect<Gate> =>
  Effect.gen(() => approvalGateSteps(ctx, tool, call, args, decided))

function* approvalGateSteps(ctx: RunContext, tool: AnyTool, call: ToolCall, args: unknown, decided: { readonly args: unknown } | undefined): Steps<Gate> {
  if (decided !== undefined && decided.args === args) return "proceed"
  if (!(yield* needsDecision(ctx, tool, call, args))) return "proceed"
  // Arguments an interceptor (`proceedWith`) or a recovery (`Recovery.fixed`) changed are not the
  // pending call's own: the entry says so, and an approval runs the entry's (decoded again), as shown.
  const own = tool.codec.decode(call.arguments)
  const changed = own._tag !== "Valid" || !sameJson(jsonArgs(tool, call, own.args), jsonArgs(tool, call, args))
  return yield* suspendFor(ctx, tool, call, args, changed ? changedArgumentsReason : undefined)
}

/** The reason on an entry whose arguments the run changed before asking (what the reviewer reads). */
const changedArgumentsReason = "its arguments were changed before this approval (by an interceptor or a recovery): the ones shown are those that run"

/**
 * Suspends the run on `call` (with `reason`, when an interceptor asked), recording it and the later
 * calls of the answer that need a decision too.
 */
export const suspendFor = (ctx: RunContext, tool: AnyTool, call: ToolCall, args: unknown, reason: string | undefined): Effect.Effect<"suspend"> =>
  awaitWith(ctx, [{ id: call.id, tool: tool.name, args, json: jsonArgs(tool, call, args), ...(reason === undefined ? {} : { reason }) }])

/**
 * Suspends the run on `call` of an agent-as-tool whose child run suspended: the child's snapshot is
 * kept for this run's, and the child's waiting calls are this run's, as `<call id>/<child's call id>`.
 */
export const suspendForChild = (ctx: RunContext, tool: AnyTool, call: ToolCall, child: ChildSuspension): Effect.Effect<"suspend"> => {
  const encoded = encodeSnapshotValue(child.snapshot)
  childSuspended(ctx, { id: call.id, tool: tool.name, snapshot: encoded as Schema.Json })
  const jsonOf = new Map((child.snapshot.state.awaiting ?? []).map((a) => [a.id, a.args]))
  return awaitWith(ctx, child.pending.map((p) => ({
    id: `${call.id}${childIdSeparator}${p.id}`,
    tool: p.tool,
    args: p.args,
    json: jsonOf.get(p.id) ?? null,
    ...(p.reason === undefined ? {} : { reason: p.reason })
  })))
}

const encodeSnapshotValue = Schema.encodeSync(RunSnapshotSchema)

/** Waits on `first`, and the later calls of the answer that need a decision too. */
const awaitWith = (ctx: RunContext, first: ReadonlyArray<AwaitingCall>): Effect.Effect<"suspend"> =>
  Effect.gen(() => awaitWithSteps(ctx, first))

function* awaitWithSteps(ctx: RunContext, first: ReadonlyArray<AwaitingCall>): Steps<"suspend"> {
  const awaiting: Array<AwaitingCall> = [...first]
  for (const later of ctx.pendingAfterNext) {
    // Decided at an earlier resume: the decision stands, the call is not asked about again.
    if (ctx.decisions.has(later.id)) continue
    const laterTool = ctx.skill.tools.get(later.name)
    if (laterTool === undefined || laterTool[ToolInternals].needsApproval === undefined) continue
    const decoded = laterTool.codec.decode(later.arguments)
    if (decoded._tag !== "Valid" || !(yield* needsDecision(ctx, laterTool, later, decoded.args))) continue
    awaiting.push({ id: later.id, tool: laterTool.name, args: decoded.args, json: jsonArgs(laterTool, later, decoded.args) })
  }
  ctx.awaitDecisions(awaiting)
  yield* ctx.annotate("tool.approval", "requested")
  yield* ctx.emit({ _tag: "ApprovalRequested", calls: awaiting.map(({ json: _, ...call }) => call) })
  return "suspend" as const
}

/** The tool result a denied call gets: the model is told, and goes on. */
export const deniedContent = (tool: string, reason: string, by: "a human reviewer" | "a policy" = "a human reviewer"): string =>
  `The call of "${tool}" was denied by ${by} and did not run. Reason: ${reason}. Continue without it; do not repeat the same call.`

/** A decision taken and not applied yet, as the snapshot carries it (`state.decided`). */
export type DecidedEntry = NonNullable<RunSnapshot["state"]["decided"]>[number]

/**
 * The decisions of `ctx` not taken yet, as JSON for its snapshot (absent when there are none): a
 * second suspension keeps what a human already decided about later calls.
 */
export const decidedEntries = (decisions: ReadonlyMap<string, ResolvedDecision>): ReadonlyArray<DecidedEntry> | undefined => {
  if (decisions.size === 0) return undefined
  return [...decisions].map(([id, d]): DecidedEntry =>
    d._tag === "Deny"
      ? { id, tool: d.tool, decision: "deny", reason: d.reason }
      : { id, tool: d.tool, decision: d.how === "edited" ? "edit" : "approve", args: d.json }
  )
}

/**
 * The decisions given at resume, with those the snapshot carries from an earlier resume, bound to the
 * calls they decide. A waiting entry (or a carried decision) must name exactly one pending call of the
 * snapshot and that call's tool; an approval of a call `needsApproval` held runs the pending call's own
 * arguments, decoded again by its tool, and the entry's arguments must be those (an edited unsigned
 * snapshot cannot swap the call it approves); every argument that will run, edited or approved, is
 * decoded by the Schema of the tool that runs it, never repaired. One decision per waiting call, none
 * for other calls, none for a call already decided.
 */
export const resolveDecisions = (
  agent: string,
  skill: SkillPlan,
  snapshot: RunSnapshot,
  decisions: Decisions
): Effect.Effect<ReadonlyMap<string, ResolvedDecision>, DecisionsInvalid> =>
  Effect.gen(() => resolveDecisionsSteps(agent, skill, snapshot, decisions))

function* resolveDecisionsSteps(agent: string, skill: SkillPlan, snapshot: RunSnapshot, decisions: Decisions): Steps<ReadonlyMap<string, ResolvedDecision>, DecisionsInvalid> {
  const awaiting = snapshot.state.awaiting ?? []
  const carried = snapshot.state.decided ?? []
  const refuse = (toolCallId: string, reason: string) => Effect.fail(new DecisionsInvalid({ agent, toolCallId, reason }))
  const waiting = new Set(awaiting.map((a) => a.id))
  const earlier = new Set(carried.map((a) => a.id))
  for (const id of Object.keys(decisions)) {
    if (earlier.has(id)) return yield* refuse(id, "this call was decided at an earlier resume; a decision is taken once and never changed")
    if (!waiting.has(id)) {
      const ids = awaiting.map((a) => `"${a.id}"`).join(", ")
      return yield* refuse(id, `no call with this id waits for a decision (waiting: ${ids === "" ? "none" : ids})`)
    }
  }
  const seen = new Set<string>()
  /** The pending call an entry decides, and its tool: the entry must name exactly that call. */
  const bind = (entry: { readonly id: string; readonly tool: string }) => {
    if (seen.has(entry.id)) return refuse(entry.id, "the snapshot lists this call twice among its waiting and decided calls")
    seen.add(entry.id)
    const calls = snapshot.state.pending.filter((c) => c.id === entry.id)
    if (calls.length !== 1) {
      return refuse(entry.id, `the snapshot's entry for this call does not match its pending calls (${calls.length} pending call(s) with this id): was it edited?`)
    }
    const call = calls[0]!
    if (call.name !== entry.tool) {
      return refuse(entry.id, `the snapshot's entry names the tool "${entry.tool}" but the pending call is of "${call.name}": it does not match the call it would decide (was the snapshot edited?)`)
    }
    const tool = skill.tools.get(call.name)
    if (tool === undefined) return refuse(entry.id, `the tool "${call.name}" is not one of the skill's tools`)
    return Effect.succeed({ call, tool })
  }
  const decode = (id: string, tool: AnyTool, args: unknown, what: string) => {
    const decoded = tool.codec.decode(args, { repair: false })
    return decoded._tag === "Invalid"
      ? refuse(id, `the ${what} arguments of "${tool.name}" do not decode with its Schema:\n${decoded.issues}`)
      : Effect.succeed(decoded.args)
  }
  const resolved = new Map<string, ResolvedDecision>()
  for (const entry of carried) {
    const { call, tool } = yield* bind(entry)
    if (entry.decision === "deny") {
      resolved.set(entry.id, { _tag: "Deny", tool: tool.name, reason: entry.reason ?? "" })
      continue
    }
    const args = yield* decode(entry.id, tool, entry.args, entry.decision === "edit" ? "edited" : "approved")
    resolved.set(entry.id, { _tag: "Run", tool: tool.name, args, json: jsonArgs(tool, call, args), how: entry.decision === "edit" ? "edited" : "approved" })
  }
  for (const entry of awaiting) {
    // A child's waiting call: the child's own resume checks its decision against the child's snapshot.
    if (isChildCallId(snapshot, entry.id)) continue
    const { call, tool } = yield* bind(entry)
    const decision: unknown = Object.hasOwn(decisions, entry.id) ? decisions[entry.id] : undefined
    if (typeof decision !== "object" || decision === null || !("_tag" in decision)) {
      return yield* refuse(entry.id, `the call of "${entry.tool}" waits for a decision: Decision.approve, Decision.deny(reason) or Decision.edit(args)`)
    }
    switch (decision._tag) {
      case "Deny": {
        const reason = (decision as { readonly reason?: unknown }).reason
        if (reason !== undefined && typeof reason !== "string") return yield* refuse(entry.id, "the reason of a denial is text: Decision.deny(\"why\")")
        resolved.set(entry.id, { _tag: "Deny", tool: tool.name, reason: reason ?? "" })
        break
      }
      case "Approve": {
        // Held by `needsApproval`: the pending call's own arguments, as the run decoded them; the
        // entry (what a reviewer was shown) must be those. An interceptor's suspension (`reason`) may
        // have changed them before: the entry's, decoded by the tool.
        let args: unknown
        let json: Schema.Json
        if (entry.reason === undefined) {
          const decoded = tool.codec.decode(call.arguments)
          if (decoded._tag === "Invalid") return yield* refuse(entry.id, `the pending arguments of "${tool.name}" do not decode with its Schema:\n${decoded.issues}`)
          args = decoded.args
          json = jsonArgs(tool, call, args)
          if (!sameJson(json, entry.args)) {
            return yield* refuse(entry.id, `the snapshot's waiting arguments of "${tool.name}" do not match its pending call: was it edited?`)
          }
        } else {
          args = yield* decode(entry.id, tool, entry.args, "approved")
          json = jsonArgs(tool, call, args)
        }
        resolved.set(entry.id, { _tag: "Run", tool: tool.name, args, json, how: "approved" })
        break
      }
      case "Edit": {
        const args = yield* decode(entry.id, tool, (decision as { readonly args?: unknown }).args, "edited")
        resolved.set(entry.id, { _tag: "Run", tool: tool.name, args, json: jsonArgs(tool, call, args), how: "edited" })
        break
      }
      default:
        return yield* refuse(entry.id, `unknown decision "${String(decision._tag)}": use Decision.approve, Decision.deny(reason) or Decision.edit(args)`)
    }
  }
  return resolved
}

const sameJson = (a: Schema.Json, b: Schema.Json): boolean => {
  try {
    return canonicalJson(a) === canonicalJson(b)
  } catch {
    return false
  }
}
