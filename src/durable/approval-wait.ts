/**
 * A durable run's wait for decisions: the snapshot goes to the `ApprovalInbox` (once, as an
 * activity), then the run suspends on the wait's durable deferred (`decisions/<n>`), raced with a
 * durable clock at the run's `maxDuration` deadline (counted from its recorded start). `decide`
 * completes that deferred from any process; `cancel` completes it with no decisions, and the run,
 * finding its cancellation, ends with `Cancelled`. Decisions come bound to the snapshot `decide`
 * checked them against (`wait-binding.ts`): checked against another snapshot than the run's own (the
 * wait's row edited), they are not applied, and the run waits again.
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import * as DurableClock from "effect/workflow/DurableClock"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import type { Decisions } from "../dsl/decision.ts"
import { type RunSnapshot, RunSnapshotSchema } from "../dsl/run-snapshot.ts"
import type { Durability } from "../runtime/durability.ts"
import { compile } from "../runtime/plan.ts"
import { budgetExceeded } from "../runtime/run-context.ts"
import { Cancelled } from "../errors.ts"
import type { ApprovalInbox } from "./approval-inbox.ts"
import { resultAsJson } from "./schemas.ts"
import { withStoreRetry } from "./store-retry.ts"
import { CheckedDecisionsSchema, isBound, waitBinding } from "./wait-binding.ts"

const encodeSnapshot = Schema.encodeSync(RunSnapshotSchema)
/** What a wait bounded by the run's deadline ends with. */
const DecisionsOrExpired = Schema.Union([CheckedDecisionsSchema, Schema.Literal("expired")])

/** The durable deferreds of the first waits, made once (a deferred builds its exit's Schema when made). */
const firstWaits = Array.from({ length: 16 }, (_, i) => DurableDeferred.make(`decisions/${i + 1}`, { success: CheckedDecisionsSchema }))

/** The durable deferred of wait `wait` of a run. */
export const decisionsDeferred = (wait: number) =>
  firstWaits[wait - 1] ?? DurableDeferred.make(`decisions/${wait}`, { success: CheckedDecisionsSchema })

/** Decisions as plain JSON data (`Decision.approve` is a Data value). */
export const plainDecisions = (decisions: Decisions): unknown =>
  Object.fromEntries(Object.entries(decisions ?? {}).map(([id, decision]) => {
    const d = decision as { readonly _tag?: unknown; readonly reason?: unknown; readonly args?: unknown }
    switch (d?._tag) {
      case "Deny":
        return [id, { _tag: "Deny", reason: String(d.reason ?? "") }]
      case "Edit":
        return [id, { _tag: "Edit", args: resultAsJson(d.args) }]
      default:
        return [id, { _tag: d?._tag }]
    }
  }))

/**
 * One wait for decisions: the snapshot goes to the inbox (once), then the run suspends on the wait's
 * durable deferred, raced with a durable clock at the run's `maxDuration` deadline. `undefined` when
 * the decisions were checked against another snapshot than this one: the run asks again (next wait).
 */
export const awaitDecisions = (
  definition: AgentDefinition,
  durability: Durability,
  inbox: ApprovalInbox["Service"],
  wait: { readonly runId: string; readonly executionId: string; readonly wait: number; readonly snapshot: RunSnapshot }
) =>
  Effect.gen(function*() {
    const { runId } = wait
    const snapshot = encodeSnapshot(wait.snapshot) as Schema.Json
    yield* Activity.make({
      name: `approval/${runId}/${wait.wait}/open`,
      execute: withStoreRetry(inbox.open({ runId, wait: wait.wait, executionId: wait.executionId, snapshot }))
    })
    // A cancellation recorded before the wait opened (`cancel` then found no wait to wake) ends it here.
    const cancelledYet = (when: string) =>
      Activity.make({
        name: `approval/${runId}/${wait.wait}/cancelled-${when}`,
        success: Schema.NullOr(Schema.String),
        execute: Effect.map(withStoreRetry(inbox.cancelled(runId)), Option.getOrNull)
      }).pipe(Effect.flatMap((reason) => (reason === null ? Effect.void : Effect.fail(new Cancelled({ agent: definition.name, runId, reason })))))
    yield* cancelledYet("before")
    const deferred = decisionsDeferred(wait.wait)
    const maxDuration = definition.budget.maxDuration
    let decided: typeof CheckedDecisionsSchema.Type | "expired"
    if (!Number.isFinite(maxDuration)) {
      decided = yield* DurableDeferred.await(deferred)
    } else {
      const startedAt = yield* durability.startedAt(runId, 0)
      const now = yield* Clock.currentTimeMillis
      const left = Math.max(0, maxDuration - (now - startedAt))
      decided = yield* DurableDeferred.raceAll({
        name: `approval/${runId}/${wait.wait}`,
        success: DecisionsOrExpired,
        error: Schema.Never,
        effects: [
          DurableDeferred.await(deferred),
          DurableClock.sleep({ name: `deadline/${runId}/${wait.wait}`, duration: Duration.millis(left), inMemoryThreshold: Duration.zero }).pipe(
            Effect.as("expired" as const)
          )
        ]
      })
      if (decided === "expired") {
        const used = (yield* Clock.currentTimeMillis) - startedAt
        yield* Activity.make({ name: `approval/${runId}/${wait.wait}/close`, execute: withStoreRetry(inbox.close(runId, wait.wait)) })
        return yield* budgetExceeded(compile(definition), runId, { reason: "duration", limit: maxDuration, used }, wait.snapshot.state.transcript)
      }
    }
    yield* Activity.make({ name: `approval/${runId}/${wait.wait}/close`, execute: withStoreRetry(inbox.close(runId, wait.wait)) })
    // `cancel` wakes a waiting run with no decisions: it ends here.
    yield* cancelledYet("after")
    if (!isBound(decided)) return decided as Decisions
    // The same on every replay: both sides are recorded (the decisions, the steps the snapshot comes from).
    if (decided.checked !== waitBinding(wait.snapshot)) {
      yield* Effect.logWarning(
        `durable: the decisions given for wait ${wait.wait} of run ${runId} were checked against another snapshot than the run's ` +
          `(its row in agent_approval_waits was changed after it was written): none of them is applied, the run waits again`
      )
      return undefined
    }
    return decided.decisions as Decisions
  })
