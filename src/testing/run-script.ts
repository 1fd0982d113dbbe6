/**
 * Runs an agent against a model script and reports everything a property test needs: the outcome,
 * every event in order, every model request, and every tool execution (with its decoded arguments).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { AgentBuilder, AgentShape } from "../dsl/agent.ts"
import type { ModelClientService } from "../model/model-client.ts"
import type { AgentEvent } from "../dsl/events.ts"
import type { RunResultOf } from "../dsl/run-outcome.ts"
import type { AnyTool } from "../dsl/tool.ts"
import { type AgentError, isAgentError } from "../errors.ts"
import type { ModelRequest } from "../model/messages.ts"
import { type ModelScript, scriptedModel } from "./scripted-model.ts"

/** How a run ended. `Defect` and `Interrupted` should never happen: tests assert against them. */
export type ScriptOutcome<TOutput> =
  | { readonly _tag: "Success"; readonly output: TOutput }
  | { readonly _tag: "Failure"; readonly error: AgentError }
  | { readonly _tag: "Defect"; readonly cause: string }
  | { readonly _tag: "Interrupted" }

/** The record of one scripted run. */
export interface ScriptRun<TOutput> {
  readonly outcome: ScriptOutcome<TOutput>
  readonly events: ReadonlyArray<AgentEvent>
  readonly requests: ReadonlyArray<ModelRequest>
  /** Tools that ran (successfully or not), with the decoded arguments they ran with, in order. */
  readonly executed: ReadonlyArray<{ readonly tool: string; readonly args: unknown }>
}

/**
 * Runs `subject` (any agent, with or without a model: the script replaces it) on `input`. Other services
 * its tools or hooks require must be provided first (`.provide(layer)`).
 *
 * @example
 * ```ts
 * const run = await runScript(calculator, [toolCalls([{ id: "1", name: "add", arguments: { a: 1, b: 2 } }]), text("3")], "1 + 2")
 * run.outcome // { _tag: "Success", output: "3" }
 * run.executed // [{ tool: "add", args: { a: 1, b: 2 } }]
 * ```
 */
export const runScript = async <T extends AgentShape & { readonly requirements: ModelClientService }>(
  subject: AgentBuilder<T>,
  script: ModelScript,
  input: T["input"]
): Promise<ScriptRun<RunResultOf<T["tools"], T["output"]>>> => {
  const model = scriptedModel(script)
  const events: Array<AgentEvent> = []
  const scripted = subject.model(model).onEvent((event: AgentEvent) => {
    events.push(event)
  })
  // Hook failures are in `events` (HookFailed); keep Effect's warning log out of test output.
  // The script stands in for the model, and the type admits no other missing service.
  const run = scripted.runEffect(input) as Effect.Effect<RunResultOf<T["tools"], T["output"]>, AgentError>
  const exit = await Effect.runPromise(Effect.exit(run).pipe(Effect.provideService(References.MinimumLogLevel, "None")))
  const executed = events.flatMap((e) => (e._tag === "ToolUse" || e._tag === "ToolError" ? [{ tool: e.tool, args: e.args }] : []))
  return { outcome: outcomeOf(exit), events, requests: model.requests, executed }
}

const outcomeOf = <A>(exit: Exit.Exit<A, AgentError>): ScriptOutcome<A> => {
  if (Exit.isSuccess(exit)) return { _tag: "Success", output: exit.value }
  if (Cause.hasInterruptsOnly(exit.cause)) return { _tag: "Interrupted" }
  const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (failure !== undefined && failure._tag === "Fail" && isAgentError(failure.error) && !Cause.hasDies(exit.cause)) {
    return { _tag: "Failure", error: failure.error }
  }
  return { _tag: "Defect", cause: Cause.pretty(exit.cause) }
}

/**
 * Checks the loop's invariants on a scripted run and returns the violations (empty when none):
 * tools run only from `allowed` and only with arguments their Schema accepts, at most `maxTurns` model
 * calls, an outcome that is success or a documented error, and balanced events (one `RunStart`, one
 * `RunEnd` last, a `Turn` and a `ModelCall` per request, a `ModelResponse` for every call that answered).
 *
 * @example
 * ```ts
 * expect(runInvariants(run, { allowed: [add, multiply], maxTurns: 4 })).toEqual([])
 * ```
 */
export const runInvariants = (
  run: ScriptRun<unknown>,
  limits: { readonly allowed: ReadonlyArray<AnyTool>; readonly maxTurns: number; readonly maxToolCalls?: number }
): ReadonlyArray<string> => {
  const violations: Array<string> = []
  for (const { tool, args } of run.executed) {
    const allowed = limits.allowed.find((t) => t.name === tool)
    if (allowed === undefined) {
      violations.push(`executed a tool outside the allowlist: ${tool}`)
    } else if (allowed.codec.json !== undefined) {
      // The executed args are decoded values: encode them back and decode, as the model would have sent them.
      const { json, check } = allowed.codec
      const resent = Result.try(() => Schema.encodeSync(json)(args))
      if (Result.isFailure(resent) || Result.isFailure(check(resent.success))) {
        violations.push(`executed ${tool} with arguments its Schema refuses: ${JSON.stringify(args)}`)
      }
    }
  }
  if (run.requests.length > limits.maxTurns) violations.push(`${run.requests.length} model calls > maxTurns ${limits.maxTurns}`)
  if (limits.maxToolCalls !== undefined && run.executed.length > limits.maxToolCalls) {
    violations.push(`${run.executed.length} tool executions > maxToolCalls ${limits.maxToolCalls}`)
  }
  if (run.outcome._tag === "Defect" || run.outcome._tag === "Interrupted") violations.push(`run ended with ${run.outcome._tag}`)
  const count = (tag: AgentEvent["_tag"]) => run.events.filter((e) => e._tag === tag).length
  if (count("RunStart") !== 1 || run.events[0]?._tag !== "RunStart") violations.push("RunStart is not the single first event")
  if (count("RunEnd") !== 1 || run.events.at(-1)?._tag !== "RunEnd") violations.push("RunEnd is not the single last event")
  if (count("Turn") !== run.requests.length) violations.push(`${count("Turn")} Turn events for ${run.requests.length} model calls`)
  if (count("ModelCall") !== run.requests.length) violations.push(`${count("ModelCall")} ModelCall events for ${run.requests.length} model calls`)
  const failedCalls = run.outcome._tag === "Failure" && run.outcome.error._tag === "ModelError" ? 1 : 0
  if (count("ModelResponse") !== run.requests.length - failedCalls) {
    violations.push(`${count("ModelResponse")} ModelResponse events for ${run.requests.length - failedCalls} answered calls`)
  }
  return violations
}
