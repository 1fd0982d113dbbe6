/**
 * The state of one run: the chosen skill's allowlist (its tools, the agent's memory tools and the
 * skill's knowledge, built for this run), the output contract, the transcript and the budget counters.
 * Created per run and owned by that run's fiber, so it is never shared.
 */
import { Clock, Effect, Schema } from "effect"
import type { AgentDefinition, SkillDefinition } from "../dsl/agent-definition.ts"
import type { KnowledgeSource } from "../dsl/knowledge.ts"
import { type AnyTool, tool } from "../dsl/tool.ts"
import { BudgetExceeded, type BudgetReason } from "../errors.ts"
import { fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import type { LlmMessage, ToolDefinition } from "../model/messages.ts"
import { emit } from "./emit.ts"
import { type OutputContract, outputContract } from "./output-contract.ts"

export class RunState {
  readonly transcript: Array<LlmMessage> = []
  toolCalls = 0
  /** Input + output tokens reported so far. */
  tokens = 0
  private lastTool: string | undefined
  private consecutive = 0
  private readonly thresholdsFired = new Set<string>()
  private readonly invalidArgsRetries = new Map<string, number>()
  /** Every tool the skill may call in this run: its tools, memory tools, knowledge tools. */
  readonly tools: ReadonlyArray<AnyTool>
  /** Knowledge loaded so far in this run, by name. */
  readonly knowledgeCache = new Map<string, string>()
  readonly knowledgeNames: ReadonlySet<string>
  /** The typed-answer contract, when the skill or the agent has an output Schema. */
  readonly output: OutputContract | undefined
  /** What the model is offered (narrowed by tool pre-selection when enabled). */
  offered: ReadonlyArray<AnyTool>

  constructor(
    readonly definition: AgentDefinition,
    readonly runId: string,
    readonly startedAt: number,
    readonly skill: SkillDefinition,
    public turns: number
  ) {
    const knowledge = skill.knowledge.map((source) => this.knowledgeTool(source))
    this.tools = [...skill.tools, ...definition.memory, ...knowledge]
    this.knowledgeNames = new Set(skill.knowledge.map((k) => k.name))
    const outputSchema = skill.output ?? definition.output
    this.output = outputSchema === undefined ? undefined : outputContract(outputSchema)
    this.offered = this.tools
  }

  get agent(): string {
    return this.definition.name
  }

  /** The tool definitions sent with each model call: the offered tools, then `submit` when typed. */
  get requestTools(): ReadonlyArray<ToolDefinition> {
    const tools = this.offered.map((t) => t.definition)
    return this.output?.submitTool === undefined ? tools : [...tools, this.output.submitTool]
  }

  /** Names the model may call, for `ToolNotAllowed`. */
  get allowedNames(): ReadonlyArray<string> {
    const names = this.tools.map((t) => t.name)
    return this.output?.submitTool === undefined ? names : [...names, this.output.submitTool.name]
  }

  /** The limit of a budget dimension (`Infinity` when unlimited). */
  limitOf(reason: BudgetReason): number {
    const budget = this.definition.budget
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

  /** Fails with `BudgetExceeded` when one more turn or tool call would go past its limit. */
  ensureBudget(reason: "turns" | "toolCalls"): Effect.Effect<void, BudgetExceeded> {
    const used = reason === "turns" ? this.turns : this.toolCalls
    const limit = this.limitOf(reason)
    return used < limit ? Effect.void : this.exceed(reason, limit, used)
  }

  /** Before a model call: no tokens left. After a response: the response went past the limit. */
  ensureTokens(when: "before" | "after"): Effect.Effect<void, BudgetExceeded> {
    const limit = this.limitOf("tokens")
    const over = when === "before" ? this.tokens >= limit : this.tokens > limit
    return over ? this.exceed("tokens", limit, this.tokens) : Effect.void
  }

  /** Fails when executing `tool` would make one run of the same tool longer than allowed. */
  ensureNotRepeating(tool: string): Effect.Effect<void, BudgetExceeded> {
    const limit = this.limitOf("consecutiveTool")
    return this.lastTool === tool && this.consecutive >= limit ? this.exceed("consecutiveTool", limit, this.consecutive) : Effect.void
  }

  /** Grants one more "ask the model again" for `tool`'s invalid arguments, if fewer than `times` were granted. */
  takeInvalidArgsRetry(tool: string, times: number): boolean {
    const used = this.invalidArgsRetries.get(tool) ?? 0
    if (used >= times) return false
    this.invalidArgsRetries.set(tool, used + 1)
    return true
  }

  /** Counts one execution of `tool`. */
  recordExecution(tool: string): void {
    this.toolCalls += 1
    this.consecutive = this.lastTool === tool ? this.consecutive + 1 : 1
    this.lastTool = tool
  }

  /** Ends the run on a budget: the `BudgetExceeded` event, then the error with the transcript so far. */
  exceed(reason: BudgetReason, limit: number, used: number): Effect.Effect<never, BudgetExceeded> {
    return budgetExceeded(this.definition, this.runId, reason, limit, used, this.transcript)
  }

  /**
   * Emits `BudgetThreshold` once per (threshold, reason) when usage first reaches the threshold share of
   * a limit. Called after every counter changes.
   */
  checkThresholds(): Effect.Effect<void> {
    const thresholds = this.definition.budgetThresholds
    if (thresholds.length === 0) return Effect.void
    const state = this
    return Effect.gen(function*() {
      const elapsed = (yield* Clock.currentTimeMillis) - state.startedAt
      const usage: ReadonlyArray<readonly [BudgetReason, number]> = [
        ["turns", state.turns],
        ["toolCalls", state.toolCalls],
        ["tokens", state.tokens],
        ["consecutiveTool", state.consecutive],
        ["duration", elapsed]
      ]
      for (const threshold of thresholds) {
        for (const [reason, used] of usage) {
          const limit = state.limitOf(reason)
          const key = `${threshold}:${reason}`
          if (!Number.isFinite(limit) || used < threshold * limit || state.thresholdsFired.has(key)) continue
          state.thresholdsFired.add(key)
          yield* emit(state.definition, {
            _tag: "BudgetThreshold",
            agent: state.agent,
            runId: state.runId,
            reason,
            threshold,
            used,
            limit,
            usedPercent: Math.round((used / limit) * 1000) / 10
          })
        }
      }
    })
  }

  private knowledgeTool(source: KnowledgeSource): AnyTool {
    return tool(source.name, {
      description: source.description,
      args: Schema.Struct({}),
      run: (_, context) => {
        const cached = this.knowledgeCache.get(source.name)
        if (cached !== undefined) return cached
        return fromMaybeEffect(() => source.load(context)).pipe(
          Effect.tap((text) => Effect.sync(() => this.knowledgeCache.set(source.name, text)))
        )
      }
    })
  }
}

/** Emits `BudgetExceeded` and fails with it; usable before a run has its state (a timed-out routing call). */
export const budgetExceeded = (
  definition: AgentDefinition,
  runId: string,
  reason: BudgetReason,
  limit: number,
  used: number,
  transcript: ReadonlyArray<LlmMessage>
): Effect.Effect<never, BudgetExceeded> =>
  emit(definition, { _tag: "BudgetExceeded", agent: definition.name, runId, reason, limit, used }).pipe(
    Effect.andThen(Effect.fail(new BudgetExceeded({ agent: definition.name, reason, limit, used, transcript: [...transcript] })))
  )
