/**
 * A deterministic mock model: answers with a script, one entry per call, and records every request.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { AgentConfigError, ModelError } from "../errors.ts"
import type { LlmResponse, LlmResponseInit, ModelRequest } from "../model/messages.ts"
import { ModelClient, type ModelFunction } from "../model/model-client.ts"
import { type Chunker, chunksOf, partsOf, type ResponsePart } from "../model/response-part.ts"
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

/** `chunksOf(size)`, its refusal of a size reported as `AgentConfigError` naming `subject`. */
const chunkerOfSize = (size: number, subject: string): Chunker => {
  try {
    return chunksOf(size)
  } catch (error) {
    throw new AgentConfigError({ subject, reason: error instanceof Error ? error.message : String(error) })
  }
}

/**
 * A scripted response that streams in pieces: every text (content, thinking, each call's JSON
 * arguments) is torn by `chunk`, a size in characters (code points: never half of a surrogate pair) or
 * a function returning the pieces, which must join back to the text. A non-streaming run gets it
 * whole. A size that is not a positive whole number (or `Infinity`) throws `AgentConfigError`.
 *
 * @example
 * ```ts
 * const model = scriptedModel([streamed(toolCalls([{ name: "add", arguments: { a: 3, b: 5 } }]), 2), streamed(text("8"), 1)])
 * ```
 */
export const streamed = (response: LlmResponseInit, chunk: number | Chunker): StreamedStep => ({
  _tag: "Streamed",
  response,
  chunk: typeof chunk === "number" ? chunkerOfSize(chunk, "streamed(...)") : chunk
})

/** Options of `scriptedModel`. */
export interface ScriptedModelOptions {
  /**
   * How a streaming run receives responses not given with `streamed`: a chunk size (as `streamed`'s)
   * or a function. Default: whole.
   */
  readonly chunk?: number | Chunker
}

const isStreamed = (step: ScriptStep): step is StreamedStep =>
  typeof step === "object" && step !== null && !(step instanceof ModelError) && step._tag === "Streamed"

/** What `scriptedModel` accepts: one step for every call, a list of steps (one per call), or a function. */
export type ModelScript = ScriptStep | ReadonlyArray<ScriptStep>

/** `text` quoted, cut to `max` code points (never inside a surrogate pair). */
const clip = (text: string, max = 80): string => {
  const points = Array.from(text)
  return JSON.stringify(points.length > max ? `${points.slice(0, max - 1).join("")}…` : text)
}

/** What a request asked, for the error of a call past the script's end: its last message. */
const lastAsked = (request: ModelRequest): string => {
  const last = request.messages.at(-1)
  if (last === undefined) return "the request has no messages"
  const who = last.role === "tool" ? `tool "${last.name}"` : last.role
  return `the request's last message: ${who}: ${clip(last.content)}`
}

/** The parts of `response` torn by `chunk`, or a `ModelError` when the chunker throws or loses text. */
const streamedParts = (response: LlmResponse, chunk: Chunker | undefined): Effect.Effect<ReadonlyArray<ResponsePart>, ModelError> => {
  if (chunk === undefined) return Effect.succeed(partsOf(response))
  let issue: string | undefined
  const checked: Chunker = (text) => {
    const pieces = chunk(text)
    const joined = Array.isArray(pieces) ? pieces.join("") : String(pieces)
    if (joined !== text) issue ??= `the chunker's pieces of ${clip(text)} join to ${clip(joined)}`
    return Array.isArray(pieces) ? pieces : [text]
  }
  try {
    const parts = partsOf(response, checked)
    return issue === undefined ? Effect.succeed(parts) : Effect.fail(new ModelError({ provider: "scripted", reason: issue, retryable: false }))
  } catch (error) {
    return Effect.fail(new ModelError({ provider: "scripted", reason: `the chunker threw: ${error instanceof Error ? error.message : String(error)}`, retryable: false, cause: error }))
  }
}

/**
 * A mock model answering from `script`: a list is consumed in order and a call past its end fails with
 * a `ModelError` naming the call, the script's length and the request's last message; a single
 * response or function answers every call. Records requests as they were sent (see `recordingModel`).
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
  // The call number each request got, for `stream` to pick that step's chunker: concurrent runs
  // sharing the model may start other calls before this one's answer settles.
  const callOf = new WeakMap<ModelRequest, number>()
  // One fromFunction client over the whole script, so every step is normalised the same way (object
  // arguments to JSON text, missing ids assigned uniquely across the script's answers).
  const answer = (request: ModelRequest): Effect.Effect<LlmResponseInit, ModelError> | LlmResponseInit | PromiseLike<LlmResponseInit> => {
    calls += 1
    callOf.set(request, calls)
    const step: ScriptStep | undefined = steps === undefined ? (script as ScriptStep) : steps[calls - 1]
    if (step === undefined) {
      return Effect.fail(
        new ModelError({
          provider: "scripted",
          reason: steps === undefined || calls > steps.length
            ? `the script has no response for call ${calls} (it has ${steps?.length ?? 0}); ${lastAsked(request)}`
            : `the script's step ${calls} is undefined (a hole in the script's array, or an undefined value in it); ${lastAsked(request)}`,
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
  const fallback: Chunker | undefined = typeof options.chunk === "number" ? chunkerOfSize(options.chunk, "scriptedModel(...)") : options.chunk
  const chunkerOf = (call: number | undefined): Chunker | undefined => {
    const step = steps === undefined ? (script as ScriptStep) : call === undefined ? undefined : steps[call - 1]
    return step !== undefined && isStreamed(step) ? step.chunk : fallback
  }
  return recordingModel({
    chat: client.chat,
    stream: (request) =>
      Stream.unwrap(Effect.suspend(() => {
        // A copy of its own, so that `callOf` tells this call from any other with the same request.
        const own: ModelRequest = { ...request }
        return client.chat(own).pipe(
          Effect.flatMap((response) => streamedParts(response, chunkerOf(callOf.get(own)))),
          Effect.map((parts) => Stream.fromIterable(parts))
        )
      }))
  })
}
