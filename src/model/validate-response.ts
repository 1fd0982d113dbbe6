/**
 * Checks that what a ModelClient answered is a well-formed `LlmResponse`, with Schema's decoder, so a
 * broken custom client or mock becomes a `ModelError` instead of a crash deep in the loop.
 */
import { Effect, Schema } from "effect"
import { ModelError } from "./model-error.ts"
import type { LlmResponse } from "./messages.ts"

const Usage = Schema.Struct({ inputTokens: Schema.Finite, outputTokens: Schema.Finite })
const ToolCall = Schema.Struct({ id: Schema.String, name: Schema.String, arguments: Schema.Unknown })
const LlmResponseSchema = Schema.Union([
  Schema.Struct({ _tag: Schema.Literal("Text"), content: Schema.String, usage: Schema.optionalKey(Usage) }),
  Schema.Struct({
    _tag: Schema.Literal("ToolCalls"),
    calls: Schema.Array(ToolCall),
    content: Schema.optionalKey(Schema.String),
    usage: Schema.optionalKey(Usage)
  })
])

const decode = Schema.decodeUnknownEffect(LlmResponseSchema)

/** Succeeds with the response when it is well-formed; fails with `ModelError` otherwise. */
export const validateResponse = (response: unknown): Effect.Effect<LlmResponse, ModelError> =>
  decode(response, { errors: "all" }).pipe(
    Effect.mapError((error) =>
      new ModelError({ provider: "model client", reason: `the response is not a valid LlmResponse:\n${error.message}`, retryable: false })
    )
  )
