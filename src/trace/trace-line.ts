/**
 * The JSON Lines trace format, version 1: one JSON object per event, in emission order.
 *
 * Every line has `v` (1), `ts` (epoch ms, from Effect's Clock), `run` (the run id), `agent` and
 * `event` (the event's tag); the other fields depend on the event and are listed in the observability guide (docs/guide/observability.md, "JSON Lines traces").
 * Values that are not JSON (errors, undefined) are written as readable strings.
 */
import type { AgentEvent } from "../dsl/events.ts"
import { describeCause } from "../internal/describe-cause.ts"
import type { LlmResponse } from "../model/messages.ts"

/** One line of a trace. */
export interface TraceLine {
  readonly v: 1
  readonly ts: number
  readonly run: string
  readonly agent: string
  readonly event: AgentEvent["_tag"]
  readonly [field: string]: unknown
}

/** The trace line for `event`, observed at `ts`. */
export const traceLine = (event: AgentEvent, ts: number): TraceLine => ({
  v: 1,
  ts,
  run: event.runId,
  agent: event.agent,
  event: event._tag,
  ...(event.parentRunId === undefined ? {} : { parentRun: event.parentRunId }),
  ...fields(event)
})

const errorFields = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error
    ? { tag: String(error._tag), message: describeCause(error) }
    : { message: describeCause(error) }

const responseFields = (response: LlmResponse) =>
  response._tag === "Text"
    ? { response: "Text", text: response.content, ...(response.usage === undefined ? {} : { usage: response.usage }) }
    : {
      response: "ToolCalls",
      calls: response.calls.map((c) => c.name),
      ...(response.content === undefined ? {} : { text: response.content }),
      ...(response.usage === undefined ? {} : { usage: response.usage })
    }

/** The fields every tool-call event line starts with. */
const toolCallFields = (event: { readonly skill: string; readonly turn: number; readonly tool: string; readonly toolCallId: string }) => ({
  skill: event.skill,
  turn: event.turn,
  tool: event.tool,
  callId: event.toolCallId
})

const fields = (event: AgentEvent): Record<string, unknown> => {
  switch (event._tag) {
    case "RunStart":
      return { input: event.input }
    case "SkillChosen":
      return { skill: event.skill, how: event.how }
    case "Turn":
      return { skill: event.skill, turn: event.turn }
    case "ModelCall":
      return {
        skill: event.skill,
        turn: event.turn,
        messages: event.request.messages.length,
        tools: event.request.tools.map((t) => t.name),
        ...(event.request.toolChoice === undefined ? {} : { toolChoice: event.request.toolChoice })
      }
    case "ModelResponse":
      return { skill: event.skill, turn: event.turn, durationMs: event.durationMs, ...responseFields(event.response) }
    case "Retrying":
      return {
        skill: event.skill,
        turn: event.turn,
        attempt: event.attempt,
        maxAttempts: event.maxAttempts,
        waitMs: event.waitMs,
        reason: event.reason,
        provider: event.provider,
        ...(event.model === undefined ? {} : { model: event.model }),
        ...(event.status === undefined ? {} : { status: event.status })
      }
    case "ToolUse":
      return {
        ...toolCallFields(event),
        args: event.args,
        result: event.result,
        durationMs: event.durationMs,
        validated: event.validated,
        ...(event.mode === undefined ? {} : { mode: event.mode })
      }
    case "ToolProgress":
      return { ...toolCallFields(event), data: event.data }
    case "ToolError":
      return {
        ...toolCallFields(event),
        args: event.args,
        error: errorFields(event.error),
        recovery: event.recovery,
        validated: event.validated,
        ...(event.mode === undefined ? {} : { mode: event.mode })
      }
    case "InvalidArgs":
      return { ...toolCallFields(event), raw: event.raw, issues: event.issues, recovery: event.recovery }
    case "ToolHallucinated":
      return { ...toolCallFields(event), allowed: event.allowed, policy: event.policy }
    case "ArgsRepaired":
      return { ...toolCallFields(event), corrections: event.corrections }
    case "Handoff":
      return { skill: event.skill, turn: event.turn, to: event.to, callId: event.toolCallId }
    case "ApprovalRequested":
      return { skill: event.skill, turn: event.turn, calls: event.calls }
    case "ApprovalDecided":
      return {
        ...toolCallFields(event),
        decision: event.decision,
        ...(event.args === undefined ? {} : { args: event.args }),
        ...(event.reason === undefined ? {} : { reason: event.reason })
      }
    case "KnowledgeUsed":
      return {
        skill: event.skill,
        turn: event.turn,
        knowledge: event.knowledge,
        callId: event.toolCallId,
        characters: event.characters,
        cached: event.cached
      }
    case "BudgetThreshold":
      return { reason: event.reason, threshold: event.threshold, used: event.used, limit: event.limit, usedPercent: event.usedPercent }
    case "BudgetExceeded":
      return { reason: event.reason, limit: event.limit, used: event.used }
    case "RunEnd":
      return {
        outcome: event.outcome._tag,
        ...(event.outcome._tag === "Success" ? { output: event.outcome.output } : {}),
        ...(event.outcome._tag === "Failure" ? { error: errorFields(event.outcome.error) } : {}),
        ...(event.outcome._tag === "Suspended" ? { pending: event.outcome.pending.map((p) => p.id) } : {}),
        turns: event.turns,
        toolCalls: event.toolCalls,
        durationMs: event.durationMs
      }
    case "HookFailed":
      return { hook: event.hook, error: errorFields(event.error) }
  }
}

const bigintAsString = (_: string, value: unknown) => (typeof value === "bigint" ? value.toString() : value)

/**
 * JSON text of a line; values JSON cannot hold become strings rather than failing: a BigInt its digits,
 * a field JSON cannot write (a cycle, a throwing `toJSON`, nesting too deep) a note saying why, the
 * line's other fields kept (and `unserialisable: true` added).
 */
export const stringifyTraceLine = (line: TraceLine): string => {
  try {
    return JSON.stringify(line, bigintAsString)
  } catch {
    const kept: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(line)) {
      try {
        JSON.stringify(value, bigintAsString)
        kept[key] = value
      } catch (error) {
        kept[key] = `(unserialisable: ${describeCause(error)})`
      }
    }
    return JSON.stringify({ ...kept, unserialisable: true }, bigintAsString)
  }
}
