/**
 * The budget ledger of one run: one row per dimension (its limit, what was used, which thresholds
 * fired), counters private and changed only through `spend*` methods. Checks and threshold events are
 * driven by the rows, so adding a dimension is adding a row, not another scattered `if`. Its state is
 * plain data (`LedgerState`) so a run snapshot can carry it. Tokens and tool calls are counted in the
 * run's `BudgetScope`, so runs under this one (agents called as tools, handoffs) charge it, and this run
 * charges every enclosing scope (a bounded composite, a calling agent).
 */
import type { Budget } from "../dsl/budget.ts"
import { BudgetScope, type ScopeOverrun } from "../dsl/lineage.ts"
import type { BudgetReason } from "../errors.ts"

/** The ledger as data: what a snapshot stores. */
export interface LedgerState {
  readonly turns: number
  readonly toolCalls: number
  readonly tokens: number
  /** The tool executed last, and how many times in a row. */
  readonly lastTool: string | undefined
  readonly consecutive: number
  /** `"<threshold>:<reason>"` for every threshold event already emitted. */
  readonly thresholdsFired: ReadonlyArray<string>
  /** Extensions a budget policy granted, by dimension (absent when none). */
  readonly extended?: Readonly<Record<string, number>>
}

/** A fresh run's ledger. */
export const emptyLedger: LedgerState = {
  turns: 0,
  toolCalls: 0,
  tokens: 0,
  lastTool: undefined,
  consecutive: 0,
  thresholdsFired: []
}

/** One dimension's standing. */
export interface LedgerRow {
  readonly reason: BudgetReason
  readonly limit: number
  readonly used: number
  /** The tool concerned, for the per-tool reasons. */
  readonly tool?: string | undefined
}

/**
 * Why a charge would go past a limit: the row to report in `BudgetExceeded`, with the owner of the
 * limit when it is an enclosing scope's rather than the run's own.
 */
export interface Overrun extends LedgerRow {
  readonly scope?: string | undefined
}

const limitOf = (budget: Budget, reason: BudgetReason): number => {
  switch (reason) {
    case "turns":
      return budget.maxTurns
    case "toolCalls":
      return budget.maxToolCalls
    case "duration":
      return budget.maxDuration
    case "perToolTimeout":
      return budget.perToolTimeout
    case "tokens":
      return budget.maxTokens
    case "consecutiveTool":
      return budget.maxConsecutiveSameTool
  }
}

/** The dimensions thresholds watch, in the order their events are emitted. */
const watched: ReadonlyArray<BudgetReason> = ["turns", "toolCalls", "tokens", "consecutiveTool", "duration"]

export class BudgetLedger {
  #turns: number
  /** Counts tokens and tool calls for this run and the runs under it, and charges the enclosing scopes. */
  readonly scope: BudgetScope
  #lastTool: string | undefined
  #consecutive: number
  /** Allocated on the first threshold that fires: most runs have none. */
  #fired: Set<string> | undefined
  /** Made on the first extension (or from a snapshot that has some): most runs never extend a limit. */
  #extended: Map<BudgetReason, number> | undefined

  constructor(
    private readonly budget: Budget,
    private readonly thresholds: ReadonlyArray<number>,
    state: LedgerState = emptyLedger,
    owner = "",
    parent: BudgetScope | undefined = undefined
  ) {
    this.#turns = state.turns
    this.scope = new BudgetScope(owner, { tokens: budget.maxTokens, toolCalls: budget.maxToolCalls }, parent, state)
    this.#lastTool = state.lastTool
    this.#consecutive = state.consecutive
    this.#fired = state.thresholdsFired.length === 0 ? undefined : new Set(state.thresholdsFired)
    const extended = state.extended === undefined ? [] : Object.entries(state.extended)
    this.#extended = extended.length === 0 ? undefined : new Map(extended as Array<[BudgetReason, number]>)
  }

  /** The limit of a dimension (`Infinity` when unlimited), with the extensions granted. */
  limit(reason: BudgetReason): number {
    return limitOf(this.budget, reason) + (this.#extended?.get(reason) ?? 0)
  }

  /** How much a dimension was extended so far. */
  extended(reason: BudgetReason): number {
    return this.#extended?.get(reason) ?? 0
  }

  /**
   * Extends a dimension of this run by `by`, when all its extensions stay within its configured limit;
   * false (nothing changed) otherwise. Only `turns` and `consecutiveTool`: tokens and tool calls are
   * charged to the run's budget scopes, shared with enclosing runs, which one run may not widen.
   */
  extend(reason: BudgetReason, by: number): boolean {
    if (reason !== "turns" && reason !== "consecutiveTool") return false
    const base = limitOf(this.budget, reason)
    const total = this.extended(reason) + by
    if (!(by >= 1) || !Number.isFinite(base) || total > base) return false
    ;(this.#extended ??= new Map()).set(reason, total)
    return true
  }

  get turns(): number {
    return this.#turns
  }

  get toolCalls(): number {
    return this.scope.used("toolCalls")
  }

  /** Before a model call: the overrun when no turn or no token is left (here or in an enclosing scope). */
  checkTurn(): Overrun | undefined {
    if (this.#turns >= this.limit("turns")) return { reason: "turns", limit: this.limit("turns"), used: this.#turns }
    return this.#fromScope(this.scope.exhausted("tokens"))
  }

  /** Counts one model call (routing included). */
  spendTurn(): void {
    this.#turns += 1
  }

  /** The overrun that spending `tokens` more would cause, without spending them (a streaming answer's usage so far). */
  peekTokens(tokens: number): Overrun | undefined {
    return this.#fromScope(this.scope.peek("tokens", tokens))
  }

  /** Counts a response's tokens; the overrun when they went past the limit. */
  spendTokens(tokens: number): Overrun | undefined {
    return this.#fromScope(this.scope.charge("tokens", tokens))
  }

  /**
   * Before executing `tool`: the overrun when no tool call is left (here or in an enclosing scope) or one
   * tool would repeat too often. Call `spendExecution` right after, with no yield in between, so that
   * concurrent runs sharing a scope cannot both take its last call.
   */
  checkExecution(tool: string): Overrun | undefined {
    const exhausted = this.scope.exhausted("toolCalls")
    if (exhausted !== undefined) return this.#fromScope(exhausted)
    const limit = this.limit("consecutiveTool")
    if (this.#lastTool === tool && this.#consecutive >= limit) return { reason: "consecutiveTool", limit, used: this.#consecutive, tool }
    return undefined
  }

  /** Counts one execution of `tool`, here and in every enclosing scope. */
  spendExecution(tool: string): void {
    this.scope.charge("toolCalls", 1)
    this.#consecutive = this.#lastTool === tool ? this.#consecutive + 1 : 1
    this.#lastTool = tool
  }

  /** The rows, given the run's elapsed time for `duration`. */
  rows(elapsedMs: number): ReadonlyArray<LedgerRow> {
    const used: Record<string, number> = {
      turns: this.#turns,
      toolCalls: this.scope.used("toolCalls"),
      tokens: this.scope.used("tokens"),
      consecutiveTool: this.#consecutive,
      duration: elapsedMs
    }
    return watched.map((reason) => ({ reason, limit: this.limit(reason), used: used[reason]! }))
  }

  /**
   * The thresholds newly reached (each `(threshold, dimension)` once per run), marked as fired.
   * Called after every counter changes.
   */
  crossedThresholds(elapsedMs: number): ReadonlyArray<LedgerRow & { readonly threshold: number }> {
    if (this.thresholds.length === 0) return []
    const crossed: Array<LedgerRow & { readonly threshold: number }> = []
    const rows = this.rows(elapsedMs)
    for (const threshold of this.thresholds) {
      for (const row of rows) {
        const key = `${threshold}:${row.reason}`
        if (!Number.isFinite(row.limit) || row.used < threshold * row.limit || this.#fired?.has(key) === true) continue
        ;(this.#fired ??= new Set()).add(key)
        crossed.push({ ...row, threshold })
      }
    }
    return crossed
  }

  #fromScope(overrun: ScopeOverrun | undefined): Overrun | undefined {
    if (overrun === undefined) return undefined
    const row = { reason: overrun.reason, limit: overrun.limit, used: overrun.used }
    return overrun.scope === this.scope ? row : { ...row, scope: overrun.scope.owner }
  }

  /** The ledger as data. */
  state(): LedgerState {
    return {
      turns: this.#turns,
      toolCalls: this.scope.used("toolCalls"),
      tokens: this.scope.used("tokens"),
      lastTool: this.#lastTool,
      consecutive: this.#consecutive,
      thresholdsFired: this.#fired === undefined ? [] : [...this.#fired],
      ...(this.#extended === undefined || this.#extended.size === 0 ? {} : { extended: Object.fromEntries(this.#extended) })
    }
  }
}
