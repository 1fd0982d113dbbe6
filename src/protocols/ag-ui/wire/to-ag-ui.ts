/**
 * A run's events as AG-UI 1.0 events: the one mapper `run event → AG-UI events`, a table with one
 * entry per run event (STYLE: wire mappers are tables). The stream opens with `RUN_STARTED` and ends
 * with exactly one of `RUN_FINISHED` (outcome `success`, `interrupt` or `cancelled`) or `RUN_ERROR`;
 * nothing follows it. Each turn is a step (`STEP_STARTED`/`STEP_FINISHED`, named `turn <n>`, or
 * `<agent> turn <n>` for a child run); text and reasoning stream as `TEXT_MESSAGE_*` and
 * `REASONING_*` (one block open at a time, closed before a tool call starts); tool calls as
 * `TOOL_CALL_START`/`ARGS`/`END` (the arguments whole when the model did not stream them) and their
 * outcome as `TOOL_CALL_RESULT`. A run that suspends for approval finishes with an `interrupt` outcome
 * naming each waiting call (interrupt id `<run id>:<decision key>`, answered by a resume entry), as
 * AG-UI's core reason `tool_call`: bound to the call (`toolCallId`), awaiting a decision whose schema
 * allows approve-with-edits (`editedArgs`), attributed to the child agent that raised it
 * (`subagentRunId`) when an agent used as a tool waits; a run that stops on calls of the client's own
 * tools only finishes with `success` and `pendingToolCallIds`. When both wait, the interrupt outcome
 * names the client's calls too (reason `effect-agent-dsl:client_tool`, a namespaced custom reason):
 * AG-UI's interrupt outcome has no pending list, and a success cannot carry interrupts.
 *
 * Pure: it imports only the run's event types, so `eventStreamResponse` (runtime) serves it too.
 */
import * as Cause from "effect/Cause"
import type * as Stream from "effect/Stream"
import type { RunEndEvent, RunStreamEvent, WaitingCall } from "../../../dsl/events.ts"
import type { RunSnapshot } from "../../../dsl/run-snapshot.ts"
import { type CompositeStreamEvent, runOutcomeOfComposite } from "../../../dsl/composite-events.ts"
import { routeOf } from "../../../dsl/child-listing.ts"
import type { AgentError } from "../../../errors.ts"
import { effectStream } from "../../../internal/lazy-effect.ts"
import type { LlmMessage } from "../../../model/messages.ts"
import type { AgUiEvent, AgUiInputMessage, AgUiInterrupt, AgUiMessage, JsonPatchOperation } from "./ag-ui-event.ts"
import { messagesFold } from "./messages-fold.ts"
import { echoedMessages } from "./input-echo.ts"

/**
 * Where a stream reads a run's shared state (an `AgUiStateCell` from `agUiState`): the state the run
 * started with, the state as JSON now (the same value while it is unchanged), the JSON Patch between
 * two of them (undefined when only a snapshot can carry the change), and whether it changed where no
 * run stream could take the change in order (then it is sent before the next event read).
 */
export interface AgUiStateSource {
  readonly initialJson: unknown
  readonly json: () => unknown
  readonly diff: (from: unknown, to: unknown) => ReadonlyArray<JsonPatchOperation> | undefined
  readonly takeUnsequenced: () => boolean
}

/**
 * A change of shared state, sent through the run's `StreamSink` by the cell (so it takes its place
 * among the run's events, where the change happened) and read only by `toAgUiEvents`.
 */
export interface AgUiStateChange {
  readonly _tag: "AgUiStateChanged"
  readonly source: AgUiStateSource
  readonly json: unknown
}

/** The state change an event of the run's stream is, if it is one. */
const stateChangeOf = (event: RunStreamEvent): AgUiStateChange | undefined => {
  const candidate = event as unknown as { readonly _tag: string }
  return candidate._tag === "AgUiStateChanged" ? (candidate as AgUiStateChange) : undefined
}

/** Options of {@link toAgUiEvents}. */
export interface AgUiStreamOptions {
  /** The AG-UI thread. Default: the run's id. */
  readonly threadId?: string
  /** The AG-UI run id (the input's `runId`). Default: the run's id. */
  readonly runId?: string
  /**
   * Names of the client's own tools (`RunAgentInput.tools`): a run waiting only on calls of these
   * finishes with `success` and `pendingToolCallIds` (the client runs them), not with an interrupt
   * (waiting on approvals too, its interrupt outcome names them, reason `effect-agent-dsl:client_tool`),
   * and their results (which the client sent) are not echoed back.
   */
  readonly clientTools?: ReadonlyArray<string>
  /**
   * The conversation as the server holds it (a session's transcript, `toAgUiMessages`), sent as
   * `MESSAGES_SNAPSHOT` right after `RUN_STARTED`: a consumer replaces its messages by these (ids
   * matching its own keep their place). Leave it out when the client sent the conversation itself.
   */
  readonly messagesSnapshot?: ReadonlyArray<AgUiMessage>
  /**
   * The conversation before this run, as the client holds it (the input's messages, their ids kept).
   * When given, the stream ends with a `MESSAGES_SNAPSHOT` of it followed by the messages this run
   * produced (with the ids its events used) just before `RUN_FINISHED`, as AG-UI agents do at the
   * end of a run: a client's history is then the server's, whatever it dropped or reordered. Its
   * messages are repeated in AG-UI's shapes (a `null` left out, tool calls typed `function`, an
   * activity or reasoning message without its content left out): `echoedMessage`.
   */
  readonly conversation?: ReadonlyArray<AgUiMessage | AgUiInputMessage>
  /**
   * The run's shared state (`agUiState(...).fromInput(input.state)`): sent as `STATE_SNAPSHOT` after
   * `RUN_STARTED`, then each change as `STATE_DELTA` before the run's next event.
   */
  readonly state?: AgUiStateSource
}

/** The interrupt id of a waiting call: `<run id>:<decision key>` (the same form as the UI stream's `approvalId`). */
export const interruptId = (runId: string, decisionKey: string): string => `${runId}:${decisionKey}`

/**
 * The JSON Schema of an answer to a `tool_call` interrupt (a resume entry's `payload`): AG-UI's
 * recommended schema for tool-bound interrupts, whose `editedArgs` tells a client it may offer to edit
 * the call before approving it, plus our optional `reason` for a refusal. `agUiHandler` also reads the
 * deprecated `args` as `editedArgs`.
 *
 * @example
 * ```ts
 * const answer = { approved: true, editedArgs: { to: "bob", amount: 20 } } // valid for approvalAnswerSchema
 * ```
 */
export const approvalAnswerSchema: Record<string, unknown> = {
  type: "object",
  properties: {
    approved: { type: "boolean", description: "Run the call (true) or not (false)" },
    editedArgs: { type: "object", description: "Full replacement of the tool args. Not merged." },
    reason: { type: "string", description: "Why it was refused (approved: false)" }
  },
  required: ["approved"]
}

/** The reason of a client tool call's interrupt (a custom reason, namespaced as AG-UI asks). */
const clientToolReason = "effect-agent-dsl:client_tool"

/** JSON text of a value, as a tool result is sent to a model. */
const contentOf = (value: unknown): string => {
  if (typeof value === "string") return value
  try {
    return JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v)) ?? "null"
  } catch {
    return String(value)
  }
}

/** A JSON copy of a value (what crosses the wire), or undefined when it has none. */
const jsonOf = (value: unknown): unknown => {
  try {
    const text = JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v))
    return text === undefined ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

const errorMessage = (error: unknown): string => (error instanceof Error ? error.message : typeof error === "string" ? error : contentOf(error))

/** The mutable state of one stream's mapping. */
interface Mapping {
  readonly threadId: () => string
  readonly runId: () => string
  readonly clientTools: ReadonlySet<string>
  /** A fresh id, unique in this stream. */
  readonly id: (kind: string) => string
  /** The open step of each run, by run id. */
  readonly steps: Map<string, string>
  /** The open text or reasoning block of each run: runs that write at once (a `parallel`'s members) write into messages of their own. */
  readonly blocks: Map<string, { readonly kind: "text" | "reasoning"; readonly id: string }>
  /** The AG-UI ids of the calls started in the current turn of each run, by index. */
  readonly started: Map<string, Map<number, string>>
  /** Calls started and not ended. */
  readonly open: Set<string>
  /** Every call id this stream started (a model may reuse an id in a later turn: AG-UI ids stay unique). */
  readonly usedCalls: Set<string>
  /** AG-UI call ids by `<run id> <loop call id>`. */
  readonly calls: Map<string, string>
  /** Whether the current turn of each run streamed its text. */
  readonly streamedText: Set<string>
  /** The assistant message of the current turn of each run (the parent of its calls). */
  readonly messages: Map<string, string>
  /** Each run seen, by run id: in the run's conversation (`conversationRun`) or a tool's child run. */
  readonly runs: Map<string, "conversation" | "composite" | "tool-child">
  /** The agent each run handed off to, by run id. */
  readonly handoffs: Map<string, string>
  /** The message and call ids of the tool children's runs: streamed, but no part of the run's conversation. */
  readonly childIds: Set<string>
}

/** Ends the open block of `runId`, or of every run. */
const closeBlock = (m: Mapping, runId?: string): Array<AgUiEvent> => {
  const out: Array<AgUiEvent> = []
  for (const [run, block] of m.blocks) {
    if (runId !== undefined && run !== runId) continue
    m.blocks.delete(run)
    out.push(...(block.kind === "text"
      ? [{ type: "TEXT_MESSAGE_END", messageId: block.id } as const]
      : [{ type: "REASONING_MESSAGE_END", messageId: block.id } as const, { type: "REASONING_END", messageId: block.id } as const]))
  }
  return out
}

/** The id of `runId`'s open block (opened by `openBlock` just before). */
const blockOf = (m: Mapping, runId: string): string => m.blocks.get(runId)!.id

const openBlock = (m: Mapping, kind: "text" | "reasoning", runId: string): Array<AgUiEvent> => {
  if (m.blocks.get(runId)?.kind === kind) return []
  const out = closeBlock(m, runId)
  const id = kind === "text" ? messageOf(m, runId) : m.id("reasoning")
  m.blocks.set(runId, { kind, id })
  out.push(...(kind === "text"
    ? [{ type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" } as const]
    : [{ type: "REASONING_START", messageId: id } as const, { type: "REASONING_MESSAGE_START", messageId: id, role: "reasoning" } as const]))
  return out
}

/** The assistant message id of the run's current turn (its text and the parent of its calls). */
const messageOf = (m: Mapping, runId: string): string => {
  let id = m.messages.get(runId)
  if (id === undefined) {
    m.messages.set(runId, (id = m.id("message")))
    if (m.runs.get(runId) === "tool-child") m.childIds.add(id)
  }
  return id
}

/**
 * Places a run the first time one of its events is seen. The run's conversation is its own messages,
 * a composite's members' (a pipeline's stages speak in turn) and a handoff target's (it answers for
 * the run); a run under an agent that did not hand off to it is an agent used as a tool, whose turns
 * are its own conversation (and so are the runs under it). A run whose parent this stream never showed
 * (a resumed stream) is taken as part of the conversation.
 */
const sortRun = (m: Mapping, event: CompositeStreamEvent): void => {
  if (m.runs.has(event.runId)) return
  const parent = event.parentRunId === undefined ? undefined : m.runs.get(event.parentRunId)
  const composite = event._tag === "CompositeStart"
  const agent = "agent" in event ? event.agent : undefined
  const underTool = parent === "tool-child" || (parent === "conversation" && (agent === undefined || m.handoffs.get(event.parentRunId!) !== agent))
  m.runs.set(event.runId, underTool ? "tool-child" : composite ? "composite" : "conversation")
}

/** Whether an AG-UI event is about a message or a call of a tool's child run (`Mapping.childIds`). */
const ofChildRun = (m: Mapping, event: AgUiEvent): boolean => {
  switch (event.type) {
    case "TEXT_MESSAGE_START":
    case "TEXT_MESSAGE_CONTENT":
    case "TEXT_MESSAGE_END":
      return m.childIds.has(event.messageId)
    case "TOOL_CALL_START":
    case "TOOL_CALL_ARGS":
    case "TOOL_CALL_END":
    case "TOOL_CALL_RESULT":
      return m.childIds.has(event.toolCallId)
    default:
      return false
  }
}

const callKey = (runId: string, callId: string) => `${runId} ${callId}`
const callIdOf = (m: Mapping, runId: string, callId: string): string => m.calls.get(callKey(runId, callId)) ?? callId

/** The model's id for a call when this stream has not used it yet, else a fresh one. */
const freshCallId = (m: Mapping, candidate: string | undefined): string =>
  candidate !== undefined && candidate !== "" && !m.usedCalls.has(candidate) ? candidate : m.id("call")

const startCall = (m: Mapping, runId: string, id: string, name: string): Array<AgUiEvent> => {
  m.open.add(id)
  m.usedCalls.add(id)
  if (m.runs.get(runId) === "tool-child") m.childIds.add(id)
  return [...closeBlock(m, runId), { type: "TOOL_CALL_START", toolCallId: id, toolCallName: name, parentMessageId: messageOf(m, runId) }]
}

const endCalls = (m: Mapping): Array<AgUiEvent> => {
  const out: Array<AgUiEvent> = [...m.open].map((toolCallId) => ({ type: "TOOL_CALL_END", toolCallId }))
  m.open.clear()
  return out
}

const closeStep = (m: Mapping, runId: string): Array<AgUiEvent> => {
  const step = m.steps.get(runId)
  m.steps.delete(runId)
  m.messages.delete(runId)
  return step === undefined ? [] : [{ type: "STEP_FINISHED", stepName: step }]
}

const result = (m: Mapping, runId: string, callId: string, content: string): Array<AgUiEvent> => [
  ...closeBlock(m, runId),
  { type: "TOOL_CALL_RESULT", messageId: m.id("result"), toolCallId: callIdOf(m, runId, callId), content, role: "tool" }
]

/** Whether a waiting call is one of the client's own tools (a call of this run, not a child's). */
const isClientCall = (m: Mapping, pending: WaitingCall): boolean => m.clientTools.has(pending.tool) && !pending.id.includes("/")

/**
 * The interrupt of a client tool call when approvals wait too: an interrupt outcome carries no
 * pending list, so the call is named as an interrupt of its own. The client answers it with the call's
 * result as a tool message (and this interrupt resolved), or refuses the call by cancelling it.
 */
const clientInterruptOf = (m: Mapping, runId: string, pending: WaitingCall): AgUiInterrupt => {
  const args = jsonOf(pending.args)
  return {
    id: interruptId(runId, pending.id),
    reason: clientToolReason,
    message: `Run the client tool "${pending.tool}" and send its result as a tool message (or cancel this interrupt to refuse the call)`,
    toolCallId: callIdOf(m, runId, pending.id),
    metadata: { tool: pending.tool, ...(args === undefined ? {} : { args }) }
  }
}

/**
 * The interrupt of a call waiting for a decision: AG-UI's core reason `tool_call` (bound to the
 * call, awaiting a decision), whether the tool's `needsApproval` asked or an interceptor suspended it
 * (both are answered the same way; `metadata.kind` says which: `approval`, or `suspended` when the
 * run gave a reason). A child agent's call names the child's run as `subagentRunId` (AG-UI: the
 * subagent whose work raised it); a child's or a handoff target's call is bound to the id it had in
 * this stream.
 */
const interruptOf = (m: Mapping, runId: string, pending: WaitingCall, snapshot: RunSnapshot): AgUiInterrupt => {
  const route = routeOf(snapshot, pending.id)
  const args = jsonOf(pending.args)
  return {
    id: interruptId(runId, pending.id),
    reason: "tool_call",
    message: pending.reason ?? `Approve the call of "${pending.tool}"?`,
    toolCallId: route === undefined ? callIdOf(m, runId, pending.id) : callIdOf(m, route.runId, route.callId),
    responseSchema: approvalAnswerSchema,
    ...(route?.subagentRunId === undefined ? {} : { subagentRunId: route.subagentRunId }),
    metadata: { kind: pending.reason === undefined ? "approval" : "suspended", tool: pending.tool, ...(args === undefined ? {} : { args }) }
  }
}

type Entry<K extends RunStreamEvent["_tag"]> = (event: Extract<RunStreamEvent, { readonly _tag: K }>, m: Mapping) => Array<AgUiEvent>
const none = (): Array<AgUiEvent> => []

/** The mapper: what each run event becomes on the AG-UI wire. */
const table: { readonly [K in RunStreamEvent["_tag"]]: Entry<K> } = {
  RunStart: none,
  SkillChosen: none,
  ModelCall: none,
  KnowledgeUsed: none,
  ArgsRepaired: none,
  BudgetThreshold: none,
  BudgetExceeded: none,
  HookFailed: none,
  // The waiting calls are named by the interrupt outcome of RUN_FINISHED.
  ApprovalRequested: none,
  Turn: (event, m) => {
    const out = [...closeBlock(m, event.runId), ...endCalls(m), ...closeStep(m, event.runId)]
    const stepName = event.parentRunId === undefined ? `turn ${event.turn}` : `${event.agent} turn ${event.turn}`
    m.steps.set(event.runId, stepName)
    m.started.set(event.runId, new Map())
    m.streamedText.delete(event.runId)
    out.push({ type: "STEP_STARTED", stepName })
    return out
  },
  TextDelta: (event, m) => {
    m.streamedText.add(event.runId)
    return [...openBlock(m, "text", event.runId), { type: "TEXT_MESSAGE_CONTENT", messageId: blockOf(m, event.runId), delta: event.delta }]
  },
  ReasoningDelta: (event, m) => [...openBlock(m, "reasoning", event.runId), { type: "REASONING_MESSAGE_CONTENT", messageId: blockOf(m, event.runId), delta: event.delta }],
  ToolCallStart: (event, m) => {
    const id = freshCallId(m, event.toolCallId)
    m.started.get(event.runId)?.set(event.index, id)
    return startCall(m, event.runId, id, event.tool)
  },
  ToolCallDelta: (event, m) => {
    const id = m.started.get(event.runId)?.get(event.index)
    return id === undefined || !m.open.has(id) ? [] : [{ type: "TOOL_CALL_ARGS", toolCallId: id, delta: event.delta }]
  },
  ModelResponse: (event, m) => {
    // A model-routed skill choice answers before any turn: not part of the conversation.
    if (!m.steps.has(event.runId)) return []
    const out: Array<AgUiEvent> = []
    const response = event.response
    const content = response._tag === "Text" ? response.content : response.content ?? ""
    if (!m.streamedText.has(event.runId) && content !== "") {
      out.push(...openBlock(m, "text", event.runId), { type: "TEXT_MESSAGE_CONTENT", messageId: blockOf(m, event.runId), delta: content })
    }
    out.push(...closeBlock(m, event.runId))
    if (response._tag === "ToolCalls") {
      const started = [...(m.started.get(event.runId) ?? new Map<number, string>()).entries()].sort(([a], [b]) => a - b).map(([, id]) => id)
      response.calls.forEach((call, i) => {
        let id = started[i]
        if (id === undefined) {
          id = freshCallId(m, call.id)
          out.push(...startCall(m, event.runId, id, call.name), { type: "TOOL_CALL_ARGS", toolCallId: id, delta: call.arguments })
        }
        m.calls.set(callKey(event.runId, call.id), id)
      })
    }
    out.push(...endCalls(m))
    return out
  },
  Retrying: (event) => [{
    type: "CUSTOM",
    name: "retrying",
    value: jsonOf({ attempt: event.attempt, maxAttempts: event.maxAttempts, waitMs: event.waitMs, reason: event.reason, provider: event.provider, model: event.model })
  }],
  // No AG-UI event carries a tool's progress: a CUSTOM event, as for retries.
  ToolProgress: (event) => [{ type: "CUSTOM", name: "tool_progress", value: jsonOf({ toolCallId: event.toolCallId, tool: event.tool, data: event.data }) }],
  ToolUse: (event, m) => (m.clientTools.has(event.tool) ? [] : result(m, event.runId, event.toolCallId, contentOf(event.result))),
  ToolError: (event, m) => result(m, event.runId, event.toolCallId, `Error: ${errorMessage(event.error)}`),
  InvalidArgs: (event, m) => result(m, event.runId, event.toolCallId, `Invalid arguments: ${event.issues}`),
  ToolHallucinated: (event, m) => result(m, event.runId, event.toolCallId, `The tool "${event.tool}" is not available`),
  Handoff: (event, m) => {
    m.handoffs.set(event.runId, event.to)
    return result(m, event.runId, event.toolCallId, `Handed off to ${event.to}`)
  },
  ApprovalDecided: (event, m) =>
    event.decision === "deny" ? result(m, event.runId, event.toolCallId, `Denied: ${event.reason ?? "denied by the user"}`) : [],
  RunEnd: (event, m) => {
    const out = [...closeBlock(m, event.parentRunId === undefined ? undefined : event.runId), ...endCalls(m), ...closeStep(m, event.runId)]
    // A child run's end (an agent used as a tool, a handoff target) ends its steps, not the run.
    if (event.parentRunId !== undefined) return out
    return [...out, ...runFinished(m, event.runId, event.outcome)]
  }
}

/** The end of the run the stream is about: its open steps closed, then `RUN_FINISHED` or `RUN_ERROR`. */
const runFinished = (m: Mapping, runId: string, outcome: RunEndEvent["outcome"]): Array<AgUiEvent> => {
  const out: Array<AgUiEvent> = []
  for (const open of [...m.steps.keys()]) out.push(...closeStep(m, open))
  const ids = { threadId: m.threadId(), runId: m.runId() }
  switch (outcome._tag) {
    case "Success": {
      const output = jsonOf(outcome.output)
      // AG-UI 1.0 refuses a null `result` (a client reads it as absent): an output of null is said in
      // the event's metadata, `{ result: null }` (a null under a key is data there), so a client can
      // tell it from a run without output.
      const carried = output === undefined ? {} : output === null ? { metadata: { result: null } } : { result: output }
      out.push({ type: "RUN_FINISHED", ...ids, ...carried, outcome: { type: "success" } })
      break
    }
    case "Failure":
      out.push({ type: "RUN_ERROR", message: outcome.error.message, code: outcome.error._tag })
      break
    case "Interrupted":
      out.push({ type: "RUN_FINISHED", ...ids, outcome: { type: "cancelled" } })
      break
    case "Suspended": {
      // Only client calls wait: a completed run leaving them to the client. Approvals wait too: an
      // interrupt outcome naming every waiting call, so the client's calls are not left unsaid.
      const clientOnly = outcome.pending.every((p) => isClientCall(m, p))
      out.push({
        type: "RUN_FINISHED",
        ...ids,
        outcome: clientOnly
          ? { type: "success", pendingToolCallIds: outcome.pending.map((p) => callIdOf(m, runId, p.id)) }
          : { type: "interrupt", interrupts: outcome.pending.map((p) => (isClientCall(m, p) ? clientInterruptOf(m, runId, p) : interruptOf(m, runId, p, outcome.snapshot))) }
      })
      break
    }
  }
  return out
}

/**
 * A transcript the server holds (a session's, a snapshot's) as AG-UI messages, for `messagesSnapshot`:
 * system messages are left out (the prompt is the server's); ids are `<prefix>-<index>`, stable for
 * the same transcript.
 *
 * @example
 * ```ts
 * toAgUiEvents(events, { threadId, messagesSnapshot: toAgUiMessages(await sessions.load(threadId), threadId) })
 * ```
 */
export const toAgUiMessages = (transcript: ReadonlyArray<LlmMessage>, prefix = "message"): Array<AgUiMessage> =>
  transcript.flatMap((message, index): Array<AgUiMessage> => {
    const id = `${prefix}-${index}`
    switch (message.role) {
      case "system":
        return []
      case "user":
        return [{ id, role: "user", content: message.content }]
      case "assistant":
        return [{
          id,
          role: "assistant",
          ...(message.content === "" ? {} : { content: message.content }),
          ...(message.toolCalls === undefined || message.toolCalls.length === 0 ? {} : {
            toolCalls: message.toolCalls.map((call) => ({
              id: call.id,
              type: "function" as const,
              function: { name: call.name, arguments: typeof call.arguments === "string" ? call.arguments : contentOf(call.arguments) }
            }))
          })
        }]
      case "tool":
        return [{ id, role: "tool", toolCallId: message.toolCallId, content: message.content }]
    }
  })

const isTerminal = (event: AgUiEvent) => event.type === "RUN_FINISHED" || event.type === "RUN_ERROR"

/**
 * A run's events (`runStream`, `chatStream`, a resumed run, a composite's `runStream`) as AG-UI events:
 * the plain stream, for a transport other than SSE (a WebSocket, a test). A failure without `RunEnd`
 * (a composite's `CompositeEnd`, for a composite) ends as `RUN_ERROR`; an interruption ends the stream.
 *
 * @example
 * ```ts
 * const events = toAgUiEvents(assistant.runStream("What is 2 + 3?"), { threadId: "thread-1" })
 * await Effect.runPromise(Stream.runForEach(events, (e) => Effect.sync(() => socket.send(JSON.stringify(e)))))
 * ```
 */
export const toAgUiEvents = (events: Stream.Stream<CompositeStreamEvent, AgentError>, options: AgUiStreamOptions = {}): Stream.Stream<AgUiEvent, AgentError> =>
  effectStream().suspend(() => {
    let firstRunId: string | undefined
    let count = 0
    let started = false
    let finished = false
    const runId = () => options.runId ?? firstRunId ?? "run"
    const m: Mapping = {
      threadId: () => options.threadId ?? runId(),
      runId,
      clientTools: new Set(options.clientTools ?? []),
      id: (kind) => `${runId()}-${kind}-${++count}`,
      steps: new Map(),
      blocks: new Map(),
      started: new Map(),
      open: new Set(),
      usedCalls: new Set(),
      calls: new Map(),
      streamedText: new Set(),
      messages: new Map(),
      runs: new Map(),
      handoffs: new Map(),
      childIds: new Set()
    }
    const state = options.state
    let sentState: unknown = undefined
    // The client's messages are read leniently; the snapshot repeats them in AG-UI's shapes (`input-echo.ts`).
    const fold = options.conversation === undefined ? undefined : messagesFold(echoedMessages(options.conversation))
    const opening = (): Array<AgUiEvent> => {
      if (started) return []
      started = true
      const snapshot = options.messagesSnapshot
      const out: Array<AgUiEvent> = [{ type: "RUN_STARTED", threadId: m.threadId(), runId: runId() }]
      if (snapshot !== undefined) out.push({ type: "MESSAGES_SNAPSHOT", messages: snapshot })
      if (state !== undefined) out.push({ type: "STATE_SNAPSHOT", snapshot: (sentState = state.initialJson) })
      return out
    }
    /** The state's change since it was last sent: a delta, or a snapshot when a patch cannot carry it. */
    const stateChange = (now: unknown): Array<AgUiEvent> => {
      if (state === undefined || now === sentState) return []
      const delta = state.diff(sentState, now)
      sentState = now
      if (delta === undefined) return [{ type: "STATE_SNAPSHOT", snapshot: now }]
      return delta.length === 0 ? [] : [{ type: "STATE_DELTA", delta }]
    }
    const emit = (out: Array<AgUiEvent>): Array<AgUiEvent> => {
      const end = out.findIndex(isTerminal)
      if (end !== -1) finished = true
      const kept = end === -1 ? out : out.slice(0, end + 1)
      if (fold === undefined) return kept
      const sent: Array<AgUiEvent> = []
      for (const event of kept) {
        if (event.type === "RUN_FINISHED" && event.outcome.type !== "cancelled") sent.push({ type: "MESSAGES_SNAPSHOT", messages: fold.messages() })
        // A child run's messages are its own conversation: streamed, never in the run's (the client
        // keeps the snapshot as its history and sends it back as the next run's input).
        if (!ofChildRun(m, event)) fold.add(event)
        sent.push(event)
      }
      return sent
    }
    const map = (event: CompositeStreamEvent): Array<AgUiEvent> => {
      if (finished) return []
      // A composite's own events: its start places it, its end (the stream's, when it is the top run) ends the stream.
      if (event._tag === "CompositeHookFailed") return []
      if (event._tag === "CompositeStart" || event._tag === "CompositeEnd") {
        firstRunId ??= event.runId
        sortRun(m, event)
        const end = event
        if (end._tag === "CompositeStart" || end.parentRunId !== undefined) return []
        return emit([...opening(), ...closeBlock(m), ...endCalls(m), ...(state === undefined ? [] : stateChange(state.json())), ...runFinished(m, end.runId, runOutcomeOfComposite(end.outcome))])
      }
      const change = stateChangeOf(event)
      if (change !== undefined) return change.source === state ? emit([...opening(), ...stateChange(change.json)]) : []
      firstRunId ??= event.runId
      sortRun(m, event)
      const entry = table[event._tag] as Entry<RunStreamEvent["_tag"]> | undefined
      if (entry === undefined) return []
      // A change made where no stream could sequence it (a tool under agent.runStream) is sent now;
      // the top-level RunEnd always carries the last state.
      const late = state !== undefined && (state.takeUnsequenced() || (event._tag === "RunEnd" && event.parentRunId === undefined)) ? stateChange(state.json()) : []
      return emit([...opening(), ...late, ...entry(event as never, m)])
    }
    /** A run that ends without its `RunEnd`: what is open is closed, then `RUN_ERROR`. */
    const ending = (message: string, code: string): Array<AgUiEvent> =>
      finished ? [] : emit([...opening(), ...closeBlock(m), ...endCalls(m), ...[...m.steps.keys()].flatMap((id) => closeStep(m, id)), { type: "RUN_ERROR", message, code }])
    return events.pipe(
      effectStream().flatMap((event) => effectStream().fromIterable(map(event))),
      effectStream().catchCause((cause) => {
        if (Cause.hasInterruptsOnly(cause)) return effectStream().failCause(cause)
        const error = Cause.squash(cause)
        const tag = (error as { readonly _tag?: unknown })?._tag
        return effectStream().fromIterable(ending(errorMessage(error), typeof tag === "string" ? tag : "Unknown"))
      }),
      effectStream().concat(effectStream().suspend(() => effectStream().fromIterable(ending("The run's stream ended before the run did", "StreamEnded"))))
    )
  })

/**
 * The AG-UI events of a run as Server-Sent Events frames (`data: <JSON>\n\n`, what `@ag-ui/encoder`
 * writes and `@ag-ui/client`'s `HttpAgent` reads).
 *
 * @example
 * ```ts
 * const frames = agUiFrames(assistant.runStream("hi"), { threadId: "t1" }) // Stream<string>
 * ```
 */
export const agUiFrames = (events: Stream.Stream<CompositeStreamEvent, AgentError>, options: AgUiStreamOptions = {}): Stream.Stream<string, AgentError> =>
  toAgUiEvents(events, options).pipe(effectStream().map((event) => `data: ${JSON.stringify(event)}\n\n`))
