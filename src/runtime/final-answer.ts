/**
 * The final answer: a text (decoded into the output Schema when the skill is typed) or a `submit`
 * call. An answer that does not decode is sent back for correction while turns remain, else the run
 * ends with `OutputInvalid`.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import { OutputInvalid } from "../errors.ts"
import type { LlmMessage } from "../model/messages.ts"
import { emptyReplyFeedback, outputFeedback } from "./prompt.ts"
import type { RunContext } from "./run-context.ts"

/** The run's output, when the step produced one; or the agent the conversation was handed to. */
export type Finished =
  | { readonly _tag?: undefined; readonly output: unknown }
  | { readonly _tag: "Handoff"; readonly target: AgentDefinition }

/** A final text: the output, or a correction and `undefined` to go on. */
export const finalText = (ctx: RunContext, text: string): Effect.Effect<Finished | undefined, OutputInvalid> => {
  if (text.trim() === "") {
    ctx.append({ role: "assistant", content: text }, { role: "user", content: emptyReplyFeedback })
    return Effect.succeed(undefined)
  }
  ctx.append({ role: "assistant", content: text })
  const output = ctx.skill.output
  if (output === undefined) return Effect.succeed({ output: text })
  const decoded = output.decodeText(text)
  if (Result.isSuccess(decoded)) return Effect.succeed({ output: decoded.success })
  return rejectAnswer(ctx, text, decoded.failure, (content) => ({ role: "user", content }))
}

/** A typed answer that did not decode: corrected within the budget, else `OutputInvalid`. */
export const rejectAnswer = (
  ctx: RunContext,
  raw: string,
  issues: string,
  message: (content: string) => LlmMessage
): Effect.Effect<undefined, OutputInvalid> => {
  // The run's turn limit, with what a budget policy extended it by: a granted turn is one to correct in.
  if (ctx.ledger.turns >= ctx.ledger.limit("turns")) {
    return Effect.fail(new OutputInvalid({ agent: ctx.agent, raw, issues, transcript: [...ctx.transcript] }))
  }
  ctx.append(message(outputFeedback(issues, ctx.skill.submit?.name)))
  return Effect.succeed(undefined)
}
