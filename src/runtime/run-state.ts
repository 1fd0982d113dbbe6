/**
 * The state of one run: the chosen skill's allowlist (its tools, the agent's memory tools and the
 * skill's knowledge, built for this run), the output contract, the transcript and the budget counters.
 * Created per run and owned by that run's fiber, so it is never shared.
 */
import { Effect, Schema } from "effect"
import type { AgentDefinition, SkillDefinition } from "../dsl/agent-definition.ts"
import type { KnowledgeSource } from "../dsl/knowledge.ts"
import { type AnyTool, tool } from "../dsl/tool.ts"
import { BudgetExceeded, type BudgetReason } from "../errors.ts"
import { fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import type { LlmMessage, ToolDefinition } from "../providers/messages.ts"
import { emit } from "./emit.ts"
import { type OutputContract, outputContract } from "./output-contract.ts"

export class RunState {
  readonly transcript: Array<LlmMessage> = []
  toolCalls = 0
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

  /** Fails with `BudgetExceeded` when one more unit of `reason` would go past its limit. */
  ensureBudget(reason: BudgetReason): Effect.Effect<void, BudgetExceeded> {
    const limit = reason === "turns" ? this.definition.budget.maxTurns : this.definition.budget.maxToolCalls
    const used = reason === "turns" ? this.turns : this.toolCalls
    if (used < limit) return Effect.void
    const error = new BudgetExceeded({ agent: this.agent, reason, limit, used, transcript: [...this.transcript] })
    return emit(this.definition, { _tag: "BudgetExceeded", agent: this.agent, runId: this.runId, reason, limit, used }).pipe(
      Effect.andThen(Effect.fail(error))
    )
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
