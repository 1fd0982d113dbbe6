/**
 * The final answer: a text (decoded into the output Schema when the skill is typed) or a `submit`
 * call. An answer that does not decode is sent back for correction while turns remain, else the run
 * ends with `OutputInvalid`. An output the model did not write (a deterministic skill's value, a
 * handoff target's result) is checked against the same Schema once, and never sent back.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import { type BudgetExceeded, OutputInvalid, SkillFailed } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import type { LlmMessage } from "../model/messages.ts"
import { emptyReplyFeedback, outputFeedback } from "./prompt.ts"
import type { SkillPlan } from "./plan.ts"
import type { RunContext } from "./run-context.ts"

/** The run's output, when the step produced one; or the agent the conversation was handed to. */
export type Finished =
  | { readonly _tag?: undefined; readonly output: unknown }
  | { readonly _tag: "Handoff"; readonly target: AgentDefinition }

/**
 * A final text: the output, or a correction and `undefined` to go on. `landing`: the answer of a soft
 * landing, the run's last call (its budget policy is not asked again).
 */
export const finalText = (ctx: RunContext, text: string, landing = false): Effect.Effect<Finished | undefined, OutputInvalid | BudgetExceeded> => {
  if (text.trim() === "") {
    ctx.append({ role: "assistant", content: text }, { role: "user", content: emptyReplyFeedback })
    return Effect.succeed(undefined)
  }
  ctx.append({ role: "assistant", content: text })
  const output = ctx.skill.output
  if (output === undefined) return Effect.succeed({ output: text })
  const decoded = output.decodeText(text)
  if (Result.isSuccess(decoded)) return Effect.succeed({ output: decoded.success })
  return rejectAnswer(ctx, text, decoded.failure, (content) => ({ role: "user", content }), landing)
}

/**
 * A typed answer that did not decode: corrected within the budget, else `OutputInvalid`. On the last
 * turn the budget allows, an agent's budget policy is asked as for any turn past the limit: a turn it
 * grants (`extend`) corrects the answer, `finalAnswer` asks once more without tools (the soft landing),
 * and a refusal ends the run with `OutputInvalid`.
 */
export const rejectAnswer = (
  ctx: RunContext,
  raw: string,
  issues: string,
  message: (content: string) => LlmMessage,
  landing = false
): Effect.Effect<undefined, OutputInvalid | BudgetExceeded> => {
  const correct = () => void ctx.append(message(outputFeedback(issues, ctx.skill.submit?.name)))
  // The run's turn limit, with what a budget policy extended it by: a granted turn is one to correct in.
  const limit = ctx.ledger.limit("turns")
  if (ctx.ledger.turns < limit) {
    correct()
    return Effect.succeed(undefined)
  }
  const invalid = () => new OutputInvalid({ agent: ctx.agent, raw, issues, transcript: [...ctx.transcript] })
  if (landing || ctx.plan.definition.budgetPolicy === undefined) return Effect.fail(invalid())
  return Effect.flatMap(ctx.negotiate({ reason: "turns", limit, used: ctx.ledger.turns }), (decided): Effect.Effect<undefined, OutputInvalid | BudgetExceeded> => {
    if (decided._tag === "Refused") return Effect.fail(invalid())
    correct()
    return decided._tag === "Granted" ? Effect.succeed(undefined) : ctx.land({ reason: "turns", limit, used: ctx.ledger.turns })
  })
}

/**
 * A deterministic skill's output, checked against its output Schema's type (`checkValue`). A value
 * the Schema refuses is the implementation's bug, not the model's (none was asked): the run ends with
 * `SkillFailed`, whose `cause` is the `OutputInvalid` saying what is wrong. Called for typed skills only.
 */
export const skillOutput = (agent: string, skill: SkillPlan, input: unknown, value: unknown): Effect.Effect<unknown, SkillFailed> => {
  const checked = skill.output!.checkValue(value)
  if (Result.isSuccess(checked)) return Effect.succeed(checked.success)
  const cause = new OutputInvalid({ agent, raw: describeCause(value), issues: checked.failure, transcript: [] })
  return Effect.fail(new SkillFailed({ agent, skill: skill.name, input, cause }))
}

/**
 * The result of the agent a typed run handed off to, checked against the handing-off skill's output
 * Schema's type: the target's own Schema accepted it, but may be looser than this one (the same
 * TypeScript type, other refinements) or missing (an untyped caller). A value it refuses ends the run
 * with `OutputInvalid` at once: the target's run is over, and this run's model did not write it.
 */
export const handedOutput = (ctx: RunContext, target: string, value: unknown): Effect.Effect<unknown, OutputInvalid> => {
  const checked = ctx.skill.output!.checkValue(value)
  if (Result.isSuccess(checked)) return Effect.succeed(checked.success)
  const issues = `the result of agent "${target}", handed the conversation, is not a value of this agent's output Schema:\n${checked.failure}`
  return Effect.fail(new OutputInvalid({ agent: ctx.agent, raw: describeCause(value), issues, transcript: [...ctx.transcript] }))
}
