/**
 * The mutable state of one run: the transcript and the budget counters. Created per run and owned by
 * that run's fiber, so it is never shared.
 */
import { Effect } from "effect"
import type { AgentDefinition, SkillDefinition } from "../dsl/agent-definition.ts"
import { BudgetExceeded, type BudgetReason } from "../errors.ts"
import type { LlmMessage } from "../providers/messages.ts"
import { emit } from "./emit.ts"

export class RunState {
  readonly transcript: Array<LlmMessage> = []
  turns = 0
  toolCalls = 0

  constructor(readonly definition: AgentDefinition, readonly skill: SkillDefinition) {}

  get agent(): string {
    return this.definition.name
  }

  /** Fails with `BudgetExceeded` when one more unit of `reason` would go past its limit. */
  ensureBudget(reason: BudgetReason): Effect.Effect<void, BudgetExceeded> {
    const limit = reason === "turns" ? this.definition.budget.maxTurns : this.definition.budget.maxToolCalls
    const used = reason === "turns" ? this.turns : this.toolCalls
    if (used < limit) return Effect.void
    const error = new BudgetExceeded({ agent: this.agent, reason, limit, used, transcript: [...this.transcript] })
    return emit(this.definition, { _tag: "BudgetExceeded", agent: this.agent, reason, limit, used }).pipe(
      Effect.andThen(Effect.fail(error))
    )
  }
}
