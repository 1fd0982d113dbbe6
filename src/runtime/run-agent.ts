/**
 * Running an agent: compile its definition into a plan (once), choose the skill, and drive the
 * stepper to the end (`runAgent`), to a suspension (`runUntil`), or from a snapshot (`resumeRun`). All
 * three share one body: the `agent.run` span, the `duration` budget, and `RunEnd` (emitted once when a
 * run ends, never on a suspension). Every run, turn, model call and tool call is a span (`agent.run`,
 * `agent.turn`, `agent.model`, `agent.tool`).
 */
import { newRunId } from "../internal/run-id.ts"
import { Cause, Clock, Duration, Effect, Exit, Schema } from "effect"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import { CurrentBudgetScope } from "../dsl/lineage.ts"
import { pickTools } from "../dsl/pick-tools.ts"
import type { RunEndEvent } from "../dsl/events.ts"
import { type AgentError, InputInvalid, isAgentError, RuntimeDefect, SkillFailed } from "../errors.ts"
import { catchUnlessInterrupted, fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import { noStackTrace } from "../internal/span-options.ts"
import type { ModelClientService } from "../model/model-client.ts"
import { chooseSkill } from "./choose-skill.ts"
import { emit } from "./emit.ts"
import { type AgentPlan, compile, type SkillPlan } from "./plan.ts"
import { systemPrompt } from "./prompt.ts"
import { budgetExceeded, RunContext } from "./run-context.ts"
import { checkSnapshot, type RunSnapshot, snapshotOf, stateOf } from "./snapshot.ts"
import { drive, type DriveControl } from "./step.ts"

/**
 * Runs `definition` on `input` to the end. Needs a `ModelClientService` unless the definition has a
 * model (the builder's `runEffect` provides it then).
 *
 * @example
 * ```ts
 * const output = yield* runAgent(definition, "What is 2 + 2?").pipe(Effect.provide(ModelClient.layer(client)))
 * ```
 */
export const runAgent = (definition: AgentDefinition, input: unknown): Effect.Effect<unknown, AgentError, ModelClientService> =>
  execute(definition, { _tag: "Fresh", input }, {}).pipe(
    Effect.flatMap((result) => result._tag === "Done" ? Effect.succeed(result.output) : Effect.die(new Error("internal: a run to the end suspended")))
  )

/** How a run driven by `runUntil` or `resumeRun` stopped: finished, or suspended with its snapshot. */
export type RunResult =
  | { readonly _tag: "Done"; readonly output: unknown }
  | { readonly _tag: "Suspended"; readonly snapshot: RunSnapshot }

/**
 * Runs `definition` on `input`, suspending after `suspendAfter` steps (a model call or a tool call
 * each) with a snapshot of the run; without `suspendAfter`, to the end.
 *
 * @example
 * ```ts
 * const first = yield* runUntil(definition, "2 + 2?", { suspendAfter: 1 })
 * ```
 */
export const runUntil = (
  definition: AgentDefinition,
  input: unknown,
  control: DriveControl = {}
): Effect.Effect<RunResult, AgentError, ModelClientService> => execute(definition, { _tag: "Fresh", input }, control)

/**
 * Continues a run from a snapshot taken between two steps. Fails with `DefinitionChanged` when the
 * snapshot was taken with a definition of another shape (tools, parameters, skills, budget).
 *
 * @example
 * ```ts
 * const rest = yield* resumeRun(definition, decodeSnapshot(json))
 * ```
 */
export const resumeRun = (
  definition: AgentDefinition,
  snapshot: RunSnapshot,
  control: DriveControl = {}
): Effect.Effect<RunResult, AgentError, ModelClientService> => execute(definition, { _tag: "Resume", snapshot }, control)

type Start = { readonly _tag: "Fresh"; readonly input: unknown } | { readonly _tag: "Resume"; readonly snapshot: RunSnapshot }

const execute = (definition: AgentDefinition, start: Start, control: DriveControl): Effect.Effect<RunResult, AgentError, ModelClientService> =>
  Effect.gen(function*() {
    const plan = compile(definition)
    const now = yield* Clock.currentTimeMillis
    const runId = start._tag === "Resume" ? start.snapshot.state.runId : yield* newRunId(now)
    const startedAt = start._tag === "Resume" ? now - start.snapshot.state.elapsedMs : now
    const parentScope = yield* CurrentBudgetScope
    yield* Effect.annotateCurrentSpan("agent.run_id", runId)
    let ctx: RunContext | undefined
    const body: Effect.Effect<RunResult, AgentError, ModelClientService> = Effect.gen(function*() {
      if (start._tag === "Resume") {
        const skill = yield* checkSnapshot(plan, start.snapshot)
        ctx = RunContext.restore(plan, skill, stateOf(start.snapshot), now, parentScope)
        yield* Effect.annotateCurrentSpan("agent.skill", skill.name)
        return yield* driveToResult(ctx, control)
      }
      const input = start.input
      yield* emit(plan, { _tag: "RunStart", agent: plan.name, runId, input })
      const text = yield* inputText(definition, input)
      const chosen = yield* chooseSkill(plan, runId, text)
      ctx = RunContext.start(plan, chosen.skill, runId, text, startedAt, chosen.turns, parentScope)
      yield* Effect.annotateCurrentSpan("agent.skill", chosen.skill.name)
      yield* ctx.emit({ _tag: "SkillChosen", how: chosen.how })
      const implementation = chosen.skill.definition.implementation
      if (implementation !== undefined) return { _tag: "Done", output: yield* deterministic(plan, chosen.skill, input) }
      yield* startAgentic(ctx, text)
      return yield* driveToResult(ctx, control)
    })
    const maxDuration = plan.budget.maxDuration
    const bounded = Number.isFinite(maxDuration)
      ? body.pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(Math.max(0, maxDuration - (now - startedAt))),
          orElse: () =>
            Clock.currentTimeMillis.pipe(
              Effect.flatMap((end) =>
                budgetExceeded(plan, runId, { reason: "duration", limit: maxDuration, used: end - startedAt }, ctx?.transcript ?? [])
              )
            )
        })
      )
      : body
    return yield* bounded.pipe(
      Effect.onExit((exit) =>
        Exit.isSuccess(exit) && exit.value._tag === "Suspended" ? Effect.void : runEnd(plan, runId, startedAt, ctx, exit)
      )
    )
  }).pipe(Effect.withSpan("agent.run", { attributes: { "agent.name": definition.name } }, noStackTrace))

const driveToResult = (ctx: RunContext, control: DriveControl): Effect.Effect<RunResult, AgentError, ModelClientService> =>
  drive(ctx, control).pipe(
    Effect.flatMap((driven) =>
      driven._tag === "Done"
        ? Effect.succeed<RunResult>(driven)
        : Clock.currentTimeMillis.pipe(Effect.map((now): RunResult => ({ _tag: "Suspended", snapshot: snapshotOf(ctx, now) })))
    )
  )

/** `RunEnd` and the run span's closing attributes, once per run that ended. */
const runEnd = (plan: AgentPlan, runId: string, startedAt: number, ctx: RunContext | undefined, exit: Exit.Exit<RunResult, AgentError>) =>
  Effect.gen(function*() {
    const durationMs = (yield* Clock.currentTimeMillis) - startedAt
    const outcome = runOutcome(plan.name, Exit.map(exit, (result) => (result._tag === "Done" ? result.output : undefined)))
    const turns = ctx?.ledger.turns ?? 0
    const toolCalls = ctx?.ledger.toolCalls ?? 0
    yield* Effect.annotateCurrentSpan({
      "agent.outcome": outcome._tag === "Failure" ? outcome.error._tag : outcome._tag,
      "agent.turns": turns,
      "agent.tool_calls": toolCalls
    })
    yield* emit(plan, { _tag: "RunEnd", agent: plan.name, runId, outcome, turns, toolCalls, durationMs })
  })

/** A defect (neither a documented failure nor an interruption) is reported as `RuntimeDefect`, never as a model failure. */
export const runOutcome = (agent: string, exit: Exit.Exit<unknown, AgentError>): RunEndEvent["outcome"] => {
  if (Exit.isSuccess(exit)) return { _tag: "Success", output: exit.value }
  if (Cause.hasInterruptsOnly(exit.cause)) return { _tag: "Interrupted" }
  const error = Cause.squash(exit.cause)
  return isAgentError(error) ? { _tag: "Failure", error } : { _tag: "Failure", error: new RuntimeDefect({ agent, cause: error }) }
}

/** The user message: the input as text (strings as they are, anything else JSON-encoded). */
const inputText = (definition: AgentDefinition, input: unknown): Effect.Effect<string, InputInvalid> => {
  if (definition.input === undefined) return Effect.succeed(typeof input === "string" ? input : JSON.stringify(input) ?? "")
  return Schema.encodeUnknownEffect(Schema.toCodecJson(definition.input))(input, { errors: "all" }).pipe(
    Effect.map((encoded) => (typeof encoded === "string" ? encoded : JSON.stringify(encoded))),
    Effect.mapError((error) => new InputInvalid({ agent: definition.name, issues: error.message }))
  )
}

/** A skill implemented by a function: no model call. Its failure ends the run with `SkillFailed`. */
const deterministic = (plan: AgentPlan, skill: SkillPlan, input: unknown): Effect.Effect<unknown, SkillFailed> =>
  fromMaybeEffect((abortable) => skill.definition.implementation!(input, abortable)).pipe(
    catchUnlessInterrupted((cause) => Effect.fail(new SkillFailed({ agent: plan.name, skill: skill.name, input, cause })))
  )

/** The start of an agentic run: tool pre-selection, then the system prompt and the user message. */
const startAgentic = (ctx: RunContext, input: string) =>
  Effect.gen(function*() {
    const selection = ctx.plan.definition.toolSelection
    if (selection !== undefined) {
      const picked = yield* pickTools(input, ctx.skill.offerable, selection)
      if (picked.length > 0) ctx.offer(picked.map((p) => p.tool))
      yield* Effect.annotateCurrentSpan("agent.offered_tools", ctx.offered.map((t) => t.name).join(","))
    }
    ctx.append({ role: "system", content: systemPrompt(ctx) }, { role: "user", content: input })
  })
