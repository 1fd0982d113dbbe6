/**
 * The approval stage of the tool pipeline: between decoded arguments and execution. A call of a tool
 * that may need approval runs only when its `needsApproval` answers false for these exact arguments,
 * or when a human decided about this call (`approve`, or `edit` with arguments the Schema accepted).
 * Otherwise the run suspends: the call (and every later call of the same answer that also needs
 * approval) waits, and nothing after it runs until `resume` brings the decisions.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Decisions } from "../dsl/decision.ts"
import type { RunSnapshot } from "../dsl/run-snapshot.ts"
import { type AnyTool, ToolInternals } from "../dsl/tool.ts"
import { DecisionsInvalid } from "../errors.ts"
import type { ToolCall } from "../model/messages.ts"
import type { SkillPlan } from "./plan.ts"
import type { AwaitingCall, ResolvedDecision, RunContext } from "./run-context.ts"

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
  Effect.gen(function*() {
    if (decided !== undefined && decided.args === args) return "proceed"
    if (!(yield* needsDecision(ctx, tool, call, args))) return "proceed"
    return yield* suspendFor(ctx, tool, call, args, undefined)
  })

/**
 * Suspends the run on `call` (with `reason`, when an interceptor asked), recording it and the later
 * calls of the answer that need a decision too.
 */
export const suspendFor = (ctx: RunContext, tool: AnyTool, call: ToolCall, args: unknown, reason: string | undefined): Effect.Effect<"suspend"> =>
  Effect.gen(function*() {
    const awaiting: Array<AwaitingCall> = [{ id: call.id, tool: tool.name, args, json: jsonArgs(tool, call, args), ...(reason === undefined ? {} : { reason }) }]
    for (const later of ctx.pendingAfterNext) {
      const laterTool = ctx.skill.tools.get(later.name)
      if (laterTool === undefined || laterTool[ToolInternals].needsApproval === undefined) continue
      const decoded = laterTool.codec.decode(later.arguments)
      if (decoded._tag !== "Valid" || !(yield* needsDecision(ctx, laterTool, later, decoded.args))) continue
      awaiting.push({ id: later.id, tool: laterTool.name, args: decoded.args, json: jsonArgs(laterTool, later, decoded.args) })
    }
    ctx.awaitDecisions(awaiting)
    yield* ctx.annotate("tool.approval", "requested")
    return "suspend" as const
  })

/** The tool result a denied call gets: the model is told, and goes on. */
export const deniedContent = (tool: string, reason: string, by: "a human reviewer" | "a policy" = "a human reviewer"): string =>
  `The call of "${tool}" was denied by ${by} and did not run. Reason: ${reason}. Continue without it; do not repeat the same call.`

/**
 * The decisions given at resume, checked against the calls the snapshot waits for: one per waiting
 * call, none for other calls, and `edit` arguments that decode with the tool's Schema (never repaired).
 */
export const resolveDecisions = (
  agent: string,
  skill: SkillPlan,
  snapshot: RunSnapshot,
  decisions: Decisions
): Effect.Effect<ReadonlyMap<string, ResolvedDecision>, DecisionsInvalid> =>
  Effect.gen(function*() {
    const awaiting = snapshot.state.awaiting ?? []
    const refuse = (toolCallId: string, reason: string) => Effect.fail(new DecisionsInvalid({ agent, toolCallId, reason }))
    const waiting = new Set(awaiting.map((a) => a.id))
    for (const id of Object.keys(decisions)) {
      if (!waiting.has(id)) {
        const ids = awaiting.map((a) => `"${a.id}"`).join(", ")
        return yield* refuse(id, `no call with this id waits for a decision (waiting: ${ids === "" ? "none" : ids})`)
      }
    }
    const resolved = new Map<string, ResolvedDecision>()
    for (const entry of awaiting) {
      const decision: unknown = Object.hasOwn(decisions, entry.id) ? decisions[entry.id] : undefined
      const tool = skill.tools.get(entry.tool)
      if (tool === undefined) return yield* refuse(entry.id, `the tool "${entry.tool}" is not one of the skill's tools`)
      if (typeof decision !== "object" || decision === null || !("_tag" in decision)) {
        return yield* refuse(entry.id, `the call of "${entry.tool}" waits for a decision: Decision.approve, Decision.deny(reason) or Decision.edit(args)`)
      }
      switch (decision._tag) {
        case "Deny":
          resolved.set(entry.id, { _tag: "Deny", reason: String((decision as { readonly reason?: unknown }).reason ?? "") })
          break
        case "Approve":
        case "Edit": {
          const edited = decision._tag === "Edit"
          const decoded = tool.codec.decode(edited ? (decision as { readonly args?: unknown }).args : entry.args, { repair: false })
          if (decoded._tag === "Invalid") {
            return yield* refuse(entry.id, `the ${edited ? "edited" : "approved"} arguments of "${entry.tool}" do not decode with its Schema:\n${decoded.issues}`)
          }
          resolved.set(entry.id, { _tag: "Run", args: decoded.args, how: edited ? "edited" : "approved" })
          break
        }
        default:
          return yield* refuse(entry.id, `unknown decision "${String(decision._tag)}": use Decision.approve, Decision.deny(reason) or Decision.edit(args)`)
      }
    }
    return resolved
  })
