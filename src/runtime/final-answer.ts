/**
 * The final answer: a text (decoded into the output Schema when the skill is typed) or a `submit`
 * call. An answer that does not decode is sent back for correction while turns remain, else the run
 * ends with `OutputInvalid`.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import { type BudgetExceeded, OutputInvalid } from "../errors.ts"
import type { LlmMessage } from "../model/messages.ts"
import { emptyReplyFeedback, outputFeedback } from "./prompt.ts"
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
