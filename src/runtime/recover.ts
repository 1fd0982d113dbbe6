/**
 * Asks the recovery handlers for a decision, in priority order: the tool's own `recover`, the agent's
 * `.recoverTool(name, ...)`, the agent's `.recover({...})` defaults, then the built-in default
 * (`Recovery.feedback`). A handler that throws, fails or answers something that is not a decision is
 * reported as a hook failure, and the next level decides.
 */
import * as Effect from "effect/Effect"
import { type ExecutionErrorContext, type InvalidArgsContext, Recovery, type RecoveryHandlers, type Severity } from "../dsl/recovery.ts"
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

const severities: ReadonlySet<string> = new Set(["LOW", "MEDIUM", "HIGH", "CRITICAL"])

/**
 * The decision a handler answered, read once into a fresh value, or undefined when it is not one. A
 * hand-made object (`{ _tag: "Retry" }`, `{ _tag: "Retry", times: NaN }`, a getter that throws or
 * answers differently on each read) never reaches the loop: its fields are read here, once, and checked.
 */
const readRecovery = (u: unknown): Recovery | undefined => {
  if (typeof u !== "object" || u === null) return undefined
  const d = u as Record<string, unknown>
  const optionalText = (v: unknown) => v === undefined || typeof v === "string"
  switch (d._tag) {
    case "Feedback":
      return Recovery.feedback
    case "Fail": {
      const reason = d.reason
      return optionalText(reason) ? (reason === undefined ? Recovery.fail : Recovery.failWith(reason as string)) : undefined
    }
    case "ThrowException": {
      const reason = d.reason
      return typeof reason === "string" ? Recovery.throwException(reason) : undefined
    }
    case "Substitute":
      return Recovery.substitute(d.value)
    case "Fixed":
      return Recovery.fixed(d.args)
    case "Retry": {
      const times = d.times
      return typeof times === "number" && !Number.isNaN(times) ? Recovery.retry(times) : undefined
    }
    case "Escalate": {
      const reason = d.reason
      const severity = d.severity === undefined ? "MEDIUM" : d.severity
      if (typeof reason !== "string" || typeof severity !== "string" || !severities.has(severity.toUpperCase())) return undefined
      return Recovery.escalate(reason, severity.toUpperCase() as Severity)
    }
    default:
      return undefined
  }
}

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
        Effect.suspend(() => {
          const recovery = readRecovery(decision)
          return recovery !== undefined
            ? Effect.succeed<Decision>({ recovery, level })
            : Effect.fail(new Error(`a recovery handler must return a Recovery decision, got ${toolResultContent(decision)}`))
        })
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
