/**
 * The context of one run: the plan and the chosen skill, the run's id and start, a bound `emit` that
 * stamps agent, run, skill and turn on every event, and the run's state (transcript, pending tool
 * calls, budget ledger, invalid-argument retries, knowledge cache), private and changed only through
 * methods. `state()` gives that state as plain data for a snapshot; `RunContext.restore` rebuilds a
 * context from it. Owned by the run's fiber, never shared.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type { AgentEvent, DeltaEvent } from "../dsl/events.ts"
import type { AnyTool } from "../dsl/tool.ts"
import { BudgetExceeded } from "../errors.ts"
import type { LlmMessage, ModelRequest, ToolCall, ToolDefinition, Usage } from "../model/messages.ts"
import type { BudgetScope } from "../dsl/lineage.ts"
import { BudgetLedger, emptyLedger, type LedgerState, type Overrun } from "./budget-ledger.ts"
import { emit, emitInRun, emitWithin, type EventSink, offerNow } from "./emit.ts"
import { BudgetPolicy } from "../dsl/budget-policy.ts"
import { fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import type { BudgetReason } from "../errors.ts"

/** The limits a budget policy may negotiate: counts, not timeouts. */
const negotiable: ReadonlySet<BudgetReason> = new Set<BudgetReason>(["turns", "toolCalls", "tokens", "consecutiveTool"])
import type { AgentPlan, SkillPlan } from "./plan.ts"
import type { Durability } from "./durability.ts"
import type { CallEnv } from "./call-model.ts"

/** An event without the fields the context stamps. */
export type UnscopedEvent = AgentEvent extends infer E ? E extends AgentEvent ? Omit<E, "agent" | "runId" | "skill" | "turn"> : never : never

const turnScoped: ReadonlySet<AgentEvent["_tag"]> = new Set<AgentEvent["_tag"]>([
  "Turn", "ModelCall", "Retrying", "ModelResponse", "ToolUse", "ToolProgress", "ToolError", "InvalidArgs", "ToolHallucinated", "ArgsRepaired", "KnowledgeUsed", "Handoff",
  "ApprovalRequested", "ApprovalDecided"
])

/**
 * Stamps `agent` and `runId` on every event, `skill` on skill-scoped ones, and `turn` on turn-scoped ones.
 * `Object.assign` rather than `{ ...event, agent }`: on Node 20's V8 a spread followed by more properties
 * takes ~1–2 µs (a new map each time), `Object.assign` ~0.1 µs, with the same keys in the same order.
 */
export const stamp = (
  plan: AgentPlan,
  scope: { readonly runId: string; readonly skill: string; readonly turn: number },
  event: UnscopedEvent
): AgentEvent => {
  const stamps = turnScoped.has(event._tag)
    ? { agent: plan.name, runId: scope.runId, skill: scope.skill, turn: scope.turn }
    : event._tag === "SkillChosen"
    ? { agent: plan.name, runId: scope.runId, skill: scope.skill }
    : { agent: plan.name, runId: scope.runId }
  return Object.assign({}, event, stamps) as AgentEvent
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
  /** Calls waiting for a human decision, with their arguments as JSON (absent when none wait). */
  readonly awaiting?: ReadonlyArray<{ readonly id: string; readonly tool: string; readonly args: Schema.Json; readonly reason?: string }>
}

/** A call waiting for a human decision: decoded arguments for the caller, JSON ones for the snapshot. */
export interface AwaitingCall {
  readonly id: string
  readonly tool: string
  readonly args: unknown
  readonly json: Schema.Json
  /** Why an interceptor suspended the call (absent for `needsApproval`). */
  readonly reason?: string
}

/** A decision given at resume, checked and decoded: run with these arguments, or deny. */
export type ResolvedDecision =
  | { readonly _tag: "Run"; readonly tool: string; readonly args: unknown; readonly json: Schema.Json; readonly how: "approved" | "edited" }
  | { readonly _tag: "Deny"; readonly tool: string; readonly reason: string }

/**
 * What a run reads from the fiber it started on, once: whether its spans are seen (`isTraced`), its
 * Clock (a `TestClock` in tests), its model client and its parent run's id (`ParentRun`), so that the
 * steps and events read them without an Effect.
 */
export interface RunEnv extends CallEnv {
  readonly parentRunId: string | undefined
}

const noDecisions: ReadonlyMap<string, ResolvedDecision> = new Map()
const notAwaiting: ReadonlyArray<AwaitingCall> = Object.freeze([])

/** A budget policy's answer to an overrun (`RunContext.negotiate`). */
export type Negotiated =
  | { readonly _tag: "Granted" }
  | { readonly _tag: "Landing" }
  | { readonly _tag: "Refused"; readonly overrun: Overrun }

/** A Map of `record`'s entries, or undefined when it has none (made on first use instead). */
const mapOf = <V>(record: Readonly<Record<string, V>> | undefined): Map<string, V> | undefined => {
  if (record === undefined) return undefined
  const entries = Object.entries(record)
  return entries.length === 0 ? undefined : new Map(entries)
}

const liveEnv: RunEnv = { traced: true, clock: Context.get(Context.empty(), Clock.Clock), client: undefined, parentRunId: undefined }

export class RunContext {
  readonly ledger: BudgetLedger
  readonly #transcript: Array<LlmMessage>
  #pending: ReadonlyArray<ToolCall>
  /** How many of `#pending` were handled. */
  #settled = 0
  #offered: ReadonlyArray<AnyTool>
  #requestTools: ReadonlyArray<ToolDefinition> | undefined = undefined
  // The three maps below are made on first use: most runs never need them, and a run in flight holds
  // whatever it made (an empty Map costs ~100 bytes; issue #37's memory per in-flight run).
  #invalidArgsRetries: Map<string, number> | undefined
  #knowledge: Map<string, string> | undefined
  /** Decisions given at resume, by call id; each is taken once. */
  #decisions: Map<string, ResolvedDecision> | undefined
  #awaiting: ReadonlyArray<AwaitingCall> = notAwaiting
  #landing: Overrun | undefined = undefined
  /** The durable run's seam (`durability.ts`), read once per run; undefined in a plain run. */
  durability: Durability | undefined = undefined
  /** This run's own model calls' input and output tokens (its children count theirs), for its `invoke_agent` span. */
  inputTokens = 0
  outputTokens = 0

  private constructor(
    readonly plan: AgentPlan,
    readonly skill: SkillPlan,
    readonly runId: string,
    readonly input: string,
    /** When the run started, on this process's clock (now minus the time spent before a resume). */
    readonly startedAt: number,
    state: Omit<RunState, "runId" | "input" | "skill" | "elapsedMs"> | undefined,
    parentScope: BudgetScope | undefined,
    /** Where a streaming run's events and deltas go; undefined for `run`/`runEffect`. */
    readonly sink: EventSink | undefined,
    private readonly env: RunEnv
  ) {
    this.ledger = new BudgetLedger(plan.budget, plan.thresholds, state?.ledger ?? emptyLedger, plan.name, parentScope)
    this.#transcript = [...(state?.transcript ?? [])]
    this.#pending = state?.pending ?? []
    this.#offered = state === undefined ? skill.offerable : skill.offerable.filter((t) => state.offered.includes(t.name))
    this.#invalidArgsRetries = mapOf(state?.invalidArgsRetries)
    this.#knowledge = mapOf(state?.knowledge)
  }

  /**
   * A new run's context, with what a model-routed skill choice already spent (a turn and its tokens).
   * `parentScope` is the budget scope of the enclosing run, which this run's tokens and tool calls are
   * charged to as well.
   */
  static start(
    plan: AgentPlan,
    skill: SkillPlan,
    runId: string,
    input: string,
    startedAt: number,
    spent: { readonly turns: number; readonly tokens: number },
    parentScope?: BudgetScope,
    sink?: EventSink,
    env: RunEnv = liveEnv
  ): RunContext {
    const context = new RunContext(plan, skill, runId, input, startedAt, undefined, parentScope, sink, env)
    if (spent.tokens > 0) context.ledger.spendTokens(spent.tokens)
    for (let i = 0; i < spent.turns; i++) context.ledger.spendTurn()
    return context
  }

  /** A context continuing `state` (see `RunState`), started `state.elapsedMs` before `now`. */
  static restore(plan: AgentPlan, skill: SkillPlan, state: RunState, now: number, parentScope?: BudgetScope, sink?: EventSink, env: RunEnv = liveEnv): RunContext {
    return new RunContext(plan, skill, state.runId, state.input, now - state.elapsedMs, state, parentScope, sink, env)
  }

  /** Whether the run's spans reach a tracer (`isTraced`): when not, no span is made or annotated. */
  get traced(): boolean {
    return this.env.traced
  }

  #callEnv: CallEnv | undefined

  /** What the run's model calls read from its fiber; a `Retrying` event is heard when a hook or a stream takes it. */
  get callEnv(): CallEnv {
    return this.#callEnv ??= this.env.retryHeard === false && (this.sink !== undefined || this.plan.listeners.has("Retrying"))
      ? Object.assign({}, this.env, { retryHeard: true })
      : this.env
  }

  /** The time on the run's Clock, in milliseconds. */
  now(): number {
    return this.env.clock.currentTimeMillisUnsafe()
  }

  /** Annotates the current span (ours) when the run is traced; nothing otherwise. */
  annotate(key: string, value: unknown): Effect.Effect<void> {
    return this.traced ? Effect.annotateCurrentSpan(key, value) : Effect.void
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

  /** The pending calls from the next one on, as long as `accept` holds (a run of calls to handle together). */
  pendingRun(accept: (call: ToolCall) => boolean): ReadonlyArray<ToolCall> {
    const run: Array<ToolCall> = []
    for (let i = this.#settled; i < this.#pending.length && accept(this.#pending[i]!); i++) run.push(this.#pending[i]!)
    return run
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
    this.#requestTools = undefined
  }

  /** The tool definitions sent with each model call: the offered tools, then `submit` when typed (made once per offer). */
  get requestTools(): ReadonlyArray<ToolDefinition> {
    if (this.#requestTools !== undefined) return this.#requestTools
    // Nothing narrowed by pre-selection: the skill's own (made once per plan, not per run).
    if (this.#offered === this.skill.offerable) return (this.#requestTools = this.skill.requestTools)
    const tools = this.#offered.map((t) => t.definition)
    if (this.skill.submit !== undefined) tools.push(this.skill.submit.definition)
    return (this.#requestTools = Object.freeze(tools))
  }

  /**
   * The skill's policy for this turn (`lastTurn` on the last turn the budget allows, else `otherTurns`);
   * without one: `submit` forced when it is the only tool, a tool required when typed, else free.
   * `"output"` without a `submit` tool (the native strategy) asks for no tool: the answer is the text;
   * a forced tool that tool pre-selection did not offer becomes `"required"`.
   */
  get toolChoice(): ModelRequest["toolChoice"] {
    const policy = this.skill.definition.toolChoice
    const setting = policy === undefined ? undefined
      : policy.lastTurn !== undefined && this.turn >= this.ledger.limit("turns") ? policy.lastTurn
      : policy.otherTurns
    if (setting === "output") return this.skill.submit === undefined ? "none" : { tool: this.skill.submit.name }
    // A forced tool that pre-selection (`pickTools`) left out cannot be named to the provider: ask for some tool.
    if (typeof setting === "object" && !this.#offered.some((t) => t.name === setting.tool)) return "required"
    if (setting !== undefined) return setting
    if (this.skill.submit !== undefined) return this.#offered.length === 0 ? { tool: this.skill.submit.name } : "required"
    return this.#offered.length === 0 ? undefined : "auto"
  }

  /** Grants one more "ask the model again" for `tool`'s invalid arguments, if fewer than `times` were granted. */
  takeInvalidArgsRetry(tool: string, times: number): boolean {
    const used = this.#invalidArgsRetries?.get(tool) ?? 0
    if (used >= times) return false
    this.#invalidArgsRetries ??= new Map()
    this.#invalidArgsRetries.set(tool, used + 1)
    return true
  }

  /** The calls after the next pending one, in order. */
  get pendingAfterNext(): ReadonlyArray<ToolCall> {
    return this.#pending.slice(this.#settled + 1)
  }

  /** Records the decisions given at resume. */
  decide(decisions: ReadonlyMap<string, ResolvedDecision>): void {
    const taken = (this.#decisions ??= new Map())
    for (const [id, decision] of decisions) taken.set(id, decision)
  }

  /** The decision about call `id`, taken (a decision applies once). */
  takeDecision(id: string): ResolvedDecision | undefined {
    const decision = this.#decisions?.get(id)
    this.#decisions?.delete(id)
    return decision
  }

  /** The decisions given and not taken yet, by call id (a snapshot carries them). */
  get decisions(): ReadonlyMap<string, ResolvedDecision> {
    return this.#decisions ?? noDecisions
  }

  /** Marks the run as waiting for decisions on `calls`. */
  awaitDecisions(calls: ReadonlyArray<AwaitingCall>): void {
    this.#awaiting = calls
  }

  /** The calls the run waits for decisions on (empty unless it suspended for approval). */
  get awaiting(): ReadonlyArray<AwaitingCall> {
    return this.#awaiting
  }

  /** Knowledge loaded earlier in this run. */
  cachedKnowledge(name: string): string | undefined {
    return this.#knowledge?.get(name)
  }

  rememberKnowledge(name: string, text: string): void {
    this.#knowledge ??= new Map()
    this.#knowledge.set(name, text)
  }

  /**
   * Whether an event tagged `tag` reaches anyone (a hook on it, `onEvent`, or the run's stream). The
   * loop's hot steps ask first and skip the event when not: no event object, and no `yield*` of a
   * no-op Effect, which resumes every generator the step is delegated through (issue #37: 49 → 15
   * `yield*` per calculator run with the guards on `emit`, `ensure` and `checkThresholds`).
   */
  hears(tag: AgentEvent["_tag"]): boolean {
    return this.sink !== undefined || this.plan.listeners.has(tag)
  }

  /**
   * The tokens of a model call: counted in the run's usage and charged to its budget (and a parent's);
   * the overrun when they went past a limit. Also for a call that failed but cost them
   * (`ModelError.usage`: a truncated or refused reply, `jsonMode`'s corrections), whose run ends with
   * the call's error: a budget shared with a parent still sees the tokens spent. Counts saturate at
   * `Number.MAX_VALUE`: usage a provider or a remote agent reports absurdly high (finite numbers whose
   * sum is not) is spent in full, never turned into an `Infinity` that exhausts an unlimited budget.
   */
  spent(usage: Usage): Overrun | undefined {
    this.inputTokens = Math.min(this.inputTokens + usage.inputTokens, Number.MAX_VALUE)
    this.outputTokens = Math.min(this.outputTokens + usage.outputTokens, Number.MAX_VALUE)
    return this.ledger.spendTokens(Math.min(usage.inputTokens + usage.outputTokens, Number.MAX_VALUE))
  }

  /** Whether the budget has thresholds to report (`checkThresholds` does nothing otherwise). */
  get watchesThresholds(): boolean {
    return this.plan.thresholds.length > 0
  }

  /** Emits an event, stamped with this run's agent, id, skill and turn. */
  emit(event: UnscopedEvent): Effect.Effect<void> {
    if (this.sink === undefined && !this.plan.listeners.has(event._tag)) return Effect.void
    return emitInRun(this.plan, stamp(this.plan, { runId: this.runId, skill: this.skill.name, turn: this.turn }, event), this.sink, this.env.parentRunId)
  }

  /**
   * Sends a delta of the current model answer to the sink (deltas reach no hooks), offered at once
   * when the sink has room: run the answer straight away (`onPart` in `runForEach` does).
   */
  emitDelta(delta: DeltaEvent extends infer E ? E extends DeltaEvent ? Omit<E, "agent" | "runId" | "skill" | "turn"> : never : never): Effect.Effect<void> {
    const sink = this.sink
    if (sink === undefined) return Effect.void
    const parentRunId = this.env.parentRunId
    const stamps = { agent: this.plan.name, runId: this.runId, skill: this.skill.name, turn: this.turn }
    // `Object.assign`, not a spread followed by properties (see `stamp`).
    return offerNow(sink, Object.assign({}, delta, parentRunId === undefined ? stamps : Object.assign(stamps, { parentRunId })) as DeltaEvent)
  }

  /**
   * `emitDelta` for a text or reasoning delta, the one most streamed: the event is the only object
   * made (its keys in `emitDelta`'s order: `_tag`, `delta`, the stamps), offered at once when the sink
   * has room. Run the answer straight away.
   */
  emitTextDelta(_tag: "TextDelta" | "ReasoningDelta", delta: string): Effect.Effect<void> {
    const sink = this.sink
    if (sink === undefined) return Effect.void
    const parentRunId = this.env.parentRunId
    return offerNow(
      sink,
      parentRunId === undefined
        ? { _tag, delta, agent: this.plan.name, runId: this.runId, skill: this.skill.name, turn: this.turn }
        : { _tag, delta, agent: this.plan.name, runId: this.runId, skill: this.skill.name, turn: this.turn, parentRunId }
    )
  }

  /** Ends the run on a budget: the `BudgetExceeded` event, then the error with the transcript so far. */
  exceed(overrun: Overrun): Effect.Effect<never, BudgetExceeded> {
    return budgetExceeded(this.plan, this.runId, overrun, this.#transcript, this.sink)
  }

  /**
   * Fails when `overrun` is defined, unless the agent's budget policy extends the limit (within its
   * bound) or asks for a final answer (then the run lands: see `landing` and `step.ts`).
   */
  ensure(overrun: Overrun | undefined): Effect.Effect<void, BudgetExceeded> {
    if (overrun === undefined) return Effect.void
    return Effect.flatMap(this.negotiate(overrun), (decided): Effect.Effect<void, BudgetExceeded> =>
      decided._tag === "Granted" ? Effect.void : decided._tag === "Landing" ? this.land(overrun) : this.exceed(decided.overrun))
  }

  /**
   * What the agent's budget policy answers to `overrun`, nothing emitted: `Granted` (the limit extended
   * past it), `Landing` (a final answer asked for) or `Refused` with the overrun to end with (its limit
   * as extended). Without a policy, or for a limit no policy negotiates (duration, depth), `Refused`.
   */
  negotiate(overrun: Overrun): Effect.Effect<Negotiated> {
    const policy = this.plan.definition.budgetPolicy
    if (policy === undefined || !negotiable.has(overrun.reason)) return Effect.succeed({ _tag: "Refused", overrun })
    const ledger = this.ledger
    const context = { agent: this.agent, reason: overrun.reason, limit: overrun.limit, used: overrun.used, extended: ledger.extended(overrun.reason) }
    return fromMaybeEffect(() => policy(context)).pipe(
      Effect.catchCause(() => Effect.succeed(BudgetPolicy.fail)),
      Effect.map((decision): Negotiated => {
        if (decision?._tag === "Extend" && ledger.extend(overrun.reason, decision.by)) {
          const limit = ledger.limit(overrun.reason)
          const still = overrun.reason === "tokens" ? overrun.used > limit : overrun.used >= limit
          return still ? { _tag: "Refused", overrun: { ...overrun, limit } } : { _tag: "Granted" }
        }
        if (decision?._tag === "FinalAnswer") return { _tag: "Landing" }
        return { _tag: "Refused", overrun }
      })
    )
  }

  /** Fails with `overrun` as a landing: `drive` (step.ts) catches it and asks for the final answer. */
  land(overrun: Overrun): Effect.Effect<never, BudgetExceeded> {
    this.#landing = overrun
    return Effect.fail(new BudgetExceeded({ agent: this.agent, ...overrun, transcript: [...this.#transcript] }))
  }

  /** The overrun a budget policy answered with `finalAnswer`, once: the run lands instead of failing. */
  takeLanding(): Overrun | undefined {
    const landing = this.#landing
    this.#landing = undefined
    return landing
  }

  /** Emits `BudgetThreshold` for every threshold newly reached. Called after every counter changes. */
  checkThresholds(): Effect.Effect<void> {
    if (this.plan.thresholds.length === 0) return Effect.void
    const crossed = this.ledger.crossedThresholds(this.now() - this.startedAt)
    if (crossed.length === 0) return Effect.void
    return Effect.forEach(crossed, (row) =>
      this.emit({
        _tag: "BudgetThreshold",
        reason: row.reason,
        threshold: row.threshold,
        used: row.used,
        limit: row.limit,
        usedPercent: Math.round((row.used / row.limit) * 1000) / 10
      }), { discard: true })
  }

  /** The run's state as plain data, `now` giving the time spent so far. */
  state(now: number): RunState {
    return {
      runId: this.runId,
      input: this.input,
      skill: this.skill.name,
      // Never below zero (a wall clock set back), which the snapshot's Schema refuses.
      elapsedMs: Math.max(0, now - this.startedAt),
      transcript: [...this.#transcript],
      pending: this.#pending.slice(this.#settled),
      offered: this.#offered.map((t) => t.name),
      ledger: this.ledger.state(),
      invalidArgsRetries: Object.fromEntries(this.#invalidArgsRetries ?? []),
      knowledge: Object.fromEntries(this.#knowledge ?? []),
      ...(this.#awaiting.length === 0 ? {} : { awaiting: this.#awaiting.map(({ args: _, json, ...call }) => ({ ...call, args: json })) })
    }
  }
}

/**
 * Emits `BudgetExceeded` and fails with it; usable before a run has its context (a timed-out routing call).
 * For `duration` the listeners are waited for at most one hook timeout (`emitWithin`): the run is over time.
 */
export const budgetExceeded = (
  plan: AgentPlan,
  runId: string,
  overrun: Overrun,
  transcript: ReadonlyArray<LlmMessage>,
  sink?: EventSink
): Effect.Effect<never, BudgetExceeded> =>
  (overrun.reason === "duration" ? emitWithin : emit)(plan, {
    _tag: "BudgetExceeded",
    agent: plan.name,
    runId,
    reason: overrun.reason,
    limit: overrun.limit,
    used: overrun.used,
    ...(overrun.tool === undefined ? {} : { tool: overrun.tool }),
    ...(overrun.scope === undefined ? {} : { scope: overrun.scope })
  }, sink).pipe(Effect.andThen(Effect.fail(new BudgetExceeded({ agent: plan.name, ...overrun, transcript: [...transcript] }))))
