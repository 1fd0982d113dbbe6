/**
 * The agentic loop. For each turn: check the budget → call the model → on a final text, decode the
 * answer and stop; on tool calls, handle each in order (allowlist, decode, execute, hooks). Every run,
 * turn, model call and tool call is a span (`agent.run`, `agent.turn`, `agent.model`, `agent.tool`).
 */
import { Cause, Clock, Duration, Effect, Exit, Random, Result, Schema } from "effect"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import type { RunEndEvent } from "../dsl/events.ts"
import { type AgentError, InputInvalid, isAgentError, OutputInvalid, RuntimeDefect, SkillFailed } from "../errors.ts"
import { catchUnlessInterrupted, fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import type { LlmMessage, ModelRequest, ToolCall } from "../model/messages.ts"
import type { ModelClientService } from "../model/model-client.ts"
import { callModel } from "./call-model.ts"
import { type ChosenSkill, chooseSkill } from "./choose-skill.ts"
import { emit } from "./emit.ts"
import { pickTools } from "../dsl/pick-tools.ts"
import { emptyReplyFeedback, outputFeedback, systemPrompt } from "./prompt.ts"
import { budgetExceeded, RunState } from "./run-state.ts"
import { handleToolCall } from "./tool-call.ts"
import { noStackTrace } from "../internal/span-options.ts"

/**
 * Runs `definition` on `input`. Needs a `ModelClientService` unless the definition has a model (the
 * builder's `runEffect` provides it then).
 *
 * @example
 * ```ts
 * const output = yield* runAgent(calculator.definition, "What is 2 + 2?").pipe(Effect.provide(ModelClient.layer(client)))
 * ```
 */
export const runAgent = (definition: AgentDefinition, input: unknown): Effect.Effect<unknown, AgentError, ModelClientService> =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const runId = yield* newRunId(started)
    const scope = { agent: definition.name, runId }
    yield* Effect.annotateCurrentSpan("agent.run_id", runId)
    let state: RunState | undefined
    const body = Effect.gen(function*() {
      yield* emit(definition, { _tag: "RunStart", ...scope, input })
      const text = yield* inputText(definition, input)
      const chosen = yield* chooseSkill(definition, runId, text)
      state = new RunState(definition, runId, started, chosen.skill, chosen.turns)
      yield* Effect.annotateCurrentSpan("agent.skill", chosen.skill.name)
      yield* emit(definition, { _tag: "SkillChosen", ...scope, skill: chosen.skill.name, how: chosen.how })
      return yield* chosen.skill.implementation === undefined ? agenticLoop(state, text) : deterministic(definition, chosen, input)
    })
    const maxDuration = definition.budget.maxDuration
    const bounded = Number.isFinite(maxDuration)
      ? body.pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(maxDuration),
          orElse: () =>
            Clock.currentTimeMillis.pipe(
              Effect.flatMap((now) => budgetExceeded(definition, runId, "duration", maxDuration, now - started, state?.transcript ?? []))
            )
        })
      )
      : body
    return yield* bounded.pipe(
      Effect.onExit((exit) =>
        Effect.gen(function*() {
          const durationMs = (yield* Clock.currentTimeMillis) - started
          const outcome = runOutcome(definition.name, exit)
          yield* Effect.annotateCurrentSpan({
            "agent.outcome": outcome._tag === "Failure" ? outcome.error._tag : outcome._tag,
            "agent.turns": state?.turns ?? 0,
            "agent.tool_calls": state?.toolCalls ?? 0
          })
          yield* emit(definition, {
            _tag: "RunEnd",
            ...scope,
            outcome,
            turns: state?.turns ?? 0,
            toolCalls: state?.toolCalls ?? 0,
            durationMs
          })
        })
      )
    )
  }).pipe(Effect.withSpan("agent.run", { attributes: { "agent.name": definition.name } }, noStackTrace))

/** A run id from Effect's Clock and Random services, so tests with TestClock/a seeded Random are deterministic. */
const newRunId = (now: number) =>
  Random.nextIntBetween(0, 2 ** 30).pipe(Effect.map((n) => `run_${now.toString(36)}_${n.toString(36).padStart(6, "0")}`))

/** A defect (neither a documented failure nor an interruption) is reported as `RuntimeDefect`, never as a model failure. */
export const runOutcome = (agent: string, exit: Exit.Exit<unknown, AgentError>): RunEndEvent["outcome"] => {
  if (Exit.isSuccess(exit)) return { _tag: "Success", output: exit.value }
  if (Cause.hasInterruptsOnly(exit.cause)) return { _tag: "Interrupted" }
  const error = Cause.squash(exit.cause)
  return isAgentError(error) ? { _tag: "Failure", error } : { _tag: "Failure", error: new RuntimeDefect({ agent, cause: error }) }
}

/** The user message: the input as text (strings as they are, anything else JSON-encoded). */
const inputText = (definition: AgentDefinition, input: unknown): Effect.Effect<string, InputInvalid> => {
  if (definition.input === undefined) return Effect.succeed(typeof input === "string" ? input : JSON.stringify(input) ?? "")
  return Schema.encodeUnknownEffect(Schema.toCodecJson(definition.input))(input, { errors: "all" }).pipe(
    Effect.map((encoded) => (typeof encoded === "string" ? encoded : JSON.stringify(encoded))),
    Effect.mapError((error) => new InputInvalid({ agent: definition.name, issues: error.message }))
  )
}

/** A skill implemented by a function: no model call. Its failure ends the run with `SkillFailed`. */
const deterministic = (definition: AgentDefinition, { skill }: ChosenSkill, input: unknown): Effect.Effect<unknown, SkillFailed> =>
  fromMaybeEffect((abortable) => skill.implementation!(input, abortable)).pipe(
    catchUnlessInterrupted((cause) => Effect.fail(new SkillFailed({ agent: definition.name, skill: skill.name, input, cause })))
  )

const agenticLoop = (state: RunState, input: string) =>
  Effect.gen(function*() {
    const selection = state.definition.toolSelection
    if (selection !== undefined) {
      const picked = yield* pickTools(input, state.tools, selection)
      if (picked.length > 0) state.offered = picked.map((p) => p.tool)
      yield* Effect.annotateCurrentSpan("agent.offered_tools", state.offered.map((t) => t.name).join(","))
    }
    state.transcript.push({ role: "system", content: systemPrompt(state) })
    state.transcript.push({ role: "user", content: input })
    while (true) {
      yield* state.ensureBudget("turns")
      yield* state.ensureTokens("before")
      state.turns += 1
      yield* state.checkThresholds()
      const answer = yield* turn(state, state.turns)
      if (answer !== undefined) return answer.output
    }
  })

/** The tool choice for a call: `submit` forced when it is the only tool, a tool required when typed. */
const toolChoiceFor = (state: RunState): ModelRequest["toolChoice"] => {
  if (state.output?.submitTool !== undefined) return state.offered.length === 0 ? { tool: state.output.submitTool.name } : "required"
  return state.offered.length === 0 ? undefined : "auto"
}

/** One turn. Returns the final output when the model gave one, `undefined` to continue. */
const turn = (state: RunState, turnNumber: number) =>
  Effect.gen(function*() {
    const definition = state.definition
    const scope = { agent: state.agent, runId: state.runId, skill: state.skill.name, turn: turnNumber }
    yield* emit(definition, { _tag: "Turn", ...scope })
    const toolChoice = toolChoiceFor(state)
    const request: ModelRequest = {
      messages: [...state.transcript],
      tools: state.requestTools,
      ...(toolChoice === undefined ? {} : { toolChoice })
    }
    const response = yield* callModel(definition, scope, request)
    if (response.usage !== undefined) {
      state.tokens += response.usage.inputTokens + response.usage.outputTokens
      yield* state.checkThresholds()
      yield* state.ensureTokens("after")
    }

    if (response._tag === "ToolCalls" && response.calls.length > 0) {
      const calls = response.calls
      state.transcript.push({ role: "assistant", content: response.content ?? "", toolCalls: calls })
      for (const call of calls) {
        if (state.output?.submitTool !== undefined && call.name === state.output.submitTool.name) {
          const submitted = yield* submit(state, call)
          if (submitted !== undefined) return submitted
        } else {
          yield* handleToolCall(state, call, turnNumber)
        }
      }
      return undefined
    }
    const text = response.content ?? ""
    if (text.trim() === "") {
      state.transcript.push({ role: "assistant", content: text }, { role: "user", content: emptyReplyFeedback })
      return undefined
    }
    state.transcript.push({ role: "assistant", content: text })
    if (state.output === undefined) return { output: text }
    const decoded = state.output.decodeText(text)
    if (Result.isSuccess(decoded)) return { output: decoded.success }
    return yield* rejectAnswer(state, text, decoded.failure, (content) => ({ role: "user", content }))
  }).pipe(
    Effect.withSpan("agent.turn", {
      attributes: { "agent.name": state.agent, "agent.skill": state.skill.name, "agent.turn": turnNumber }
    }, noStackTrace)
  )

/** A `submit` call: its arguments decoded into the output Schema end the run. */
const submit = (state: RunState, call: ToolCall) =>
  Effect.gen(function*() {
    const decoded = state.output!.decodeSubmission(call.arguments)
    if (Result.isSuccess(decoded)) {
      state.transcript.push({ role: "tool", toolCallId: call.id, name: call.name, content: "submitted" })
      return { output: decoded.success }
    }
    return yield* rejectAnswer(state, call.arguments, decoded.failure, (content) => ({ role: "tool", toolCallId: call.id, name: call.name, content }))
  })

/** A typed answer that did not decode: corrected within the budget, else `OutputInvalid`. */
const rejectAnswer = (state: RunState, raw: string, issues: string, message: (content: string) => LlmMessage) => {
  if (state.turns >= state.definition.budget.maxTurns) {
    return Effect.fail(new OutputInvalid({ agent: state.agent, raw, issues, transcript: [...state.transcript] }))
  }
  state.transcript.push(message(outputFeedback(issues, state.output?.submitTool?.name)))
  return Effect.succeed(undefined)
}
