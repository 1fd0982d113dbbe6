/**
 * A deterministic mock model: answers with a script, one entry per call, and records every request.
 */
import { Effect } from "effect"
import { ModelError } from "../errors.ts"
import type { LlmResponseInit, ModelRequest } from "../model/messages.ts"
import { ModelClient, type ModelFunction } from "../model/model-client.ts"
import { type RecordingModel, recordingModel } from "./recording-model.ts"

/** One scripted answer: a response (object arguments and missing ids allowed), a `ModelError` to fail with, or a function of the request. */
export type ScriptStep = LlmResponseInit | ModelError | ModelFunction

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
  // One fromFunction client over the whole script, so every step is normalised the same way (object
  // arguments to JSON text, missing ids assigned uniquely across the script's answers).
  const answer = (request: ModelRequest): Effect.Effect<LlmResponseInit, ModelError> | LlmResponseInit | PromiseLike<LlmResponseInit> => {
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
    if (typeof step === "function") return step(request)
    return step
  }
  return recordingModel(ModelClient.fromFunction(answer, { provider: "scripted" }))
}
