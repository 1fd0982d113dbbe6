/**
 * The approval stage of the tool pipeline: between decoded arguments and execution. A call of a tool
 * that may need approval runs only when its `needsApproval` answers false for these exact arguments,
 * or when a human decided about this call (`approve`, or `edit` with arguments the Schema accepted).
 * Otherwise the run suspends: the call (and every later call of the same answer that also needs
 * approval) waits, and nothing after it runs until `resume` brings the decisions. The decisions bind
 * to the calls of the model's answer in the snapshot's transcript (`resolveDecisions`), never to its
 * waiting or decided entries alone, which must describe those calls; decisions not applied yet travel
 * in the next snapshot (`decidedEntries`); a child agent's suspension is this run's (`suspendForChild`,
 * `child-runs.ts`).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Decisions } from "../dsl/decision.ts"
import { type RunSnapshot, RunSnapshotSchema } from "../dsl/run-snapshot.ts"
import type { ChildSuspension } from "../dsl/child-suspension.ts"
import { childAwaiting, childListing, childRoutes, childSuspended } from "./child-runs.ts"
import { type AnyTool, ToolInternals } from "../dsl/tool.ts"
import { DecisionsInvalid } from "../errors.ts"
import type { LlmMessage, ToolCall } from "../model/messages.ts"
import type { SkillPlan } from "./plan.ts"
import type { AwaitingCall, ResolvedDecision, RunContext } from "./run-context.ts"
import { canonicalJson } from "../internal/canonical-json.ts"
import type { Steps } from "../internal/steps.ts"

/** What the approval stage says about arguments about to run. */
export type Gate = "proceed" | "suspend"

/** True when `tool` needs a decision before running `args` in this call. */
const needsDecision = (ctx: RunContext, tool: AnyTool, call: ToolCall, args: unknown): Effect.Effect<boolean> =>
  needsDecisionIn(ctx.agent, ctx.skill.name, tool, call, args)

const needsDecisionIn = (agent: string, skill: string, tool: AnyTool, call: ToolCall, args: unknown): Effect.Effect<boolean> => {
  const predicate = tool[ToolInternals].needsApproval
  if (predicate === undefined) return Effect.succeed(false)
  return predicate(args, { toolCallId: call.id, agent, skill })
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
 * kept for this run's, and the child's waiting calls are this run's, as `<call id>/<child's call id>`
 * (`childListing`: with `#2` after it when that is already the id of one of this run's own pending
 * calls, so the list can be answered as given).
 */
export const suspendForChild = (ctx: RunContext, tool: AnyTool, call: ToolCall, child: ChildSuspension): Effect.Effect<"suspend"> => {
  const encoded = encodeSnapshotValue(child.snapshot)
  childSuspended(ctx, { id: call.id, tool: tool.name, snapshot: encoded as Schema.Json })
  const waiting = childAwaiting(encoded as Schema.Json)
  // The same listing the resume reads back from the snapshot: this run's pending calls from this one on.
  const own = [ctx.nextPending?.id ?? call.id, ...ctx.pendingAfterNext.map((later) => later.id)]
  const listed = new Map([...childListing(own, [{ callId: call.id, ids: waiting.map((a) => a.id) }])].map(([id, route]) => [route.id, id]))
  const jsonOf = new Map(waiting.map((a) => [a.id, a.args as Schema.Json]))
  return awaitWith(ctx, child.pending.map((p) => ({
    id: listed.get(p.id) ?? `${call.id}/${p.id}`,
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

export { readDecisions } from "../dsl/decision.ts"

/** How far a resume may trust its snapshot. */
export interface ResolveOptions {
  /**
   * The snapshot's signature was verified (its agent signs snapshots), so arguments the run changed
   * before asking (an interceptor's `proceedWith`, a `Recovery.fixed`) and edits carried from an
   * earlier resume are the run's own. Default: unsigned.
   */
  readonly signed?: boolean
}

/**
 * The decisions given at resume, with those the snapshot carries from an earlier resume, bound to the
 * calls they decide: the calls of the model's last answer in the snapshot's transcript, of which the
 * pending calls must be the tail. Every waiting entry (`state.awaiting`) and every carried decision
 * (`state.decided`) must name exactly one of those calls, with its tool and the model's own arguments
 * (canonical JSON), or else be a waiting call of a suspended child as the child's snapshot lists it;
 * otherwise `DecisionsInvalid` naming the field, before anything runs (an edited unsigned snapshot
 * cannot swap the call it approves, nor approve a call no one decided on). Two kinds of entry may
 * hold other arguments: a waiting entry whose `reason` says the run changed them before asking (an
 * approval runs them only in a signed snapshot; an unsigned one takes them as `Decision.edit(args)`),
 * and a carried edit (in an unsigned snapshot applied only when the tool's `needsApproval` clears it,
 * else its call is asked about again). Every argument that will run is decoded by the Schema of the
 * tool that runs it, never repaired. One decision per waiting call, none for other calls, none for a
 * call already decided.
 */
export const resolveDecisions = (
  agent: string,
  skill: SkillPlan,
  snapshot: RunSnapshot,
  decisions: Decisions,
  options: ResolveOptions = {}
): Effect.Effect<ReadonlyMap<string, ResolvedDecision>, DecisionsInvalid> =>
  Effect.gen(() => resolveDecisionsSteps(agent, skill, snapshot, decisions, options.signed === true))

function* resolveDecisionsSteps(agent: string, skill: SkillPlan, snapshot: RunSnapshot, decisions: Decisions, signed: boolean): Steps<ReadonlyMap<string, ResolvedDecision>, DecisionsInvalid> {
  const { pending } = snapshot.state
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
  const resolved = new Map<string, ResolvedDecision>()
  const routes = childRoutes(snapshot)
  if (awaiting.length === 0 && carried.length === 0 && routes.size === 0) return resolved
  // The calls decided on are the model's: the pending calls are the tail of its last answer.
  const answer = lastAnswer(snapshot.state.transcript as ReadonlyArray<LlmMessage>)
  const offset = answer.length - pending.length
  const stray = pending.find((call, i) => offset < 0 || !sameCall(call, answer[offset + i]))
  if (stray !== undefined) {
    return yield* refuse(stray.id, "state.pending: the snapshot's pending calls are not the last calls of the model's answer in its transcript (state.transcript): was it edited?")
  }
  const own = new Set(pending.map((call) => call.id))
  const holdsChild = new Set((snapshot.state.children ?? []).map((child) => child.id))
  const seen = new Set<string>()
  /** The model's call an entry decides, its tool, and its own arguments (when they decode): the entry must name exactly that call. */
  const bind = (entry: { readonly id: string; readonly tool: string }, field: string) => {
    if (seen.has(entry.id)) return refuse(entry.id, `${field}: the snapshot lists this call twice among its waiting and decided calls`)
    seen.add(entry.id)
    if (holdsChild.has(entry.id)) return refuse(entry.id, `${field} names the call that runs a suspended child agent: only the child's waiting calls are decided (was the snapshot edited?)`)
    const calls = pending.filter((c) => c.id === entry.id)
    if (calls.length !== 1) {
      return refuse(entry.id, `${field} does not name one call of the model's answer (${calls.length} pending call(s) with this id) nor a waiting call of a suspended child: was the snapshot edited?`)
    }
    const call = calls[0]!
    if (call.name !== entry.tool) {
      return refuse(entry.id, `${field} names the tool "${entry.tool}" but the model's call is of "${call.name}": it does not match the call it would decide (was the snapshot edited?)`)
    }
    const tool = skill.tools.get(call.name)
    if (tool === undefined) return refuse(entry.id, `the tool "${call.name}" is not one of the skill's tools`)
    const decoded = tool.codec.decode(call.arguments)
    const model = decoded._tag === "Valid" ? { args: decoded.args, json: jsonArgs(tool, call, decoded.args) } : undefined
    return Effect.succeed({ call, tool, model })
  }
  const decode = (id: string, tool: AnyTool, args: unknown, what: string) => {
    const decoded = tool.codec.decode(args, { repair: false })
    return decoded._tag === "Invalid"
      ? refuse(id, `the ${what} arguments of "${tool.name}" do not decode with its Schema:\n${decoded.issues}`)
      : Effect.succeed(decoded.args)
  }
  for (const [index, entry] of carried.entries()) {
    const field = `state.decided[${index}]`
    const { call, tool, model } = yield* bind(entry, field)
    switch (entry.decision) {
      case "deny":
        if (entry.args !== undefined) return yield* refuse(entry.id, `${field}: a denial carries no arguments (was the snapshot edited?)`)
        resolved.set(entry.id, { _tag: "Deny", tool: tool.name, reason: entry.reason ?? "" })
        break
      case "approve": {
        if (entry.args === undefined) {
          return yield* refuse(entry.id, `${field}: an approval carried from an earlier resume holds the arguments it approved (was the snapshot edited?)`)
        }
        if (model !== undefined && sameJson(entry.args, model.json)) {
          resolved.set(entry.id, { _tag: "Run", tool: tool.name, args: model.args, json: model.json, how: "approved" })
          break
        }
        // Arguments the run changed before asking (an interceptor's `proceedWith`), approved as shown: as
        // with a carried edit, an unsigned snapshot cannot show they were, so they are applied only when
        // the tool's `needsApproval` clears them, else the call is asked about again.
        const args = yield* decode(entry.id, tool, entry.args, `approved (${field})`)
        const json = jsonArgs(tool, call, args)
        if (!signed && (yield* needsDecisionIn(agent, skill.name, tool, call, args))) break
        resolved.set(entry.id, { _tag: "Run", tool: tool.name, args, json, how: "approved" })
        break
      }
      case "edit": {
        const args = yield* decode(entry.id, tool, entry.args, `edited (${field})`)
        const json = jsonArgs(tool, call, args)
        // An unsigned snapshot cannot show who edited: an edit that still needs approval is asked about again.
        if (!signed && !(model !== undefined && sameJson(json, model.json)) && (yield* needsDecisionIn(agent, skill.name, tool, call, args))) break
        resolved.set(entry.id, { _tag: "Run", tool: tool.name, args, json, how: "edited" })
        break
      }
    }
  }
  for (const [index, entry] of awaiting.entries()) {
    const field = `state.awaiting[${index}]`
    // A child's waiting call (the run's own pending ids take precedence): the child's own resume checks
    // its decision against the child's snapshot, whose entry this one must repeat.
    const route = own.has(entry.id) ? undefined : routes.get(entry.id)
    if (route !== undefined) {
      const child = (snapshot.state.children ?? []).find((c) => c.id === route.callId)
      const theirs = child === undefined ? undefined : childAwaiting(child.snapshot).find((a) => a.id === route.id)
      if (theirs === undefined || theirs.tool !== entry.tool || theirs.reason !== entry.reason || !sameJson(theirs.args as Schema.Json, entry.args)) {
        return yield* refuse(entry.id, `${field} does not match the waiting call "${route.id}" of the child run of call "${route.callId}" in the child's snapshot: was it edited?`)
      }
      continue
    }
    const { call, tool, model } = yield* bind(entry, field)
    const asCalled = model !== undefined && sameJson(entry.args, model.json)
    // Only the run itself changes a call's arguments before asking, and it says so (`reason`).
    if (!asCalled && entry.reason === undefined) {
      return yield* refuse(entry.id, `${field}: the waiting arguments of "${tool.name}" are not those of the model's call: was the snapshot edited?`)
    }
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
        // The model's own arguments, as the run decoded them; or the run changed them before asking
        // (an interceptor's `proceedWith`, a `Recovery.fixed`; the entry's reason says so, checked
        // above): an approval is of the arguments the reviewer was shown (the pending list), decoded
        // again by the tool.
        if (asCalled) {
          resolved.set(entry.id, { _tag: "Run", tool: tool.name, args: model.args, json: model.json, how: "approved" })
          break
        }
        const args = yield* decode(entry.id, tool, entry.args, "approved")
        resolved.set(entry.id, { _tag: "Run", tool: tool.name, args, json: jsonArgs(tool, call, args), how: "approved" })
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
  // Every waiting call of a suspended child is listed, so the pending list is the whole question.
  for (const listed of routes.keys()) {
    if (!waiting.has(listed)) return yield* refuse(listed, "state.awaiting does not list this waiting call of a suspended child: was the snapshot edited?")
  }
  return resolved
}

/** The tool calls of the model's last answer in `transcript` (none when its last answer is text). */
const lastAnswer = (transcript: ReadonlyArray<LlmMessage>): ReadonlyArray<ToolCall> => {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const message = transcript[i]!
    if (message.role === "assistant") return message.toolCalls ?? []
  }
  return []
}

const sameCall = (a: ToolCall, b: ToolCall | undefined): boolean =>
  b !== undefined && a.id === b.id && a.name === b.name && a.arguments === b.arguments

const sameJson = (a: Schema.Json, b: Schema.Json): boolean => {
  try {
    return canonicalJson(a) === canonicalJson(b)
  } catch {
    return false
  }
}
