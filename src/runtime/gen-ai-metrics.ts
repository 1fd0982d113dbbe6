/**
 * The GenAI client metrics of the OpenTelemetry conventions, as Effect metrics: every model call
 * records `gen_ai.client.operation.duration` (seconds, with `error.type` when it failed) and, when
 * the provider reported usage, `gen_ai.client.token.usage` once per token type (`input`, `output`).
 * Both are histograms with the bucket boundaries the conventions advise. `@effect/opentelemetry`'s
 * `OtelMetrics.layer` (or `NodeSdk.layer` with a `metricReader`) exports them; without it they stay
 * in Effect's metric registry.
 *
 * Attributes: `gen_ai.operation.name` (`chat`), `gen_ai.provider.name` and `gen_ai.request.model` when
 * the client says them (`ModelClient.metadata`), `gen_ai.token.type`, `error.type`. `@effect/opentelemetry`
 * takes an instrument's unit from an attribute named `unit`, so each series also carries `unit`
 * (`s`, `{token}`).
 */
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type { Usage } from "../model/messages.ts"
import type { ModelMetadata } from "../model/model-client.ts"

/** Seconds; the boundaries the conventions advise for `gen_ai.client.operation.duration`. */
const durationBoundaries = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]

/** Tokens; the boundaries the conventions advise for `gen_ai.client.token.usage`. */
const tokenBoundaries = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]

/**
 * `gen_ai.client.operation.duration`: how long each model call took, in seconds.
 *
 * @example
 * ```ts
 * const state = yield* Metric.value(operationDuration.pipe(Metric.withAttributes({ "gen_ai.operation.name": "chat", unit: "s" })))
 * ```
 */
export const operationDuration = Metric.histogram("gen_ai.client.operation.duration", {
  description: "GenAI operation duration",
  boundaries: durationBoundaries
})

/**
 * `gen_ai.client.token.usage`: the tokens of each model call, one value per `gen_ai.token.type`.
 *
 * @example
 * ```ts
 * const input = yield* Metric.value(tokenUsage.pipe(Metric.withAttributes({ "gen_ai.operation.name": "chat", "gen_ai.token.type": "input", unit: "{token}" })))
 * ```
 */
export const tokenUsage = Metric.histogram("gen_ai.client.token.usage", {
  description: "Number of input and output tokens used",
  boundaries: tokenBoundaries
})

const baseAttributes = (model: ModelMetadata | undefined): Record<string, string> => ({
  "gen_ai.operation.name": "chat",
  ...(model?.provider === undefined ? {} : { "gen_ai.provider.name": model.provider }),
  ...(model?.model === undefined ? {} : { "gen_ai.request.model": model.model })
})

/**
 * Records one model call: its duration, `errorType` when it failed, and its usage when reported.
 *
 * @example
 * ```ts
 * yield* recordModelCall(client.metadata, 1250, response.usage, undefined)
 * ```
 */
export const recordModelCall = (
  model: ModelMetadata | undefined,
  durationMs: number,
  usage: Usage | undefined,
  errorType: string | undefined
): Effect.Effect<void> => {
  const base = baseAttributes(model)
  const duration = Metric.update(
    Metric.withAttributes(operationDuration, { ...base, ...(errorType === undefined ? {} : { "error.type": errorType }), unit: "s" }),
    Math.max(0, durationMs) / 1000
  )
  if (usage === undefined) return duration
  const tokens = (type: "input" | "output", value: number) =>
    Metric.update(Metric.withAttributes(tokenUsage, { ...base, "gen_ai.token.type": type, unit: "{token}" }), value)
  return Effect.andThen(duration, Effect.andThen(tokens("input", usage.inputTokens), tokens("output", usage.outputTokens)))
}
