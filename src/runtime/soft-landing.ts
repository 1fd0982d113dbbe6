/**
 * The soft landing of a run whose budget policy answered `finalAnswer`: the calls of the last answer
 * that did not run get a tool result saying so, the model is asked once more, without tools, to answer
 * with what it has, and that answer ends the run. When it does not give one (tool calls, an empty or
 * undecodable answer), the run ends with the `BudgetExceeded` it would have ended with.
 */
import * as Effect from "effect/Effect"
import type { AgentError } from "../errors.ts"
import type { ModelRequest } from "../model/messages.ts"
import type { ModelClientService } from "../model/model-client.ts"
import { callModel } from "./call-model.ts"
import { finalText } from "./final-answer.ts"
import type { Overrun } from "./budget-ledger.ts"
import type { RunContext } from "./run-context.ts"
import type { Steps } from "../internal/steps.ts"

/** The message that asks for the final answer. */
export const finalAnswerRequest = (overrun: Overrun): string =>
  `The budget of this run is used up (${overrun.reason}: ${overrun.used} of ${overrun.limit}). Do not call tools: answer now, as well as you can, with what you have.`

/** One last model call without tools; its answer is the run's output. */
export const softLanding = (ctx: RunContext, overrun: Overrun): Effect.Effect<{ readonly output: unknown }, AgentError, ModelClientService> =>
  Effect.gen(() => softLandingSteps(ctx, overrun))

function* softLandingSteps(ctx: RunContext, overrun: Overrun): Steps<{ readonly output: unknown }, AgentError, ModelClientService> {
  yield* ctx.annotate("agent.soft_landing", overrun.reason)
  for (let call = ctx.nextPending; call !== undefined; call = ctx.nextPending) {
    ctx.append({ role: "tool", toolCallId: call.id, name: call.name, content: "Not run: the budget of this run is used up." })
    ctx.settleNext()
  }
  ctx.clearPending()
  ctx.append({ role: "user", content: finalAnswerRequest(overrun) })
  const request: ModelRequest = {
    messages: [...ctx.transcript],
    tools: [],
    ...(ctx.skill.output?.responseFormat === undefined ? {} : { responseFormat: ctx.skill.output.responseFormat })
  }
  const durability = ctx.durability
  const response = yield* callModel(
    ctx,
    ctx.turn,
    request,
    undefined,
    durability === undefined ? undefined : (call) => durability.model({ runId: ctx.runId, turn: ctx.turn, purpose: "landing" }, call)
  )
  // The landing's tokens are spent like any call's: charged to this run and every budget above it (an
  // enclosing run must see them). The run ends with this call either way, so its own overrun is moot.
  if (response.usage !== undefined) {
    ctx.spent(response.usage)
    if (ctx.watchesThresholds) yield* ctx.checkThresholds()
  }
  if (response._tag !== "Text") return yield* ctx.exceed(overrun)
  const finished = yield* finalText(ctx, response.content, true).pipe(Effect.orElseSucceed(() => undefined))
  if (finished === undefined || !("output" in finished)) return yield* ctx.exceed(overrun)
  return { output: finished.output }
}
