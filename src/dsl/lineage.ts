/**
 * Where a run sits in a tree of runs: the run id of its parent (a composite, or an agent that called it
 * as a tool or handed off to it), and the chain of budget scopes it charges. A composite or an agent
 * sets both for its children, so their events name the parent run and their usage counts against every
 * enclosing budget; a top-level run has neither.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { RunStreamEvent } from "./events.ts"

/**
 * The run id of the enclosing run, if any.
 *
 * @example
 * ```ts
 * const parent = yield* ParentRun // undefined at the top level
 * ```
 */
export const ParentRun = Context.Reference<string | undefined>("effect-agent-dsl/ParentRun", {
  defaultValue: () => undefined
})

/** The dimensions a budget scope shares with the runs under it. */
export type ScopedDimension = "tokens" | "toolCalls"

/** A scope whose limit a charge reached or crossed. */
export interface ScopeOverrun {
  /** The scope whose limit it is (`scope.owner` names its agent or composite). */
  readonly scope: BudgetScope
  readonly reason: ScopedDimension
  readonly limit: number
  readonly used: number
}

/**
 * One node of the budget tree: an agent run or a bounded composite run, with its limits, what it and
 * the runs under it used, and its parent. Every charge is added to the node and all its ancestors, so
 * a parent's limit bounds the whole tree while each run's own limit still applies. Owned by the fibers
 * of one tree; counters change only synchronously, so concurrent children cannot both take the last unit.
 *
 * @example
 * ```ts
 * const root = new BudgetScope("research", { tokens: 10_000, toolCalls: 20 }, undefined)
 * const child = new BudgetScope("writer", { tokens: Infinity, toolCalls: 5 }, root)
 * child.exhausted("toolCalls") // undefined while both have calls left
 * ```
 */
export class BudgetScope {
  readonly #used: Record<ScopedDimension, number>

  constructor(
    readonly owner: string,
    readonly limits: Readonly<Record<ScopedDimension, number>>,
    readonly parent: BudgetScope | undefined,
    used: Readonly<Record<ScopedDimension, number>> = { tokens: 0, toolCalls: 0 }
  ) {
    this.#used = { ...used }
  }

  /** What this node and the runs under it used of `dimension`. */
  used(dimension: ScopedDimension): number {
    return this.#used[dimension]
  }

  /** The nearest scope, from this one up, with nothing left of `dimension`. */
  exhausted(dimension: ScopedDimension): ScopeOverrun | undefined {
    for (let scope: BudgetScope | undefined = this; scope !== undefined; scope = scope.parent) {
      const used = scope.#used[dimension]
      const limit = scope.limits[dimension]
      if (used >= limit) return { scope, reason: dimension, limit, used }
    }
    return undefined
  }

  /** The nearest scope, from this one up, that `amount` more of `dimension` would take past its limit. */
  peek(dimension: ScopedDimension, amount: number): ScopeOverrun | undefined {
    for (let scope: BudgetScope | undefined = this; scope !== undefined; scope = scope.parent) {
      const used = scope.#used[dimension] + amount
      const limit = scope.limits[dimension]
      if (used > limit) return { scope, reason: dimension, limit, used }
    }
    return undefined
  }

  /**
   * Adds `amount` to this node and every ancestor; the nearest scope now past its limit, if any. What
   * is used saturates at `Number.MAX_VALUE`: never `Infinity`, which would exhaust an unlimited scope
   * (`Infinity >= Infinity`) and read back from a snapshot's JSON as `null`.
   */
  charge(dimension: ScopedDimension, amount: number): ScopeOverrun | undefined {
    let overrun: ScopeOverrun | undefined
    for (let scope: BudgetScope | undefined = this; scope !== undefined; scope = scope.parent) {
      const used = (scope.#used[dimension] = Math.min(scope.#used[dimension] + amount, Number.MAX_VALUE))
      const limit = scope.limits[dimension]
      if (overrun === undefined && used > limit) overrun = { scope, reason: dimension, limit, used }
    }
    return overrun
  }
}

/**
 * The budget scope a new run charges: the enclosing agent's or bounded composite's, if any.
 *
 * @example
 * ```ts
 * const scope = yield* CurrentBudgetScope // undefined at the top level
 * ```
 */
export const CurrentBudgetScope = Context.Reference<BudgetScope | undefined>("effect-agent-dsl/CurrentBudgetScope", {
  defaultValue: () => undefined
})

/**
 * Where the runs under a streaming composite send their events (`composite.runStream`): every agent
 * run under it, children of children included, emits into it. Undefined when nobody streams.
 *
 * @example
 * ```ts
 * const sink = yield* StreamSink // undefined outside a streaming composite
 * ```
 */
export const StreamSink = Context.Reference<((event: RunStreamEvent) => Effect.Effect<void>) | undefined>(
  "effect-agent-dsl/StreamSink",
  { defaultValue: () => undefined }
)
