/**
 * What the studio shows about a run, derived from its events alone (so runs from the studio, from an
 * application, from a trace file or from the durable store read the same): status, turns, tokens,
 * duration, the model requests with their answers, and the budget used against its limits.
 */
import type { BudgetUse, DecisionRecord, ModelRequestInfo, RunSource, RunStatus, RunSummary, StoredEvent, TokenUsage } from "../server/api.ts"

type Fields = Record<string, any>

const terminalStatus = (event: Fields): RunStatus | undefined => {
  switch (event._tag) {
    case "RunEnd":
    case "CompositeEnd": {
      const outcome = event.outcome
      // Trace lines carry the outcome's tag as a string.
      const tag = typeof outcome === "string" ? outcome : outcome?._tag
      if (tag === "Success") return (outcome?.output?._tag === "Suspended") ? "suspended" : "completed"
      if (tag === "Suspended") return "suspended"
      if (tag === "Interrupted") return "cancelled"
      if (tag === "Failure") return errorTag(event) === "Cancelled" ? "cancelled" : "failed"
      return undefined
    }
    case "StudioStopped":
      return "cancelled"
    case "DurableStatus":
      return event.status === "waiting" ? "suspended" : event.status === "running" ? undefined : event.status
    default:
      return undefined
  }
}

const errorOf = (event: Fields): Fields | undefined => event.outcome?.error ?? event.error

const errorTag = (event: Fields): string | undefined => {
  const error = errorOf(event)
  return typeof error?._tag === "string" ? error._tag : typeof error?.tag === "string" ? error.tag : undefined
}

const errorMessage = (event: Fields): string | undefined => {
  const error = errorOf(event)
  if (error === undefined) return undefined
  if (typeof error === "string") return error
  return typeof error.message === "string" ? error.message : JSON.stringify(error)
}

const isObject = (value: unknown): value is Fields => typeof value === "object" && value !== null

/** Tokens of a `ModelResponse` (the event's `response.usage`, or a trace line's `usage`). */
const usageOf = (event: Fields): { readonly input: number; readonly output: number } | undefined => {
  const usage = event.response?.usage ?? event.usage
  if (typeof usage !== "object" || usage === null) return undefined
  return { input: Number(usage.inputTokens) || 0, output: Number(usage.outputTokens) || 0 }
}

/** Everything derived from one run's events. */
export interface RunFacts {
  readonly summary: RunSummary
  readonly requests: ReadonlyArray<ModelRequestInfo>
  readonly used: Readonly<Record<string, number>>
  /** Limits the events themselves name (`BudgetThreshold`, `BudgetExceeded`). */
  readonly limitsSeen: Readonly<Record<string, number>>
  readonly input: unknown
  readonly output: unknown
  /** The calls the run waits for, when suspended (from `ApprovalRequested` or the suspended `RunEnd`). */
  readonly pending: ReadonlyArray<{ readonly id: string; readonly tool: string; readonly args: unknown; readonly reason?: string }>
  /** When the run began to wait. */
  readonly waitingSince: number | undefined
  /** The suspended `RunEnd`'s snapshot, when the events carry it. */
  readonly snapshot: unknown
}

const budgetDimension: Readonly<Record<string, string>> = {
  turns: "maxTurns",
  toolCalls: "maxToolCalls",
  tokens: "maxTokens",
  duration: "maxDuration"
}

/**
 * The facts of run `runId` from its events, in order.
 *
 * @example
 * ```ts
 * summarizeRun("run_1", "studio", events).summary.status // "completed"
 * ```
 */
export const summarizeRun = (runId: string, source: RunSource, events: ReadonlyArray<StoredEvent>): RunFacts => {
  let agent = ""
  let kind: "agent" | "composite" = "agent"
  let status: RunStatus = "running"
  let parentRunId: string | undefined
  let error: string | undefined
  let endedAt: number | undefined
  let durationMs: number | undefined
  let turns = 0
  let toolCalls = 0
  let input: unknown
  let output: any
  let snapshot: unknown
  let pending: RunFacts["pending"] = []
  let waitingSince: number | undefined
  const tokens = { input: 0, output: 0 }
  const limitsSeen: Record<string, number> = {}
  const requests: Array<ModelRequestInfo & { latencyMs?: number }> = []
  let open: Fields | undefined
  for (const { at, event } of events) {
    // An event the summary cannot read (a hand-made trace line, an ingested event of the wrong shape)
    // is left out of it, never a failure of the whole list.
    try {
      const e = event as Fields
      if (agent === "" && typeof e.agent === "string") agent = e.agent
      if (parentRunId === undefined && typeof e.parentRunId === "string") parentRunId = e.parentRunId
      if (parentRunId === undefined && typeof e.parentRun === "string") parentRunId = e.parentRun
      const ended = terminalStatus(e)
      if (ended !== undefined) {
        status = ended
        endedAt = at
        if (typeof e.durationMs === "number") durationMs = e.durationMs
        if (typeof e.turns === "number") turns = Math.max(turns, e.turns)
        if (ended === "failed" || ended === "cancelled") error = errorMessage(e) ?? error
        if (ended === "suspended") {
          waitingSince ??= at
          const outcome = e.outcome ?? {}
          const fromEnd = outcome.pending ?? outcome.output?.pending ?? e.pending
          if (Array.isArray(fromEnd) && fromEnd.some((p: unknown) => typeof p === "object" && p !== null)) pending = fromEnd
          snapshot = outcome.snapshot ?? outcome.output?.snapshot ?? snapshot
        }
        if (ended === "completed") {
          output = e.outcome?.output ?? e.output ?? output
          // A run that may suspend completes with `Completed { output }`.
          if (output?._tag === "Completed" && "output" in output) output = output.output
        }
        continue
      }
      if (status !== "running" && e._tag !== "StudioDecision") {
        // A resumed run goes on under its run id.
        status = "running"
        endedAt = undefined
        durationMs = undefined
        waitingSince = undefined
        pending = []
      }
      switch (e._tag) {
        case "RunStart":
          input ??= e.input
          break
        case "CompositeStart":
          kind = "composite"
          agent = agent === "" ? String(e.name ?? "") : agent
          input ??= e.input
          break
        case "Turn":
          turns = Math.max(turns, Number(e.turn) || 0)
          break
        case "ModelCall": {
          const request = e.request as Fields | undefined
          const messages: ReadonlyArray<Fields> = Array.isArray(request?.messages) ? request.messages.filter(isObject) : []
          const system = messages.find((m) => m.role === "system")
          open = {
            turn: Number(e.turn) || 0,
            skill: e.skill,
            system: typeof system?.content === "string" ? system.content : undefined,
            tools: Array.isArray(request?.tools) ? request.tools.filter(isObject).map((t: Fields) => String(t.name)) : Array.isArray(e.tools) ? e.tools : [],
            ...(request?.toolChoice ?? e.toolChoice) === undefined ? {} : { toolChoice: request?.toolChoice ?? e.toolChoice },
            messages: request === undefined ? Number(e.messages) || 0 : messages.filter((m) => m.role !== "system"),
            startedAt: at
          }
          requests.push(open as ModelRequestInfo)
          break
        }
        case "ModelResponse": {
          const usage = usageOf(e)
          if (usage !== undefined) {
            tokens.input += usage.input
            tokens.output += usage.output
          }
          const response = typeof e.response === "object" && e.response !== null
            ? e.response
            : { _tag: e.response, ...(e.text === undefined ? {} : { content: e.text }), ...(e.calls === undefined ? {} : { calls: e.calls }) }
          const target = open ?? (requests.push({ turn: Number(e.turn) || 0, system: undefined, tools: [], messages: 0 }), requests[requests.length - 1] as Fields)
          Object.assign(target, {
            response,
            latencyMs: typeof e.durationMs === "number" ? e.durationMs : at - (target.startedAt ?? at),
            ...(usage === undefined ? {} : { usage: e.response?.usage ?? e.usage }),
            finishReason: e.response?.finishReason ?? (response._tag === "ToolCalls" ? "tool-calls" : "stop")
          })
          open = undefined
          break
        }
        case "ToolUse":
        case "ToolError":
          toolCalls += 1
          break
        case "ApprovalRequested":
          waitingSince = at
          if (Array.isArray(e.calls)) pending = e.calls
          break
        case "BudgetThreshold":
        case "BudgetExceeded":
          if (typeof e.reason === "string" && typeof e.limit === "number") limitsSeen[budgetDimension[e.reason] ?? e.reason] = e.limit
          break
      }
    } catch {
      continue
    }
  }
  const startedAt = events[0]?.at ?? 0
  const total: TokenUsage = { input: tokens.input, output: tokens.output, total: tokens.input + tokens.output }
  const summary: RunSummary = {
    runId,
    agent,
    status,
    source,
    startedAt,
    ...(endedAt === undefined ? {} : { endedAt, durationMs: durationMs ?? endedAt - startedAt }),
    turns,
    tokens: total,
    ...(error === undefined ? {} : { error }),
    ...(parentRunId === undefined ? {} : { parentRunId }),
    kind
  }
  return {
    summary,
    requests,
    used: { maxTurns: turns, maxToolCalls: toolCalls, maxTokens: total.total, maxDuration: summary.durationMs ?? Date.now() - startedAt },
    limitsSeen,
    input,
    output,
    pending: status === "suspended" ? pending : [],
    waitingSince: status === "suspended" ? waitingSince : undefined,
    snapshot: status === "suspended" ? snapshot : undefined
  }
}

/**
 * The budget table of a run: every dimension with a known limit or use (`limits` from the agent's
 * definition when the studio has it, else what the events said).
 *
 * @example
 * ```ts
 * budgetTable(facts, { maxTurns: 8 }).maxTurns // { limit: 8, used: 2 }
 * ```
 */
export const budgetTable = (facts: RunFacts, limits: Readonly<Record<string, number | null>> | undefined): Record<string, BudgetUse> =>
  Object.fromEntries(Object.entries(facts.used).map(([dimension, used]) => {
    const limit = limits?.[dimension] ?? facts.limitsSeen[dimension] ?? null
    return [dimension, { limit: limit === null || Number.isFinite(limit) ? limit : null, used }]
  }))

/** The decisions recorded in a run's events (`StudioDecision`). */
export const decisionsOf = (events: ReadonlyArray<StoredEvent>): ReadonlyArray<DecisionRecord> =>
  events.flatMap(({ event }) => event._tag === "StudioDecision" ? [event.record as DecisionRecord] : [])
