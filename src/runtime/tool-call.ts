/**
 * One call of the current turn, dispatched by the skill's tool table: a terminal call (`submit`, a
 * listed built-in) is settled and may finish the run; a call to one of the skill's tools goes through
 * the pipeline (decode → recover → execute, `tool-pipeline.ts`); any other call is refused (the
 * allowlist). Every call but `submit` is an `execute_tool {tool}` span (GenAI conventions, `gen-ai-spans.ts`).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { parseLoosely } from "../dsl/tool-codec.ts"
import {
  type BudgetExceeded,
  type Escalated,
  type ExceptionThrown,
  type InvalidToolArgs,
  type OutcomeUnknown,
  type OutputInvalid,
  type ToolFailed,
  ToolNotAllowed
} from "../errors.ts"
import type { Steps } from "../internal/steps.ts"
import type { LlmMessage, ToolCall } from "../model/messages.ts"
import { ToolInternals } from "../dsl/tool.ts"
import { childAgentOf } from "../dsl/child-suspension.ts"
import { type Finished, rejectAnswer } from "./final-answer.ts"
import { invalidArgsFeedback } from "./prompt.ts"
import type { RunContext } from "./run-context.ts"
import type { Terminal } from "./terminal.ts"
import { runToolCall, runToolCallSteps } from "./tool-pipeline.ts"
import { oversizeBytes, oversizeIssue, oversizeValue } from "./args-size.ts"
import { CaptureMessageContent, toolArgumentsContent, toolResultContent } from "./gen-ai-content.ts"
import { GenAi, toolSpan, withErrorType } from "./gen-ai-spans.ts"
import { withGuardedSpan } from "../internal/guarded-span.ts"

/** Errors a tool call can end the run with. */
export type ToolCallError = ToolNotAllowed | InvalidToolArgs | ToolFailed | BudgetExceeded | Escalated | ExceptionThrown | OutputInvalid | OutcomeUnknown

/**
 * Handles `call` and appends its tool result message to the transcript; a finished run's output when
 * it ended the run, `"suspend"` when the call waits for a human decision. Generator steps for the loop
 * to delegate to (`yield*`), or, when the run is traced, the Effect of the call's `execute_tool` span
 * (delegated to the same way). A plain function rather than a generator delegating to the steps: one
 * generator fewer for every resumption of the call to pass through (issue #37).
 *
 * @example
 * ```ts
 * const finished = yield* handleCall(ctx, ctx.nextPending!)
 * ```
 */
export const handleCall = (ctx: RunContext, call: ToolCall): CallSteps => {
  const terminal = ctx.skill.terminals.get(call.name)
  if (terminal !== undefined && terminal === ctx.skill.submit) return settleTerminal(ctx, terminal, call)
  if (ctx.traced) return inToolSpan(ctx, call, Effect.gen(() => dispatch(ctx, call, terminal)))
  const tool = terminal === undefined ? ctx.skill.tools.get(call.name) : undefined
  // One of the skill's tools: its pipeline appends the result itself (no `dispatch` in between).
  return tool === undefined ? dispatch(ctx, call, terminal) : runToolCallSteps(ctx, tool, call, true)
}

/** What `handleCall` answers: steps, or the Effect of a traced call; either is delegated to with `yield*`. */
export type CallSteps =
  | Steps<Finished | "suspend" | undefined, ToolCallError>
  | Effect.Effect<Finished | "suspend" | undefined, ToolCallError>

function* dispatch(ctx: RunContext, call: ToolCall, terminal: Terminal | undefined): Steps<Finished | "suspend" | undefined, ToolCallError> {
  if (terminal !== undefined) return yield* settleTerminal(ctx, terminal, call)
  const tool = ctx.skill.tools.get(call.name)
  if (tool === undefined) return yield* refuse(ctx, call)
  const result = yield* runToolCallSteps(ctx, tool, call)
  if (result === "suspend") return result
  if (ctx.traced) yield* annotateResult(result)
  ctx.append(result)
  return undefined
}

const inToolSpan = <A, E>(ctx: RunContext, call: ToolCall, effect: Effect.Effect<A, E>): Effect.Effect<A, E> => {
  if (!ctx.traced) return effect
  const description = ctx.skill.tools.get(call.name)?.description ?? ctx.skill.terminals.get(call.name)?.definition.description
  const span = toolSpan(call, description, ctx.agent, ctx.skill.name, ctx.turn)
  // The arguments are content: on the span only when content capture is on.
  const body = Effect.andThen(
    Effect.withFiber((fiber) => (fiber.getRef(CaptureMessageContent) ? Effect.annotateCurrentSpan(toolArgumentsContent(call)) : Effect.void)),
    effect
  )
  return withGuardedSpan(withErrorType(Effect.tap(body, () => markFailedOutcome)), span.name, span.options)
}

/**
 * `error.type` on a tool span whose call failed without ending the run (reported to the model): read
 * from its final `tool.outcome`, so a call that failed once and then ran (a retry, a repair) has none.
 */
const markFailedOutcome: Effect.Effect<void> = Effect.currentSpan.pipe(
  Effect.map((span) => {
    const type = failedOutcomes[String(span.attributes.get("tool.outcome"))]
    if (type !== undefined) span.attribute(GenAi.errorType, type)
  }),
  Effect.catch(() => Effect.void)
)

const failedOutcomes: Record<string, string> = { invalid_args: "InvalidToolArgs", failed: "ToolFailed", not_allowed: "ToolNotAllowed" }

/**
 * The tool result on the current (tool) span, when content capture is on and the call ran: the
 * conventions record `gen_ai.tool.call.result` "if execution was successful", so a call refused or
 * failed (what the model is told then is feedback, not a result) has none.
 */
const annotateResult = (result: LlmMessage): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    if (!fiber.getRef(CaptureMessageContent)) return Effect.void
    return Effect.currentSpan.pipe(
      Effect.flatMap((span) => (failedOutcomes[String(span.attributes.get("tool.outcome"))] === undefined ? Effect.annotateCurrentSpan(toolResultContent(result)) : Effect.void)),
      Effect.catch(() => Effect.void)
    )
  })

/**
 * Whether `call` goes through the tool pipeline (one of the skill's tools, not a terminal) with no one
 * to ask (no approval, no interceptor): such calls may run concurrently. A call that may wait for a
 * human decision runs on its own, so the calls before it have run when the run suspends.
 */
export const isPipelineCall = (ctx: RunContext, call: ToolCall): boolean => {
  if (ctx.skill.terminals.has(call.name)) return false
  const tool = ctx.skill.tools.get(call.name)
  // An agent-as-tool whose child may suspend runs on its own too.
  return tool !== undefined && tool[ToolInternals].needsApproval === undefined && childAgentOf(tool) === undefined &&
    (ctx.plan.definition.interceptors?.[tool.name] ?? []).length === 0
}

/**
 * Runs pipeline calls (see `isPipelineCall`) at most `concurrency` at a time and appends their tool
 * results in call order once all ran. The first call that ends the run interrupts the others.
 */
export const handleConcurrently = (
  ctx: RunContext,
  calls: ReadonlyArray<ToolCall>,
  concurrency: number
): Effect.Effect<void, ToolCallError> =>
  Effect.forEach(calls, (call) => {
    const run = runToolCall(ctx, ctx.skill.tools.get(call.name)!, call)
    return inToolSpan(ctx, call, ctx.traced ? Effect.tap(run, (result) => (result === "suspend" ? Effect.void : annotateResult(result))) : run)
  }, { concurrency }).pipe(
    // Batched calls never suspend (see `isPipelineCall`).
    Effect.map((results) => ctx.append(...results.filter((r): r is LlmMessage => r !== "suspend")))
  )

/**
 * A terminal call: decoded, then finished (the typed answer, or the error a built-in ends the run
 * with). Arguments that do not decode: a `submit` is corrected like any typed answer; a built-in gets
 * the decoder's report as its result.
 */
function* settleTerminal(ctx: RunContext, terminal: Terminal, call: ToolCall): Steps<Finished | undefined, ToolCallError> {
  const limit = ctx.plan.budget.maxToolArgsBytes
  const bytes = oversizeBytes(call.arguments, limit)
  const decoded = bytes === undefined ? terminal.decode(call.arguments) : Result.fail(oversizeIssue(bytes, limit))
  const reply = (content: string) => ctx.append({ role: "tool", toolCallId: call.id, name: call.name, content })
  if (Result.isFailure(decoded)) {
    if (terminal === ctx.skill.submit) {
      return yield* rejectAnswer(ctx, call.arguments, decoded.failure, (content) => ({ role: "tool", toolCallId: call.id, name: call.name, content }))
    }
    yield* ctx.annotate("tool.outcome", "invalid_args")
    yield* ctx.emit({ _tag: "InvalidArgs", tool: call.name, toolCallId: call.id, raw: bytes === undefined ? parseLoosely(call.arguments) : oversizeValue(bytes), issues: decoded.failure, recovery: "Feedback" })
    reply(invalidArgsFeedback(call.name, decoded.failure))
    return undefined
  }
  const finish = terminal.finish(decoded.success, { agent: ctx.agent, skill: ctx.skill.name })
  switch (finish._tag) {
    case "Output":
      reply("submitted")
      // The run ends with its answer: every later call of the turn gets a result too (a session's next
      // run sends this transcript, and an API refuses a call without one), and none of them runs.
      for (const later of ctx.pendingAfterNext) {
        ctx.append({ role: "tool", toolCallId: later.id, name: later.name, content: "not run: the run ended with its answer" })
      }
      return { output: finish.value }
    case "Fail":
      yield* ctx.annotate("tool.outcome", finish.error._tag === "Escalated" ? "escalate" : "throwException")
      return yield* finish.error
    case "Handoff": {
      // A handoff counts as a tool call, so budgets bound agents handing the conversation back and forth.
      const overrun = ctx.ledger.checkExecution(call.name)
      if (overrun !== undefined) return yield* ctx.exceed(overrun)
      ctx.ledger.spendExecution(call.name)
      yield* ctx.annotate("tool.outcome", "handoff")
      reply(`Handed off to agent "${finish.target.name}".`)
      // The target sees this message: every later call of it gets a result too (an API refuses a call
      // without one), and none of them runs.
      for (const later of ctx.pendingAfterNext) {
        ctx.append({ role: "tool", toolCallId: later.id, name: later.name, content: `not run: handed off to agent "${finish.target.name}"` })
      }
      yield* ctx.emit({ _tag: "Handoff", to: finish.target.name, toolCallId: call.id })
      return { _tag: "Handoff", target: finish.target }
    }
    case "Route":
      return yield* Effect.die(new Error(`internal: "${call.name}" routes, which only the skill choice may do`))
  }
}

/** A call outside the allowlist: `ToolNotAllowed`, or under the `feedback` policy, a tool result saying so. */
function* refuse(ctx: RunContext, call: ToolCall): Steps<undefined, ToolNotAllowed> {
  const policy = ctx.plan.definition.disallowedToolPolicy
  const bytes = oversizeBytes(call.arguments, ctx.plan.budget.maxToolArgsBytes)
  const allowed = ctx.skill.allowed
  const error = new ToolNotAllowed({ agent: ctx.agent, skill: ctx.skill.name, tool: call.name, allowed })
  yield* ctx.annotate("tool.outcome", "not_allowed")
  yield* ctx.emit({ _tag: "ToolHallucinated", tool: call.name, toolCallId: call.id, allowed, policy, args: bytes === undefined ? parseLoosely(call.arguments) : oversizeValue(bytes) })
  if (policy === "fail") return yield* error
  ctx.append({ role: "tool", toolCallId: call.id, name: call.name, content: error.message })
  return undefined
}
