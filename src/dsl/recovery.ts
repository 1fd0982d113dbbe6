/**
 * Recovery decisions: what the loop does when a model sends invalid arguments or a tool fails, and the
 * handlers that decide. Handlers are looked up per kind with priority: the tool's own `recover`, then
 * the agent's `.recoverTool(name, ...)`, then the agent's `.recover({...})` defaults, then the built-in
 * default (`feedback`). Policies only decide; observers (`.onToolError(listener)`, `.onInvalidArgs`)
 * only watch.
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"

/** How serious an escalation is. */
export type Severity = "LOW" | "MEDIUM" | "HIGH" | "CRITICAL"

/**
 * One decision:
 * - `feedback`: the model gets the error as the tool's result and may correct itself (the default).
 * - `fail`: the run ends with `InvalidToolArgs` or `ToolFailed`; `failWith(reason)` the same, with the
 *   handler's own reason (as `issues`, or as the `cause`) instead of the original error.
 * - `throwException(reason)`: the run ends with `ExceptionThrown { reason }`, as when the model calls the
 *   built-in `throwException` (the Kotlin reference's fixer `throwException`).
 * - `substitute(value)`: the model gets `value` as the tool's result; the tool does not run (again).
 * - `fixed(args)`: run the tool with these arguments instead. They are decoded with the tool's Schema
 *   first (a repair is never trusted); arguments that fail go back to the handler, for at most
 *   `maxRepairSteps` steps.
 * - `retry(n)`: invalid arguments: the model is asked again with the error, at most `n` times per tool in
 *   a run (then `InvalidToolArgs`); a failed execution: the tool is run again, at most `n` times for
 *   the call (then the error goes to the model). Re-runs count against the budget.
 * - `escalate(reason, severity)`: the model gets an escalation notice as the tool's result.
 */
export type Recovery = Data.TaggedEnum<{
  Feedback: {}
  Fail: { readonly reason?: string | undefined }
  ThrowException: { readonly reason: string }
  Substitute: { readonly value: unknown }
  Fixed: { readonly args: unknown }
  Retry: { readonly times: number }
  Escalate: { readonly reason: string; readonly severity: Severity }
}>

const RecoveryEnum = Data.taggedEnum<Recovery>()

/**
 * The recovery decisions, with `$is` and `$match` from `Data.taggedEnum`.
 *
 * @example
 * ```ts
 * agent("calc").recover({ invalidArgs: ({ tool }) => tool === "add" ? Recovery.retry(2) : Recovery.fail })
 * tool("convert", { args, run, recover: { invalidArgs: ({ raw }) => Recovery.fixed({ ...(raw as object), unit: "celsius" }) } })
 * Recovery.$is("Retry")(decision) // narrows to { _tag: "Retry", times }
 * ```
 */
export const Recovery = {
  feedback: RecoveryEnum.Feedback() as Recovery,
  fail: RecoveryEnum.Fail({}) as Recovery,
  failWith: (reason: string): Recovery => RecoveryEnum.Fail({ reason }),
  throwException: (reason: string): Recovery => RecoveryEnum.ThrowException({ reason }),
  substitute: (value: unknown): Recovery => RecoveryEnum.Substitute({ value }),
  fixed: (args: unknown): Recovery => RecoveryEnum.Fixed({ args }),
  // NaN (a count computed from nothing) is no retry at all, never "no bound": `NaN >= n` is false.
  retry: (times: number): Recovery => RecoveryEnum.Retry({ times: Number.isNaN(times) ? 0 : Math.max(0, Math.floor(times)) }),
  escalate: (reason: string, severity: Severity = "MEDIUM"): Recovery => RecoveryEnum.Escalate({ reason, severity }),
  $is: RecoveryEnum.$is,
  $match: RecoveryEnum.$match
} as const

/** A handler answers with a decision, sync, async or as an Effect (which may require services `R`). */
export type RecoveryDecision<R = never> = Recovery | PromiseLike<Recovery> | Effect.Effect<Recovery, unknown, R>

/**
 * What an `invalidArgs` handler sees. `raw` is the arguments the model sent, parsed from their JSON
 * text (the text itself when it is not JSON); `error` is the decoder's readable report; `attempt`
 * counts from 1.
 */
export interface InvalidArgsContext<TToolName extends string = string> {
  readonly agent: string
  readonly skill: string
  readonly tool: TToolName
  readonly raw: unknown
  readonly error: string
  /** The tool's argument Schema. */
  readonly schema: unknown
  readonly attempt: number
}

/** What an `executionError` handler sees; `attempt` counts from 1. */
export interface ExecutionErrorContext<TToolName extends string = string> {
  readonly agent: string
  readonly skill: string
  readonly tool: TToolName
  readonly args: unknown
  readonly cause: unknown
  readonly attempt: number
}

/** Handlers for one tool (or as defaults). A handler that throws is reported and the next level decides. */
export interface RecoveryHandlers<TToolName extends string = string, R = never> {
  readonly invalidArgs?: (context: InvalidArgsContext<TToolName>) => RecoveryDecision<R>
  readonly executionError?: (context: ExecutionErrorContext<TToolName>) => RecoveryDecision<R>
}

/** The agent's defaults (`.recover({...})`): handlers plus the bound on `fixed` steps per call (default 3). */
export interface ErrorPolicy<TToolName extends string = string, R = never> extends RecoveryHandlers<TToolName, R> {
  readonly maxRepairSteps?: number
}
