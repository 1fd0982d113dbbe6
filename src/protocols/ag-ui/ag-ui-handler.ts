/**
 * An AG-UI endpoint as one Web-standard function, `(request: Request) => Promise<Response>`, for
 * `@ag-ui/client`'s `HttpAgent`, CopilotKit and any AG-UI front end: it reads a `RunAgentInput` (with a
 * size limit), runs the agent on the latest user message after the conversation, with the client's
 * tools added, and streams AG-UI events. A body that is not a `RunAgentInput` answers 400 (413 over
 * `maxBodyBytes`, 405 for another method) with `{ error: { _tag, message } }`, before anything runs.
 *
 * A run that stops (on a call of a client tool, or on a call waiting for approval) is handed to
 * `onSuspended` to keep, by thread; the stream finishes with `pendingToolCallIds` (client tools only)
 * or an `interrupt` outcome (approvals, reason `tool_call`, and then the client tools' calls too,
 * reason `effect-agent-dsl:client_tool`). The client's next input (the client tools' results as tool
 * messages, the interrupts' answers as `resume` entries) continues it: `loadSuspended` gives it back,
 * every waiting call must be answered, and the run resumes with those decisions (the approval
 * machinery of `chatHandler`, so the same guarantees hold: a call runs only after an approval for that
 * call, a denied call never runs). As AG-UI's interrupt contract has it, pending interrupts block new
 * input: a new user message on a thread whose kept run waits on interrupts is refused (409) and the
 * run stays kept; one whose kept run waits only on client tools starts a new run (AG-UI's frontend
 * tools: that run completed, leaving its calls to the client).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { AgentBuilder, AgentShape } from "../../dsl/agent.ts"
import { AgentDefinitionKey, type AgentDefinition, definitionOf } from "../../dsl/agent-definition.ts"
import { Decision, type Decisions } from "../../dsl/decision.ts"
import { resumeCheckOf } from "../../dsl/resume-check.ts"
import { eventStreamResponse } from "../../runtime/event-stream-response.ts"
import type { ResumeLedgerStore } from "../../runtime/resume-ledger.ts"
import { errorResponse, readJsonBody } from "../../web/chat-handler.ts"
import { chatResumeStream, chatStream, type ChatStreamOptions, type ChatSuspension } from "../../web/chat-stream.ts"
import { provideStreamingModules } from "../../web/edge-modules.ts"
import { AgUiInputInvalid, agUiInvalid } from "./errors.ts"
import { clientTools } from "./client-tools.ts"
import { type AgUiRunInput, fromRunAgentInput, type RunAgentInputLimits } from "./run-agent-input.ts"
import type { AgUiState, AgUiStateCell } from "./shared-state.ts"
import { interruptId } from "./wire/to-ag-ui.ts"
import { isRecord } from "../../internal/is-record.ts"

/** Options of {@link agUiHandler}. */
export interface AgUiHandlerOptions extends RunAgentInputLimits {
  /**
   * Called when a run stops on client tool calls or approvals, with its snapshot and the input it ran
   * for: keep it (by `input.threadId`) for `loadSuspended`. Awaited before the stream finishes.
   */
  readonly onSuspended?: (suspension: ChatSuspension, input: AgUiRunInput) => unknown
  /**
   * The stopped run an input continues (the one `onSuspended` kept for `input.threadId`), or undefined
   * when none waits (answered 409). Without it, an input whose last message is not the user's is refused.
   * Also asked on a new user message, which is refused (409) while the run it gives waits on interrupts
   * (that run is then given back to `onSuspended`).
   */
  readonly loadSuspended?: (input: AgUiRunInput) => ChatSuspension | undefined | Promise<ChatSuspension | undefined>
  /** A resume ledger: a kept suspension is then resumed once (`SnapshotAlreadyResumed` after). */
  readonly resumeLedger?: ResumeLedgerStore
  /** The largest body read, in bytes; a larger one answers 413. Default 4 MiB. */
  readonly maxBodyBytes?: number
  /** Extra headers on the streamed response. */
  readonly headers?: Record<string, string>
  /**
   * The agent's input for a new run: by default the latest user message's text. Use it to give the
   * model the input's `context` or `state` (they never reach it otherwise).
   */
  readonly input?: (input: AgUiRunInput & { readonly input: string }) => string
  /**
   * The shared state (`agUiState(name, Schema)`): the input's `state` is decoded with its Schema (400
   * when it does not decode), the run's tools read and change it (`state.get`, `state.update`), and
   * the stream reports it (`STATE_SNAPSHOT` after `RUN_STARTED`, `STATE_DELTA` per change).
   */
  readonly state?: AgUiState<any, any>
  /**
   * Which declared skills are offered the client's tools (agents with skills; an agent without
   * skills offers every tool). Default: every skill that calls tools (it has tools, knowledge or
   * handoffs on its allowlist); never a deterministic skill (no model), nor a chat-only one. Return
   * false for a skill that must not see the front end's tools.
   */
  readonly clientToolsFor?: (skill: string) => boolean
  /**
   * End each run with a `MESSAGES_SNAPSHOT` of the conversation (the input's messages as sent, then
   * the run's), just before `RUN_FINISHED`, as AG-UI agents do so that a client's history is the
   * server's. Default true.
   */
  readonly messagesSnapshot?: boolean
}

const defaultMaxBodyBytes = 4 * 1024 * 1024


/** Whether two JSON values are the same value (an object's keys in any order). */
const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]))
  if (!isRecord(a) || !isRecord(b)) return false
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && sameJson(a[k], b[k]))
}

const describeJson = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`)

/**
 * The edited arguments of an answer: `editedArgs` (AG-UI's approve-with-edits, a full replacement of
 * the call's arguments), or `args`, its deprecated alias (what this handler read before); both with
 * different values, or arguments that are not a JSON object, are refused.
 */
const editedArgsOf = (interrupt: string, payload: { readonly editedArgs?: unknown; readonly args?: unknown }): unknown => {
  const { editedArgs, args } = payload
  if (editedArgs !== undefined && args !== undefined && !sameJson(editedArgs, args)) {
    throw agUiInvalid(`the answer to interrupt "${interrupt}" gives both editedArgs and args (its deprecated alias) with different values: send editedArgs only`)
  }
  // `null` is a value here (not an object, so refused), never "absent".
  const edited = editedArgs !== undefined ? editedArgs : args
  if (edited !== undefined && !isRecord(edited)) {
    throw agUiInvalid(`the answer to interrupt "${interrupt}" has ${editedArgs === undefined ? "args" : "editedArgs"} that is ${describeJson(edited)}, not a JSON object: editedArgs replaces the call's arguments whole, an object`)
  }
  return edited
}

/**
 * One decision from an interrupt's answer: `true`/`false`, or `{ approved, reason?, editedArgs? }`
 * (`args` is read as a deprecated alias of `editedArgs`).
 */
const decisionOf = (entry: AgUiRunInput["resume"][number]): Decision => {
  if (entry.status === "cancelled") return Decision.deny("cancelled by the user")
  const payload = entry.payload
  if (payload === true) return Decision.approve
  if (payload === false) return Decision.deny("denied by the user")
  if (isRecord(payload) && typeof payload.approved === "boolean") {
    // Checked whatever it decides: an answer the interrupt's responseSchema refuses is refused.
    const edited = editedArgsOf(entry.interruptId, payload)
    const reason = payload.reason
    if (!payload.approved) return Decision.deny(typeof reason === "string" && reason !== "" ? reason : "denied by the user")
    return edited === undefined ? Decision.approve : Decision.edit(edited)
  }
  throw agUiInvalid(`the answer to interrupt "${entry.interruptId}" is not { approved: boolean, reason?, editedArgs? } (nor true or false)`)
}

/**
 * Whether a waiting call is one of the client's own tools (a call of this run, not a child's): told by
 * the input's tools, as the stream that stopped told it by that run's input (a client sends its tools
 * with every input).
 */
const isClientCall = (input: AgUiRunInput, pending: ChatSuspension["pending"][number]): boolean =>
  !pending.id.includes("/") && input.clientTools.some((t) => t.name === pending.tool)

/** The id of a stopped run (its snapshot's), which its interrupts' ids start with. */
const runIdOf = (suspension: ChatSuspension): string | undefined => {
  const runId = (suspension.snapshot as { readonly state?: { readonly runId?: unknown } } | null)?.state?.runId
  return typeof runId === "string" ? runId : undefined
}

/**
 * The decisions an input gives a stopped run: an approval for each client tool call whose result it
 * carries (a denial when its `effect-agent-dsl:client_tool` interrupt is cancelled), and the answer of
 * each `tool_call` interrupt (`resume` entries by interrupt id: `true`, `false`, `{ approved, reason?,
 * editedArgs? }`, or cancelled; `args` is read as a deprecated alias of `editedArgs`). Every waiting
 * call must be answered, and nothing else; otherwise `AgUiInputInvalid` (also for `editedArgs` that is
 * not an object, or given with a different `args`).
 *
 * @example
 * ```ts
 * const decisions = resumeDecisions(fromRunAgentInput(body), await store.get(threadId))
 * ```
 */
export const resumeDecisions = (input: AgUiRunInput, suspension: ChatSuspension): Decisions => {
  const runId = runIdOf(suspension)
  if (runId === undefined) throw agUiInvalid("the stored suspension has no snapshot with a run id")
  const entries = new Map<string, AgUiRunInput["resume"][number]>()
  for (const entry of input.resume) {
    if (entries.has(entry.interruptId)) throw agUiInvalid(`the interrupt "${entry.interruptId}" is answered twice`)
    entries.set(entry.interruptId, entry)
  }
  const decisions: Record<string, Decision> = {}
  const missing: Array<string> = []
  for (const pending of suspension.pending) {
    const id = interruptId(runId, pending.id)
    const entry = entries.get(id)
    entries.delete(id)
    if (isClientCall(input, pending)) {
      // Its interrupt (when approvals waited too): cancelled refuses the call, resolved wants its result.
      if (entry?.status === "cancelled") decisions[pending.id] = Decision.deny("cancelled by the user")
      else if (input.toolResults.has(pending.id)) decisions[pending.id] = Decision.approve
      else missing.push(`the result of the client tool call "${pending.id}" (${pending.tool}) as a tool message${entry === undefined ? "" : ` (its interrupt "${id}" is resolved, but no result came)`}`)
      continue
    }
    if (entry === undefined) missing.push(`an answer to interrupt "${id}" (${pending.tool})`)
    else decisions[pending.id] = decisionOf(entry)
  }
  if (entries.size > 0) throw agUiInvalid(`the interrupts ${[...entries.keys()].map((k) => `"${k}"`).join(", ")} are not ones the waiting run "${runId}" asked about`)
  if (missing.length > 0) throw agUiInvalid(`the waiting run needs ${missing.join(", ")}`)
  return decisions
}

/** A skill that calls tools (a model skill with an allowlist), which the client's tools join by default. */
const callsTools = (skill: AgentDefinition["skills"][number]) =>
  skill.implementation === undefined && (skill.tools.length > 0 || skill.knowledge.length > 0 || skill.handoffs.length > 0)

/**
 * `builder` with the client's tools: registered (a clash with a server tool is refused) and, when it
 * declares skills, put on the allowlist of each skill `offered` accepts (an agent without skills has
 * one implicit skill that allows every tool).
 */
const withClientTools = <T extends AgentShape>(builder: AgentBuilder<T>, run: AgUiRunInput, offered: (skill: AgentDefinition["skills"][number]) => boolean): AgentBuilder<T> => {
  if (run.clientTools.length === 0) return builder
  const tools = clientTools(run.clientTools, run.toolResults)
  let agent: AgentBuilder<T>
  try {
    agent = (builder as unknown as { tools: (t: unknown) => AgentBuilder<T> }).tools(tools)
  } catch (error) {
    throw agUiInvalid(`the client's tools cannot be added: ${error instanceof Error ? error.message : String(error)}`)
  }
  const definition = (agent as unknown as { readonly [AgentDefinitionKey]: AgentDefinition })[AgentDefinitionKey]
  if (definition.skills.length === 0) return agent
  const added = Object.values(tools)
  const skills = definition.skills.map((skill) => (offered(skill) ? Object.freeze({ ...skill, tools: [...skill.tools, ...added] }) : skill))
  // The runners read the definition through this key only (chatStream, chatResumeStream).
  return { [AgentDefinitionKey]: Object.freeze({ ...definition, skills }) } as unknown as AgentBuilder<T>
}

/**
 * AG-UI's rule 4, "pending interrupts block new input": the refusal of a new user message on a thread
 * whose kept run waits on interrupts (a call waiting for approval, or one an interceptor suspended),
 * or undefined when none waits. The refused run is given back to `onSuspended` (a store that hands it
 * out once keeps it), so its interrupts can still be answered. A kept run that waits only on client
 * tools is not blocking: AG-UI ended it as a completed run with `pendingToolCallIds`, so the new
 * message starts a new run (the kept one is left as `loadSuspended` left it: a store that hands it out
 * once has dropped it, and the new run's suspension replaces it in one that does not).
 */
const pendingInterrupts = async (run: AgUiRunInput, options: AgUiHandlerOptions): Promise<Response | undefined> => {
  const suspension = await options.loadSuspended!(run)
  if (suspension === undefined || suspension.pending.every((p) => isClientCall(run, p))) return undefined
  if (options.onSuspended !== undefined) await options.onSuspended(suspension, run)
  const runId = runIdOf(suspension)
  const named = suspension.pending.map((p) => {
    const id = runId === undefined ? `the call "${p.id}"` : `"${interruptId(runId, p.id)}"`
    return isClientCall(run, p) ? `${id} (client tool ${p.tool}: its result as a tool message, or cancelled)` : `${id} (${p.tool})`
  })
  // 409, not 400: the body is a valid RunAgentInput, refused for the thread's state (the same input on
  // a thread that waits on nothing runs), and the client can resolve that state and send it again, as
  // for NoRunWaiting. AG-UI asks for a RunError: an HTTP error before any stream is how this handler
  // refuses an input before anything runs (HttpAgent fails the run with it, as it would on RUN_ERROR).
  return errorResponse(409, {
    _tag: "InterruptsPending",
    message: `Thread "${run.threadId}" waits on interrupts: ${named.join(", ")}. Answer each of them (resolved with a payload, or cancelled) in the resume of an input without a new user message, then send the new message`
  })
}

/**
 * The `POST` handler of an AG-UI endpoint for `builder` (an agent whose input is the user's text).
 * The client's tools join the agent's tools; on an agent with skills, they join the allowlist of
 * every skill that calls tools (or those `clientToolsFor` accepts). A new user message on a thread
 * whose kept run waits on interrupts is refused (409 `InterruptsPending`, naming them) until a resume
 * answers them.
 *
 * @example
 * ```ts
 * import { agUiHandler } from "effect-agent-dsl/ag-ui"
 * const waiting = new Map<string, ChatSuspension>()
 * const handle = agUiHandler(assistant, {
 *   onSuspended: (s, input) => void waiting.set(input.threadId, s),
 *   loadSuspended: (input) => waiting.get(input.threadId)
 * })
 * export async function POST(req: Request) { return handle(req) }
 * ```
 */
export const agUiHandler = <T extends AgentShape & { readonly input: string; readonly requirements: never }>(
  builder: AgentBuilder<T>,
  options: AgUiHandlerOptions = {}
): ((request: Request) => Promise<Response>) => {
  // Not an agent (a plain JavaScript caller's mistake) is said now, not at every request.
  definitionOf(builder)
  provideStreamingModules()
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes
  return async (request) => {
    const read = await readJsonBody(request, maxBodyBytes, "An AG-UI endpoint", agUiInvalid)
    if ("refused" in read) return read.refused
    const body = read.body
    try {
      const run = fromRunAgentInput(body, options)
      const offered = options.clientToolsFor
      const agent = withClientTools(builder, run, (skill) => callsTools(skill) && (offered === undefined || offered(skill.name)))
      const cell: AgUiStateCell<unknown> | undefined = options.state?.fromInput(run.state)
      const streamOptions: ChatStreamOptions = {
        ...(options.onSuspended === undefined ? {} : { onSuspended: (s: ChatSuspension) => options.onSuspended!(s, run) }),
        ...(options.resumeLedger === undefined ? {} : { resumeLedger: options.resumeLedger })
      }
      const respond = (events: ReturnType<typeof chatStream>) =>
        eventStreamResponse(cell === undefined ? events : cell.provideStream(events), {
          format: "ag-ui",
          agUi: {
            threadId: run.threadId,
            runId: run.runId,
            clientTools: run.clientTools.map((t) => t.name),
            ...(options.messagesSnapshot === false ? {} : { conversation: run.messages }),
            ...(cell === undefined ? {} : { state: cell })
          },
          // The request's signal stops the run too (runtimes that never cancel the body of a client gone).
          signal: request.signal,
          ...(options.headers === undefined ? {} : { headers: options.headers })
        })
      if (run.input !== undefined) {
        const blocked = options.loadSuspended === undefined ? undefined : await pendingInterrupts(run, options)
        if (blocked !== undefined) return blocked
        const text = options.input === undefined ? run.input : options.input(run as AgUiRunInput & { readonly input: string })
        return respond(chatStream(agent, run.transcript, text as T["input"], streamOptions))
      }
      if (options.loadSuspended === undefined) {
        throw agUiInvalid("the last message is not the user's: tool results and interrupt answers continue a stopped run (give agUiHandler loadSuspended), not a new run")
      }
      const suspension = await options.loadSuspended(run)
      if (suspension === undefined) return errorResponse(409, { _tag: "NoRunWaiting", message: `No run of thread "${run.threadId}" waits (it was continued already, or never stopped)` })
      // A refused answer loses nothing: a store that hands a run out once (`loadSuspended` takes it)
      // gets it back through `onSuspended`, so a corrected answer still finds it.
      const giveBack = async () => {
        if (options.onSuspended !== undefined) await options.onSuspended(suspension, run)
      }
      let decisions: ReturnType<typeof resumeDecisions>
      try {
        decisions = resumeDecisions(run, suspension)
      } catch (error) {
        if (error instanceof AgUiInputInvalid) await giveBack()
        throw error
      }
      // Decisions the run would refuse (an edit its tool's Schema does not decode, a call that does not
      // wait) are refused here, before anything runs and with the run kept, not as a failed stream.
      const check = resumeCheckOf(agent)
      if (check !== undefined) {
        const checked = await Effect.runPromiseExit(check(suspension.snapshot, decisions))
        if (Exit.isFailure(checked)) {
          await giveBack()
          const error = Cause.squash(checked.cause) as { readonly _tag?: unknown; readonly message?: unknown }
          return errorResponse(400, { _tag: typeof error?._tag === "string" ? error._tag : "DecisionsInvalid", message: String(error?.message ?? error) })
        }
      }
      return respond(chatResumeStream(agent, suspension.snapshot, decisions, streamOptions))
    } catch (error) {
      if (error instanceof AgUiInputInvalid) return errorResponse(400, error)
      throw error
    }
  }
}
