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
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type { Usage } from "../model/messages.ts"
import type { ModelMetadata } from "../model/model-client.ts"

/*
 * An Effect histogram keeps a bucket per boundary and nothing above the last one, and
 * `@effect/opentelemetry` exports all but the last boundary: `boundariesFromIterable` appends
 * `Infinity`, so every advised boundary reaches the exporter and a value past the last is counted.
 */

/** Seconds; the boundaries the conventions advise for `gen_ai.client.operation.duration`. */
const durationBoundaries = Metric.boundariesFromIterable([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92])

/** Tokens; the boundaries the conventions advise for `gen_ai.client.token.usage`. */
const tokenBoundaries = Metric.boundariesFromIterable([1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864])

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

/**
 * The series of one client (provider and model), made once. Each is a histogram with its attributes
 * given at construction, so its registry key is computed once: `Metric.withAttributes` recomputes it
 * on every update (about 5 us a call). Same name and attributes, same series as `withAttributes` gives.
 */
interface Series {
  readonly base: Record<string, string>
  readonly duration: Metric.Metric<number, unknown>
  readonly input: Metric.Metric<number, unknown>
  readonly output: Metric.Metric<number, unknown>
  readonly failed: Map<string, Metric.Metric<number, unknown>>
}

/** Series by provider and model; bounded, as model names may come from configuration at run time. */
const seriesByClient = new Map<string, Series>()
const maxClients = 256
const maxErrorTypes = 64

const durationSeries = (attributes: Record<string, string>) =>
  Metric.histogram("gen_ai.client.operation.duration", { description: "GenAI operation duration", boundaries: durationBoundaries, attributes: { ...attributes, unit: "s" } })

const tokenSeries = (attributes: Record<string, string>) =>
  Metric.histogram("gen_ai.client.token.usage", { description: "Number of input and output tokens used", boundaries: tokenBoundaries, attributes: { ...attributes, unit: "{token}" } })

/** The series of a client's metadata object, found without building its key again. */
const seriesByMetadata = new WeakMap<ModelMetadata, Series>()
let seriesWithoutMetadata: Series | undefined

const seriesOf = (model: ModelMetadata | undefined): Series => {
  if (model === undefined) return seriesWithoutMetadata ??= seriesByKey(undefined)
  const cached = seriesByMetadata.get(model)
  if (cached !== undefined) return cached
  const series = seriesByKey(model)
  seriesByMetadata.set(model, series)
  return series
}

const seriesByKey = (model: ModelMetadata | undefined): Series => {
  const key = `${model?.provider ?? ""}\u0000${model?.model ?? ""}`
  const known = seriesByClient.get(key)
  if (known !== undefined) return known
  const base: Record<string, string> = {
    "gen_ai.operation.name": "chat",
    ...(model?.provider === undefined ? {} : { "gen_ai.provider.name": model.provider }),
    ...(model?.model === undefined ? {} : { "gen_ai.request.model": model.model })
  }
  const series: Series = {
    base,
    duration: durationSeries(base),
    input: tokenSeries({ ...base, "gen_ai.token.type": "input" }),
    output: tokenSeries({ ...base, "gen_ai.token.type": "output" }),
    failed: new Map()
  }
  if (seriesByClient.size >= maxClients) seriesByClient.clear()
  seriesByClient.set(key, series)
  return series
}

const failedSeries = (series: Series, errorType: string): Metric.Metric<number, unknown> => {
  const known = series.failed.get(errorType)
  if (known !== undefined) return known
  const metric = durationSeries({ ...series.base, "error.type": errorType })
  if (series.failed.size < maxErrorTypes) series.failed.set(errorType, metric)
  return metric
}

/**
 * Records one model call: its duration, `errorType` when it failed, and its usage when reported.
 * One Effect for all of it (the metrics are updated in the fiber's registry directly).
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
): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    recordModelCallUnsafe(model, durationMs, usage, errorType, fiber.context)
    return Effect.void
  })

/**
 * `recordModelCall` in plain code, into the registry of `context` (a run's services, read once per run).
 *
 * @example
 * ```ts
 * recordModelCallUnsafe(client.metadata, 1250, response.usage, undefined, fiber.context)
 * ```
 */
export const recordModelCallUnsafe = (
  model: ModelMetadata | undefined,
  durationMs: number,
  usage: Usage | undefined,
  errorType: string | undefined,
  context: Context.Context<never>
): void => {
  const series = seriesOf(model)
  const seconds = Math.max(0, durationMs) / 1000
  if (errorType === undefined) series.duration.updateUnsafe(seconds, context)
  else failedSeries(series, errorType).updateUnsafe(seconds, context)
  if (usage !== undefined) {
    series.input.updateUnsafe(usage.inputTokens, context)
    series.output.updateUnsafe(usage.outputTokens, context)
  }
}
