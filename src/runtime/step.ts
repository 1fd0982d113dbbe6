/**
 * The stepper: the loop as steps over a run context. A step is either a model step (check and spend
 * a turn's budget, call the model, record its answer: tool calls become pending, a text may finish the
 * run) or a tool step (handle the first pending call). `drive` runs steps until the run finishes or,
 * when asked, suspends after a number of steps; between two steps the context's state is complete,
 * so it can be snapshotted and driven again later. `runAgent`, `runUntil` and `resumeRun` are all
 * views of this one loop. Turns are spans (`agent.turn`) around a model step and its tool steps.
 *
 * Steps, turns, an untraced model call and the tool pipeline are generator code that the loop's one
 * `Effect.gen` delegates to (`yield*`): only what really waits (the model, a tool, a hook) or what a
 * tracer sees (a span) is an Effect of its own. A calculator run (4 model calls, 3 tools) evaluates
 * 46 Effect primitives, down from 169 when each step, turn and call was an `Effect.gen` of its own.
 *
 * What is on every step is kept cheap (issue #37): an event nobody hears is not made and nothing is
 * yielded for it (`ctx.hears`), nor for a budget check that found nothing; generators are module-level
 * functions (a `function*` expression evaluated per call costs ~2 µs on Node 20); and the generators a
 * wait passes through are few (each resumption goes through every one of them): an untraced run's
 * turns are the loop's own generator (`turnSteps` with `untilEnd`), a plain model call is yielded by
 * the turn itself (`plainCall`), and a plain tool call by its pipeline (`chargedPlainly`), one
 * generator below the turn.
 */
import * as Effect from "effect/Effect"
import type { LlmResponse, ModelRequest, Usage } from "../model/messages.ts"
import type { ModelClientService } from "../model/model-client.ts"
import { noStackTrace } from "../internal/span-options.ts"
import { withGuardedSpan } from "../internal/guarded-span.ts"
import type { Steps } from "../internal/steps.ts"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import type { AgentError, BudgetExceeded } from "../errors.ts"
import type { ResponsePart } from "../model/response-part.ts"
import { callModelSteps, modelSpan, PlainCall, plainAnswered, plainCall } from "./call-model.ts"
import { type Finished, finalText } from "./final-answer.ts"
import type { RunContext } from "./run-context.ts"
import { softLanding } from "./soft-landing.ts"
import { handleCall, handleConcurrently, isPipelineCall } from "./tool-call.ts"

/** How `drive` ended: the run's output, a handoff to another agent, or a suspension between two steps. */
export type Driven =
  | { readonly _tag: "Done"; readonly output: unknown }
  | { readonly _tag: "Handoff"; readonly target: AgentDefinition }
  | { readonly _tag: "Suspended" }

/** When to stop early: after this many steps (counted from this `drive`). */
export interface DriveControl {
  readonly suspendAfter?: number | undefined
}

/** A step of the loop: generator code its one `Effect.gen` delegates to (`Steps`). */
type LoopSteps<A> = Steps<A, AgentError, ModelClientService>

/**
 * The answer's tokens spent (the second half of a model step begins): what to yield for them (a
 * threshold watched, a budget crossed), else undefined.
 */
const spendAnswer = (ctx: RunContext, usage: Usage | undefined): Effect.Effect<void, BudgetExceeded> | undefined => {
  if (usage === undefined) return undefined
  const overrun = ctx.spent(usage)
  const thresholds = ctx.watchesThresholds ? ctx.checkThresholds() : undefined
  if (overrun === undefined) return thresholds
  return thresholds === undefined ? ctx.ensure(overrun) : Effect.andThen(thresholds, ctx.ensure(overrun))
}

/**
 * The answer's tool calls, when it has any, appended and made pending (true); false for a text, which
 * `finalText` reads (it may finish the run).
 */
const callsExpected = (ctx: RunContext, response: LlmResponse): boolean => {
  if (response._tag !== "ToolCalls" || response.calls.length === 0) return false
  const reasoning = response.reasoning
  ctx.append(
    reasoning === undefined || reasoning.length === 0
      ? { role: "assistant", content: response.content ?? "", toolCalls: response.calls }
      : { role: "assistant", content: response.content ?? "", toolCalls: response.calls, reasoning }
  )
  ctx.expect(response.calls)
  return true
}

/**
 * The turn's request: a copy of the transcript, the offered tools, and the tool choice and response
 * format when there are any (keys set one by one rather than spread in: no object per absent key).
 */
const modelRequest = (ctx: RunContext): ModelRequest => {
  const request: { -readonly [K in keyof ModelRequest]: ModelRequest[K] } = { messages: ctx.transcript.slice(), tools: ctx.requestTools }
  const toolChoice = ctx.toolChoice
  if (toolChoice !== undefined) request.toolChoice = toolChoice
  const responseFormat = ctx.skill.output?.responseFormat
  if (responseFormat !== undefined) request.responseFormat = responseFormat
  return request
}

/**
 * The turn's model call (the first half of a model step): its steps, delegated to from the turn itself
 * (so no generator of the step waits with the call), or the Effect of its span when the run is traced.
 * Streamed to `onPart` in a streaming run (not when its sink takes no deltas); recorded in a durable one.
 */
const modelCall = (ctx: RunContext): Steps<LlmResponse, AgentError, ModelClientService> | Effect.Effect<LlmResponse, AgentError, ModelClientService> | PlainCall => {
  const request = modelRequest(ctx)
  const durability = ctx.durability
  if (durability === undefined && (ctx.sink === undefined || ctx.sink.deltas === false)) {
    const plain = plainCall(ctx, request, ctx.callEnv)
    if (plain !== undefined) return plain
  }
  const turn = ctx.turn
  const call = () =>
    callModelSteps(
      ctx,
      turn,
      request,
      ctx.sink === undefined || ctx.sink.deltas === false ? undefined : (part) => onPart(ctx, part),
      durability === undefined ? undefined : (call) => durability.model({ runId: ctx.runId, turn, purpose: "step" }, call),
      ctx.callEnv
    )
  return ctx.traced ? Effect.gen(call).pipe(modelSpan(turn, request, ctx.callEnv.client?.metadata, ctx.sink !== undefined && ctx.sink.deltas !== false)) : call()
}

/**
 * A streaming run's view of a part as it arrives: deltas go to the stream; usage crossing `maxTokens`
 * ends the run at once (the stream, and its request, are stopped).
 */
const onPart = (ctx: RunContext, part: ResponsePart): Effect.Effect<void, BudgetExceeded> => {
  switch (part._tag) {
    case "TextDelta":
      return part.delta === "" ? Effect.void : ctx.emitTextDelta("TextDelta", part.delta)
    case "ReasoningDelta":
      return part.delta === "" ? Effect.void : ctx.emitTextDelta("ReasoningDelta", part.delta)
    case "ToolCallStart":
      return ctx.emitDelta({ _tag: "ToolCallStart", index: part.index, tool: part.name, toolCallId: part.id })
    case "ToolCallDelta":
      return part.delta === "" ? Effect.void : ctx.emitDelta({ _tag: "ToolCallDelta", index: part.index, delta: part.delta })
    case "Usage":
      return ctx.ensure(ctx.ledger.peekTokens(part.usage.inputTokens + part.usage.outputTokens))
    default:
      return Effect.void
  }
}

const driven = (finished: Finished): Driven =>
  finished._tag === "Handoff" ? finished : { _tag: "Done", output: finished.output }

type TurnEnd = Driven | { readonly _tag: "Continue" }

const continued: TurnEnd = { _tag: "Continue" }
const suspended: Driven = { _tag: "Suspended" }

/**
 * A turn begins: checked against `maxTurns` (a budget policy may extend it), then spent, then the
 * thresholds watched. Undefined when nothing needs to be yielded for it (most turns).
 */
const beginTurn = (ctx: RunContext): Effect.Effect<void, BudgetExceeded> | undefined => {
  const overrun = ctx.ledger.checkTurn()
  return overrun === undefined ? spendTurn(ctx) : Effect.andThen(ctx.ensure(overrun), Effect.suspend(() => spendTurn(ctx) ?? Effect.void))
}

const spendTurn = (ctx: RunContext): Effect.Effect<void> | undefined => {
  ctx.ledger.spendTurn()
  return ctx.watchesThresholds ? ctx.checkThresholds() : undefined
}

/**
 * The steps of a turn: the model step (unless resuming pending calls), then the tool steps. With
 * `untilEnd` (an untraced run), every turn until the run ends or suspends, each begun here: the
 * loop's one `Effect.gen` delegates to these steps directly, one generator fewer for every wait of
 * the run to resume through (issue #37). Without it, the one turn, begun by the caller (a traced
 * run's, in its span).
 */
function* turnSteps(ctx: RunContext, resuming: boolean, stepTaken: () => boolean, suspending: boolean, untilEnd: boolean): LoopSteps<TurnEnd> {
  while (true) {
    if (!resuming) {
      if (untilEnd) {
        const begin = beginTurn(ctx)
        if (begin !== undefined) yield* begin
      }
      // The model step.
      if (ctx.hears("Turn")) yield* ctx.emit({ _tag: "Turn" })
      const call = modelCall(ctx)
      let response: LlmResponse
      if (call instanceof PlainCall) {
        const answered = plainAnswered(ctx, call, yield* call.answer, ctx.callEnv)
        response = answered._tag === "Failure" ? yield* answered : answered
      } else {
        response = yield* call
      }
      // What the answer means: its tokens spent, its tool calls pending, or its text finishing the run.
      const spend = spendAnswer(ctx, response.usage)
      if (spend !== undefined) yield* spend
      const finished = callsExpected(ctx, response) ? undefined : yield* finalText(ctx, response.content ?? "")
      if (finished !== undefined) return driven(finished)
      if (stepTaken()) return suspended
    }
    while (ctx.hasPending) {
      const concurrency = ctx.plan.budget.toolConcurrency
      if (concurrency > 1 && !suspending) {
        const batch = ctx.pendingRun((call) => isPipelineCall(ctx, call))
        if (batch.length > 1) {
          yield* handleConcurrently(ctx, batch, concurrency)
          for (let i = 0; i < batch.length; i++) ctx.settleNext()
          continue
        }
      }
      // A tool step: the next pending call, handled and settled (or left pending when it waits for a decision).
      const finished = yield* handleCall(ctx, ctx.nextPending!)
      if (finished === "suspend") return suspended
      ctx.settleNext()
      if (finished !== undefined) {
        ctx.clearPending()
        return driven(finished)
      }
      if (stepTaken()) return suspended
    }
    if (!untilEnd) return continued
    resuming = false
  }
}

/** A turn in its `agent.turn` span (a traced run; otherwise the loop delegates to `turnSteps` itself). */
const tracedTurn = (ctx: RunContext, resuming: boolean, stepTaken: () => boolean, suspending: boolean): Effect.Effect<TurnEnd, AgentError, ModelClientService> =>
  Effect.gen(() => turnSteps(ctx, resuming, stepTaken, suspending, false)).pipe(
    (turn) => withGuardedSpan(turn, "agent.turn", { attributes: { "agent.name": ctx.agent, "agent.skill": ctx.skill.name, "agent.turn": ctx.turn }, ...noStackTrace })
  )

/**
 * Runs steps until the run finishes, or suspends after `control.suspendAfter` steps. A budget policy
 * that asked for a final answer turns the run's `BudgetExceeded` into a soft landing (only a policy
 * can ask for one: without one, nothing is caught).
 */
export const drive = (ctx: RunContext, control: DriveControl = {}): Effect.Effect<Driven, AgentError, ModelClientService> => {
  // A module-level generator, not a `function*` expression per run (see `runSteps` in run-agent.ts).
  const stepping = Effect.gen(() =>
    ctx.traced
      ? tracedSteps(ctx, control)
      : (turnSteps(ctx, ctx.hasPending, stepCounter(control), control.suspendAfter !== undefined, true) as LoopSteps<Driven>)
  )
  if (ctx.plan.definition.budgetPolicy === undefined) return stepping
  return Effect.catchTag(stepping, "BudgetExceeded", (error) => {
    const landing = ctx.takeLanding()
    return landing === undefined
      ? Effect.fail(error)
      : Effect.map(softLanding(ctx, landing), (finished): Driven => ({ _tag: "Done", output: finished.output }))
  })
}

/** Whether the steps taken, counted from this `drive`, reached `control.suspendAfter`: asked after each step. */
const stepCounter = (control: DriveControl): () => boolean => {
  const limit = control.suspendAfter
  if (limit === undefined) return () => false
  let steps = 0
  return () => ++steps >= limit
}

/** A traced run's steps: each turn in its span, begun before it (a turn over the budget has no span). */
function* tracedSteps(ctx: RunContext, control: DriveControl): LoopSteps<Driven> {
  const stepTaken = stepCounter(control)
  while (true) {
    const resuming = ctx.hasPending
    if (!resuming) {
      const begin = beginTurn(ctx)
      if (begin !== undefined) yield* begin
    }
    // A run that may suspend between steps handles its calls one at a time (a step is one call).
    const end = yield* tracedTurn(ctx, resuming, stepTaken, control.suspendAfter !== undefined)
    if (end._tag !== "Continue") return end
  }
}
