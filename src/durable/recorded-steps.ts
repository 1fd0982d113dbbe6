/**
 * The `Durability` of one workflow execution: every step of the run becomes an Activity, named from
 * the run id, the turn and the call id (`model/<run>/step/<turn>`, `tool/<run>/<turn>/<call>`, …; a
 * name met again in the same execution gets `#2`, `#3`), with the Schemas of `schemas.ts`. The first
 * execution runs the step and the engine records its result; a replay of the workflow reads it back.
 * The names depend only on the run's control flow, which depends only on recorded results: so a
 * replay meets the same names in the same order.
 *
 * Tool executions follow the tool's effect class: `readOnly` and `idempotent` run again when a crash
 * lost their result (the latter with an `idempotencyKey` stable over those runs); `mutating` claim an
 * intent first (`ToolIntents`), and a claim found on a replay means the outcome is unknown:
 * reconciliation decides (`reconcile.ts`), never a blind second run.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import { type AgentError, OutcomeUnknown, type SkillFailed, type ToolFailed } from "../errors.ts"
import { Durability, type ModelStep, type ToolRunExtra, type ToolStep } from "../runtime/durability.ts"
import type { ToolEffectClass } from "../dsl/tool.ts"
import type { LlmResponse } from "../model/messages.ts"
import type { ModelError } from "../errors.ts"
import { AgentErrorSchema, LlmResponseSchema, resultAsJson, type ToolExecution, ToolExecutionSchema, type ToolOutcome, ToolOutcomeSchema } from "./schemas.ts"
import { withStoreRetry } from "./store-retry.ts"
import { BudgetScope } from "../dsl/lineage.ts"
import { ToolIntents } from "./tool-intents.ts"
import { type Reconcile, reconcileUnknown } from "./reconcile.ts"

const encodeOutcome = Schema.encodeSync(Schema.toCodecJson(ToolOutcomeSchema))
const decodeOutcome = Schema.decodeUnknownSync(Schema.toCodecJson(ToolOutcomeSchema))

const ErrorSchema = AgentErrorSchema as unknown as Schema.Codec<any, any>

/**
 * A fresh `Durability` for one execution of the workflow of run `rootRunId` (every replay makes its
 * own: the occurrence counters start again).
 */
export const recordedSteps = (options: {
  readonly rootRunId: string
  readonly reconcile: Reconcile | undefined
}): Effect.Effect<Durability, never, ToolIntents> =>
  Effect.gen(function*() {
    const intents = yield* ToolIntents
    const seen = new Map<string, number>()
    /** `base`, or `base#n` for its n-th occurrence in this execution. */
    const nameOf = (base: string): string => {
      const n = (seen.get(base) ?? 0) + 1
      seen.set(base, n)
      return n === 1 ? base : `${base}#${n}`
    }
    let runs = 0
    // The loop calls the steps inside the workflow body, whose fiber has the engine and the instance
    // (and every service of the run, which a step's activity runs with).
    const record = <A, E>(activity: Activity.Activity<any, any, never>): Effect.Effect<A, E> => activity as unknown as Effect.Effect<A, E>

    const durability: Durability = {
      runId: () => {
        runs += 1
        // The root run has the workflow's id; runs handed off to get ids derived in order.
        return Effect.succeed(runs === 1 ? options.rootRunId : `${options.rootRunId}~${runs}`)
      },
      startedAt: (runId, now) =>
        record<number, never>(Activity.make({ name: `start/${runId}`, success: Schema.Finite, execute: Effect.succeed(now) })),
      model: (step: ModelStep, call: Effect.Effect<LlmResponse, ModelError>) =>
        record<LlmResponse, ModelError>(Activity.make({
          name: nameOf(`model/${step.runId}/${step.purpose}/${step.turn}`),
          success: LlmResponseSchema,
          error: ErrorSchema,
          execute: call
        })),
      tool: (step, run) => {
        const name = nameOf(`tool/${step.runId}/${step.turn}/${step.callId}`)
        const idempotencyKey = `${step.runId}/${step.turn}/${step.callId}`
        // Runs the tool starts charge a scope of their own under the run's, so what they used is known
        // and recorded; a replay, which does not run them, charges the run's scope with it.
        let live = false
        const execute = Effect.suspend(() => {
          live = true
          const scope = new BudgetScope(`${step.tool} (durable)`, { tokens: Infinity, toolCalls: Infinity }, step.budgetScope)
          return executeTool(step, step.effect, name, (extra) => run({ ...extra, budgetScope: scope }), idempotencyKey, intents, options.reconcile).pipe(
            Effect.map((outcome): ToolExecution => ({ outcome, charged: { tokens: scope.used("tokens"), toolCalls: scope.used("toolCalls") } }))
          )
        })
        return record<ToolExecution, OutcomeUnknown>(Activity.make({ name, success: ToolExecutionSchema, error: ErrorSchema, execute })).pipe(
          Effect.map(({ outcome, charged }): Exit.Exit<unknown, unknown> => {
            if (!live) {
              if (charged.tokens > 0) step.budgetScope.charge("tokens", charged.tokens)
              if (charged.toolCalls > 0) step.budgetScope.charge("toolCalls", charged.toolCalls)
            }
            return outcome._tag === "Succeeded" ? Exit.succeed(outcome.value) : Exit.fail(outcome.error)
          })
        )
      },
      knowledge: (runId, source, load: Effect.Effect<string, ToolFailed>) =>
        record<string, ToolFailed>(Activity.make({ name: nameOf(`knowledge/${runId}/${source}`), success: Schema.String, error: ErrorSchema, execute: load })),
      skill: (runId, skill, run: Effect.Effect<unknown, SkillFailed>) =>
        record<unknown, SkillFailed>(Activity.make({
          name: nameOf(`skill/${runId}/${skill}`),
          success: Schema.Json,
          error: ErrorSchema,
          execute: Effect.map(run, resultAsJson)
        })),
      toolSelection: <R>(runId: string, pick: Effect.Effect<ReadonlyArray<string>, never, R>) =>
        record<ReadonlyArray<string>, never>(Activity.make({
          name: nameOf(`tools/${runId}`),
          success: Schema.Array(Schema.String),
          execute: pick as Effect.Effect<ReadonlyArray<string>>
        }))
    }
    return durability
  })

/**
 * One execution of a tool, inside its activity: claimed first when mutating, run with the
 * `Durability` unset (an agent called as a tool runs inside this one activity), and its outcome
 * written beside a mutating tool's claim.
 */
const executeTool = (
  step: ToolStep,
  effect: ToolEffectClass,
  key: string,
  run: (extra: ToolRunExtra) => Effect.Effect<Exit.Exit<unknown, unknown>>,
  idempotencyKey: string,
  intents: ToolIntents["Service"],
  reconcile: Reconcile | undefined
): Effect.Effect<ToolOutcome, AgentError> =>
  Effect.gen(function*() {
    const runTool = Effect.gen(function*() {
      const exit = yield* run(effect === "readOnly" ? {} : { idempotencyKey }).pipe(Effect.provideService(Durability, undefined))
      if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
      const outcome: ToolOutcome = Exit.isSuccess(exit)
        ? { _tag: "Succeeded", value: resultAsJson(exit.value) }
        : { _tag: "Failed", error: Cause.squash(exit.cause) }
      // Read back as a replay would: the first execution goes on with exactly what is recorded.
      const recorded = encodeOutcome(outcome)
      if (effect === "mutating") yield* withStoreRetry(intents.finish(key, recorded as Schema.Json))
      return decodeOutcome(recorded)
    })
    if (effect !== "mutating") return yield* runTool
    const prior = yield* withStoreRetry(intents.claim({ key, runId: step.runId, tool: step.tool, toolCallId: step.callId }))
    if (Option.isNone(prior)) return yield* runTool
    // The tool ended, but its result was not recorded by the engine: what it wrote beside the claim is.
    if (prior.value._tag === "Finished") return decodeOutcome(prior.value.outcome)
    const unknown = new OutcomeUnknown({
      agent: step.agent,
      runId: step.runId,
      tool: step.tool,
      toolCallId: step.callId,
      args: resultAsJson(step.args),
      reason: "its worker stopped while it ran, and no reconcile handler is set"
    })
    const settled = yield* reconcileUnknown(unknown, reconcile)
    switch (settled._tag) {
      case "Result": {
        const outcome: ToolOutcome = { _tag: "Succeeded", value: resultAsJson(settled.value) }
        const recorded = encodeOutcome(outcome)
        yield* withStoreRetry(intents.finish(key, recorded as Schema.Json))
        return decodeOutcome(recorded)
      }
      case "RunAgain":
        return yield* runTool
    }
  })
