/**
 * An AG-UI endpoint as one Web-standard function, `(request: Request) => Promise<Response>`, for
 * `@ag-ui/client`'s `HttpAgent`, CopilotKit and any AG-UI front end: it reads a `RunAgentInput` (with a
 * size limit), runs the agent on the latest user message after the conversation, with the client's
 * tools added, and streams AG-UI events. A body that is not a `RunAgentInput` answers 400 (413 over
 * `maxBodyBytes`, 405 for another method) with `{ error: { _tag, message } }`, before anything runs.
 *
 * A run that stops (on a call of a client tool, or on a call waiting for approval) is handed to
 * `onSuspended` to keep, by thread; the stream finishes with `pendingToolCallIds` (client tools only)
 * or an `interrupt` outcome (approvals, and then the client tools' calls too, reason `client_tool`).
 * The client's next input (the client tools' results as tool messages, the interrupts' answers as
 * `resume` entries) continues it: `loadSuspended` gives it back, every waiting call must be answered,
 * and the run resumes with those decisions (the approval machinery of `chatHandler`, so the same
 * guarantees hold: a call runs only after an approval for that call, a denied call never runs).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { AgentBuilder, AgentShape } from "../../dsl/agent.ts"
import { AgentDefinitionKey, type AgentDefinition } from "../../dsl/agent-definition.ts"
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

/** One decision from an interrupt's answer: `true`/`false`, or `{ approved, reason?, args? }`. */
const decisionOf = (entry: AgUiRunInput["resume"][number]): Decision => {
  if (entry.status === "cancelled") return Decision.deny("cancelled by the user")
  const payload = entry.payload
  if (payload === true) return Decision.approve
  if (payload === false) return Decision.deny("denied by the user")
  if (typeof payload === "object" && payload !== null && typeof (payload as { approved?: unknown }).approved === "boolean") {
    const { approved, reason, args } = payload as { readonly approved: boolean; readonly reason?: unknown; readonly args?: unknown }
    if (!approved) return Decision.deny(typeof reason === "string" && reason !== "" ? reason : "denied by the user")
    return args === undefined ? Decision.approve : Decision.edit(args)
  }
  throw agUiInvalid(`the answer to interrupt "${entry.interruptId}" is not { approved: boolean, reason?, args? } (nor true or false)`)
}

/**
 * The decisions an input gives a stopped run: an approval for each client tool call whose result it
 * carries (a denial when its `client_tool` interrupt is cancelled), and the answer of each interrupt
 * (`resume` entries by interrupt id). Every waiting call must be answered, and nothing else; otherwise
 * `AgUiInputInvalid`.
 *
 * @example
 * ```ts
 * const decisions = resumeDecisions(fromRunAgentInput(body), await store.get(threadId))
 * ```
 */
export const resumeDecisions = (input: AgUiRunInput, suspension: ChatSuspension): Decisions => {
  const runId = (suspension.snapshot as { readonly state?: { readonly runId?: unknown } } | null)?.state?.runId
  if (typeof runId !== "string") throw agUiInvalid("the stored suspension has no snapshot with a run id")
  const client = new Set(input.clientTools.map((t) => t.name))
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
    if (client.has(pending.tool) && !pending.id.includes("/")) {
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
 * The `POST` handler of an AG-UI endpoint for `builder` (an agent whose input is the user's text).
 * The client's tools join the agent's tools; on an agent with skills, they join the allowlist of
 * every skill that calls tools (or those `clientToolsFor` accepts).
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
