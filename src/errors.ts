/**
 * Every way a run or a definition can fail, as tagged errors.
 *
 * Effect users see them in the error channel of `runEffect` and can match on `_tag`; Promise users
 * get the same objects as rejections of `run`. Messages are written for people and, where they go back
 * to a model, never name tools outside the current skill's allowlist.
 */
import * as Data from "effect/Data"
import { AgentErrorTypeId, hasAgentErrorMarker } from "./internal/agent-error-marker.ts"
import { describeCause } from "./internal/describe-cause.ts"
import type { LlmMessage } from "./model/messages.ts"
import { ModelError } from "./model/model-error.ts"

export { ModelError }

/**
 * A definition is inconsistent: a tool without a Schema, duplicate tool names, a skill with neither
 * tools nor an implementation, a handle from another agent, a bad budget. Thrown by `tool(...)` and the
 * agent builder at construction, so a broken agent never starts. `subject` names what is wrong
 * (`agent "calc"`, `tool "add"`, `skill "compute"`).
 *
 * @example
 * ```ts
 * try { agent("a").tools({ add, plus: add }) } catch (e) { if (e instanceof AgentConfigError) console.log(e.message) }
 * ```
 */
export class AgentConfigError extends Data.TaggedError("AgentConfigError")<{
  readonly subject: string
  readonly reason: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Invalid ${this.subject}: ${this.reason}`
  }
}

/**
 * The input given to a run was refused before anything ran: it does not encode with the agent's input
 * Schema, or there is none (possible only for callers that bypass the types), or what came with it is
 * not valid (a durable run id another agent holds, a `follow` position). `issues` says which.
 *
 * @example
 * ```ts
 * Effect.catchTag("InputInvalid", (e) => Effect.succeed(e.issues))
 * ```
 */
export class InputInvalid extends Data.TaggedError("InputInvalid")<{
  readonly agent: string
  readonly issues: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The input of agent "${this.agent}" was refused:\n${this.issues}`
  }
}

/**
 * The model called a tool that the chosen skill may not use (or that does not exist). `allowed` lists
 * only the skill's own tools, so the error never reveals the agent's other tools.
 *
 * @example
 * ```ts
 * Effect.catchTag("ToolNotAllowed", (e) => Effect.succeed(`refused ${e.tool}; allowed: ${e.allowed.join(", ")}`))
 * ```
 */
export class ToolNotAllowed extends Data.TaggedError("ToolNotAllowed")<{
  readonly agent: string
  readonly skill: string
  readonly tool: string
  readonly allowed: ReadonlyArray<string>
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    const allowed = this.allowed.length === 0 ? "(none)" : this.allowed.join(", ")
    return `Tool "${this.tool}" is not available for skill "${this.skill}". Allowed: ${allowed}`
  }
}

/**
 * The model's arguments for a tool did not decode with the tool's Schema and the `invalidArgs` policy
 * chose to fail. `raw` is what the model sent; `issues` is the decoder's readable report.
 *
 * @example
 * ```ts
 * Effect.catchTag("InvalidToolArgs", (e) => Effect.succeed(e.issues))
 * ```
 */
export class InvalidToolArgs extends Data.TaggedError("InvalidToolArgs")<{
  readonly agent: string
  readonly skill: string
  readonly tool: string
  readonly raw: unknown
  readonly issues: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Invalid arguments for tool "${this.tool}":\n${this.issues}`
  }
}

/**
 * A tool's `run` threw, rejected or failed, and the `executionError` handlers chose to fail the run.
 *
 * @example
 * ```ts
 * Effect.catchTag("ToolFailed", (e) => Effect.succeed(`tool ${e.tool} broke: ${String(e.cause)}`))
 * ```
 */
export class ToolFailed extends Data.TaggedError("ToolFailed")<{
  readonly agent: string
  readonly skill: string
  readonly tool: string
  readonly args: unknown
  readonly cause: unknown
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Tool "${this.tool}" failed: ${describeCause(this.cause)}`
  }
}

/**
 * None of the agent's skills accepted the input: every skill has a `.when(...)` predicate and all of
 * them returned false.
 *
 * @example
 * ```ts
 * Effect.catchTag("NoSkillMatched", (e) => Effect.succeed(`no skill among ${e.skills.join(", ")}`))
 * ```
 */
export class NoSkillMatched extends Data.TaggedError("NoSkillMatched")<{
  readonly agent: string
  readonly skills: ReadonlyArray<string>
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `No skill of agent "${this.agent}" accepts this input (skills: ${this.skills.join(", ")})`
  }
}

/**
 * The model was asked to choose among skills (several skills without `.when`) and did not make a valid
 * choice: it answered text, called something else, or named a skill that does not exist.
 *
 * @example
 * ```ts
 * Effect.catchTag("SkillRoutingFailed", (e) => Effect.succeed(`could not route among ${e.candidates.join(", ")}`))
 * ```
 */
export class SkillRoutingFailed extends Data.TaggedError("SkillRoutingFailed")<{
  readonly agent: string
  readonly candidates: ReadonlyArray<string>
  readonly reason: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Agent "${this.agent}" could not choose a skill among ${this.candidates.join(", ")}: ${this.reason}`
  }
}

/**
 * The model called the built-in `escalate` tool: it cannot or must not go on and asks for a human.
 *
 * @example
 * ```ts
 * Effect.catchTag("Escalated", (e) => notifyOnCall(e.severity, e.reason))
 * ```
 */
export class Escalated extends Data.TaggedError("Escalated")<{
  readonly agent: string
  readonly skill: string
  readonly reason: string
  readonly severity: "LOW" | "MEDIUM" | "HIGH" | "CRITICAL"
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Agent "${this.agent}" escalated (${this.severity}) in skill "${this.skill}": ${this.reason}`
  }
}

/**
 * The model called the built-in `throwException` tool: it stops the run with an error of its own.
 *
 * @example
 * ```ts
 * Effect.catchTag("ExceptionThrown", (e) => Effect.succeed(`the model gave up: ${e.reason}`))
 * ```
 */
export class ExceptionThrown extends Data.TaggedError("ExceptionThrown")<{
  readonly agent: string
  readonly skill: string
  readonly reason: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Agent "${this.agent}" stopped by the model in skill "${this.skill}": ${this.reason}`
  }
}

/** Which budget dimension ran out. */
export type BudgetReason = "turns" | "toolCalls" | "duration" | "perToolTimeout" | "tokens" | "consecutiveTool"

/**
 * The run used up a budget dimension without a final answer: model turns, tool calls, wall time
 * (`duration`, milliseconds), one tool's time (`perToolTimeout`, milliseconds), tokens, or the same tool
 * in a row (`consecutiveTool`). `transcript` holds every message exchanged so far, so nothing is lost.
 *
 * @example
 * ```ts
 * Effect.catchTag("BudgetExceeded", (e) => Effect.succeed(`${e.reason}: ${e.used}/${e.limit}`))
 * ```
 */
export class BudgetExceeded extends Data.TaggedError("BudgetExceeded")<{
  readonly agent: string
  readonly reason: BudgetReason
  readonly limit: number
  readonly used: number
  readonly transcript: ReadonlyArray<LlmMessage>
  /**
   * Whose limit it was when not the agent's own: the enclosing composite or calling agent whose
   * `maxTokens`/`maxToolCalls` bound the whole tree (`used` then counts the whole tree).
   */
  readonly scope?: string | undefined
  /** The tool concerned, for the per-tool reasons (`perToolTimeout`, `consecutiveTool`). */
  readonly tool?: string | undefined
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    const tool = this.tool === undefined ? "" : ` (tool "${this.tool}")`
    return this.scope === undefined
      ? `Agent "${this.agent}" exceeded its ${this.reason} budget${tool} (${this.used} of ${this.limit}) without a final answer`
      : `Agent "${this.agent}" exceeded the ${this.reason} budget of "${this.scope}" (${this.used} of ${this.limit}, counted over every run under it) without a final answer`
  }
}

/**
 * The final answer did not decode into the agent's output Schema, and the budget left no turn to let
 * the model correct it. `raw` is the last answer; `issues` the decoder's report.
 *
 * @example
 * ```ts
 * Effect.catchTag("OutputInvalid", (e) => Effect.succeed(e.raw))
 * ```
 */
export class OutputInvalid extends Data.TaggedError("OutputInvalid")<{
  readonly agent: string
  readonly raw: string
  readonly issues: string
  readonly transcript: ReadonlyArray<LlmMessage>
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The final answer of agent "${this.agent}" does not match its output schema:\n${this.issues}`
  }
}

/**
 * A deterministic skill (`skill(...).implementedBy(run)`) threw, rejected or failed. No tool was
 * involved: `input` is the run's input and `cause` what the implementation failed with.
 *
 * @example
 * ```ts
 * Effect.catchTag("SkillFailed", (e) => Effect.succeed(`skill ${e.skill} broke: ${String(e.cause)}`))
 * ```
 */
export class SkillFailed extends Data.TaggedError("SkillFailed")<{
  readonly agent: string
  readonly skill: string
  readonly input: unknown
  readonly cause: unknown
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Skill "${this.skill}" of agent "${this.agent}" failed: ${describeCause(this.cause)}`
  }
}

/**
 * A defect: something inside the run crashed that is neither user code reporting a failure nor the
 * model (a bug in this library, or a value that broke an invariant). It is not a `ModelError`, so
 * retrying the model never hides it.
 *
 * @example
 * ```ts
 * Effect.catchTag("RuntimeDefect", (e) => Effect.logError(e.message))
 * ```
 */
export class RuntimeDefect extends Data.TaggedError("RuntimeDefect")<{
  readonly agent: string
  readonly cause: unknown
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Agent "${this.agent}" crashed: ${describeCause(this.cause)}`
  }
}

/**
 * A run snapshot was taken with a definition of another shape (its tools, their parameters, its skills
 * or budget changed), so continuing it could call tools that no longer exist or mean something else.
 *
 * @example
 * ```ts
 * Effect.catchTag("DefinitionChanged", (e) => Effect.succeed(`start over: ${e.message}`))
 * ```
 */
export class DefinitionChanged extends Data.TaggedError("DefinitionChanged")<{
  readonly agent: string
  /** The fingerprint of the definition asked to continue. */
  readonly expected: string
  /** The fingerprint stored in the snapshot (or the snapshot's agent when another agent took it). */
  readonly found: string
  readonly reason: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Cannot continue the run of agent "${this.agent}": ${this.reason}`
  }
}

/**
 * A run snapshot could not be decoded: not JSON, or not the shape of a snapshot (another version).
 *
 * @example
 * ```ts
 * Effect.catchTag("SnapshotInvalid", (e) => Effect.succeed(e.issues))
 * ```
 */
export class SnapshotInvalid extends Data.TaggedError("SnapshotInvalid")<{
  readonly issues: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Invalid run snapshot:\n${this.issues}`
  }
}

/**
 * A snapshot was refused before anything ran: the agent signs its snapshots (`.signSnapshots(secret)`)
 * and this one is `unsigned`, was signed with another key (`foreign`), or was changed after signing
 * (`tampered`).
 *
 * @example
 * ```ts
 * Effect.catchTag("SnapshotRejected", (e) => Effect.succeed(`refused (${e.reason})`))
 * ```
 */
export class SnapshotRejected extends Data.TaggedError("SnapshotRejected")<{
  readonly agent: string
  readonly reason: "unsigned" | "foreign" | "tampered"
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    const why = this.reason === "unsigned"
      ? "it is not signed, and this agent only accepts signed snapshots"
      : this.reason === "foreign"
      ? "it was signed with another key"
      : "its content does not match its signature (it was changed after it was taken)"
    return `Refused a snapshot of agent "${this.agent}": ${why}`
  }
}

/**
 * The decisions given to `resume` do not fit the suspended run: a waiting call has no decision, a
 * decision names a call that is not waiting, or an `edit`'s arguments do not decode with the tool's
 * Schema. Nothing ran.
 *
 * @example
 * ```ts
 * Effect.catchTag("DecisionsInvalid", (e) => Effect.succeed(e.reason))
 * ```
 */
export class DecisionsInvalid extends Data.TaggedError("DecisionsInvalid")<{
  readonly agent: string
  readonly toolCallId: string
  readonly reason: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Cannot resume agent "${this.agent}" with these decisions (call "${this.toolCallId}"): ${this.reason}`
  }
}

/**
 * A snapshot was resumed a second time where a resume ledger is present (`ResumeLedger`): its decisions
 * were consumed by the first resume, and nothing ran. Continue from the snapshot the first resume gave.
 *
 * @example
 * ```ts
 * Effect.catchTag("SnapshotAlreadyResumed", (e) => Effect.succeed(`run ${e.runId} already continued`))
 * ```
 */
export class SnapshotAlreadyResumed extends Data.TaggedError("SnapshotAlreadyResumed")<{
  readonly agent: string
  readonly runId: string
  readonly key: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `Cannot resume agent "${this.agent}": this snapshot of run "${this.runId}" was already resumed (its decisions are consumed once); continue from the snapshot that resume gave`
  }
}

/**
 * A resume ledger could not record or check a resume (its database is down). Nothing ran.
 *
 * @example
 * ```ts
 * Effect.catchTag("ResumeLedgerFailed", (e) => Effect.succeed(e.reason))
 * ```
 */
export class ResumeLedgerFailed extends Data.TaggedError("ResumeLedgerFailed")<{
  readonly key: string
  readonly reason: string
  readonly cause?: unknown
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The resume ledger failed for "${this.key}": ${this.reason}`
  }
}

/**
 * A session store could not load or save a conversation (the database is down, a row is corrupt). A
 * turn that ran but could not be saved carries what it gave (`turn`).
 *
 * @example
 * ```ts
 * Effect.catchTag("SessionStoreFailed", (e) => Effect.succeed(e.turn?.result ?? `session ${e.session}: ${e.reason}`))
 * ```
 */
export class SessionStoreFailed extends Data.TaggedError("SessionStoreFailed")<{
  readonly session: string
  readonly operation: "load" | "append"
  readonly reason: string
  /**
   * When a turn ran but could not be recorded (`append`): what the turn gave (its output, the
   * `Suspended` result with its snapshot, or the error a run that failed after some of its tools ran
   * ended with) and the messages it would have appended. Its tools ran: keep these rather than
   * sending the turn again.
   */
  readonly turn?: { readonly result: unknown; readonly unsaved: ReadonlyArray<LlmMessage> }
  readonly cause?: unknown
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The session store could not ${this.operation} session "${this.session}": ${this.reason}`
  }
}

/**
 * A durable run replayed a call of a `mutating` tool whose earlier execution started (its intent was
 * claimed) but left no recorded outcome: the worker died while it ran, so whether its effect happened
 * is unknown. The run never runs such a call again blindly; without a `reconcile` handler saying what
 * happened, it ends with this error.
 *
 * @example
 * ```ts
 * Effect.catchTag("OutcomeUnknown", (e) => Effect.logWarning(`check ${e.tool} call ${e.toolCallId} by hand`))
 * ```
 */
export class OutcomeUnknown extends Data.TaggedError("OutcomeUnknown")<{
  readonly agent: string
  readonly runId: string
  readonly tool: string
  readonly toolCallId: string
  /** The arguments the call ran with, as JSON. */
  readonly args: unknown
  /** Why it stays unknown (no handler, or the handler's reason). */
  readonly reason: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The outcome of the call "${this.toolCallId}" of the mutating tool "${this.tool}" (run "${this.runId}") is unknown: ${this.reason}`
  }
}

/**
 * A durable run was cancelled (`d.cancel(runId, reason)` from any process): the step in flight was
 * interrupted (its signal aborted) and the run ended here, with `reason`.
 *
 * @example
 * ```ts
 * yield* d.join("order-42").pipe(Effect.catchTag("Cancelled", (e) => Effect.log(`cancelled: ${e.reason}`)))
 * ```
 */
export class Cancelled extends Data.TaggedError("Cancelled")<{
  readonly agent: string
  readonly runId: string
  readonly reason: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The run "${this.runId}" of agent "${this.agent}" was cancelled: ${this.reason}`
  }
}

/** Any error a run can end with. */
export type AgentError =
  | AgentConfigError
  | InputInvalid
  | NoSkillMatched
  | SkillRoutingFailed
  | ToolNotAllowed
  | InvalidToolArgs
  | ToolFailed
  | SkillFailed
  | BudgetExceeded
  | ModelError
  | OutputInvalid
  | Escalated
  | ExceptionThrown
  | RuntimeDefect
  | DefinitionChanged
  | SnapshotInvalid
  | SnapshotRejected
  | DecisionsInvalid
  | SnapshotAlreadyResumed
  | ResumeLedgerFailed
  | SessionStoreFailed
  | OutcomeUnknown
  | Cancelled

/**
 * True for the documented errors of this library, whatever their tag. Identity is a marker
 * (`Symbol.for("effect-agent-dsl/AgentError")`) on every error class, not the shape of the value.
 *
 * @example
 * ```ts
 * calculator.run("2+2").catch((e) => { if (isAgentError(e)) console.log(e._tag, e.message) })
 * ```
 */
export const isAgentError = (u: unknown): u is AgentError => hasAgentErrorMarker(u)

/**
 * True for errors after which trying again may succeed: today a `ModelError` marked retryable (429,
 * 5xx, network, timeout). Everything else describes the run itself and would fail the same way.
 *
 * @example
 * ```ts
 * calculator.run("2+2").catch((e) => (isRetryable(e) ? calculator.run("2+2") : Promise.reject(e)))
 * ```
 */
export const isRetryable = (u: unknown): boolean => u instanceof ModelError && u.isRetryable

/**
 * An MCP server could not be reached, listed or called: the connection failed, the server does not
 * offer a declared tool, a tool's input schema cannot be validated, or a call failed or returned
 * `isError`. Inside a run, a failed call is an execution error of the tool, routed to its recovery
 * handlers like any other tool failure.
 *
 * @example
 * ```ts
 * Effect.catchTag("McpError", (e) => Effect.succeed(`${e.server}: ${e.reason}`))
 * ```
 */
export class McpError extends Data.TaggedError("McpError")<{
  readonly server: string
  readonly operation: "connect" | "list" | "call" | "serve"
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `MCP server "${this.server}" (${this.operation}): ${this.reason}`
  }
}
