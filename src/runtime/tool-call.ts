/**
 * One tool call, end to end: allowlist → decode (→ repair) → recovery of invalid arguments → budget →
 * execute (→ recovery of failures) → hooks → tool result message. A tool only ever runs when it is on
 * the skill's allowlist and its arguments decoded with its Schema; arguments fixed by a handler are
 * decoded again before they run.
 */
import { Cause, Clock, Duration, Effect, Exit, Result } from "effect"
import { BuiltinSignal } from "../dsl/builtin-tools.ts"
import type { AnyTool } from "../dsl/tool.ts"
import {
  type BudgetExceeded,
  Escalated,
  ExceptionThrown,
  InvalidToolArgs,
  ToolFailed,
  ToolNotAllowed
} from "../errors.ts"
import { noStackTrace } from "../internal/span-options.ts"
import type { ToolCall } from "../model/messages.ts"
import { emit } from "./emit.ts"
import { escalationContent, invalidArgsFeedback, toolFailedFeedback, toolResultContent, untrustedContent } from "./prompt.ts"
import { decideExecutionError, decideInvalidArgs } from "./recover.ts"
import { type ArgsCorrection, repairArguments } from "../dsl/repair-arguments.ts"
import type { RunState } from "./run-state.ts"

/** Errors a tool call can end the run with. */
export type ToolCallError = ToolNotAllowed | InvalidToolArgs | ToolFailed | BudgetExceeded | Escalated | ExceptionThrown

interface Scope {
  readonly agent: string
  readonly runId: string
  readonly skill: string
  readonly turn: number
}

/** Handles `call` (made during `turn`) and appends its tool result message to the transcript. */
export const handleToolCall = (state: RunState, call: ToolCall, turn: number): Effect.Effect<void, ToolCallError> =>
  Effect.gen(function*() {
    const scope: Scope = { agent: state.agent, runId: state.runId, skill: state.skill.name, turn }
    const reply = (name: string, content: string) =>
      Effect.sync(() => {
        state.transcript.push({ role: "tool", toolCallId: call.id, name, content })
      })
    const tool = state.tools.find((t) => t.name === call.name)
    if (tool === undefined) return yield* refuse(state, call, scope, reply)

    const decoded = decodeArguments(tool, call.arguments)
    yield* Effect.annotateCurrentSpan("tool.validated", decoded.validated)
    if (decoded.corrections.length > 0) {
      yield* Effect.annotateCurrentSpan("tool.repaired", JSON.stringify(decoded.corrections))
      yield* emit(state.definition, { _tag: "ArgsRepaired", ...scope, tool: tool.name, toolCallId: call.id, corrections: decoded.corrections })
    }
    let args: unknown
    if (Result.isFailure(decoded.args)) {
      const resolved = yield* recoverInvalidArgs(state, tool, call, scope, decoded.args.failure)
      if (resolved._tag === "Reply") return yield* reply(tool.name, resolved.content)
      args = resolved.args
    } else {
      args = decoded.args.success
    }
    return yield* executeWithRecovery(state, tool, call, scope, args, decoded.validated, (content) => reply(tool.name, content))
  }).pipe(
    Effect.withSpan("agent.tool", {
      attributes: {
        "agent.name": state.agent,
        "agent.skill": state.skill.name,
        "agent.turn": turn,
        "tool.name": call.name,
        "tool.call_id": call.id
      }
    }, noStackTrace)
  )

/** A call outside the allowlist: `ToolNotAllowed`, or under the `feedback` policy, a tool result saying so. */
const refuse = (state: RunState, call: ToolCall, scope: Scope, reply: (name: string, content: string) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const policy = state.definition.disallowedToolPolicy
    const error = new ToolNotAllowed({ agent: state.agent, skill: state.skill.name, tool: call.name, allowed: state.allowedNames })
    yield* Effect.annotateCurrentSpan("tool.outcome", "not_allowed")
    yield* emit(state.definition, { _tag: "ToolHallucinated", ...scope, tool: call.name, toolCallId: call.id, allowed: state.allowedNames, policy })
    if (policy === "fail") return yield* error
    return yield* reply(call.name, error.message)
  })

type Resolved = { readonly _tag: "Reply"; readonly content: string } | { readonly _tag: "Run"; readonly args: unknown }

/** Asks the handlers what to do with undecodable arguments until there is a reply, valid arguments, or an end. */
const recoverInvalidArgs = (state: RunState, tool: AnyTool, call: ToolCall, scope: Scope, firstIssues: string) =>
  Effect.gen(function*() {
    yield* Effect.annotateCurrentSpan("tool.outcome", "invalid_args")
    const validation = tool.validation
    const maxSteps = maxRepairSteps(state)
    let raw: unknown = parseLoosely(call.arguments)
    let issues = firstIssues
    for (let attempt = 1;; attempt++) {
      const { recovery, level } = yield* decideInvalidArgs(state, tool, {
        agent: state.agent,
        skill: state.skill.name,
        tool: tool.name,
        raw,
        error: issues,
        schema: validation._tag === "Schema" ? validation.schema : undefined,
        attempt
      })
      yield* Effect.annotateCurrentSpan("tool.recovery", `${recovery._tag} (${level})`)
      yield* emit(state.definition, { _tag: "InvalidArgs", ...scope, tool: tool.name, toolCallId: call.id, raw, issues, recovery: recovery._tag })
      const fail = (why: string) => new InvalidToolArgs({ agent: state.agent, skill: state.skill.name, tool: tool.name, raw, issues: why })
      switch (recovery._tag) {
        case "Feedback":
          return answer(invalidArgsFeedback(tool.name, issues))
        case "Retry":
          if (!state.takeInvalidArgsRetry(tool.name, recovery.times)) {
            return yield* fail(`${issues}\n(the model was asked again ${recovery.times} time(s) already)`)
          }
          return answer(invalidArgsFeedback(tool.name, issues))
        case "Fail":
          return yield* fail(issues)
        case "Substitute":
          return answer(toolResultContent(recovery.value))
        case "Escalate":
          return answer(escalationContent(tool.name, recovery))
        case "Fixed": {
          if (validation._tag !== "Schema") return runWith(recovery.args)
          const again = validation.decode(recovery.args)
          if (Result.isSuccess(again)) return runWith(again.success)
          raw = recovery.args
          issues = again.failure
          if (attempt >= maxSteps) return yield* fail(`${issues}\n(no valid arguments after ${maxSteps} repair step(s))`)
        }
      }
    }
  })

const answer = (content: string): Resolved => ({ _tag: "Reply", content })
const runWith = (args: unknown): Resolved => ({ _tag: "Run", args })

const maxRepairSteps = (state: RunState): number => Math.max(1, Math.floor(state.definition.recovery.maxRepairSteps ?? 3))

/** Executes within the budgets, asking the handlers after each failure whether to run again. */
const executeWithRecovery = (
  state: RunState,
  tool: AnyTool,
  call: ToolCall,
  scope: Scope,
  firstArgs: unknown,
  validated: boolean,
  reply: (content: string) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const maxSteps = maxRepairSteps(state)
    let args = firstArgs
    let reruns = 0
    let fixes = 0
    for (let attempt = 1;; attempt++) {
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
        yield* emit(state.definition, { _tag: "ToolUse", ...scope, tool: tool.name, toolCallId: call.id, args, result: exit.value, durationMs, validated })
        // Knowledge tools are never untrusted, so `characters` counts the knowledge text itself.
        const content = tool.untrustedOutput ? untrustedContent(tool.name, exit.value) : toolResultContent(exit.value)
        if (state.knowledgeNames.has(tool.name)) {
          yield* emit(state.definition, {
            _tag: "KnowledgeUsed",
            ...scope,
            knowledge: tool.name,
            toolCallId: call.id,
            characters: content.length,
            cached: loadedBefore
          })
        }
        return yield* reply(content)
      }
      if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
      const error = Cause.squash(exit.cause)
      if (error instanceof BuiltinSignal) {
        yield* Effect.annotateCurrentSpan("tool.outcome", error.kind)
        return yield* error.kind === "escalate"
          ? new Escalated({ agent: state.agent, skill: state.skill.name, reason: error.reason, severity: error.severity })
          : new ExceptionThrown({ agent: state.agent, skill: state.skill.name, reason: error.reason })
      }
      yield* Effect.annotateCurrentSpan("tool.outcome", "failed")
      const { recovery, level } = yield* decideExecutionError(state, tool, {
        agent: state.agent,
        skill: state.skill.name,
        tool: tool.name,
        args,
        cause: error,
        attempt
      })
      yield* Effect.annotateCurrentSpan("tool.recovery", `${recovery._tag} (${level})`)
      yield* emit(state.definition, { _tag: "ToolError", ...scope, tool: tool.name, toolCallId: call.id, args, error, recovery: recovery._tag })
      const failed = () => new ToolFailed({ agent: state.agent, skill: state.skill.name, tool: tool.name, args, cause: error })
      switch (recovery._tag) {
        case "Feedback":
          return yield* reply(toolFailedFeedback(tool.name, error))
        case "Fail":
          return yield* failed()
        case "Substitute":
          return yield* reply(toolResultContent(recovery.value))
        case "Escalate":
          return yield* reply(escalationContent(tool.name, recovery))
        case "Retry":
          if (reruns >= recovery.times) return yield* reply(toolFailedFeedback(tool.name, error))
          reruns++
          break
        case "Fixed": {
          fixes++
          if (fixes > maxSteps) return yield* failed()
          if (tool.validation._tag === "Schema") {
            const fixed = tool.validation.decode(recovery.args)
            if (Result.isFailure(fixed)) {
              return yield* new InvalidToolArgs({
                agent: state.agent,
                skill: state.skill.name,
                tool: tool.name,
                raw: recovery.args,
                issues: `arguments fixed by the executionError handler do not match the Schema:\n${fixed.failure}`
              })
            }
            args = fixed.success
          } else {
            args = recovery.args
          }
        }
      }
    }
  })

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
