/**
 * The seam durable runs hook into (`effect-agent-dsl/durable`): every step of a run whose result must
 * survive a crash goes through it — model calls, tool executions, preloaded knowledge, a deterministic
 * skill, tool pre-selection — and so do the two values a replay must see again unchanged, the run id
 * and the start time. The loop reads the `Durability` reference once per run; when it is unset (every
 * run but a durable one) the loop calls nothing more than before.
 *
 * A durable run provides one `Durability` per workflow execution, which wraps each step in an
 * Activity: the first execution records the step's result, a replay reads it back instead of running
 * the step again.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type * as Exit from "effect/Exit"
import type { ModelError, OutcomeUnknown, SkillFailed, ToolFailed } from "../errors.ts"
import type { LlmResponse } from "../model/messages.ts"
import type { ToolEffectClass } from "../dsl/tool.ts"
import type { BudgetScope } from "../dsl/lineage.ts"

/** Which model call of a run: the routing call, a turn's step, or a soft landing's last call. */
export interface ModelStep {
  readonly runId: string
  readonly turn: number
  readonly purpose: "route" | "step" | "landing"
}

/** Which tool execution of a run: the call (by turn and id), the tool and its decoded arguments. */
export interface ToolStep {
  readonly agent: string
  readonly runId: string
  readonly turn: number
  readonly callId: string
  readonly tool: string
  readonly args: unknown
  /** The run's budget scope: what runs started by the tool (an agent as a tool) charge. */
  readonly budgetScope: BudgetScope
}

/** What a durable run adds to a tool's execution. */
export interface ToolRunExtra {
  readonly idempotencyKey?: string | undefined
  /** The budget scope runs started by the tool charge (default: the run's), so their usage can be recorded. */
  readonly budgetScope?: BudgetScope | undefined
}

/**
 * Wraps the steps of a run. Each method gets the step and the effect that performs it, and answers
 * with that effect's result (recorded, or replayed).
 */
export interface Durability {
  /** The id of a new run: `fresh` (the loop's own), or an id the durable run chose. */
  readonly runId: (fresh: Effect.Effect<string>) => Effect.Effect<string>
  /** When run `runId` started: `now` on its first execution, the recorded time on a replay. */
  readonly startedAt: (runId: string, now: number) => Effect.Effect<number>
  readonly model: (step: ModelStep, call: Effect.Effect<LlmResponse, ModelError>) => Effect.Effect<LlmResponse, ModelError>
  /**
   * One execution of a tool; `run` executes it (with `extra` in the tool's run context) and never
   * fails: its Exit is the tool's outcome. Fails with `OutcomeUnknown` when a mutating tool's earlier
   * execution left no recorded outcome and reconciliation did not settle it.
   */
  readonly tool: (
    step: ToolStep & { readonly effect: ToolEffectClass },
    run: (extra: ToolRunExtra) => Effect.Effect<Exit.Exit<unknown, unknown>>
  ) => Effect.Effect<Exit.Exit<unknown, unknown>, OutcomeUnknown>
  /** A preloaded knowledge source, loaded at the start of run `runId`. */
  readonly knowledge: (runId: string, source: string, load: Effect.Effect<string, ToolFailed>) => Effect.Effect<string, ToolFailed>
  /** A skill implemented by a function (no model). */
  readonly skill: (runId: string, skill: string, run: Effect.Effect<unknown, SkillFailed>, output?: Schema.Top) => Effect.Effect<unknown, SkillFailed>
  /** Tool pre-selection: the names of the tools offered. */
  readonly toolSelection: <R>(runId: string, pick: Effect.Effect<ReadonlyArray<string>, never, R>) => Effect.Effect<ReadonlyArray<string>, never, R>
}

/**
 * The current run's `Durability`; undefined outside a durable run.
 *
 * @example
 * ```ts
 * const durability = yield* Durability // undefined in a plain run
 * ```
 */
export const Durability = Context.Reference<Durability | undefined>("effect-agent-dsl/Durability", {
  defaultValue: () => undefined
})
