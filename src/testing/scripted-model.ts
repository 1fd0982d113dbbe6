/**
 * A deterministic mock model: answers with a script, one entry per call, and records every request.
 */
import { Effect } from "effect"
import { ModelError } from "../errors.ts"
import type { LlmResponse, ModelRequest } from "../model/messages.ts"
import { ModelClient, type ModelFunction } from "../model/model-client.ts"
import { type RecordingModel, recordingModel } from "./recording-model.ts"

/** One scripted answer: a response, a `ModelError` to fail with, or a function of the request. */
export type ScriptStep = LlmResponse | ModelError | ModelFunction

/** What `scriptedModel` accepts: one step for every call, a list of steps (one per call), or a function. */
export type ModelScript = ScriptStep | ReadonlyArray<ScriptStep>

/**
 * A mock model answering from `script`: a list is consumed in order and a call past its end fails with
 * a `ModelError` saying so; a single response or function answers every call. Records requests.
 *
 * @example
 * ```ts
 * const model = scriptedModel([
 *   toolCalls([{ id: "1", name: "add", arguments: { a: 3, b: 5 } }]),
 *   text("8")
 * ])
 * await agent("calc").model(model).tools({ add }).run("3 + 5?")
 * model.requests.length // 2
 * ```
 */
export const scriptedModel = (script: ModelScript): RecordingModel => {
  const steps = Array.isArray(script) ? [...script] : undefined
  let calls = 0
  const answer = (request: ModelRequest): Effect.Effect<LlmResponse, ModelError> => {
    calls += 1
    const step: ScriptStep | undefined = steps === undefined ? (script as ScriptStep) : steps[calls - 1]
    if (step === undefined) {
      return Effect.fail(
        new ModelError({
          provider: "scripted",
          reason: `the script has no response for call ${calls} (it has ${steps?.length ?? 0})`,
          retryable: false
        })
      )
    }
    if (step instanceof ModelError) return Effect.fail(step)
    if (typeof step === "function") return ModelClient.fromFunction(step, { provider: "scripted" }).chat(request)
    return Effect.succeed(step)
  }
  return recordingModel({ chat: (request) => Effect.suspend(() => answer(request)) })
}
