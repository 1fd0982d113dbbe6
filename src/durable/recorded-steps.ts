/**
 * The `Durability` of one workflow execution: every step of the run becomes an Activity, named from
 * the run id, the turn and the call id (`model/<run>/step/<turn>`, `tool/<run>/<turn>/<call>`, …; a
 * name met again in the same execution gets `#2`, `#3`; a tool step's parts are encoded, see
 * `step-keys.ts`), with the Schemas of `schemas.ts`. The first
 * execution runs the step and the engine records its result; a replay of the workflow reads it back.
 * The names depend only on the run's control flow, which depends only on recorded results: so a
 * replay meets the same names in the same order.
 *
 * Tool executions follow the tool's effect class: `readOnly` and `idempotent` run again when a crash
 * lost their result (the latter with an `idempotencyKey` stable over those runs); `mutating` claim an
 * intent first (`ToolIntents`: owner and lease, renewed while the call runs). A claim found on a
 * replay is waited on while its owner still works (live lease, or running in this process); once the
 * owner is dead or its lease expired, this worker takes it over and reconciliation decides
 * (`reconcile.ts`), never a blind second run. An interrupted call is waited for until it really
 * stopped (a tool that ignores its signal included), and what it ended with is still written.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import { type AgentError, Cancelled, OutcomeUnknown, type SkillFailed, type ToolFailed } from "../errors.ts"
import type { ApprovalInbox } from "./approval-inbox.ts"
import { Durability, type ModelStep, type ToolRunExtra, type ToolStep } from "../runtime/durability.ts"
import type { ToolEffectClass } from "../dsl/tool.ts"
import type { LlmResponse } from "../model/messages.ts"
import type { ModelError } from "../errors.ts"
import { AgentErrorSchema, LlmResponseSchema, resultAsJson, type ToolExecution, ToolExecutionSchema, type ToolOutcome, ToolOutcomeSchema } from "./schemas.ts"
import { withStoreRetry } from "./store-retry.ts"
import { decodeStored, DurableRunUnreadable } from "./run-unreadable.ts"
import { BudgetScope } from "../dsl/lineage.ts"
import { type IntentState, type Lease, ToolIntents } from "./tool-intents.ts"
import { ownerState, workerId } from "./worker-identity.ts"
import { AwaitAbandoned } from "../internal/from-maybe-effect.ts"
import { type Reconcile, reconcileUnknown } from "./reconcile.ts"
import { InStep } from "./journal-events.ts"
import { toolResultAsJson, toolResultFromJson } from "./child-suspension-json.ts"
import { legacyToolKey, toolStepKeys } from "./step-keys.ts"

const encodeOutcome = Schema.encodeSync(Schema.toCodecJson(ToolOutcomeSchema))
const decodeOutcome = Schema.decodeUnknownSync(Schema.toCodecJson(ToolOutcomeSchema))

/** How long a claim on a mutating call lives without a renewal, by default. */
export const defaultLeaseMs = 10_000

/**
 * How long, by default, a replay waits for a mutating call that another worker (or an interrupted
 * fiber of this one) still runs, its lease renewed: after that the call's outcome is unknown.
 */
export const defaultHandOverMs = 60_000

const ErrorSchema = AgentErrorSchema as unknown as Schema.Codec<any, any>

/**
 * `Activity.make`, with the Schema its engine decodes a result by made once per pair of Schemas.
 * effect/workflow builds `exitSchemaPartial` afresh in every `Activity.make`, so the engine compiled
 * a parser for every step (a step's Schemas here are the same few module-level ones).
 */
const makeActivity = <S extends Schema.Top = typeof Schema.Void, E extends Schema.Top = typeof Schema.Never>(options: {
  readonly name: string
  readonly success?: S
  readonly error?: E
  readonly execute: Effect.Effect<S["Type"], E["Type"], any>
}): Activity.Activity<S, E, never> => {
  const activity = Activity.make(options as any) as unknown as Activity.Activity<S, E, never>
  const success = options.success ?? Schema.Void
  const error = options.error ?? Schema.Never
  let byError = exitSchemas.get(success)
  if (byError === undefined) exitSchemas.set(success, byError = new WeakMap())
  let exit = byError.get(error)
  if (exit === undefined) byError.set(error, exit = Schema.Exit(Schema.toCodecJson(success), Schema.toCodecJson(error), Schema.Unknown))
  ;(activity as { exitSchemaPartial: unknown }).exitSchemaPartial = exit
  return activity
}
const exitSchemas = new WeakMap<Schema.Top, WeakMap<Schema.Top, Schema.Top>>()
const ToolNames = Schema.Array(Schema.String)

/**
 * A fresh `Durability` for one execution of the workflow of run `rootRunId` (every replay makes its
 * own: the occurrence counters start again).
 */
export const recordedSteps = (options: {
  readonly rootRunId: string
  readonly reconcile: Reconcile | undefined
  /** How long a claim on a mutating call lives without a renewal (default 10 s). */
  readonly leaseMs?: number | undefined
  /** How long a replay waits for a mutating call another worker still runs before its outcome is unknown (default 60 s). */
  readonly handOverMs?: number | undefined
  /** Where cancellations are read (every step checks, and is interrupted by, a cancellation of the run). */
  readonly inbox?: ApprovalInbox["Service"] | undefined
  readonly agent?: string | undefined
}): Effect.Effect<Durability, never, ToolIntents> =>
  Effect.gen(function*() {
    const leaseMs = options.leaseMs ?? defaultLeaseMs
    const handOverMs = options.handOverMs ?? defaultHandOverMs
    const cancelling = cancellable(options.inbox, options.agent ?? "(agent)", options.rootRunId)
    // Inside a step's activity: what it emits (a retry, a child run's events) a replay does not emit again.
    const guard = <A, E>(step: Effect.Effect<A, E>) => Effect.provideService(cancelling(step), InStep, true)
    const intents = yield* ToolIntents
    const seen = new Map<string, number>()
    /** The occurrence of `base` in this execution: 1, then 2, … */
    const occurrence = (base: string): number => {
      const n = (seen.get(base) ?? 0) + 1
      seen.set(base, n)
      return n
    }
    /** `base`, or `base#n` for its n-th occurrence in this execution. */
    const nameOf = (base: string): string => {
      const n = occurrence(base)
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
        record<number, never>(makeActivity({ name: `start/${runId}`, success: Schema.Finite, execute: Effect.succeed(now) })),
      model: (step: ModelStep, call: Effect.Effect<LlmResponse, ModelError>) =>
        record<LlmResponse, ModelError>(makeActivity({
          name: nameOf(`model/${step.runId}/${step.purpose}/${step.turn}`),
          success: LlmResponseSchema,
          error: ErrorSchema,
          execute: guard(call)
        })),
      tool: (step, run) => {
        // Joined from encoded parts (`step-keys.ts`): two calls of two runs never share a claim key.
        const keys = toolStepKeys(options.rootRunId, step.runId, step.turn, step.callId)
        const n = occurrence(keys.base)
        const name = n === 1 ? keys.base : `${keys.base}#${n}`
        const legacyKey = keys.legacyBase === undefined ? undefined : legacyToolKey(keys.legacyBase, n)
        const idempotencyKey = keys.idempotencyKey
        // Runs the tool starts charge a scope of their own under the run's, so what they used is known
        // and recorded; a replay, which does not run them, charges the run's scope with it.
        let live = false
        const execute = Effect.suspend(() => {
          live = true
          const scope = new BudgetScope(`${step.tool} (durable)`, { tokens: Infinity, toolCalls: Infinity }, step.budgetScope)
          return executeTool(step, step.effect, { key: name, legacyKey }, (extra) => run({ ...extra, budgetScope: scope }), idempotencyKey, intents, options.reconcile, leaseMs, handOverMs).pipe(
            Effect.map((outcome): ToolExecution => ({ outcome, charged: { tokens: scope.used("tokens"), toolCalls: scope.used("toolCalls") } }))
          )
        })
        return record<ToolExecution, OutcomeUnknown>(makeActivity({ name, success: ToolExecutionSchema, error: ErrorSchema, execute: guard(execute) })).pipe(
          Effect.map(({ outcome, charged }): Exit.Exit<unknown, unknown> => {
            if (!live) {
              if (charged.tokens > 0) step.budgetScope.charge("tokens", charged.tokens)
              if (charged.toolCalls > 0) step.budgetScope.charge("toolCalls", charged.toolCalls)
            }
            // A child's suspension (an agent called as a tool waits for a decision) is read back as one.
            return outcome._tag === "Succeeded" ? Exit.succeed(toolResultFromJson(outcome.value)) : Exit.fail(outcome.error)
          })
        )
      },
      knowledge: (runId, source, load: Effect.Effect<string, ToolFailed>) =>
        record<string, ToolFailed>(makeActivity({ name: nameOf(`knowledge/${runId}/${source}`), success: Schema.String, error: ErrorSchema, execute: guard(load) })),
      // A typed skill's value is recorded with its output Schema's JSON codec (a `Date` comes back a
      // `Date`); `run` has checked it against that Schema first, so encoding it cannot fail.
      skill: (runId, skill, run: Effect.Effect<unknown, SkillFailed>, output?: Schema.Top) =>
        record<unknown, SkillFailed>(makeActivity({
          name: nameOf(`skill/${runId}/${skill}`),
          success: output === undefined ? Schema.Json : output as Schema.Codec<unknown, unknown>,
          error: ErrorSchema,
          execute: guard(output === undefined ? Effect.map(run, resultAsJson) : run)
        })),
      toolSelection: <R>(runId: string, pick: Effect.Effect<ReadonlyArray<string>, never, R>) =>
        record<ReadonlyArray<string>, never>(makeActivity({
          name: nameOf(`tools/${runId}`),
          success: ToolNames,
          execute: pick as Effect.Effect<ReadonlyArray<string>>
        }))
    }
    return durability
  })

/**
 * One execution of a tool, inside its activity: claimed first when mutating (owner and lease), run
 * with the `Durability` unset (an agent called as a tool runs inside this one activity), and its
 * outcome written beside a mutating tool's claim.
 */
const executeTool = (
  step: ToolStep,
  effect: ToolEffectClass,
  keys: { readonly key: string; readonly legacyKey: string | undefined },
  run: (extra: ToolRunExtra) => Effect.Effect<Exit.Exit<unknown, unknown>>,
  idempotencyKey: string,
  intents: ToolIntents["Service"],
  reconcile: Reconcile | undefined,
  leaseMs: number,
  handOverMs: number
): Effect.Effect<ToolOutcome, AgentError> =>
  Effect.gen(function*() {
    const extra: ToolRunExtra = effect === "readOnly" ? {} : { idempotencyKey }
    if (effect !== "mutating") {
      const exit = yield* run(extra).pipe(Effect.provideService(Durability, undefined))
      if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
      return decodeOutcome(encodeOutcome(outcomeOf(exit)))
    }
    const key = yield* claimKey(step, keys, intents)
    const lease: Lease = { owner: workerId, ms: leaseMs }
    const owned = <A, E>(body: Effect.Effect<A, E>) => holdingLease(key, lease, intents, body)
    const runOwned = runMutating(key, lease, run(extra).pipe(Effect.provideService(Durability, undefined)), intents, handOverMs)
    let prior = yield* withStoreRetry(intents.claim({ key, runId: step.runId, tool: step.tool, toolCallId: step.callId }, lease))
    if (Option.isNone(prior)) return yield* runOwned
    let waited = 0
    const waitingSince = yield* Clock.currentTimeMillis
    while (true) {
      const state: IntentState | undefined = Option.getOrUndefined(prior)
      // Written beside the claim: the tool ended (here or elsewhere) but the engine did not record it.
      // An outcome of another shape (edited, damaged) is an unreadable row: the engine records nothing.
      if (state?._tag === "Finished") {
        const outcome = decodeStored({ runId: step.runId, table: "agent_tool_intents", row: `claim ${JSON.stringify(key)} (outcome)` }, () => decodeOutcome(state.outcome))
        return outcome instanceof DurableRunUnreadable ? yield* Effect.die(outcome) : outcome
      }
      if (state !== undefined) {
        const owner = ownerState(state.owner)
        const inFlightHere = inFlight.has(key)
        const dead = owner === "dead" || (owner === "self" && !inFlightHere)
        // Never while the owner still works: a live lease, or the call still running in this process.
        if (!inFlightHere && (dead || !state.leaseLive)) {
          if (yield* withStoreRetry(intents.takeOver(key, state.owner, lease, dead))) {
            return yield* owned(settleUnknown(step, key, reconcile, intents, runMutating(key, lease, run(extra).pipe(Effect.provideService(Durability, undefined)), intents, handOverMs)))
          }
        } else if ((yield* Clock.currentTimeMillis) - waitingSince >= handOverMs) {
          // The owner still works (or seems to) past the bound: fence its claim (its renewals fail from
          // now on) and let the operator's path decide; never run the call a second time here.
          if (yield* withStoreRetry(intents.takeOver(key, state.owner, lease, true))) {
            return yield* owned(settleStillRunning(step, key, reconcile, intents, state.owner, handOverMs))
          }
        }
      }
      // Someone else holds it: look again soon (its outcome, or the end of its lease).
      waited += 1
      yield* Effect.sleep(Duration.millis(Math.min(1_000, 50 * waited)))
      const found = yield* withStoreRetry(intents.read(key))
      if (Option.isSome(found)) {
        prior = found
        continue
      }
      // The claim is gone (cleared by hand): claim afresh.
      prior = yield* withStoreRetry(intents.claim({ key, runId: step.runId, tool: step.tool, toolCallId: step.callId }, lease))
      if (Option.isNone(prior)) return yield* runOwned
    }
  })

/**
 * The claim key of a mutating call: its key, or the key an earlier version gave it when a claim of
 * this very call (same run, tool and call id) is there (a run in flight across the upgrade whose
 * run id or call id holds a character `step-keys.ts` encodes): the call is then not run again.
 */
const claimKey = (step: ToolStep, keys: { readonly key: string; readonly legacyKey: string | undefined }, intents: ToolIntents["Service"]): Effect.Effect<string> => {
  const legacyKey = keys.legacyKey
  if (legacyKey === undefined) return Effect.succeed(keys.key)
  return Effect.map(withStoreRetry(intents.read(legacyKey)), (found) =>
    Option.isSome(found) && found.value.runId === step.runId && found.value.tool === step.tool && found.value.toolCallId === step.callId ? legacyKey : keys.key)
}

/** How often a step in flight looks for a cancellation of its run. */
const cancelPollMs = 500

/**
 * `step`, unless run `runId` is cancelled: checked before it starts, and while it runs (the inbox
 * says when, or is asked every half second); a cancellation interrupts it (its signal aborts; a
 * mutating call is waited for, see `runMutating`) and the step fails with `Cancelled`, which the
 * engine records as its result.
 */
export const cancellable = (inbox: ApprovalInbox["Service"] | undefined, agent: string, runId: string) =>
<A, E>(step: Effect.Effect<A, E>): Effect.Effect<A, E | Cancelled> => {
  if (inbox === undefined) return step
  const check = Effect.flatMap(withStoreRetry(inbox.cancelled(runId)), (reason) =>
    Option.isSome(reason) ? Effect.fail(new Cancelled({ agent, runId, reason: reason.value })) : Effect.void)
  const onCancelled = inbox.onCancelled
  if (onCancelled !== undefined) {
    return Effect.andThen(check, interruptedOnCancel(step, (listener) => onCancelled(runId, listener), (reason) => new Cancelled({ agent, runId, reason })))
  }
  const watch = Effect.andThen(Effect.sleep(Duration.millis(cancelPollMs)), check).pipe(Effect.forever)
  return Effect.andThen(check, Effect.raceFirst(step, watch as Effect.Effect<never, Cancelled>))
}

/**
 * `step` in a fiber of its own, interrupted when `subscribe`'s listener hears the run's cancellation:
 * it then fails with `cancelled(reason)` once it stopped. What `Effect.raceFirst` with a watcher does,
 * with one fiber instead of two and no watcher running (a durable step is on the hot path).
 */
const interruptedOnCancel = <A, E>(
  step: Effect.Effect<A, E>,
  subscribe: (listener: (reason: string) => void) => () => void,
  cancelled: (reason: string) => Cancelled
): Effect.Effect<A, E | Cancelled> =>
  Effect.withFiber((parent) =>
    Effect.callback<A, E | Cancelled>((resume) => {
      let reason: string | undefined
      const child = Effect.runForkWith(parent.context as Context.Context<never>)(step)
      const unsubscribe = subscribe((heard) => {
        reason = heard
        child.interruptUnsafe(parent.id)
      })
      child.addObserver((exit) => {
        unsubscribe()
        resume(reason !== undefined && Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? Effect.fail(cancelled(reason)) : exit)
      })
      return Effect.suspend(() => {
        unsubscribe()
        return Fiber.interrupt(child)
      })
    })
  )

/** The keys of mutating calls running in this process (an interrupted one included, until it really stopped). */
const inFlight = new Set<string>()

const outcomeOf = (exit: Exit.Exit<unknown, unknown>): ToolOutcome =>
  Exit.isSuccess(exit) ? { _tag: "Succeeded", value: toolResultAsJson(exit.value) } : { _tag: "Failed", error: Cause.squash(exit.cause) }

/**
 * `body` with the lease on `key` renewed every third of its length until `body` ended, an interrupted
 * call that ignores its signal included (it is waited for: see `AwaitAbandoned`).
 */
const holdingLease = <A, E>(key: string, lease: Lease, intents: ToolIntents["Service"], body: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.scoped(Effect.gen(function*() {
    const renew = intents.renew(key, lease).pipe(Effect.ignore)
    yield* Effect.forkScoped(Effect.repeat(Effect.delay(renew, Duration.millis(Math.max(10, Math.floor(lease.ms / 3)))), Schedule.forever))
    return yield* body
  }))

/**
 * Runs a claimed mutating call, its lease renewed while it runs. Its outcome is written beside the
 * claim. Interrupted (its run moved to another worker, or it is cancelled), the call's signal aborts
 * and its end is waited for, at most `handOverMs`: when it still ended with a value or an error, that
 * is written too (the worker now running the run reads it instead of reconciling); when it stopped
 * without one, the lease is released, so reconciliation can start at once. A call still running after
 * `handOverMs` (it ignores its signal and hangs) no longer holds the step (so the run's shard can move):
 * it goes on in this process with its lease renewed, and writes its outcome when it ends; the worker
 * replaying the run waits for that at most its own `handOverWait`, then fences the claim.
 */
const runMutating = (
  key: string,
  lease: Lease,
  run: Effect.Effect<Exit.Exit<unknown, unknown>>,
  intents: ToolIntents["Service"],
  handOverMs: number
): Effect.Effect<ToolOutcome> =>
  Effect.suspend(() => {
    inFlight.add(key)
    let abandoned: ToolOutcome | undefined
    const awaiting = {
      settled: (o: { readonly _tag: "Value"; readonly value: unknown } | { readonly _tag: "Error"; readonly error: unknown }) => {
        abandoned = o._tag === "Value" ? { _tag: "Succeeded", value: resultAsJson(o.value) } : { _tag: "Failed", error: o.error }
      }
    }
    const finish = (outcome: ToolOutcome) => {
      // Read back as a replay would: the first execution goes on with exactly what is recorded.
      const recorded = encodeOutcome(outcome)
      return Effect.as(withStoreRetry(intents.finish(key, recorded as Schema.Json)), decodeOutcome(recorded))
    }
    const call = holdingLease(key, lease, intents, run.pipe(
      Effect.provideService(AwaitAbandoned, awaiting),
      Effect.flatMap((exit) => (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? Effect.interrupt : finish(outcomeOf(exit)))),
      Effect.onInterrupt(() =>
        abandoned === undefined ? withStoreRetry(intents.release(key, lease.owner)) : Effect.asVoid(finish(abandoned))
      )
    )).pipe(Effect.ensuring(Effect.sync(() => inFlight.delete(key))))
    // The call in a fiber of its own, so that an interruption waits for it at most `handOverMs`.
    return Effect.flatMap(Effect.forkDetach(call), (fiber) =>
      Fiber.join(fiber).pipe(
        Effect.onInterrupt(() =>
          Effect.andThen(
            Effect.forkDetach(Fiber.interrupt(fiber)),
            Effect.raceFirst(Effect.asVoid(Fiber.await(fiber)), Effect.sleep(Duration.millis(handOverMs)))
          )
        )
      ))
  })

/** A claim whose outcome is unknown, now held by this worker: the reconcile handler says what happened. */
const settleUnknown = (
  step: ToolStep,
  key: string,
  reconcile: Reconcile | undefined,
  intents: ToolIntents["Service"],
  runAgain: Effect.Effect<ToolOutcome>
): Effect.Effect<ToolOutcome, OutcomeUnknown> =>
  Effect.gen(function*() {
    const unknown = new OutcomeUnknown({
      agent: step.agent,
      runId: step.runId,
      tool: step.tool,
      toolCallId: step.callId,
      args: resultAsJson(step.args),
      reason: "its worker stopped while it ran (its lease expired), and no reconcile handler is set"
    })
    const settled = yield* reconcileUnknown(unknown, reconcile)
    switch (settled._tag) {
      case "Result": {
        const recorded = encodeOutcome({ _tag: "Succeeded", value: resultAsJson(settled.value) })
        yield* withStoreRetry(intents.finish(key, recorded as Schema.Json))
        return decodeOutcome(recorded)
      }
      case "RunAgain":
        return yield* runAgain
    }
  })

/**
 * A claim another worker still held, its lease renewed, when this replay stopped waiting (the durable
 * agent's `handOverWait`): now fenced (held by this worker), its outcome unknown. The reconcile handler
 * may say what happened (`Reconciled.result`); `runAgain` is refused, because the old owner may still
 * run the call; without a handler the run ends with `OutcomeUnknown`.
 */
const settleStillRunning = (
  step: ToolStep,
  key: string,
  reconcile: Reconcile | undefined,
  intents: ToolIntents["Service"],
  owner: string | undefined,
  handOverMs: number
): Effect.Effect<ToolOutcome, OutcomeUnknown> =>
  Effect.gen(function*() {
    const reason = `its worker ${owner ?? "(unnamed)"} was still running it after ${handOverMs} ms (the durable agent's handOverWait): it may have run, or may still complete`
    const unknown = new OutcomeUnknown({ agent: step.agent, runId: step.runId, tool: step.tool, toolCallId: step.callId, args: resultAsJson(step.args), reason })
    const settled = yield* reconcileUnknown(unknown, reconcile)
    if (settled._tag === "RunAgain") {
      return yield* new OutcomeUnknown({ ...unknown, reason: `${reason}; the reconcile handler answered runAgain, and runAgain is refused while that worker may still run the call` })
    }
    const recorded = encodeOutcome({ _tag: "Succeeded", value: resultAsJson(settled.value) })
    yield* withStoreRetry(intents.finish(key, recorded as Schema.Json))
    return decodeOutcome(recorded)
  })
