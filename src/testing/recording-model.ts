/**
 * A ModelClient wrapper that records every request it forwards (messages, tools, toolChoice) and every
 * outcome, for assertions in tests. A request is recorded as a frozen copy taken when it is sent: what
 * a test reads is what the client was asked, whatever the client (or a scripted answer) does to it later.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import type { ModelError } from "../errors.ts"
import type { LlmResponse, ModelRequest } from "../model/messages.ts"
import { ModelError as ModelErrorClass } from "../errors.ts"
import { ModelClient } from "../model/model-client.ts"
import { PartsAssembler } from "../model/response-part.ts"

/** A client that remembers what it was asked and what it answered. */
export interface RecordingModel extends ModelClient {
  /** Every request, in call order, as it was when sent (frozen copies). */
  readonly requests: ReadonlyArray<ModelRequest>
  /** Every outcome, in call order. */
  readonly responses: ReadonlyArray<Exit.Exit<LlmResponse, ModelError>>
}

/**
 * A deep, frozen copy of plain data (arrays, plain and null-prototype objects); anything else is kept
 * as it is. Requests are plain data; `seen` keeps shared and cyclic parts shared and cyclic.
 */
const frozenCopy = <A>(value: A, seen = new WeakMap<object, unknown>()): A => {
  if (value === null || typeof value !== "object") return value
  const known = seen.get(value)
  if (known !== undefined) return known as A
  if (Array.isArray(value)) {
    const copy: Array<unknown> = []
    seen.set(value, copy)
    for (const item of value) copy.push(frozenCopy(item, seen))
    return Object.freeze(copy) as A
  }
  const prototype: unknown = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return value
  const copy: Record<string, unknown> = prototype === null ? Object.create(null) : {}
  seen.set(value, copy)
  for (const key of Object.keys(value)) copy[key] = frozenCopy((value as Record<string, unknown>)[key], seen)
  return Object.freeze(copy) as A
}

/**
 * Wraps `client` so that its requests and outcomes are recorded.
 *
 * @example
 * ```ts
 * const model = recordingModel(ModelClient.fromFunction(() => text("4")))
 * await agent("a").model(model).run("2+2")
 * model.requests[0]?.messages.at(-1) // { role: "user", content: "2+2" }
 * ```
 */
export const recordingModel = (client: ModelClient): RecordingModel => {
  const requests: Array<ModelRequest> = []
  const responses: Array<Exit.Exit<LlmResponse, ModelError>> = []
  return {
    requests,
    responses,
    chat: (request) =>
      Effect.suspend(() => {
        requests.push(frozenCopy(request))
        return client.chat(request).pipe(Effect.onExit((exit) => Effect.sync(() => responses.push(exit))))
      }),
    // A streamed answer is recorded as the response its parts assemble into.
    stream: (request) =>
      Stream.suspend(() => {
        requests.push(frozenCopy(request))
        const assembler = new PartsAssembler()
        return ModelClient.streamOf(client, request).pipe(
          Stream.tap((part) => Effect.sync(() => assembler.add(part))),
          Stream.onExit((exit) =>
            Effect.sync(() => {
              if (exit._tag === "Failure") return responses.push(exit as Exit.Exit<never, ModelError>)
              const assembled = assembler.response()
              responses.push(
                Result.isSuccess(assembled)
                  ? Exit.succeed(assembled.success)
                  : Exit.fail(new ModelErrorClass({ provider: "recording", reason: assembled.failure, retryable: false }))
              )
            })
          )
        )
      })
  }
}
