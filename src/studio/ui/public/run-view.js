// @ts-check
/**
 * Folds a run's events into what the run views show: turns with their model call (request, answer,
 * latency, usage), streamed text and reasoning, and tool calls with their arguments, result or error,
 * recovery, repairs and approval decision. Pure (no DOM), so the live stream and a stored run go
 * through the same code, and tests can feed it any sequence of events.
 *
 * @example
 * let view = emptyRunView()
 * for (const stored of detail.events) view = applyEvent(view, stored.event, stored.at)
 */

/** @typedef {import("../api-types.ts").StoredEvent["event"]} RunEvent */

/**
 * @typedef {{
 *   key: string, id: string | undefined, tool: string, turn: number, index: number,
 *   status: "streaming" | "requested" | "ok" | "error" | "invalid" | "refused" | "waiting" | "denied" | "handoff",
 *   argsText: string, args: unknown, result: unknown, error: unknown, issues: string | undefined,
 *   recovery: string | undefined, repairs: unknown, durationMs: number | undefined,
 *   validated: boolean | undefined, waitingReason: string | undefined,
 *   decision: { decision: string, args?: unknown, reason?: string | undefined, at: unknown } | undefined,
 *   allowed: ReadonlyArray<string> | undefined
 * }} ToolCallView
 */
/**
 * @typedef {{
 *   turn: number, skill: string | undefined, at: unknown, request: unknown, response: unknown,
 *   durationMs: number | undefined, usage: unknown, text: string, reasoning: string,
 *   retries: ReadonlyArray<unknown>, calls: ToolCallView[], answered: boolean
 * }} TurnView
 */
/**
 * @typedef {{
 *   runId: string | undefined, agent: string | undefined, parentRunId: string | undefined, input: unknown,
 *   skill: string | undefined, skillHow: string | undefined, routing: TurnView | undefined,
 *   turns: TurnView[], ended: boolean, outcome: string | undefined, output: unknown, error: unknown,
 *   pending: ReadonlyArray<unknown>, budget: unknown[], hookFailures: unknown[], knowledge: unknown[],
 *   decisions: unknown[], compositeKind: string | undefined,
 *   eventCount: number, startedAt: unknown, endedAt: unknown, durationMs: number | undefined
 * }} RunView
 */

/** @returns {RunView} */
export const emptyRunView = () => ({
  runId: undefined,
  agent: undefined,
  parentRunId: undefined,
  input: undefined,
  skill: undefined,
  skillHow: undefined,
  routing: undefined,
  turns: [],
  ended: false,
  outcome: undefined,
  output: undefined,
  error: undefined,
  pending: [],
  budget: [],
  hookFailures: [],
  knowledge: [],
  decisions: [],
  compositeKind: undefined,
  eventCount: 0,
  startedAt: undefined,
  endedAt: undefined,
  durationMs: undefined
})

/**
 * @param {number} turn
 * @param {string | undefined} skill
 * @param {unknown} at
 * @returns {TurnView}
 */
const newTurn = (turn, skill, at) => ({ turn, skill, at, request: undefined, response: undefined, durationMs: undefined, usage: undefined, text: "", reasoning: "", retries: [], calls: [], answered: false })

/**
 * @param {string} tool
 * @param {number} turn
 * @param {number} index
 * @param {string | undefined} id
 * @returns {ToolCallView}
 */
const newCall = (tool, turn, index, id) => ({
  key: id ?? `${turn}:${index}`,
  id,
  tool,
  turn,
  index,
  status: "requested",
  argsText: "",
  args: undefined,
  result: undefined,
  error: undefined,
  issues: undefined,
  recovery: undefined,
  repairs: undefined,
  durationMs: undefined,
  validated: undefined,
  waitingReason: undefined,
  decision: undefined,
  allowed: undefined
})

/**
 * The turn an event belongs to, created when first seen. Turn 0 holds a model-routed skill choice.
 * @param {RunView} view
 * @param {number} turn
 * @param {string | undefined} skill
 * @param {unknown} at
 */
const turnOf = (view, turn, skill, at) => {
  if (turn === 0) {
    view.routing ??= newTurn(0, undefined, at)
    return view.routing
  }
  let found = view.turns.find((candidate) => candidate.turn === turn)
  if (found === undefined) {
    found = newTurn(turn, skill, at)
    view.turns.push(found)
    view.turns.sort((a, b) => a.turn - b.turn)
  }
  return found
}

/**
 * The call with this id in any turn, if any.
 * @param {RunView} view
 * @param {string} id
 * @returns {ToolCallView | undefined}
 */
const findCall = (view, id) => {
  for (const candidate of [...view.turns, ...(view.routing === undefined ? [] : [view.routing])]) {
    const found = candidate.calls.find((call) => call.id === id)
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * The call with this id in any turn, or a new one in `turn`.
 * @param {RunView} view
 * @param {TurnView} turn
 * @param {string} id
 * @param {string} tool
 */
const callOf = (view, turn, id, tool) => {
  const found = findCall(view, id)
  if (found !== undefined) return found
  const created = newCall(tool, turn.turn, turn.calls.length, id)
  turn.calls.push(created)
  return created
}

/**
 * @param {unknown} value
 * @returns {{ [key: string]: unknown }}
 */
const record = (value) => (typeof value === "object" && value !== null ? /** @type {{ [key: string]: unknown }} */ (value) : {})

/**
 * Applies one event. Mutates and returns `view` (the live stream folds thousands of events; copying
 * the view per event would be quadratic). Unknown event tags are counted and otherwise ignored.
 * @param {RunView} view
 * @param {unknown} raw
 * @param {unknown} [at]
 * @returns {RunView}
 */
export const applyEvent = (view, raw, at) => {
  const event = record(raw)
  view.eventCount += 1
  view.runId ??= typeof event.runId === "string" ? event.runId : undefined
  view.agent ??= typeof event.agent === "string" ? event.agent : undefined
  const turnNumber = typeof event.turn === "number" ? event.turn : undefined
  const skill = typeof event.skill === "string" ? event.skill : undefined
  const turn = () => turnOf(view, turnNumber ?? view.turns.at(-1)?.turn ?? 1, skill, at)
  switch (event._tag) {
    case "RunStart":
      view.input = event.input
      view.startedAt = at
      view.parentRunId = typeof event.parentRunId === "string" ? event.parentRunId : undefined
      // A resumed run starts again: it is live until its own RunEnd.
      view.ended = false
      break
    case "CompositeStart":
      view.input = event.input
      view.startedAt = at
      view.agent ??= typeof event.name === "string" ? event.name : undefined
      view.compositeKind = typeof event.kind === "string" ? event.kind : undefined
      view.parentRunId = typeof event.parentRunId === "string" ? event.parentRunId : undefined
      view.ended = false
      break
    case "StudioDecision":
      view.decisions.push(event.record)
      break
    case "SkillChosen":
      view.skill = skill
      view.skillHow = typeof event.how === "string" ? event.how : undefined
      break
    case "Turn":
      turn()
      break
    case "ModelCall": {
      const current = turn()
      current.request = event.request
      current.answered = false
      break
    }
    case "Retrying":
      turn().retries = [...turn().retries, { ...event, at }]
      break
    case "TextDelta":
      turn().text += typeof event.delta === "string" ? event.delta : ""
      break
    case "ReasoningDelta":
      turn().reasoning += typeof event.delta === "string" ? event.delta : ""
      break
    case "ToolCallStart": {
      const current = turn()
      const index = typeof event.index === "number" ? event.index : current.calls.length
      const id = typeof event.toolCallId === "string" ? event.toolCallId : undefined
      // A call already known by its id (a replayed stream) is not started twice.
      if (id !== undefined && findCall(view, id) !== undefined) break
      const call = newCall(String(event.tool), current.turn, index, id)
      call.status = "streaming"
      current.calls.push(call)
      break
    }
    case "ToolCallDelta": {
      const current = turn()
      const call = current.calls.find((candidate) => candidate.index === event.index && candidate.status === "streaming")
      if (call !== undefined) call.argsText += typeof event.delta === "string" ? event.delta : ""
      break
    }
    case "ModelResponse": {
      const current = turn()
      current.response = event.response
      current.answered = true
      current.durationMs = typeof event.durationMs === "number" ? event.durationMs : undefined
      const response = record(event.response)
      current.usage = response.usage
      if (response._tag === "Text" && current.text === "" && typeof response.content === "string") current.text = response.content
      if (response._tag === "ToolCalls" && typeof response.content === "string" && current.text === "") current.text = response.content
      const calls = Array.isArray(response.calls) ? response.calls : []
      calls.forEach((rawCall, index) => {
        const modelCall = record(rawCall)
        const id = String(modelCall.id)
        const streamed = current.calls.find((candidate) => candidate.index === index && candidate.status === "streaming")
        const call = findCall(view, id) ?? streamed ?? newCall(String(modelCall.name), current.turn, index, id)
        call.id = id
        call.key = id
        call.tool = String(modelCall.name)
        call.index = index
        call.status = "requested"
        call.args = modelCall.arguments
        if (!view.turns.some((candidate) => candidate.calls.includes(call)) && view.routing?.calls.includes(call) !== true) current.calls.push(call)
      })
      // Streamed calls the final answer does not contain were abandoned by the provider.
      current.calls = current.calls.filter((call) => call.status !== "streaming")
      break
    }
    case "ArgsRepaired": {
      const call = callOf(view, turn(), String(event.toolCallId), String(event.tool))
      call.repairs = event.corrections
      break
    }
    case "ToolUse": {
      const call = callOf(view, turn(), String(event.toolCallId), String(event.tool))
      call.status = "ok"
      call.args = event.args
      call.result = event.result
      call.durationMs = typeof event.durationMs === "number" ? event.durationMs : undefined
      call.validated = event.validated === false ? false : true
      break
    }
    case "ToolError": {
      const call = callOf(view, turn(), String(event.toolCallId), String(event.tool))
      call.status = "error"
      call.args = event.args
      call.error = event.error
      call.recovery = typeof event.recovery === "string" ? event.recovery : undefined
      break
    }
    case "InvalidArgs": {
      const call = callOf(view, turn(), String(event.toolCallId), String(event.tool))
      call.status = "invalid"
      call.args = event.raw
      call.issues = typeof event.issues === "string" ? event.issues : undefined
      call.recovery = typeof event.recovery === "string" ? event.recovery : undefined
      break
    }
    case "ToolHallucinated": {
      const call = callOf(view, turn(), String(event.toolCallId), String(event.tool))
      call.status = "refused"
      call.args = event.args
      call.allowed = Array.isArray(event.allowed) ? event.allowed.map(String) : undefined
      call.recovery = typeof event.policy === "string" ? event.policy : undefined
      break
    }
    case "KnowledgeUsed":
      view.knowledge.push({ ...event, at })
      break
    case "Handoff": {
      const call = callOf(view, turn(), String(event.toolCallId), `handoff_to_${String(event.to)}`)
      call.status = "handoff"
      break
    }
    case "ApprovalRequested": {
      const current = turn()
      const calls = Array.isArray(event.calls) ? event.calls : []
      for (const rawCall of calls) {
        const waiting = record(rawCall)
        const call = callOf(view, current, String(waiting.id), String(waiting.tool))
        call.status = "waiting"
        call.args = waiting.args
        call.waitingReason = typeof waiting.reason === "string" ? waiting.reason : undefined
      }
      break
    }
    case "ApprovalDecided": {
      const call = callOf(view, turn(), String(event.toolCallId), String(event.tool))
      const decision = String(event.decision)
      call.decision = { decision, args: event.args, reason: typeof event.reason === "string" ? event.reason : undefined, at }
      if (decision === "deny") call.status = "denied"
      else if (call.status === "waiting") call.status = "requested"
      if (event.args !== undefined) call.args = event.args
      break
    }
    case "BudgetThreshold":
    case "BudgetExceeded":
      view.budget.push({ ...event, at })
      break
    case "HookFailed":
      view.hookFailures.push({ ...event, at })
      break
    case "CompositeEnd":
    case "RunEnd": {
      const outcome = record(event.outcome)
      view.outcome = typeof outcome._tag === "string" ? outcome._tag : undefined
      view.ended = true
      view.endedAt = at
      view.durationMs = typeof event.durationMs === "number" ? event.durationMs : undefined
      if (outcome._tag === "Success") view.output = outcome.output
      if (outcome._tag === "Failure") view.error = outcome.error
      view.pending = outcome._tag === "Suspended" && Array.isArray(outcome.pending) ? outcome.pending : []
      if (view.compositeKind === undefined && typeof event.turns !== "number") view.compositeKind = "composite"
      break
    }
    default:
      break
  }
  return view
}

/**
 * Whether an event ends the stream of run `runId` (its own `RunEnd` or `CompositeEnd`, any outcome;
 * a child's end inside a composite's stream does not).
 * @param {unknown} raw
 * @param {string} runId
 */
export const isRunEnd = (raw, runId) => {
  const event = record(raw)
  return (event._tag === "RunEnd" || event._tag === "CompositeEnd") && (event.runId === undefined || event.runId === runId)
}

/**
 * The token usage of a model answer, whatever the provider called the fields.
 * @param {unknown} usage
 * @returns {{ input: number | undefined, output: number | undefined, total: number | undefined }}
 */
export const tokensOf = (usage) => {
  const fields = record(usage)
  /** @param {...string} names */
  const pick = (...names) => {
    for (const name of names) if (typeof fields[name] === "number") return /** @type {number} */ (fields[name])
    return undefined
  }
  const input = pick("inputTokens", "promptTokens", "input", "prompt_tokens")
  const output = pick("outputTokens", "completionTokens", "output", "completion_tokens")
  const total = pick("totalTokens", "total", "total_tokens") ?? (input !== undefined && output !== undefined ? input + output : undefined)
  return { input, output, total }
}
