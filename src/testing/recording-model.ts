/**
 * A ModelClient wrapper that records every request it forwards (messages, tools, toolChoice) and every
 * outcome, for assertions in tests.
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
  /** Every request, in call order. */
  readonly requests: ReadonlyArray<ModelRequest>
  /** Every outcome, in call order. */
  readonly responses: ReadonlyArray<Exit.Exit<LlmResponse, ModelError>>
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
        requests.push(request)
        return client.chat(request).pipe(Effect.onExit((exit) => Effect.sync(() => responses.push(exit))))
      }),
    // A streamed answer is recorded as the response its parts assemble into.
    stream: (request) =>
      Stream.suspend(() => {
        requests.push(request)
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
