/**
 * One tool call, end to end: allowlist → decode → execute → hooks → tool result message. A tool only
 * ever runs when it is on the skill's allowlist and its arguments decoded with its Schema.
 */
import { Cause, Clock, Duration, Effect, Exit, Result } from "effect"
import type { ErrorPolicy } from "../dsl/agent-definition.ts"
import type { Recovery } from "../dsl/recovery.ts"
import type { AnyTool } from "../dsl/tool.ts"
import { type BudgetExceeded, InvalidToolArgs, ToolFailed, ToolNotAllowed } from "../errors.ts"
import { catchUnlessInterrupted, fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import type { ToolCall } from "../providers/messages.ts"
import { emit, reportHookFailure } from "./emit.ts"
import { invalidArgsFeedback, toolFailedFeedback, toolResultContent } from "./prompt.ts"
import { type ArgsCorrection, repairArguments } from "./repair-arguments.ts"
import type { RunState } from "./run-state.ts"
import { noStackTrace } from "../internal/span-options.ts"

/** Errors a tool call can end the run with. */
export type ToolCallError = ToolNotAllowed | InvalidToolArgs | ToolFailed | BudgetExceeded

/** Handles `call` (made during `turn`) and appends its tool result message to the transcript. */
export const handleToolCall = (state: RunState, call: ToolCall, turn: number): Effect.Effect<void, ToolCallError> =>
  Effect.gen(function*() {
    const scope = { agent: state.agent, runId: state.runId, skill: state.skill.name, turn }
    const tool = state.tools.find((t) => t.name === call.name)
    if (tool === undefined) {
      yield* Effect.annotateCurrentSpan("tool.outcome", "not_allowed")
      return yield* new ToolNotAllowed({ agent: state.agent, skill: state.skill.name, tool: call.name, allowed: state.allowedNames })
    }
    const reply = (content: string) =>
      Effect.sync(() => {
        state.transcript.push({ role: "tool", toolCallId: call.id, name: tool.name, content })
      })

    const decoded = decodeArguments(tool, call.arguments)
    yield* Effect.annotateCurrentSpan("tool.validated", decoded.validated)
    if (decoded.corrections.length > 0) {
      yield* Effect.annotateCurrentSpan("tool.repaired", JSON.stringify(decoded.corrections))
      yield* emit(state.definition, { _tag: "ArgsRepaired", ...scope, tool: tool.name, toolCallId: call.id, corrections: decoded.corrections })
    }
    if (Result.isFailure(decoded.args)) {
      const issues = decoded.args.failure
      const recovery = yield* decide(state, "InvalidArgs", state.definition.errorPolicy.invalidArgs, {
        ...scope,
        tool: tool.name,
        raw: call.arguments,
        error: issues
      })
      yield* Effect.annotateCurrentSpan("tool.outcome", "invalid_args")
      yield* emit(state.definition, {
        _tag: "InvalidArgs",
        ...scope,
        tool: tool.name,
        toolCallId: call.id,
        raw: call.arguments,
        issues,
        recovery: recovery._tag
      })
      if (recovery._tag === "Fail") {
        return yield* new InvalidToolArgs({ ...scope, tool: tool.name, raw: call.arguments, issues })
      }
      return yield* reply(recovery._tag === "Substitute" ? toolResultContent(recovery.value) : invalidArgsFeedback(tool.name, issues))
    }

    const args = decoded.args.success
    yield* state.ensureBudget("toolCalls")
    yield* state.ensureNotRepeating(tool.name)
    state.recordExecution(tool.name)
    yield* state.checkThresholds()
    const loadedBefore = state.knowledgeCache.has(tool.name)
    const started = yield* Clock.currentTimeMillis
    const exit = yield* executeWithin(state, tool, args, call.id)
    const durationMs = (yield* Clock.currentTimeMillis) - started
    if (Exit.isSuccess(exit)) {
      yield* Effect.annotateCurrentSpan("tool.outcome", "success")
      yield* emit(state.definition, {
        _tag: "ToolUse",
        ...scope,
        tool: tool.name,
        toolCallId: call.id,
        args,
        result: exit.value,
        durationMs,
        validated: decoded.validated
      })
      if (state.knowledgeNames.has(tool.name)) {
        const text = toolResultContent(exit.value)
        yield* emit(state.definition, {
          _tag: "KnowledgeUsed",
          ...scope,
          knowledge: tool.name,
          toolCallId: call.id,
          characters: text.length,
          cached: loadedBefore
        })
      }
      return yield* reply(toolResultContent(exit.value))
    }
    if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
    const error = Cause.squash(exit.cause)
    const recovery = yield* decide(state, "ToolError", state.definition.errorPolicy.toolFailed, {
      ...scope,
      tool: tool.name,
      args,
      error
    })
    yield* Effect.annotateCurrentSpan("tool.outcome", "failed")
    yield* emit(state.definition, {
      _tag: "ToolError",
      ...scope,
      tool: tool.name,
      toolCallId: call.id,
      args,
      error,
      recovery: recovery._tag
    })
    if (recovery._tag === "Fail") return yield* new ToolFailed({ ...scope, tool: tool.name, args, cause: error })
    return yield* reply(recovery._tag === "Substitute" ? toolResultContent(recovery.value) : toolFailedFeedback(tool.name, error))
  }).pipe(
    Effect.withSpan("agent.tool", {
      attributes: { "agent.name": state.agent, "agent.skill": state.skill.name, "agent.turn": turn, "tool.name": call.name, "tool.call_id": call.id }
    }, noStackTrace)
  )

/**
 * Runs the tool, bounded by `perToolTimeout` while it runs: on timeout the tool is interrupted (its
 * signal aborts) and the run ends with `BudgetExceeded("perToolTimeout")`. The tool's own failures come
 * back in the Exit, for the recovery handlers.
 */
const executeWithin = (state: RunState, tool: AnyTool, args: unknown, toolCallId: string) => {
  const execution = Effect.exit(tool.execute(args, toolCallId))
  const limit = state.limitOf("perToolTimeout")
  if (!Number.isFinite(limit)) return execution
  return execution.pipe(
    Effect.timeoutOrElse({ duration: Duration.millis(limit), orElse: () => state.exceed("perToolTimeout", limit, limit) })
  )
}

interface DecodedArguments {
  readonly args: Result.Result<unknown, string>
  readonly validated: boolean
  readonly corrections: ReadonlyArray<ArgsCorrection>
}

/**
 * Parses and validates raw arguments. When they do not decode and the tool opted into repair, the
 * repaired arguments are decoded again; the original report stands if that fails too. Tools declared
 * `unsafeNoSchema` get parsed JSON, unvalidated.
 */
const decodeArguments = (tool: AnyTool, raw: unknown): DecodedArguments => {
  const validation = tool.validation
  if (validation._tag !== "Schema") return { args: Result.succeed(parseLoosely(raw)), validated: false, corrections: [] }
  const args = validation.decode(raw)
  if (Result.isSuccess(args) || tool.repair === undefined) return { args, validated: true, corrections: [] }
  const repaired = repairArguments(validation.schema.ast, raw, tool.repair)
  if (repaired.corrections.length === 0) return { args, validated: true, corrections: [] }
  const again = validation.decode(repaired.value)
  return Result.isSuccess(again)
    ? { args: again, validated: true, corrections: repaired.corrections }
    : { args, validated: true, corrections: [] }
}

const parseLoosely = (raw: unknown): unknown => {
  if (typeof raw !== "string") return raw
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

const recoveryTags: ReadonlySet<string> = new Set<Recovery["_tag"]>(["Feedback", "Fail", "Substitute"])
const isRecovery = (u: unknown): u is Recovery =>
  typeof u === "object" && u !== null && "_tag" in u && recoveryTags.has(String(u._tag))

/**
 * Asks a recovery policy for a decision. No policy, a policy that fails, or one that answers something
 * that is not a decision: `Recovery.feedback`, with the failure reported.
 */
const decide = <C>(
  state: RunState,
  hook: "InvalidArgs" | "ToolError",
  policy: ((context: C) => ReturnType<NonNullable<ErrorPolicy["invalidArgs"]>>) | undefined,
  context: C
): Effect.Effect<Recovery> => {
  const feedback: Recovery = { _tag: "Feedback" }
  if (policy === undefined) return Effect.succeed(feedback)
  return fromMaybeEffect(() => policy(context)).pipe(
    Effect.flatMap((decision) =>
      isRecovery(decision)
        ? Effect.succeed(decision)
        : Effect.fail(new Error(`a recovery policy must return a Recovery decision, got ${toolResultContent(decision)}`))
    ),
    catchUnlessInterrupted((error) => reportHookFailure(state.definition, state.runId, hook, error).pipe(Effect.as(feedback)))
  )
}
