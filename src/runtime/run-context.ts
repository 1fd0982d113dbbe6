/**
 * The context of one run: the plan and the chosen skill, the run's id and start, a bound `emit` that
 * stamps agent, run, skill and turn on every event, and the run's state (transcript, pending tool
 * calls, budget ledger, invalid-argument retries, knowledge cache), private and changed only through
 * methods. `state()` gives that state as plain data for a snapshot; `RunContext.restore` rebuilds a
 * context from it. Owned by the run's fiber, never shared.
 */
import { Clock, Effect } from "effect"
import type { AgentEvent } from "../dsl/events.ts"
import type { AnyTool } from "../dsl/tool.ts"
import { BudgetExceeded } from "../errors.ts"
import type { LlmMessage, ModelRequest, ToolCall, ToolDefinition } from "../model/messages.ts"
import type { BudgetScope } from "../dsl/lineage.ts"
import { BudgetLedger, emptyLedger, type LedgerState, type Overrun } from "./budget-ledger.ts"
import { emit } from "./emit.ts"
import type { AgentPlan, SkillPlan } from "./plan.ts"

/** An event without the fields the context stamps. */
export type UnscopedEvent = AgentEvent extends infer E ? E extends AgentEvent ? Omit<E, "agent" | "runId" | "skill" | "turn"> : never : never

const turnScoped: ReadonlySet<AgentEvent["_tag"]> = new Set<AgentEvent["_tag"]>([
  "Turn", "ModelCall", "ModelResponse", "ToolUse", "ToolError", "InvalidArgs", "ToolHallucinated", "ArgsRepaired", "KnowledgeUsed"
])

/** Stamps `agent` and `runId` on every event, `skill` on skill-scoped ones, and `turn` on turn-scoped ones. */
export const stamp = (
  plan: AgentPlan,
  scope: { readonly runId: string; readonly skill: string; readonly turn: number },
  event: UnscopedEvent
): AgentEvent => {
  const base = { ...event, agent: plan.name, runId: scope.runId }
  if (turnScoped.has(event._tag)) return { ...base, skill: scope.skill, turn: scope.turn } as AgentEvent
  if (event._tag === "SkillChosen") return { ...base, skill: scope.skill } as AgentEvent
  return base as AgentEvent
}

/** A run's state as plain data: everything a snapshot needs beside the plan. */
export interface RunState {
  readonly runId: string
  /** The run's input as the model sees it (text). */
  readonly input: string
  readonly skill: string
  /** Wall time spent before this context (a resumed run continues its `duration` budget). */
  readonly elapsedMs: number
  readonly transcript: ReadonlyArray<LlmMessage>
  /** Tool calls of the last model answer not handled yet, in order. */
  readonly pending: ReadonlyArray<ToolCall>
  /** Names of the tools offered to the model (narrowed by tool pre-selection). */
  readonly offered: ReadonlyArray<string>
  readonly ledger: LedgerState
  /** Invalid-argument retries granted so far, by tool. */
  readonly invalidArgsRetries: Readonly<Record<string, number>>
  /** Knowledge loaded so far, by source name. */
  readonly knowledge: Readonly<Record<string, string>>
}

export class RunContext {
  readonly ledger: BudgetLedger
  readonly #transcript: Array<LlmMessage>
  #pending: ReadonlyArray<ToolCall>
  /** How many of `#pending` were handled. */
  #settled = 0
  #offered: ReadonlyArray<AnyTool>
  readonly #invalidArgsRetries: Map<string, number>
  readonly #knowledge: Map<string, string>

  private constructor(
    readonly plan: AgentPlan,
    readonly skill: SkillPlan,
    readonly runId: string,
    readonly input: string,
    /** When the run started, on this process's clock (now minus the time spent before a resume). */
    readonly startedAt: number,
    state: Omit<RunState, "runId" | "input" | "skill" | "elapsedMs"> | undefined,
    parentScope: BudgetScope | undefined
  ) {
    this.ledger = new BudgetLedger(plan.budget, plan.thresholds, state?.ledger ?? emptyLedger, plan.name, parentScope)
    this.#transcript = [...(state?.transcript ?? [])]
    this.#pending = state?.pending ?? []
    this.#offered = state === undefined ? skill.offerable : skill.offerable.filter((t) => state.offered.includes(t.name))
    this.#invalidArgsRetries = new Map(Object.entries(state?.invalidArgsRetries ?? {}))
    this.#knowledge = new Map(Object.entries(state?.knowledge ?? {}))
  }

  /**
   * A new run's context; `turns` already spent (1 after a model-routed skill choice). `parentScope` is
   * the budget scope of the enclosing run, which this run's tokens and tool calls are charged to as well.
   */
  static start(
    plan: AgentPlan,
    skill: SkillPlan,
    runId: string,
    input: string,
    startedAt: number,
    turns: number,
    parentScope?: BudgetScope
  ): RunContext {
    const context = new RunContext(plan, skill, runId, input, startedAt, undefined, parentScope)
    for (let i = 0; i < turns; i++) context.ledger.spendTurn()
    return context
  }

  /** A context continuing `state` (see `RunState`), started `state.elapsedMs` before `now`. */
  static restore(plan: AgentPlan, skill: SkillPlan, state: RunState, now: number, parentScope?: BudgetScope): RunContext {
    return new RunContext(plan, skill, state.runId, state.input, now - state.elapsedMs, state, parentScope)
  }

  get agent(): string {
    return this.plan.name
  }

  /** The current turn: 1 for the run's first model call. */
  get turn(): number {
    return this.ledger.turns
  }

  get transcript(): ReadonlyArray<LlmMessage> {
    return this.#transcript
  }

  /** Appends messages to the transcript. */
  append(...messages: ReadonlyArray<LlmMessage>): void {
    this.#transcript.push(...messages)
  }

  /** The next tool call of the last answer still to handle. */
  get nextPending(): ToolCall | undefined {
    return this.#pending[this.#settled]
  }

  /** Whether calls of the last answer are still to handle. */
  get hasPending(): boolean {
    return this.#settled < this.#pending.length
  }

  /** Records the calls of a model answer as pending. */
  expect(calls: ReadonlyArray<ToolCall>): void {
    this.#pending = calls
    this.#settled = 0
  }

  /** Marks the next pending call as handled. */
  settleNext(): void {
    this.#settled += 1
  }

  /** Drops the calls left (the run ended in the middle of a turn). */
  clearPending(): void {
    this.#pending = []
    this.#settled = 0
  }

  /** What the model is offered (narrowed once by tool pre-selection). */
  get offered(): ReadonlyArray<AnyTool> {
    return this.#offered
  }

  offer(tools: ReadonlyArray<AnyTool>): void {
    this.#offered = tools
  }

  /** The tool definitions sent with each model call: the offered tools, then `submit` when typed. */
  get requestTools(): ReadonlyArray<ToolDefinition> {
    const tools = this.#offered.map((t) => t.definition)
    return this.skill.submit === undefined ? tools : [...tools, this.skill.submit.definition]
  }

  /** `submit` forced when it is the only tool, a tool required when typed, else free. */
  get toolChoice(): ModelRequest["toolChoice"] {
    if (this.skill.submit !== undefined) return this.#offered.length === 0 ? { tool: this.skill.submit.name } : "required"
    return this.#offered.length === 0 ? undefined : "auto"
  }

  /** Grants one more "ask the model again" for `tool`'s invalid arguments, if fewer than `times` were granted. */
  takeInvalidArgsRetry(tool: string, times: number): boolean {
    const used = this.#invalidArgsRetries.get(tool) ?? 0
    if (used >= times) return false
    this.#invalidArgsRetries.set(tool, used + 1)
    return true
  }

  /** Knowledge loaded earlier in this run. */
  cachedKnowledge(name: string): string | undefined {
    return this.#knowledge.get(name)
  }

  rememberKnowledge(name: string, text: string): void {
    this.#knowledge.set(name, text)
  }

  /** Emits an event, stamped with this run's agent, id, skill and turn. */
  emit(event: UnscopedEvent): Effect.Effect<void> {
    if (!this.plan.listeners.has(event._tag)) return Effect.void
    return emit(this.plan, stamp(this.plan, { runId: this.runId, skill: this.skill.name, turn: this.turn }, event))
  }

  /** Ends the run on a budget: the `BudgetExceeded` event, then the error with the transcript so far. */
  exceed(overrun: Overrun): Effect.Effect<never, BudgetExceeded> {
    return budgetExceeded(this.plan, this.runId, overrun, this.#transcript)
  }

  /** Fails when `overrun` is defined. */
  ensure(overrun: Overrun | undefined): Effect.Effect<void, BudgetExceeded> {
    return overrun === undefined ? Effect.void : this.exceed(overrun)
  }

  /** Emits `BudgetThreshold` for every threshold newly reached. Called after every counter changes. */
  checkThresholds(): Effect.Effect<void> {
    if (this.plan.thresholds.length === 0) return Effect.void
    return Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) =>
        Effect.forEach(this.ledger.crossedThresholds(now - this.startedAt), (row) =>
          this.emit({
            _tag: "BudgetThreshold",
            reason: row.reason,
            threshold: row.threshold,
            used: row.used,
            limit: row.limit,
            usedPercent: Math.round((row.used / row.limit) * 1000) / 10
          }), { discard: true })
      )
    )
  }

  /** The run's state as plain data, `now` giving the time spent so far. */
  state(now: number): RunState {
    return {
      runId: this.runId,
      input: this.input,
      skill: this.skill.name,
      elapsedMs: now - this.startedAt,
      transcript: [...this.#transcript],
      pending: this.#pending.slice(this.#settled),
      offered: this.#offered.map((t) => t.name),
      ledger: this.ledger.state(),
      invalidArgsRetries: Object.fromEntries(this.#invalidArgsRetries),
      knowledge: Object.fromEntries(this.#knowledge)
    }
  }
}

/** Emits `BudgetExceeded` and fails with it; usable before a run has its context (a timed-out routing call). */
export const budgetExceeded = (
  plan: AgentPlan,
  runId: string,
  overrun: Overrun,
  transcript: ReadonlyArray<LlmMessage>
): Effect.Effect<never, BudgetExceeded> =>
  emit(plan, {
    _tag: "BudgetExceeded",
    agent: plan.name,
    runId,
    reason: overrun.reason,
    limit: overrun.limit,
    used: overrun.used,
    ...(overrun.scope === undefined ? {} : { scope: overrun.scope })
  }).pipe(Effect.andThen(Effect.fail(new BudgetExceeded({ agent: plan.name, ...overrun, transcript: [...transcript] }))))
