/**
 * One model call as the loop makes it: hooks around it, an `agent.model` span, defects of a custom
 * client turned into `ModelError`, and the response checked for shape.
 */
import { Clock, Effect, Result } from "effect"
import { ModelError } from "../errors.ts"
import type { LlmResponse, ModelRequest } from "../model/messages.ts"
import { ModelClientService } from "../model/model-client.ts"
import type { UnscopedEvent } from "./run-context.ts"
import { checkResponse } from "../model/normalize-response.ts"
import { noStackTrace } from "../internal/span-options.ts"

/** Calls the model in `turn`, announcing it through `emit` (bound to the run's scope). */
export const callModel = (
  emit: (event: UnscopedEvent) => Effect.Effect<void>,
  turn: number,
  request: ModelRequest
): Effect.Effect<LlmResponse, ModelError, ModelClientService> =>
  Effect.gen(function*() {
    yield* emit({ _tag: "ModelCall", request })
    const client = yield* ModelClientService
    const started = yield* Clock.currentTimeMillis
    const raw = yield* client.chat(request).pipe(
      Effect.catchDefect((defect) =>
        Effect.fail(new ModelError({ provider: "model client", reason: `the client crashed: ${String(defect)}`, cause: defect }))
      )
    )
    const checked = checkResponse(raw)
    if (Result.isFailure(checked)) {
      return yield* new ModelError({ provider: "model client", reason: `the response is not a valid LlmResponse: ${checked.failure}`, retryable: false })
    }
    const response = checked.success
    const durationMs = (yield* Clock.currentTimeMillis) - started
    yield* Effect.annotateCurrentSpan({
      "model.response": response._tag,
      "model.tool_calls": response._tag === "ToolCalls" ? response.calls.length : 0,
      ...(response.usage === undefined
        ? {}
        : { "model.usage.input_tokens": response.usage.inputTokens, "model.usage.output_tokens": response.usage.outputTokens })
    })
    yield* emit({ _tag: "ModelResponse", response, durationMs })
    return response
  }).pipe(
    Effect.withSpan("agent.model", {
      attributes: { "agent.turn": turn, "model.tools": request.tools.length, ...toolChoiceAttribute(request) }
    }, noStackTrace)
  )

const toolChoiceAttribute = (request: ModelRequest) =>
  request.toolChoice === undefined
    ? {}
    : { "model.tool_choice": typeof request.toolChoice === "string" ? request.toolChoice : request.toolChoice.tool }
