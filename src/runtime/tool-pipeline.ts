/**
 * The pipeline of a call to one of the skill's tools: decode → recover → execute.
 *
 * - **decode**: the tool's codec (parse, Schema decode, opt-in repair, decode again).
 * - **recover**: one state machine for both situations a call can be in, invalid arguments and a
 *   failed execution. The handlers decide (tool, agent-tool, agent, default) and the decision is
 *   applied the same way in both: `fixed(args)` always means "decode these arguments (never trusted,
 *   never repaired) and run the tool with them; if they do not decode, the handler that proposed them
 *   is asked again", at most `maxRepairSteps` fixes per call.
 * - **execute**: within the tool-call, repetition and per-tool time budgets; knowledge answered from
 *   the run's cache after its first load.
 *
 * - **intercept** (before every execution): the agent's interceptors of the tool (`intercept.ts`).
 * - **approve** (before every execution): a tool that may need approval runs only with arguments a
 *   human decided on or its `needsApproval` cleared; otherwise the call suspends (`approval.ts`). An
 *   agent used as a tool whose child suspends suspends the call too, and the call's next run resumes
 *   the child (`child-runs.ts`).
 *
 * A tool only ever runs with arguments its Schema accepted.
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Recovery } from "../dsl/recovery.ts"
import type { ArgsDecoding } from "../dsl/tool-codec.ts"
import type { ArgsCorrection } from "../dsl/repair-arguments.ts"
import { CaptureMessageContent } from "../internal/capture-content.ts"
import { oversizeBytes, oversizeIssue, oversizeValue } from "./args-size.ts"
import { type AnyTool, executeTool, ToolInternals } from "../dsl/tool.ts"
import { type BudgetExceeded, ExceptionThrown, InvalidToolArgs, type OutcomeUnknown, ToolFailed } from "../errors.ts"
import type { LlmMessage, ToolCall } from "../model/messages.ts"
import { escalationContent, invalidArgsFeedback, toolFailedFeedback, toolResultContent, untrustedContent } from "./prompt.ts"
import { approvalGate, deniedContent, suspendFor, suspendForChild } from "./approval.ts"
import { ChildSuspension, childAgentOf } from "../dsl/child-suspension.ts"
import { takeChildResume } from "./child-runs.ts"
import type { Decisions } from "../dsl/decision.ts"
import type { RunSnapshot } from "../dsl/run-snapshot.ts"

/** A suspended child to resume, with the decisions meant for it. */
type ChildResume = { readonly snapshot: RunSnapshot; readonly decisions: Decisions }
import { interceptCall } from "./intercept.ts"
import { withToolProgress } from "./tool-progress.ts"
import { decideExecutionError, decideInvalidArgs } from "./recover.ts"
import { CurrentBudgetScope, ParentRun } from "../dsl/lineage.ts"
import type { RunContext } from "./run-context.ts"
import type { ToolRunExtra } from "./durability.ts"
import type { Steps } from "../internal/steps.ts"

/** Where a call stands when the handlers are asked. */
type Situation =
  | { readonly _tag: "Invalid"; readonly value: unknown; readonly issues: string }
  | { readonly _tag: "Failed"; readonly args: unknown; readonly cause: unknown }

/** What to do next. */
type Next =
  | { readonly _tag: "Reply"; readonly content: string }
  | { readonly _tag: "Run"; readonly args: unknown }
  | { readonly _tag: "Ask"; readonly situation: Situation }
  | { readonly _tag: "End"; readonly error: InvalidToolArgs | ToolFailed | ExceptionThrown }

/** What a tool call can end the run with. */
type PipelineError = InvalidToolArgs | ToolFailed | ExceptionThrown | BudgetExceeded | OutcomeUnknown

/**
 * Runs `call` of `tool` to its tool result message, which the caller appends (so calls run
 * concurrently still append their results in call order); `"suspend"` when it waits for a human
 * decision (no tool result then: the call stays pending).
 */
export const runToolCall = (ctx: RunContext, tool: AnyTool, call: ToolCall): Effect.Effect<LlmMessage | "suspend", PipelineError> =>
  Effect.gen(() => runToolCallSteps(ctx, tool, call))

/**
 * `runToolCall` as generator steps, for the loop to delegate to (`yield*`) inside its own `Effect.gen`.
 * With `append`, the tool result is appended to the transcript here (and `undefined` answered): the
 * loop's tool step then delegates to these steps directly, one generator fewer for the call's
 * resumption to pass through (issue #37).
 *
 * @example
 * ```ts
 * const result = yield* runToolCallSteps(ctx, tool, call) // a tool message, or "suspend"
 * ```
 */
export function runToolCallSteps(ctx: RunContext, tool: AnyTool, call: ToolCall): Steps<LlmMessage | "suspend", PipelineError>
export function runToolCallSteps(ctx: RunContext, tool: AnyTool, call: ToolCall, append: true): Steps<undefined | "suspend", PipelineError>
export function* runToolCallSteps(ctx: RunContext, tool: AnyTool, call: ToolCall, append = false): Steps<LlmMessage | "suspend" | undefined, PipelineError> {
  // A decision binds to its call: the same id and the same tool (`resolveDecisions` checked both
  // against the snapshot); one about another tool is never applied, and the call waits again.
  const taken = ctx.takeDecision(call.id)
  const decision = taken !== undefined && taken.tool === tool.name ? taken : undefined
  if (decision !== undefined) {
    if (ctx.traced) yield* ctx.annotate("tool.approval", decision._tag === "Deny" ? "denied" : decision.how)
    yield* ctx.emit(
      decision._tag === "Deny"
        ? { _tag: "ApprovalDecided", toolCallId: call.id, tool: tool.name, decision: "deny", reason: decision.reason }
        : { _tag: "ApprovalDecided", toolCallId: call.id, tool: tool.name, decision: decision.how === "edited" ? "edit" : "approve", args: decision.args }
    )
  }
  if (decision?._tag === "Deny") {
    const message = { role: "tool", toolCallId: call.id, name: tool.name, content: deniedContent(tool.name, decision.reason) } satisfies LlmMessage
    if (!append) return message
    ctx.append(message)
    return undefined
  }
  // The arguments a human decided on run as they are: never decoded from the model's text again.
  const decided = decision
  const limit = ctx.plan.budget.maxToolArgsBytes
  const bytes = decided !== undefined ? undefined : oversizeBytes(call.arguments, limit)
  const decoded: ArgsDecoding<unknown> = decided !== undefined
    ? { _tag: "Valid", args: decided.args, corrections: [] }
    : bytes === undefined
    ? tool.codec.decode(call.arguments)
    : { _tag: "Invalid", value: oversizeValue(bytes), issues: oversizeIssue(bytes, limit) }
  if (ctx.traced) {
    yield* ctx.annotate("tool.validated", tool.codec.validated)
    if (tool.codec.unsafe !== undefined) yield* ctx.annotate("tool.unsafe_mode", tool.codec.unsafe)
  }
  if (decoded._tag === "Valid" && decoded.corrections.length > 0) {
    if (ctx.traced) yield* repairedAttribute(decoded.corrections)
    yield* ctx.emit({ _tag: "ArgsRepaired", tool: tool.name, toolCallId: call.id, corrections: decoded.corrections })
  }
  // Allocated on the first failure: most calls decode and run.
  let machine: Recovering | undefined
  let next: Next = decoded._tag === "Valid"
    ? { _tag: "Run", args: decoded.args }
    : { _tag: "Ask", situation: { _tag: "Invalid", value: decoded.value, issues: decoded.issues } }
  while (true) {
    switch (next._tag) {
      case "Reply": {
        const message = { role: "tool", toolCallId: call.id, name: tool.name, content: next.content } satisfies LlmMessage
        if (!append) return message
        ctx.append(message)
        return undefined
      }
      case "End":
        return yield* next.error
      case "Run": {
        let args: unknown = next.args
        // The call of an agent-as-tool whose child suspended: the child resumes with its decisions (it
        // was intercepted and cleared before it first ran, so neither is asked again).
        // A durable run records a child's suspension as the call's outcome and reads it back as one.
        const child = takeChildResume(ctx, call.id)
        if (child === undefined) {
          // A human decision on these very arguments stands; otherwise the interceptors have their say.
          if ((decided === undefined || decided.args !== args) && hasInterceptors(ctx, tool)) {
            const verdict = yield* interceptCall(ctx, tool, call, args)
            if (verdict._tag === "Reply") {
              next = verdict
              break
            }
            if (verdict._tag === "Suspend") return yield* suspendFor(ctx, tool, call, verdict.args, verdict.reason)
            args = verdict.args
          }
          if (tool[ToolInternals].needsApproval !== undefined && (yield* approvalGate(ctx, tool, call, args, decided)) === "suspend") return "suspend"
        }
        let exit: Exit.Exit<string, unknown> | "suspend"
        if (chargedPlainly(ctx, tool, child)) {
          // The plain execution (see `chargedPlainly`): its steps here, one generator fewer for the
          // tool's wait to resume through (issue #37).
          const ran = yield* executeWithin(ctx, tool, args, call.id, undefined)
          exit = Exit.isSuccess(ran) && ran.value instanceof ChildSuspension ? yield* suspendForChild(ctx, tool, call, ran.value) : rendered(tool, ran)
        } else {
          exit = yield* execute(ctx, tool, call, args, child)
        }
        if (exit === "suspend") return "suspend"
        if (Exit.isSuccess(exit)) {
          next = { _tag: "Reply", content: exit.value }
          break
        }
        if (Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.interrupt
        ;(machine ??= new Recovering(ctx, tool, call)).ran(args)
        next = { _tag: "Ask", situation: { _tag: "Failed", args, cause: Cause.squash(exit.cause) } }
        break
      }
      case "Ask":
        next = yield* deciding((machine ??= new Recovering(ctx, tool, call)), next.situation)
    }
  }
}

/**
 * The `tool.repaired` span attribute: each correction's path and kind, and with content capture on
 * its values too (`from` and `to` are the model's arguments: content, off the span by default).
 */
const repairedAttribute = (corrections: ReadonlyArray<ArgsCorrection>): Effect.Effect<void> =>
  Effect.withFiber((fiber) =>
    Effect.annotateCurrentSpan(
      "tool.repaired",
      JSON.stringify(fiber.getRef(CaptureMessageContent) ? corrections : corrections.map(({ path, kind }) => ({ path, kind })))
    )
  )

const hasInterceptors = (ctx: RunContext, tool: AnyTool): boolean => (ctx.plan.definition.interceptors?.[tool.name]?.length ?? 0) > 0

/** The recovery state of one call: attempts per situation, fixes, re-runs, the last arguments that ran. */
class Recovering {
  invalidAttempts = 0
  failedAttempts = 0
  private fixes = 0
  private reruns = 0
  private lastRun: unknown = undefined

  constructor(readonly ctx: RunContext, readonly tool: AnyTool, readonly call: ToolCall) {}

  ran(args: unknown): void {
    this.lastRun = args
  }

  /** Applies the handlers' decision (`deciding` asks them). */
  apply(situation: Situation, recovery: Recovery): Next {
    const { ctx, tool } = this
    const invalid = situation._tag === "Invalid"
    const end = (issues?: string): Next => ({
      _tag: "End",
      error: situation._tag === "Invalid"
        ? new InvalidToolArgs({ agent: ctx.agent, skill: ctx.skill.name, tool: tool.name, raw: situation.value, issues: issues ?? situation.issues })
        : new ToolFailed({ agent: ctx.agent, skill: ctx.skill.name, tool: tool.name, args: situation.args, cause: issues ?? situation.cause })
    })
    const feedback: Next = {
      _tag: "Reply",
      content: situation._tag === "Invalid" ? invalidArgsFeedback(tool.name, situation.issues) : toolFailedFeedback(tool.name, situation.cause)
    }
    switch (recovery._tag) {
      case "Feedback":
        return feedback
      case "Fail":
        return end(recovery.reason)
      case "ThrowException":
        return { _tag: "End", error: new ExceptionThrown({ agent: ctx.agent, skill: ctx.skill.name, reason: recovery.reason }) }
      case "Substitute":
        return { _tag: "Reply", content: toolResultContent(recovery.value) }
      case "Escalate":
        return { _tag: "Reply", content: escalationContent(tool.name, recovery) }
      case "Retry":
        if (situation._tag === "Invalid") {
          // Invalid arguments: the model is asked again, at most `times` per tool in the run.
          return ctx.takeInvalidArgsRetry(tool.name, recovery.times)
            ? feedback
            : end(`${situation.issues}\n(the model was asked again ${recovery.times} time(s) already)`)
        }
        // A failed execution: the tool runs again, at most `times` for the call.
        if (this.reruns >= recovery.times) return feedback
        this.reruns++
        return { _tag: "Run", args: situation.args }
      case "Fixed": {
        const maxSteps = ctx.plan.maxRepairSteps
        if (this.fixes >= maxSteps) return end()
        this.fixes++
        const fixed = tool.codec.decode(recovery.args, { repair: false })
        if (fixed._tag === "Valid") return { _tag: "Run", args: fixed.args }
        const stillInvalid = new InvalidToolArgs({
          agent: ctx.agent,
          skill: ctx.skill.name,
          tool: tool.name,
          raw: fixed.value,
          issues: `${fixed.issues}\n(no valid arguments after ${maxSteps} repair step(s))`
        })
        if (this.fixes >= maxSteps) return { _tag: "End", error: stillInvalid }
        // Back to the handler that proposed the fix: about the new arguments, or about the failure.
        return invalid
          ? { _tag: "Ask", situation: { _tag: "Invalid", value: fixed.value, issues: fixed.issues } }
          : { _tag: "Ask", situation: { _tag: "Failed", args: this.lastRun, cause: stillInvalid } }
      }
    }
  }
}

/** Asks the handlers about `situation`, reports the decision, and applies it (`Recovering.apply`). */
function* deciding(machine: Recovering, situation: Situation): Steps<Next> {
  const { ctx, tool, call } = machine
  const scope = { agent: ctx.agent, skill: ctx.skill.name, tool: tool.name }
  let recovery: Recovery
  if (situation._tag === "Invalid") {
    yield* ctx.annotate("tool.outcome", "invalid_args")
    const decision = yield* decideInvalidArgs(ctx.plan, ctx.runId, tool, {
      ...scope,
      raw: situation.value,
      error: situation.issues,
      schema: tool.codec.schema,
      attempt: ++machine.invalidAttempts
    })
    recovery = decision.recovery
    yield* ctx.annotate("tool.recovery", `${recovery._tag} (${decision.level})`)
    yield* ctx.emit({ _tag: "InvalidArgs", tool: tool.name, toolCallId: call.id, raw: situation.value, issues: situation.issues, recovery: recovery._tag })
  } else {
    yield* ctx.annotate("tool.outcome", "failed")
    const decision = yield* decideExecutionError(ctx.plan, ctx.runId, tool, {
      ...scope,
      args: situation.args,
      cause: situation.cause,
      attempt: ++machine.failedAttempts
    })
    recovery = decision.recovery
    yield* ctx.annotate("tool.recovery", `${recovery._tag} (${decision.level})`)
    yield* ctx.emit({ _tag: "ToolError", tool: tool.name, toolCallId: call.id, args: situation.args, error: situation.cause, recovery: recovery._tag, validated: tool.codec.validated, mode: tool.codec.unsafe })
  }
  return machine.apply(situation, recovery)
}

/**
 * One execution within the budgets: the tool-call and repetition limits are checked and charged, the
 * tool runs bounded by `perToolTimeout` (on timeout it is interrupted, its signal aborts, and the run
 * ends with `BudgetExceeded`), and a success is reported (`ToolUse`, `KnowledgeUsed`) and rendered as
 * the tool result's content. Failures come back in the Exit, for the recovery handlers.
 */
function* execute(
  ctx: RunContext,
  tool: AnyTool,
  call: ToolCall,
  args: unknown,
  child: ChildResume | undefined
): Steps<Exit.Exit<string, unknown> | "suspend", BudgetExceeded | OutcomeUnknown> {
  // A child resumed continues the execution charged when it first ran.
  if (child === undefined) {
    // Checked and charged with no yield in between: concurrent runs sharing a budget scope cannot both take its last call.
    let overrun = ctx.ledger.checkExecution(tool.name)
    if (overrun !== undefined) {
      // The budget policy may extend the limit or ask for a final answer; checked again after it.
      yield* ctx.ensure(overrun)
      overrun = ctx.ledger.checkExecution(tool.name)
      if (overrun !== undefined) return yield* ctx.exceed(overrun)
    }
    ctx.ledger.spendExecution(tool.name)
    if (ctx.watchesThresholds) yield* ctx.checkThresholds()
  }
  const knowledge = ctx.skill.knowledge.get(tool.name)
  const cached = knowledge === undefined ? undefined : ctx.cachedKnowledge(tool.name)
  // Timed only for a `ToolUse` someone hears (a clock read is ~0.1 µs).
  const timed = ctx.hears("ToolUse")
  const started = timed ? ctx.now() : 0
  const exit: Exit.Exit<unknown, unknown> = cached !== undefined ? Exit.succeed(cached) : yield* executeWithin(ctx, tool, args, call.id, child)
  if (Exit.isFailure(exit)) return Exit.failCause(exit.cause)
  const result = exit.value
  // The child run of an agent-as-tool waits for a decision: so does this run (never a tool result).
  if (result instanceof ChildSuspension) return yield* suspendForChild(ctx, tool, call, result)
  if (knowledge !== undefined && cached === undefined) ctx.rememberKnowledge(tool.name, String(result))
  if (ctx.traced) yield* ctx.annotate("tool.outcome", "success")
  if (timed) {
    const durationMs = ctx.now() - started
    yield* ctx.emit({ _tag: "ToolUse", tool: tool.name, toolCallId: call.id, args, result, durationMs, validated: tool.codec.validated, mode: tool.codec.unsafe })
  }
  // Knowledge tools are never untrusted, so `characters` counts the knowledge text itself.
  const content = contentOf(tool, result)
  if (knowledge !== undefined) {
    yield* ctx.emit({ _tag: "KnowledgeUsed", knowledge: tool.name, toolCallId: call.id, characters: content.length, cached: cached !== undefined })
  }
  return Exit.succeed(content) as Exit.Exit<string, unknown>
}

/** A tool's result as the content of its tool result message (fenced when the tool's output is untrusted). */
const contentOf = (tool: AnyTool, result: unknown): string =>
  tool.untrustedOutput ? untrustedContent(tool.name, result) : toolResultContent(result)

/** A plain execution's outcome: its result rendered (`contentOf`), a failure as it is. */
const rendered = (tool: AnyTool, exit: Exit.Exit<unknown, unknown>): Exit.Exit<string, unknown> =>
  Exit.isSuccess(exit) ? Exit.succeed(contentOf(tool, exit.value)) : (exit as Exit.Exit<never, unknown>)

/**
 * Whether `execute` has nothing to yield but the execution itself, and if so, charges it: a fresh call
 * (not a child resumed) of a tool that is no knowledge, within the execution limits, in an untraced
 * run where nobody watches thresholds or hears `ToolUse` (most calls). Checked and charged with no
 * yield in between, as `execute` does.
 */
const chargedPlainly = (ctx: RunContext, tool: AnyTool, child: ChildResume | undefined): boolean => {
  if (child !== undefined || ctx.traced || ctx.watchesThresholds || ctx.skill.knowledge.has(tool.name) || ctx.hears("ToolUse")) return false
  if (ctx.ledger.checkExecution(tool.name) !== undefined) return false
  ctx.ledger.spendExecution(tool.name)
  return true
}

/** The execution bounded by `perToolTimeout` (on timeout the run ends with `BudgetExceeded`). */
const executeWithin = (ctx: RunContext, tool: AnyTool, args: unknown, toolCallId: string, child: ChildResume | undefined) => {
  const execution = executionOf(ctx, tool, args, toolCallId, child)
  const limit = ctx.ledger.limit("perToolTimeout")
  if (!Number.isFinite(limit)) return execution
  return execution.pipe(
    Effect.timeoutOrElse({ duration: Duration.millis(limit), orElse: () => ctx.exceed({ reason: "perToolTimeout", limit, used: limit, tool: tool.name }) })
  )
}

/** The execution itself: the tool (or the child resumed), recorded in a durable run, with its progress delivered when heard. */
const executionOf = (
  ctx: RunContext,
  tool: AnyTool,
  args: unknown,
  toolCallId: string,
  child: ChildResume | undefined
): Effect.Effect<Exit.Exit<unknown, unknown>, OutcomeUnknown> => {
  const durability = ctx.durability
  const resumer = child === undefined ? undefined : childAgentOf(tool)
  // The plain call (nothing recorded, no child, no progress heard): no closure but the services' one.
  if (durability === undefined && resumer === undefined && !ctx.hears("ToolProgress")) {
    return tool[ToolInternals].executeExit(args, toolCallId, within(ctx, undefined)) as Effect.Effect<Exit.Exit<unknown, unknown>>
  }
  const run = (extra?: ToolRunExtra) =>
    resumer !== undefined && child !== undefined
      ? Effect.exit(within(ctx, extra)(resumer.resume(child.snapshot, child.decisions)) as Effect.Effect<unknown, unknown>)
      : withToolProgress(ctx, tool.name, toolCallId, (progress) => Effect.exit(executeTool(tool, args, toolCallId, extra?.idempotencyKey, within(ctx, extra), progress)))
  // A durable run records the outcome (a replay reads it back) and may end the run on a lost one.
  return durability === undefined
    ? run()
    : durability.tool(
      { agent: ctx.agent, runId: ctx.runId, turn: ctx.turn, callId: toolCallId, tool: tool.name, args, effect: tool.effect, budgetScope: ctx.ledger.scope },
      run
    )
}

/**
 * Runs started by the tool (an agent called as a tool) run under this run: its id is their parent, its
 * budget scope theirs (or the one a durable run gives). Only an Effect answer can start a run in this
 * fiber, so the services are provided around it alone (a plain or async tool pays nothing for them).
 */
const within = (ctx: RunContext, extra: ToolRunExtra | undefined) => <A, E, R>(answer: Effect.Effect<A, E, R>) =>
  answer.pipe(
    Effect.provideService(ParentRun, ctx.runId),
    Effect.provideService(CurrentBudgetScope, extra?.budgetScope ?? ctx.ledger.scope)
  )
