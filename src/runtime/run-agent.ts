/**
 * The agentic loop. For each turn: check the budget → call the model → on a final text, decode the
 * answer and stop; on tool calls, handle each in order (allowlist, decode, execute, hooks). Every run,
 * turn, model call and tool call is a span (`agent.run`, `agent.turn`, `agent.model`, `agent.tool`).
 */
import { Cause, Clock, Effect, Exit, Result, Schema } from "effect"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import type { RunEndEvent } from "../dsl/events.ts"
import { type AgentError, InputInvalid, isAgentError, ModelError, OutputInvalid, ToolFailed } from "../errors.ts"
import { catchUnlessInterrupted, fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import type { LlmResponse, ModelRequest, ToolCall } from "../providers/messages.ts"
import { ModelClientService } from "../providers/model-client.ts"
import { type ChosenSkill, chooseSkill } from "./choose-skill.ts"
import { emit } from "./emit.ts"
import { decodeFinalAnswer } from "./final-answer.ts"
import { emptyReplyFeedback, outputFeedback, systemPrompt } from "./prompt.ts"
import { RunState } from "./run-state.ts"
import { handleToolCall } from "./tool-call.ts"
import { validateResponse } from "./validate-response.ts"

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
    let state: RunState | undefined
    const body = Effect.gen(function*() {
      yield* emit(definition, { _tag: "RunStart", agent: definition.name, input })
      const text = yield* inputText(definition, input)
      const chosen = yield* chooseSkill(definition, text)
      state = new RunState(definition, chosen.skill)
      yield* Effect.annotateCurrentSpan("agent.skill", chosen.skill.name)
      yield* emit(definition, { _tag: "SkillChosen", agent: definition.name, skill: chosen.skill.name, how: chosen.how })
      return yield* chosen.skill.implementation === undefined ? agenticLoop(state, text) : deterministic(definition, chosen, input)
    })
    return yield* body.pipe(
      Effect.onExit((exit) =>
        Effect.gen(function*() {
          const durationMs = (yield* Clock.currentTimeMillis) - started
          const outcome = runOutcome(exit)
          yield* Effect.annotateCurrentSpan({
            "agent.outcome": outcome._tag === "Failure" ? outcome.error._tag : outcome._tag,
            "agent.turns": state?.turns ?? 0,
            "agent.tool_calls": state?.toolCalls ?? 0
          })
          yield* emit(definition, {
            _tag: "RunEnd",
            agent: definition.name,
            outcome,
            turns: state?.turns ?? 0,
            toolCalls: state?.toolCalls ?? 0,
            durationMs
          })
        })
      )
    )
  }).pipe(Effect.withSpan("agent.run", { attributes: { "agent.name": definition.name } }))

const runOutcome = (exit: Exit.Exit<unknown, AgentError>): RunEndEvent["outcome"] => {
  if (Exit.isSuccess(exit)) return { _tag: "Success", output: exit.value }
  if (Cause.hasInterruptsOnly(exit.cause)) return { _tag: "Interrupted" }
  const error = Cause.squash(exit.cause)
  return isAgentError(error)
    ? { _tag: "Failure", error }
    : { _tag: "Failure", error: new ModelError({ provider: "runtime", reason: String(error), cause: error }) }
}

/** The user message: the input as text (strings as they are, anything else JSON-encoded). */
const inputText = (definition: AgentDefinition, input: unknown): Effect.Effect<string, InputInvalid> => {
  if (definition.input === undefined) return Effect.succeed(typeof input === "string" ? input : JSON.stringify(input) ?? "")
  return Schema.encodeUnknownEffect(Schema.toCodecJson(definition.input))(input, { errors: "all" }).pipe(
    Effect.map((encoded) => (typeof encoded === "string" ? encoded : JSON.stringify(encoded))),
    Effect.mapError((error) => new InputInvalid({ agent: definition.name, issues: error.message }))
  )
}

/** A skill implemented by a function: no model call. Its failure ends the run with `ToolFailed`. */
const deterministic = (definition: AgentDefinition, { skill }: ChosenSkill, input: unknown): Effect.Effect<unknown, ToolFailed> =>
  fromMaybeEffect((signal) => skill.implementation!(input, { signal })).pipe(
    catchUnlessInterrupted((cause) =>
      Effect.fail(new ToolFailed({ agent: definition.name, skill: skill.name, tool: skill.name, args: input, cause }))
    )
  )

const agenticLoop = (state: RunState, input: string) =>
  Effect.gen(function*() {
    state.transcript.push({ role: "system", content: systemPrompt(state.definition, state.skill) })
    state.transcript.push({ role: "user", content: input })
    while (true) {
      yield* state.ensureBudget("turns")
      state.turns += 1
      const answer = yield* turn(state, state.turns)
      if (answer !== undefined) return answer.output
    }
  })

/** One turn. Returns the final output when the model gave one, `undefined` to continue. */
const turn = (state: RunState, turnNumber: number) =>
  Effect.gen(function*() {
    const definition = state.definition
    const scope = { agent: state.agent, skill: state.skill.name, turn: turnNumber }
    yield* emit(definition, { _tag: "Turn", ...scope })
    const request: ModelRequest = {
      messages: [...state.transcript],
      tools: state.skill.tools.map((t) => t.definition),
      ...(state.skill.tools.length === 0 ? {} : { toolChoice: "auto" as const })
    }
    yield* emit(definition, { _tag: "ModelCall", ...scope, request })
    const started = yield* Clock.currentTimeMillis
    const response = yield* callModel(request, turnNumber)
    const durationMs = (yield* Clock.currentTimeMillis) - started
    yield* emit(definition, { _tag: "ModelResponse", ...scope, response, durationMs })

    if (response._tag === "ToolCalls" && response.calls.length > 0) {
      const calls = response.calls.map((call, i): ToolCall => (call.id === "" ? { ...call, id: `call_${turnNumber}_${i}` } : call))
      state.transcript.push({ role: "assistant", content: response.content ?? "", toolCalls: calls })
      for (const call of calls) yield* handleToolCall(state, call, turnNumber)
      return undefined
    }
    const text = response.content ?? ""
    if (text.trim() === "") {
      state.transcript.push({ role: "assistant", content: text }, { role: "user", content: emptyReplyFeedback })
      return undefined
    }
    state.transcript.push({ role: "assistant", content: text })
    if (definition.output === undefined) return { output: text }
    const decoded = decodeFinalAnswer(definition.output, text)
    if (Result.isSuccess(decoded)) return { output: decoded.success }
    if (state.turns >= definition.budget.maxTurns) {
      return yield* new OutputInvalid({ agent: state.agent, raw: text, issues: decoded.failure, transcript: [...state.transcript] })
    }
    state.transcript.push({ role: "user", content: outputFeedback(decoded.failure) })
    return undefined
  }).pipe(
    Effect.withSpan("agent.turn", {
      attributes: { "agent.name": state.agent, "agent.skill": state.skill.name, "agent.turn": turnNumber }
    })
  )

/** One model call, its response checked for shape. Defects of a custom client become `ModelError`. */
const callModel = (request: ModelRequest, turnNumber: number): Effect.Effect<LlmResponse, ModelError, ModelClientService> =>
  Effect.gen(function*() {
    const client = yield* ModelClientService
    const raw = yield* client.chat(request).pipe(
      Effect.catchDefect((defect) =>
        Effect.fail(new ModelError({ provider: "model client", reason: `the client crashed: ${String(defect)}`, cause: defect }))
      )
    )
    const response = yield* validateResponse(raw)
    yield* Effect.annotateCurrentSpan({
      "model.response": response._tag,
      "model.tool_calls": response._tag === "ToolCalls" ? response.calls.length : 0,
      ...(response.usage === undefined
        ? {}
        : { "model.usage.input_tokens": response.usage.inputTokens, "model.usage.output_tokens": response.usage.outputTokens })
    })
    return response
  }).pipe(Effect.withSpan("agent.model", { attributes: { "agent.turn": turnNumber, "model.tools": request.tools.length } }))
