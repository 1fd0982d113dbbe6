/**
 * The GenAI client metrics of the OpenTelemetry conventions, as Effect metrics: every model call
 * records `gen_ai.client.operation.duration` (seconds, with `error.type` when it failed) and, when
 * the provider reported usage, `gen_ai.client.token.usage` once per token type (`input`, `output`).
 * A streamed call also records `gen_ai.client.operation.time_to_first_chunk` (seconds from the request
 * to its first part) and `gen_ai.client.operation.time_per_output_chunk` (seconds from one output chunk
 * to the next, for each after the first; output parts of one millisecond are one chunk); a call that is
 * not streamed records neither, as the conventions say. All are histograms with the bucket boundaries
 * the conventions advise (for the two chunk metrics, those of their server-side twins
 * `gen_ai.server.time_to_first_token` and `gen_ai.server.time_per_output_token`). `@effect/opentelemetry`'s
 * `OtelMetrics.layer` (or `NodeSdk.layer` with a `metricReader`) exports them; without it they stay
 * in Effect's metric registry.
 *
 * Attributes: `gen_ai.operation.name` (`chat`), `gen_ai.provider.name` and `gen_ai.request.model` when
 * the client says them (`ModelClient.metadata`), `gen_ai.token.type`, `error.type`. `@effect/opentelemetry`
 * takes an instrument's unit from an attribute named `unit`, so each series also carries `unit`
 * (`s`, `{token}`).
 */
import type * as Clock from "effect/Clock"
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

/** One histogram of the conventions: its name, description, unit and advised bucket boundaries. */
interface Instrument {
  readonly name: string
  readonly description: string
  readonly unit: string
  readonly boundaries: ReadonlyArray<number>
}

/** `gen_ai.client.operation.duration`, in seconds, with the boundaries the conventions advise. */
const durationInstrument: Instrument = {
  name: "gen_ai.client.operation.duration",
  description: "GenAI operation duration",
  unit: "s",
  boundaries: Metric.boundariesFromIterable([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92])
}

/** `gen_ai.client.token.usage`, in tokens, with the boundaries the conventions advise. */
const tokenInstrument: Instrument = {
  name: "gen_ai.client.token.usage",
  description: "Number of input and output tokens used",
  unit: "{token}",
  boundaries: Metric.boundariesFromIterable([1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864])
}

/** `gen_ai.client.operation.time_to_first_chunk`, in seconds, with the boundaries of `gen_ai.server.time_to_first_token`. */
const firstChunkInstrument: Instrument = {
  name: "gen_ai.client.operation.time_to_first_chunk",
  description: "Time to receive the first chunk of a streamed GenAI response",
  unit: "s",
  boundaries: Metric.boundariesFromIterable([0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10])
}

/** `gen_ai.client.operation.time_per_output_chunk`, in seconds, with the boundaries of `gen_ai.server.time_per_output_token`. */
const chunkGapInstrument: Instrument = {
  name: "gen_ai.client.operation.time_per_output_chunk",
  description: "Time between two output chunks of a streamed GenAI response",
  unit: "s",
  boundaries: Metric.boundariesFromIterable([0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5])
}

/** The histogram of `instrument`: the metric itself, or one of its series (`attributes` and the instrument's `unit`). */
const histogramOf = (instrument: Instrument, attributes?: Record<string, string>) =>
  Metric.histogram(instrument.name, {
    description: instrument.description,
    boundaries: instrument.boundaries,
    ...(attributes === undefined ? {} : { attributes: { ...attributes, unit: instrument.unit } })
  })

/**
 * `gen_ai.client.operation.duration`: how long each model call took, in seconds.
 *
 * @example
 * ```ts
 * const state = yield* Metric.value(operationDuration.pipe(Metric.withAttributes({ "gen_ai.operation.name": "chat", unit: "s" })))
 * ```
 */
export const operationDuration = histogramOf(durationInstrument)

/**
 * `gen_ai.client.token.usage`: the tokens of each model call, one value per `gen_ai.token.type`.
 *
 * @example
 * ```ts
 * const input = yield* Metric.value(tokenUsage.pipe(Metric.withAttributes({ "gen_ai.operation.name": "chat", "gen_ai.token.type": "input", unit: "{token}" })))
 * ```
 */
export const tokenUsage = histogramOf(tokenInstrument)

/**
 * `gen_ai.client.operation.time_to_first_chunk`: how long a streamed call waited for its first part, in seconds.
 *
 * @example
 * ```ts
 * const state = yield* Metric.value(timeToFirstChunk.pipe(Metric.withAttributes({ "gen_ai.operation.name": "chat", unit: "s" })))
 * ```
 */
export const timeToFirstChunk = histogramOf(firstChunkInstrument)

/**
 * `gen_ai.client.operation.time_per_output_chunk`: for each output chunk of a streamed call after the
 * first (output parts of one millisecond are one chunk), the seconds since the one before.
 *
 * @example
 * ```ts
 * const state = yield* Metric.value(timePerOutputChunk.pipe(Metric.withAttributes({ "gen_ai.operation.name": "chat", unit: "s" })))
 * ```
 */
export const timePerOutputChunk = histogramOf(chunkGapInstrument)

/**
 * When the parts of a streamed call arrived: the seconds to the first part, and between two output
 * parts (text, reasoning, a tool call's start or arguments) after it. Read on the run's clock.
 *
 * @example
 * ```ts
 * const chunks = new ChunkTimes(clock)
 * stream.pipe(Stream.tap((part) => Effect.sync(() => chunks.arrived(part._tag === "TextDelta"))))
 * ```
 */
export class ChunkTimes {
  readonly #clock: Clock.Clock
  readonly #start: number
  #last = -1
  /** Seconds from the call's start to its first part; undefined while none came. */
  first: number | undefined = undefined
  /** Seconds between consecutive output chunks, one per chunk after the first. */
  readonly gaps: Array<number> = []

  constructor(clock: Clock.Clock) {
    this.#clock = clock
    this.#start = clock.currentTimeMillisUnsafe()
  }

  /**
   * A part arrived; `output` when it carries output (text, reasoning, a tool call), not a report
   * (usage, finish, response id). Read in milliseconds (the run's clock, no allocation per part): the
   * conventions' buckets start at 1 ms (first chunk) and 10 ms (between chunks). Output parts within
   * the same millisecond as the one before are one chunk: a provider's chunk (one network read) often
   * gives several parts (a tool call's start and its first arguments; several deltas of one read).
   */
  arrived(output: boolean): void {
    if (this.first !== undefined && !output) return
    const now = this.#clock.currentTimeMillisUnsafe()
    if (this.first === undefined) this.first = Math.max(0, now - this.#start) / 1000
    if (!output) return
    if (this.#last >= 0 && now > this.#last) this.gaps.push((now - this.#last) / 1000)
    if (this.#last < 0 || now > this.#last) this.#last = now
  }
}

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
  /** Made on the client's first streamed call. */
  chunks: ChunkSeries | undefined
  readonly failed: Map<string, FailedSeries>
}
/** A streamed call's two series (made on the first streamed call). */
interface ChunkSeries {
  readonly first: Metric.Metric<number, unknown>
  readonly gap: Metric.Metric<number, unknown>
}
/** The series of calls that failed with one `error.type`. */
interface FailedSeries {
  readonly duration: Metric.Metric<number, unknown>
  chunks: ChunkSeries | undefined
}

/** Series by provider and model; bounded, as model names may come from configuration at run time. */
const seriesByClient = new Map<string, Series>()
const maxClients = 256
const maxErrorTypes = 64

const durationSeries = (attributes: Record<string, string>) => histogramOf(durationInstrument, attributes)
const tokenSeries = (attributes: Record<string, string>) => histogramOf(tokenInstrument, attributes)
const chunkSeries = (attributes: Record<string, string>): ChunkSeries => ({
  first: histogramOf(firstChunkInstrument, attributes),
  gap: histogramOf(chunkGapInstrument, attributes)
})

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
    chunks: undefined,
    failed: new Map()
  }
  if (seriesByClient.size >= maxClients) seriesByClient.clear()
  seriesByClient.set(key, series)
  return series
}

const failedSeries = (series: Series, errorType: string): FailedSeries => {
  const known = series.failed.get(errorType)
  if (known !== undefined) return known
  const failed: FailedSeries = { duration: durationSeries({ ...series.base, "error.type": errorType }), chunks: undefined }
  if (series.failed.size < maxErrorTypes) series.failed.set(errorType, failed)
  return failed
}

/** The chunk series of `series` (`errorType` when the call failed), made on first use. */
const chunkSeriesOf = (series: Series, errorType: string | undefined): ChunkSeries => {
  if (errorType === undefined) return series.chunks ??= chunkSeries(series.base)
  const failed = failedSeries(series, errorType)
  return failed.chunks ??= chunkSeries({ ...series.base, "error.type": errorType })
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
  errorType: string | undefined,
  chunks?: ChunkTimes | undefined
): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    recordModelCallUnsafe(model, durationMs, usage, errorType, fiber.context, chunks)
    return Effect.void
  })

/**
 * `recordModelCall` in plain code, into the registry of `context` (a run's services, read once per run).
 *
 * @example
 * ```ts
 * recordModelCallUnsafe(client.metadata, 1250, response.usage, undefined, fiber.context)
 * recordModelCallUnsafe(client.metadata, 1250, response.usage, undefined, fiber.context, chunks) // a streamed call
 * ```
 */
export const recordModelCallUnsafe = (
  model: ModelMetadata | undefined,
  durationMs: number,
  usage: Usage | undefined,
  errorType: string | undefined,
  context: Context.Context<never>,
  chunks?: ChunkTimes | undefined
): void => {
  const series = seriesOf(model)
  const seconds = Math.max(0, durationMs) / 1000
  if (errorType === undefined) series.duration.updateUnsafe(seconds, context)
  else failedSeries(series, errorType).duration.updateUnsafe(seconds, context)
  if (usage !== undefined) {
    series.input.updateUnsafe(usage.inputTokens, context)
    series.output.updateUnsafe(usage.outputTokens, context)
  }
  if (chunks?.first === undefined) return
  const streamed = chunkSeriesOf(series, errorType)
  streamed.first.updateUnsafe(chunks.first, context)
  for (const gap of chunks.gaps) streamed.gap.updateUnsafe(gap, context)
}
