/**
 * The events a run emits, in order, and the listener type that hooks accept.
 *
 * Order within a run: `RunStart` → (`ModelCall` → `ModelResponse` for a model-routed choice) →
 * `SkillChosen` → per turn: `Turn` → `ModelCall` → (`Retrying` per wait before another attempt) →
 * `ModelResponse` → per tool call: `ArgsRepaired`
 * (when a repair made the arguments valid), `ToolProgress` (each report of a running tool), then one of
 * `ToolUse` (+ `KnowledgeUsed` for knowledge) |
 * `ToolError` | `InvalidArgs` | `Handoff` (or none, when the call is refused by the allowlist) → … →
 * `BudgetExceeded` (only when the budget ran out) → `RunEnd` (always, exactly once).
 * A run that waits for a human decision emits `ApprovalRequested` and ends with a `RunEnd` whose outcome
 * is `Suspended`; its resume emits `ApprovalDecided` before each decided call, and a `RunEnd` of its own.
 * A listener that throws, rejects or fails is reported as `HookFailed` and never changes the run.
 */
import type { AgentError, BudgetReason } from "../errors.ts"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import type { LlmResponse, ModelRequest } from "../model/messages.ts"
import type { RetryNotice } from "../model/model-retry.ts"
import type { ArgsCorrection } from "./repair-arguments.ts"
import type { RunSnapshot } from "./run-snapshot.ts"
import type { Recovery } from "./recovery.ts"
import type { AnyTool, Tool, UnsafeMode } from "./tool.ts"

interface RunScoped {
  readonly agent: string
  /** Identifies the run, so events of concurrent runs can be told apart. */
  readonly runId: string
  /**
   * The run this one runs under, when it has one: the composite that runs it, or the agent that called
   * it as a tool or handed off to it. Absent for top-level runs.
   */
  readonly parentRunId?: string
}
interface SkillScoped extends RunScoped {
  readonly skill: string
}
interface TurnScoped extends SkillScoped {
  /** 1 for the first model call of the run. */
  readonly turn: number
}

/** The run began. */
export interface RunStartEvent extends RunScoped {
  readonly _tag: "RunStart"
  readonly input: unknown
}
/** The skill that handles this run was chosen: the single skill, the implicit one (no skills), the first `.when` match, or the fallback. */
export interface SkillChosenEvent extends SkillScoped {
  readonly _tag: "SkillChosen"
  readonly how: "only" | "implicit" | "predicate" | "fallback" | "model"
}
/** A turn (one model call and the tool calls it asks for) begins. */
export interface TurnEvent extends TurnScoped {
  readonly _tag: "Turn"
}
/** A model call is about to be made. */
export interface ModelCallEvent extends TurnScoped {
  readonly _tag: "ModelCall"
  readonly request: ModelRequest
}
/** A model call answered. */
export interface ModelResponseEvent extends TurnScoped {
  readonly _tag: "ModelResponse"
  readonly response: LlmResponse
  readonly durationMs: number
}
/**
 * The model call failed in a way worth retrying, and the provider waits `waitMs` before attempt
 * `attempt` (of at most `maxAttempts`); one per wait, between `ModelCall` and `ModelResponse`. Sent by
 * the retrying providers (openai, ollama, anthropic, AI SDK models), and by any client that calls
 * `announceRetry`.
 */
export interface RetryingEvent extends TurnScoped, RetryNotice {
  readonly _tag: "Retrying"
}
/** A tool ran successfully; `args` are the decoded arguments. Narrow on `tool` to type `args`/`result`. */
export type ToolUseEvent<TTools extends Record<string, AnyTool> = Record<string, AnyTool>> = {
  [K in keyof TTools]: TTools[K] extends Tool<infer Name, infer Args, infer Result, any, any> ? TurnScoped & {
      readonly _tag: "ToolUse"
      readonly tool: Name
      readonly toolCallId: string
      readonly args: Args
      readonly result: Result
      readonly durationMs: number
      /** False only for tools declared with `unsafeNoSchema`. */
      readonly validated: boolean
      /** The `unsafeNoSchema` mode of such tools; undefined for tools with a Schema. */
      readonly mode: UnsafeMode | undefined
    }
    : never
}[keyof TTools]
/**
 * A running tool reported progress through its context (`ToolContext.progress`): a remote agent's status
 * line, a percentage, a partial result. Between the call's start and its outcome (`ToolUse`,
 * `ToolError`), in the order reported; only when a hook or a stream hears it.
 */
export interface ToolProgressEvent extends TurnScoped {
  readonly _tag: "ToolProgress"
  readonly tool: string
  readonly toolCallId: string
  /** What the tool reported, as given. */
  readonly data: unknown
}
/** A tool failed; `recovery` is what the `executionError` handlers decided. */
export interface ToolErrorEvent extends TurnScoped {
  readonly _tag: "ToolError"
  readonly tool: string
  readonly toolCallId: string
  readonly args: unknown
  readonly error: unknown
  readonly recovery: Recovery["_tag"]
  /** False only for tools declared with `unsafeNoSchema`. */
  readonly validated: boolean
  /** The `unsafeNoSchema` mode of such tools; undefined for tools with a Schema. */
  readonly mode: UnsafeMode | undefined
}
/** A tool call's arguments did not decode; the tool did not run. */
export interface InvalidArgsEvent extends TurnScoped {
  readonly _tag: "InvalidArgs"
  readonly tool: string
  readonly toolCallId: string
  readonly raw: unknown
  readonly issues: string
  readonly recovery: Recovery["_tag"]
}
/** The model called a tool outside the skill's allowlist, or one that does not exist. */
export interface ToolHallucinatedEvent extends TurnScoped {
  readonly _tag: "ToolHallucinated"
  readonly tool: string
  readonly toolCallId: string
  /** Only the skill's own tools. */
  readonly allowed: ReadonlyArray<string>
  /** `fail` ends the run with `ToolNotAllowed`; `feedback` tells the model and goes on. */
  readonly policy: "fail" | "feedback"
  /** The arguments the model sent, parsed when they are JSON (else the raw text). */
  readonly args: unknown
}
/** A tool call's arguments were repaired (the tool opted in) and then decoded. */
export interface ArgsRepairedEvent extends TurnScoped {
  readonly _tag: "ArgsRepaired"
  readonly tool: string
  readonly toolCallId: string
  readonly corrections: ReadonlyArray<ArgsCorrection>
}
/** A knowledge source was used; `cached` is false on the use that loaded it. */
export interface KnowledgeUsedEvent extends TurnScoped {
  readonly _tag: "KnowledgeUsed"
  readonly knowledge: string
  readonly toolCallId: string
  readonly characters: number
  readonly cached: boolean
}
/**
 * The model handed the conversation to agent `to` (`handoff_to_<to>`): this run's loop ends and `to`
 * runs on the transcript, as a child run whose output becomes this run's output.
 */
export interface HandoffEvent extends TurnScoped {
  readonly _tag: "Handoff"
  readonly to: string
  readonly toolCallId: string
}
/** Usage of a budget dimension first reached `threshold` (a share of its limit) in this run. */
export interface BudgetThresholdEvent extends RunScoped {
  readonly _tag: "BudgetThreshold"
  readonly reason: BudgetReason
  readonly threshold: number
  readonly used: number
  readonly limit: number
  /** `used / limit` in percent, one decimal. */
  readonly usedPercent: number
}
/** The run stops because a budget ran out. */
export interface BudgetExceededEvent extends RunScoped {
  readonly _tag: "BudgetExceeded"
  readonly reason: BudgetReason
  readonly limit: number
  readonly used: number
  /** Whose limit it was when not this agent's own (an enclosing composite or calling agent). */
  readonly scope?: string
  /** The tool concerned, for `perToolTimeout` and `consecutiveTool`. */
  readonly tool?: string | undefined
}
/** A call waiting for a human decision, as the approval events and a suspended `RunEnd` name it. */
export interface WaitingCall {
  readonly id: string
  readonly tool: string
  /** The decoded arguments the decision is about. */
  readonly args: unknown
  /** Why an interceptor suspended the call (absent when the tool's `needsApproval` did). */
  readonly reason?: string
}
/**
 * The run suspends: `calls` wait for a human decision (the tool's `needsApproval`, or an interceptor's
 * `suspend(reason)`). Followed by `RunEnd` with the `Suspended` outcome and the snapshot to resume.
 */
export interface ApprovalRequestedEvent extends TurnScoped {
  readonly _tag: "ApprovalRequested"
  readonly calls: ReadonlyArray<WaitingCall>
}
/** A decision given at resume is applied to its call, just before the call runs (or does not). */
export interface ApprovalDecidedEvent extends TurnScoped {
  readonly _tag: "ApprovalDecided"
  readonly toolCallId: string
  readonly tool: string
  readonly decision: "approve" | "edit" | "deny"
  /** The arguments the call runs with (`approve`, `edit`). */
  readonly args?: unknown
  /** Why it was denied (`deny`). */
  readonly reason?: string
}
/**
 * The run ended, successfully or not, or suspended waiting for decisions (`Suspended`: the waiting
 * calls and the snapshot `resume` continues from; the resumed run ends with a `RunEnd` of its own).
 */
export interface RunEndEvent extends RunScoped {
  readonly _tag: "RunEnd"
  readonly outcome:
    | { readonly _tag: "Success"; readonly output: unknown }
    | { readonly _tag: "Failure"; readonly error: AgentError }
    | { readonly _tag: "Interrupted" }
    | { readonly _tag: "Suspended"; readonly pending: ReadonlyArray<WaitingCall>; readonly snapshot: RunSnapshot }
  readonly turns: number
  readonly toolCalls: number
  readonly durationMs: number
}
/** A listener failed. Reported to `onHookFailed` listeners and logged through Effect's logger. */
export interface HookFailedEvent extends RunScoped {
  readonly _tag: "HookFailed"
  readonly hook: AgentEvent["_tag"]
  readonly error: unknown
}

/** Every event a run emits. */
export type AgentEvent =
  | RunStartEvent
  | SkillChosenEvent
  | TurnEvent
  | ModelCallEvent
  | ModelResponseEvent
  | RetryingEvent
  | ToolUseEvent
  | ToolProgressEvent
  | ToolErrorEvent
  | InvalidArgsEvent
  | ToolHallucinatedEvent
  | ArgsRepairedEvent
  | KnowledgeUsedEvent
  | HandoffEvent
  | ApprovalRequestedEvent
  | ApprovalDecidedEvent
  | BudgetThresholdEvent
  | BudgetExceededEvent
  | RunEndEvent
  | HookFailedEvent

/** A hook: sync, async or an Effect. */
export type Listener<E> = (event: E) => MaybeEffect<unknown>

/** A registered hook, as stored in the agent definition; `"*"` receives every event. */
export interface RegisteredListener {
  readonly event: AgentEvent["_tag"] | "*"
  readonly listener: Listener<any>
}

/** A piece of the model's answer text, as it streams (only in `runStream`). */
export interface TextDeltaEvent extends TurnScoped {
  readonly _tag: "TextDelta"
  readonly delta: string
}
/** A piece of the model's visible reasoning, as it streams (only in `runStream`). */
export interface ReasoningDeltaEvent extends TurnScoped {
  readonly _tag: "ReasoningDelta"
  readonly delta: string
}
/** The model began a tool call: `index` is its place in the answer (only in `runStream`). */
export interface ToolCallStartEvent extends TurnScoped {
  readonly _tag: "ToolCallStart"
  readonly index: number
  readonly tool: string
  /** The provider's id for the call, when the wire gives one this early. */
  readonly toolCallId?: string | undefined
}
/** A piece of a tool call's JSON arguments, torn anywhere (only in `runStream`). */
export interface ToolCallDeltaEvent extends TurnScoped {
  readonly _tag: "ToolCallDelta"
  readonly index: number
  readonly delta: string
}

/** The deltas a streaming run adds to the events: text, reasoning and tool-call arguments. */
export type DeltaEvent = TextDeltaEvent | ReasoningDeltaEvent | ToolCallStartEvent | ToolCallDeltaEvent

/**
 * What `agent.runStream(input)` emits: every `AgentEvent` of the run, in order, with the deltas of each
 * model answer between its `ModelCall` and its `ModelResponse`; the last one is `RunEnd`.
 *
 * @example
 * ```ts
 * const print = (event: RunStreamEvent) => { if (event._tag === "TextDelta") process.stdout.write(event.delta) }
 * ```
 */
export type RunStreamEvent = AgentEvent | DeltaEvent
