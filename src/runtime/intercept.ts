/**
 * The interceptor stage of the tool pipeline, just before the approval stage: the agent's interceptors
 * of the tool, in order, until one does not proceed. `proceedWith` arguments are decoded again with the
 * tool's Schema (never repaired) and the next interceptor, then the approval stage, see them; arguments
 * that do not decode end the run with `InvalidToolArgs`. An interceptor that throws or fails denies.
 */
import * as Effect from "effect/Effect"
import type { Interception } from "../dsl/interceptor.ts"
import type { AnyTool } from "../dsl/tool.ts"
import { InvalidToolArgs } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import type { ToolCall } from "../model/messages.ts"
import { deniedContent } from "./approval.ts"
import { toolResultContent } from "./prompt.ts"
import type { RunContext } from "./run-context.ts"
import type { Steps } from "../internal/steps.ts"

/** What the interceptors decided about a call. */
export type Verdict =
  | { readonly _tag: "Proceed"; readonly args: unknown }
  | { readonly _tag: "Reply"; readonly content: string }
  | { readonly _tag: "Suspend"; readonly args: unknown; readonly reason: string }

/** Runs the interceptors of `tool` on `args`. */
export const interceptCall = (
  ctx: RunContext,
  tool: AnyTool,
  call: ToolCall,
  args: unknown
): Effect.Effect<Verdict, InvalidToolArgs> =>
  Effect.gen(() => interceptCallSteps(ctx, tool, call, args))

function* interceptCallSteps(ctx: RunContext, tool: AnyTool, call: ToolCall, args: unknown): Steps<Verdict, InvalidToolArgs> {
  const interceptors = ctx.plan.definition.interceptors?.[tool.name] ?? []
  let current = args
  for (const interceptor of interceptors) {
    const context = { agent: ctx.agent, skill: ctx.skill.name, toolCallId: call.id }
    const decided = yield* Effect.result(fromMaybeEffect(() => interceptor(current, context)))
    if (decided._tag === "Failure") {
      yield* ctx.annotate("tool.intercepted", "failed")
      return { _tag: "Reply", content: deniedContent(tool.name, `the interceptor failed (${describeCause(decided.failure)})`, "a policy") }
    }
    const interception = decided.success as Interception
    yield* ctx.annotate("tool.intercepted", interception?._tag ?? "invalid")
    switch (interception?._tag) {
      case "Proceed":
        continue
      case "ProceedWith": {
        const decoded = tool.codec.decode(interception.args, { repair: false })
        if (decoded._tag === "Invalid") {
          return yield* new InvalidToolArgs({
            agent: ctx.agent,
            skill: ctx.skill.name,
            tool: tool.name,
            raw: decoded.value,
            issues: `an interceptor's proceedWith arguments do not decode:\n${decoded.issues}`
          })
        }
        current = decoded.args
        continue
      }
      case "Deny":
        return { _tag: "Reply", content: deniedContent(tool.name, interception.reason, "a policy") }
      case "Substitute":
        return { _tag: "Reply", content: toolResultContent(interception.result) }
      case "Suspend":
        return { _tag: "Suspend", args: current, reason: interception.reason }
      default:
        return { _tag: "Reply", content: deniedContent(tool.name, "the interceptor answered no decision (use Intercept.proceed, …)", "a policy") }
    }
  }
  return { _tag: "Proceed", args: current }
}
