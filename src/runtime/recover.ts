/**
 * Asks the recovery handlers for a decision, in priority order: the tool's own `recover`, the agent's
 * `.recoverTool(name, ...)`, the agent's `.recover({...})` defaults, then the built-in default
 * (`Recovery.feedback`). A handler that throws, fails or answers something that is not a decision is
 * reported as a hook failure, and the next level decides.
 */
import * as Effect from "effect/Effect"
import type { ExecutionErrorContext, InvalidArgsContext, Recovery, RecoveryHandlers } from "../dsl/recovery.ts"
import type { AnyTool } from "../dsl/tool.ts"
import { catchUnlessInterrupted, fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import { reportHookFailure } from "./emit.ts"
import { toolResultContent } from "./prompt.ts"
import type { AgentPlan } from "./plan.ts"

/** Where a decision came from, for events and spans. */
export type DecisionLevel = "tool" | "agent-tool" | "agent" | "default"

export interface Decision {
  readonly recovery: Recovery
  readonly level: DecisionLevel
}

const recoveryTags: ReadonlySet<string> = new Set<Recovery["_tag"]>(["Feedback", "Fail", "ThrowException", "Substitute", "Fixed", "Retry", "Escalate"])
const isRecovery = (u: unknown): u is Recovery =>
  typeof u === "object" && u !== null && "_tag" in u && recoveryTags.has(String(u._tag))

/** The handlers for `tool` at each level, highest priority first. */
const levels = (plan: AgentPlan, tool: AnyTool): ReadonlyArray<readonly [DecisionLevel, RecoveryHandlers<string, any> | undefined]> => [
  ["tool", tool.recover],
  ["agent-tool", plan.definition.toolRecovery[tool.name]],
  ["agent", plan.definition.recovery]
]

const ask = <K extends keyof RecoveryHandlers>(
  plan: AgentPlan,
  runId: string,
  tool: AnyTool,
  kind: K,
  context: Parameters<NonNullable<RecoveryHandlers[K]>>[0]
): Effect.Effect<Decision> => {
  const hook = kind === "invalidArgs" ? "InvalidArgs" : "ToolError"
  const attempt = (remaining: ReadonlyArray<readonly [DecisionLevel, RecoveryHandlers<string, any> | undefined]>): Effect.Effect<Decision> => {
    const [first, ...rest] = remaining
    if (first === undefined) return Effect.succeed({ recovery: { _tag: "Feedback" }, level: "default" })
    const [level, handlers] = first
    const handler = handlers?.[kind] as ((c: typeof context) => unknown) | undefined
    if (handler === undefined) return attempt(rest)
    return fromMaybeEffect(() => handler(context) as never).pipe(
      Effect.flatMap((decision) =>
        isRecovery(decision)
          ? Effect.succeed<Decision>({ recovery: decision, level })
          : Effect.fail(new Error(`a recovery handler must return a Recovery decision, got ${toolResultContent(decision)}`))
      ),
      catchUnlessInterrupted((error) => reportHookFailure(plan, runId, hook, error).pipe(Effect.andThen(attempt(rest))))
    )
  }
  return attempt(levels(plan, tool))
}

/** The decision for arguments of `tool` that did not decode. */
export const decideInvalidArgs = (plan: AgentPlan, runId: string, tool: AnyTool, context: InvalidArgsContext): Effect.Effect<Decision> =>
  ask(plan, runId, tool, "invalidArgs", context)

/** The decision for a failed execution of `tool`. */
export const decideExecutionError = (plan: AgentPlan, runId: string, tool: AnyTool, context: ExecutionErrorContext): Effect.Effect<Decision> =>
  ask(plan, runId, tool, "executionError", context)
