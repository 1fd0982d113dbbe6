/**
 * Runs an agent against a model script and reports everything a property test needs: the outcome,
 * every event in order, every model request, and every tool execution (with its decoded arguments).
 * Deterministic by default: a seeded Random and virtual time (see `virtual-clock.ts`), so a failing
 * case replays exactly and a shrinking run behaves as the one that failed.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Random from "effect/Random"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as Scheduler from "effect/Scheduler"
import * as Schema from "effect/Schema"
import type { AgentBuilder, AgentShape } from "../dsl/agent.ts"
import type { ModelClientService } from "../model/model-client.ts"
import type { AgentEvent } from "../dsl/events.ts"
import type { RunResultOf } from "../dsl/run-outcome.ts"
import type { AnyTool } from "../dsl/tool.ts"
import { type AgentError, AgentConfigError, isAgentError } from "../errors.ts"
import type { ModelRequest } from "../model/messages.ts"
import { type ModelScript, scriptedModel } from "./scripted-model.ts"
import { virtualTime } from "./virtual-clock.ts"
import { shownValue } from "../internal/shown-value.ts"

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
 * Options of `runScript`. By default a run is deterministic: the same agent, script and input give the
 * same `ScriptRun` (events with their durations and run ids, requests, executions, outcome) on any
 * machine, however loaded.
 *
 * @example
 * ```ts
 * const run = await runScript(calculator, script, "1 + 2", { seed: 7, startAt: new Date("2030-01-01") })
 * ```
 */
export interface RunScriptOptions {
  /** The seed of the run's `Random` (run ids, retry jitter, anything drawn from Random), on either clock. Default `0`. */
  readonly seed?: string | number
  /**
   * `"virtual"` (default): time starts at `startAt` and passes only when the run has nothing left to do
   * but wait, jumping to the next sleep at once, so sleeps, retry backoffs and `maxDuration` take no wall
   * time and are decided the same way on every machine. Real async work the run starts (a timer, a file
   * or network request) takes no virtual time: time never passes while it is in flight.
   * `"live"`: the real clock, as `agent.run` has (sleeps wait, durations are measured).
   */
  readonly clock?: "virtual" | "live"
  /** Where virtual time starts: epoch milliseconds or a `Date`. Default 2025-01-01T00:00:00Z. */
  readonly startAt?: number | Date
}

const defaultStart = Date.UTC(2025, 0, 1)

const describeSubject = (subject: unknown): string => {
  const tag = (subject as { readonly _tag?: unknown } | null)?._tag
  return tag === "Composite" ? "a composite" : subject === null ? "null" : typeof subject
}

/**
 * Runs `subject` (any agent, with or without a model: the script replaces it) on `input`, on a seeded
 * Random and in virtual time unless `options` say otherwise (`RunScriptOptions`). Other services its
 * tools or hooks require must be provided first (`.provide(layer)`). The record is taken when the run
 * ends: what a detached hook does afterwards is not in it.
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
  input: T["input"],
  options: RunScriptOptions = {}
): Promise<ScriptRun<RunResultOf<T["tools"], T["output"]>>> => {
  // Plain JavaScript may hand a composite, or anything else, where an agent builder belongs.
  if (typeof (subject as { readonly model?: unknown })?.model !== "function") {
    throw new AgentConfigError({ subject: "runScript(...)", reason: `runScript runs an agent builder (agent(...)): got ${describeSubject(subject)}; a composite's members are scripted one by one, each with its own scriptedModel` })
  }
  const model = scriptedModel(script)
  const events: Array<AgentEvent> = []
  const scripted = subject.model(model).onEvent((event: AgentEvent) => {
    events.push(event)
  })
  // The script stands in for the model, and the type admits no other missing service.
  const run = scripted.runEffect(input) as Effect.Effect<RunResultOf<T["tools"], T["output"]>, AgentError>
  const recorded = Effect.exit(run).pipe(
    Effect.map((exit): ScriptRun<RunResultOf<T["tools"], T["output"]>> => {
      const seen = [...events]
      const executed = seen.flatMap((e) => (e._tag === "ToolUse" || e._tag === "ToolError" ? [{ tool: e.tool, args: e.args }] : []))
      return { outcome: outcomeOf(exit), events: seen, requests: [...model.requests], executed }
    }),
    // Hook failures are in `events` (HookFailed); keep Effect's warning log out of test output.
    Effect.provideService(References.MinimumLogLevel, "None"),
    Random.withSeed(options.seed ?? 0)
  )
  if (options.clock === "live") return Effect.runPromise(recorded)
  const start = options.startAt ?? defaultStart
  const startAt = typeof start === "number" ? start : start.getTime()
  if (!Number.isFinite(startAt)) throw new AgentConfigError({ subject: "runScript(...)", reason: `startAt must be a finite time, got ${shownValue(start)}` })
  const time = virtualTime(startAt)
  const context = Context.make(Clock.Clock, time.clock).pipe(Context.add(Scheduler.Scheduler, time.scheduler))
  try {
    return await time.enter(() => Effect.runPromiseWith(context)(recorded))
  } finally {
    time.stop()
  }
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
