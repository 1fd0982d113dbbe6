/**
 * A deterministic mock model: answers with a script, one entry per call, and records every request.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ModelError } from "../errors.ts"
import type { LlmResponseInit, ModelRequest } from "../model/messages.ts"
import { ModelClient, type ModelFunction } from "../model/model-client.ts"
import { type Chunker, chunksOf, partsOf } from "../model/response-part.ts"
import { type RecordingModel, recordingModel } from "./recording-model.ts"

/**
 * One scripted answer: a response (object arguments and missing ids allowed), a `ModelError` to fail
 * with, a function of the request, or a response streamed in chunks (`streamed(...)`). A response's
 * `responseId` and `responseModel` pass through (streamed too), as a provider's would, so spans'
 * `gen_ai.response.id` and `gen_ai.response.model` can be tested.
 *
 * @example
 * ```ts
 * const step: ScriptStep = { ...text("4"), responseId: "chatcmpl-1", responseModel: "gpt-4o-mini-2024-07-18" }
 * ```
 */
export type ScriptStep = LlmResponseInit | ModelError | ModelFunction | StreamedStep

/** A response that a streaming run receives torn into chunks (see `streamed`). */
export interface StreamedStep {
  readonly _tag: "Streamed"
  readonly response: LlmResponseInit
  readonly chunk: Chunker
}

/**
 * A scripted response that streams in pieces: every text (content, each call's JSON arguments) is torn
 * by `chunk`, a size or a function returning the pieces. A non-streaming run gets it whole.
 *
 * @example
 * ```ts
 * const model = scriptedModel([streamed(toolCalls([{ name: "add", arguments: { a: 3, b: 5 } }]), 2), streamed(text("8"), 1)])
 * ```
 */
export const streamed = (response: LlmResponseInit, chunk: number | Chunker): StreamedStep => ({
  _tag: "Streamed",
  response,
  chunk: typeof chunk === "number" ? chunksOf(chunk) : chunk
})

/** Options of `scriptedModel`. */
export interface ScriptedModelOptions {
  /** How a streaming run receives responses not given with `streamed`: a chunk size or a function. Default: whole. */
  readonly chunk?: number | Chunker
}

const isStreamed = (step: ScriptStep): step is StreamedStep =>
  typeof step === "object" && step !== null && !(step instanceof ModelError) && step._tag === "Streamed"

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
export const scriptedModel = (script: ModelScript, options: ScriptedModelOptions = {}): RecordingModel => {
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
    if (isStreamed(step)) return step.response
    return step
  }
  const client = ModelClient.fromFunction(answer, { provider: "scripted" })
  const fallback: Chunker | undefined = typeof options.chunk === "number" ? chunksOf(options.chunk) : options.chunk
  const chunkerOf = (call: number): Chunker | undefined => {
    const step = steps === undefined ? (script as ScriptStep) : steps[call - 1]
    return step !== undefined && isStreamed(step) ? step.chunk : fallback
  }
  return recordingModel({
    chat: client.chat,
    stream: (request) =>
      Stream.unwrap(Effect.map(client.chat(request), (response) => Stream.fromIterable(partsOf(response, chunkerOf(calls)))))
  })
}
