/**
 * Every way a run or a definition can fail, as tagged errors.
 *
 * Effect users see them in the error channel of `runEffect` and can match on `_tag`; Promise users
 * get the same objects as rejections of `run`. Messages are written for people and, where they go back
 * to a model, never name tools outside the current skill's allowlist.
 */
import { Data } from "effect"
import type { LlmMessage } from "./providers/messages.ts"

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
  override get message(): string {
    return `Invalid ${this.subject}: ${this.reason}`
  }
}

/**
 * The input given to `run` does not encode with the agent's input Schema (possible only for callers
 * that bypass the types).
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
  override get message(): string {
    return `The input of agent "${this.agent}" does not match its input schema:\n${this.issues}`
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
}> {
  override get message(): string {
    return `Agent "${this.agent}" exceeded its ${this.reason} budget (${this.used} of ${this.limit}) without a final answer`
  }
}

/**
 * The model (or the transport to it) failed: HTTP status, network, timeout, an unusable reply, or a
 * scripted mock that ran out of responses.
 *
 * @example
 * ```ts
 * const client = ModelClient.fromFunction(() => { throw new Error("down") }) // surfaces as ModelError
 * ```
 */
export class ModelError extends Data.TaggedError("ModelError")<{
  readonly provider: string
  readonly reason: string
  readonly status?: number
  readonly retryable?: boolean
  readonly cause?: unknown
}> {
  override get message(): string {
    const status = this.status === undefined ? "" : ` (HTTP ${this.status})`
    return `Model call to ${this.provider} failed${status}: ${this.reason}`
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
  override get message(): string {
    return `The final answer of agent "${this.agent}" does not match its output schema:\n${this.issues}`
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
  | BudgetExceeded
  | ModelError
  | OutputInvalid
  | Escalated
  | ExceptionThrown

const agentErrorTags: ReadonlySet<string> = new Set<AgentError["_tag"]>([
  "AgentConfigError",
  "InputInvalid",
  "NoSkillMatched",
  "SkillRoutingFailed",
  "ToolNotAllowed",
  "InvalidToolArgs",
  "ToolFailed",
  "BudgetExceeded",
  "ModelError",
  "OutputInvalid",
  "Escalated",
  "ExceptionThrown"
])

/**
 * True for the documented errors of this library, whatever their tag.
 *
 * @example
 * ```ts
 * calculator.run("2+2").catch((e) => { if (isAgentError(e)) console.log(e._tag, e.message) })
 * ```
 */
export const isAgentError = (u: unknown): u is AgentError =>
  typeof u === "object" && u !== null && "_tag" in u && agentErrorTags.has(String(u._tag))

/** A short, single-line description of any thrown value. */
export const describeCause = (cause: unknown): string => {
  if (cause instanceof Error) return cause.message
  if (typeof cause === "string") return cause
  try {
    return JSON.stringify(cause) ?? String(cause)
  } catch {
    return String(cause)
  }
}

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
