/**
 * One tool call, end to end: allowlist → decode (→ repair) → recovery of invalid arguments → budget →
 * execute (→ recovery of failures) → hooks → tool result message. A tool only ever runs when it is on
 * the skill's allowlist and its arguments decoded with its Schema; arguments fixed by a handler are
 * decoded again before they run.
 */
import { Cause, Clock, Duration, Effect, Exit, Result } from "effect"
import type { AnyTool } from "../dsl/tool.ts"
import {
  type BudgetExceeded,
  type Escalated,
  type ExceptionThrown,
  InvalidToolArgs,
  type OutputInvalid,
  ToolFailed,
  ToolNotAllowed
} from "../errors.ts"
import { noStackTrace } from "../internal/span-options.ts"
import type { ToolCall } from "../model/messages.ts"
import { escalationContent, invalidArgsFeedback, toolFailedFeedback, toolResultContent, untrustedContent } from "./prompt.ts"
import { decideExecutionError, decideInvalidArgs } from "./recover.ts"
import { type ArgsCorrection, repairArguments } from "../dsl/repair-arguments.ts"
import { type Finished, rejectAnswer } from "./final-answer.ts"
import type { RunContext } from "./run-context.ts"
import type { Terminal } from "./terminal.ts"

/** Errors a tool call can end the run with. */
export type ToolCallError = ToolNotAllowed | InvalidToolArgs | ToolFailed | BudgetExceeded | Escalated | ExceptionThrown | OutputInvalid

/**
 * Handles one call of the current turn and appends its tool result message to the transcript. A
 * terminal call (`submit`, a listed built-in) may finish the run; any other call goes through the
 * pipeline; a call outside the skill's table is refused.
 */
export const handleCall = (state: RunContext, call: ToolCall): Effect.Effect<Finished | undefined, ToolCallError> => {
  const terminal = state.skill.terminals.get(call.name)
  if (terminal !== undefined && terminal === state.skill.submit) return settleTerminal(state, terminal, call)
  return (terminal === undefined ? handleToolCall(state, call) : settleTerminal(state, terminal, call)).pipe(
    Effect.withSpan("agent.tool", {
      attributes: {
        "agent.name": state.agent,
        "agent.skill": state.skill.name,
        "agent.turn": state.turn,
        "tool.name": call.name,
        "tool.call_id": call.id
      }
    }, noStackTrace)
  )
}

/**
 * A terminal call: decoded, then finished (the typed answer, or the error a built-in ends the run
 * with). Arguments that do not decode: a `submit` is corrected like any typed answer; a built-in gets
 * the decoder's report as its result.
 */
const settleTerminal = (state: RunContext, terminal: Terminal, call: ToolCall): Effect.Effect<Finished | undefined, ToolCallError> =>
  Effect.gen(function*() {
    const decoded = terminal.decode(call.arguments)
    const reply = (content: string) => state.append({ role: "tool", toolCallId: call.id, name: call.name, content })
    if (Result.isFailure(decoded)) {
      if (terminal === state.skill.submit) {
        return yield* rejectAnswer(state, call.arguments, decoded.failure, (content) => ({ role: "tool", toolCallId: call.id, name: call.name, content }))
      }
      yield* Effect.annotateCurrentSpan("tool.outcome", "invalid_args")
      yield* state.emit({ _tag: "InvalidArgs", tool: call.name, toolCallId: call.id, raw: parseLoosely(call.arguments), issues: decoded.failure, recovery: "Feedback" })
      reply(invalidArgsFeedback(call.name, decoded.failure))
      return undefined
    }
    const finish = terminal.finish(decoded.success, { agent: state.agent, skill: state.skill.name })
    switch (finish._tag) {
      case "Output":
        reply("submitted")
        return { output: finish.value }
      case "Fail":
        yield* Effect.annotateCurrentSpan("tool.outcome", finish.error._tag === "Escalated" ? "escalate" : "throwException")
        return yield* finish.error
      case "Route":
        return yield* Effect.die(new Error(`internal: "${call.name}" routes, which only the skill choice may do`))
    }
  })

/** Handles a call to one of the skill's tools: allowlisted by construction. */
const handleToolCall = (state: RunContext, call: ToolCall): Effect.Effect<undefined, ToolCallError> =>
  Effect.gen(function*() {
    const reply = (name: string, content: string) =>
      Effect.sync(() => {
        state.append({ role: "tool", toolCallId: call.id, name, content })
      })
    const tool = state.skill.tools.get(call.name)
    if (tool === undefined) return yield* refuse(state, call, reply)

    const decoded = decodeArguments(tool, call.arguments)
    yield* Effect.annotateCurrentSpan("tool.validated", decoded.validated)
    if (decoded.corrections.length > 0) {
      yield* Effect.annotateCurrentSpan("tool.repaired", JSON.stringify(decoded.corrections))
      yield* state.emit({ _tag: "ArgsRepaired", tool: tool.name, toolCallId: call.id, corrections: decoded.corrections })
    }
    let args: unknown
    if (Result.isFailure(decoded.args)) {
      const resolved = yield* recoverInvalidArgs(state, tool, call, decoded.args.failure)
      if (resolved._tag === "Reply") {
        yield* reply(tool.name, resolved.content)
        return undefined
      }
      args = resolved.args
    } else {
      args = decoded.args.success
    }
    yield* executeWithRecovery(state, tool, call, args, decoded.validated, (content) => reply(tool.name, content))
    return undefined
  })

/** A call outside the allowlist: `ToolNotAllowed`, or under the `feedback` policy, a tool result saying so. */
const refuse = (state: RunContext, call: ToolCall, reply: (name: string, content: string) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const policy = state.plan.definition.disallowedToolPolicy
    const allowed = state.skill.allowed
    const error = new ToolNotAllowed({ agent: state.agent, skill: state.skill.name, tool: call.name, allowed })
    yield* Effect.annotateCurrentSpan("tool.outcome", "not_allowed")
    yield* state.emit({ _tag: "ToolHallucinated", tool: call.name, toolCallId: call.id, allowed, policy })
    if (policy === "fail") return yield* error
    yield* reply(call.name, error.message)
    return undefined
  })

type Resolved = { readonly _tag: "Reply"; readonly content: string } | { readonly _tag: "Run"; readonly args: unknown }

/** Asks the handlers what to do with undecodable arguments until there is a reply, valid arguments, or an end. */
const recoverInvalidArgs = (state: RunContext, tool: AnyTool, call: ToolCall, firstIssues: string) =>
  Effect.gen(function*() {
    yield* Effect.annotateCurrentSpan("tool.outcome", "invalid_args")
    const validation = tool.validation
    const maxSteps = state.plan.maxRepairSteps
    let raw: unknown = parseLoosely(call.arguments)
    let issues = firstIssues
    for (let attempt = 1;; attempt++) {
      const { recovery, level } = yield* decideInvalidArgs(state.plan, state.runId, tool, {
        agent: state.agent,
        skill: state.skill.name,
        tool: tool.name,
        raw,
        error: issues,
        schema: validation._tag === "Schema" ? validation.schema : undefined,
        attempt
      })
      yield* Effect.annotateCurrentSpan("tool.recovery", `${recovery._tag} (${level})`)
      yield* state.emit({ _tag: "InvalidArgs", tool: tool.name, toolCallId: call.id, raw, issues, recovery: recovery._tag })
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

/** Executes within the budgets, asking the handlers after each failure whether to run again. */
const executeWithRecovery = (
  state: RunContext,
  tool: AnyTool,
  call: ToolCall,
  firstArgs: unknown,
  validated: boolean,
  reply: (content: string) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const maxSteps = state.plan.maxRepairSteps
    const knowledge = state.skill.knowledge.get(tool.name)
    let args = firstArgs
    let reruns = 0
    let fixes = 0
    for (let attempt = 1;; attempt++) {
      yield* state.ensure(state.ledger.checkExecution(tool.name))
      state.ledger.spendExecution(tool.name)
      yield* state.checkThresholds()
      const cached = knowledge === undefined ? undefined : state.cachedKnowledge(tool.name)
      const started = yield* Clock.currentTimeMillis
      const exit: Exit.Exit<unknown, unknown> = cached !== undefined ? Exit.succeed(cached) : yield* executeWithin(state, tool, args, call.id)
      if (knowledge !== undefined && cached === undefined && Exit.isSuccess(exit)) state.rememberKnowledge(tool.name, String(exit.value))
      const durationMs = (yield* Clock.currentTimeMillis) - started
      if (Exit.isSuccess(exit)) {
        yield* Effect.annotateCurrentSpan("tool.outcome", "success")
        yield* state.emit({ _tag: "ToolUse", tool: tool.name, toolCallId: call.id, args, result: exit.value, durationMs, validated })
        // Knowledge tools are never untrusted, so `characters` counts the knowledge text itself.
        const content = tool.untrustedOutput ? untrustedContent(tool.name, exit.value) : toolResultContent(exit.value)
        if (knowledge !== undefined) {
          yield* state.emit({ _tag: "KnowledgeUsed", knowledge: tool.name, toolCallId: call.id, characters: content.length, cached: cached !== undefined })
        }
        return yield* reply(content)
      }
      if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
      const error = Cause.squash(exit.cause)
      yield* Effect.annotateCurrentSpan("tool.outcome", "failed")
      const { recovery, level } = yield* decideExecutionError(state.plan, state.runId, tool, {
        agent: state.agent,
        skill: state.skill.name,
        tool: tool.name,
        args,
        cause: error,
        attempt
      })
      yield* Effect.annotateCurrentSpan("tool.recovery", `${recovery._tag} (${level})`)
      yield* state.emit({ _tag: "ToolError", tool: tool.name, toolCallId: call.id, args, error, recovery: recovery._tag })
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
const executeWithin = (state: RunContext, tool: AnyTool, args: unknown, toolCallId: string) => {
  const execution = Effect.exit(tool.execute(args, toolCallId))
  const limit = state.ledger.limit("perToolTimeout")
  if (!Number.isFinite(limit)) return execution
  return execution.pipe(
    Effect.timeoutOrElse({ duration: Duration.millis(limit), orElse: () => state.exceed({ reason: "perToolTimeout", limit, used: limit }) })
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
