/**
 * The GenAI streaming metrics: `gen_ai.client.operation.time_to_first_chunk` once per streamed call
 * and `gen_ai.client.operation.time_per_output_chunk` once per output part after the first, with the
 * span attribute `gen_ai.response.time_to_first_chunk`; none of them for a call that is not streamed.
 * The model's parts come with real pauses (sleeps), so the recorded times have known lower bounds.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { AggregationTemporality, InMemoryMetricExporter, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { Effect, Metric, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, genAiTimePerOutputChunk, genAiTimeToFirstChunk, ModelClient, ModelError, type ResponsePart, text } from "../../src/index.ts"
import { captureSpans } from "../fixtures.ts"

const metadata = { provider: "openai", model: "gpt-4o-mini" }
const chat = { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini", unit: "s" }

/** A client whose stream waits `firstMs`, then sends the response id and three text deltas `gapMs` apart, usage and the finish. */
const pacedClient = (firstMs: number, gapMs: number, failAfter?: number): ModelClient => {
  const parts: Array<ResponsePart> = [
    { _tag: "ResponseInfo", id: "resp_1", model: "gpt-4o-mini" },
    { _tag: "TextDelta", delta: "one " },
    { _tag: "TextDelta", delta: "two " },
    { _tag: "TextDelta", delta: "three" },
    { _tag: "Usage", usage: { inputTokens: 5, outputTokens: 3 } },
    { _tag: "Finish", reason: "stop" }
  ]
  const delays = [firstMs, 0, gapMs, gapMs, 0, 0]
  return {
    chat: () => Effect.succeed(text("one two three", { inputTokens: 5, outputTokens: 3 })),
    stream: () => {
      const paced = Stream.fromIterable(parts.map((part, i) => [part, delays[i]!] as const)).pipe(
        Stream.mapEffect(([part, ms]) => (ms === 0 ? Effect.succeed(part) : Effect.as(Effect.sleep(ms), part)))
      )
      return failAfter === undefined
        ? paced
        : Stream.concat(Stream.take(paced, failAfter), Stream.fail(new ModelError({ provider: "openai", reason: "connection reset", retryable: false })))
    },
    metadata
  }
}

const streamer = (client: ModelClient) => agent("streamer").model(client)

const read = Effect.gen(function*() {
  return {
    first: yield* Metric.value(Metric.withAttributes(genAiTimeToFirstChunk, chat)),
    gaps: yield* Metric.value(Metric.withAttributes(genAiTimePerOutputChunk, chat)),
    failedFirst: yield* Metric.value(Metric.withAttributes(genAiTimeToFirstChunk, { ...chat, "error.type": "ModelError" })),
    failedGaps: yield* Metric.value(Metric.withAttributes(genAiTimePerOutputChunk, { ...chat, "error.type": "ModelError" }))
  }
})

describe("GenAI streaming metrics", () => {
  it("a streamed call records its time to the first part, and the time between output parts after the first", async () => {
    const { first, gaps } = await Effect.gen(function*() {
      yield* Stream.runDrain(streamer(pacedClient(40, 25)).runStream("count"))
      return yield* read
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()), Effect.runPromise)
    expect(first.count).toBe(1)
    expect(first.min).toBeGreaterThanOrEqual(0.035)
    expect(first.max).toBeLessThan(5)
    // Three text deltas: two gaps (the response id, usage and finish are no output).
    expect(gaps.count).toBe(2)
    expect(gaps.min).toBeGreaterThanOrEqual(0.02)
  })

  it("output parts that arrive within one millisecond are one chunk (one network read gives several parts)", async () => {
    const { first, gaps } = await Effect.gen(function*() {
      yield* Stream.runDrain(streamer(pacedClient(5, 0)).runStream("count"))
      return yield* read
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()), Effect.runPromise)
    expect(first.count).toBe(1)
    expect(gaps.count).toBeLessThanOrEqual(1)
  })

  it("a call that is not streamed records neither", async () => {
    const { first, gaps } = await Effect.gen(function*() {
      yield* streamer(pacedClient(0, 0)).runEffect("count")
      return yield* read
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()), Effect.runPromise)
    expect([first.count, gaps.count]).toEqual([0, 0])
  })

  it("a streamed call that fails after its first parts records them with its error.type", async () => {
    const { first, gaps, failedFirst, failedGaps } = await Effect.gen(function*() {
      yield* Effect.exit(Stream.runDrain(streamer(pacedClient(10, 10, 3)).runStream("count")))
      return yield* read
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()), Effect.runPromise)
    expect([first.count, gaps.count]).toEqual([0, 0])
    expect(failedFirst.count).toBe(1)
    expect(failedGaps.count).toBe(1)
  })

  it("a stream that fails before any part records no time to a first part", async () => {
    const { failedFirst } = await Effect.gen(function*() {
      yield* Effect.exit(Stream.runDrain(streamer(pacedClient(0, 0, 0)).runStream("count")))
      return yield* read
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()), Effect.runPromise)
    expect(failedFirst.count).toBe(0)
  })

  it("the chat span of a streamed call carries gen_ai.response.time_to_first_chunk; a call not streamed does not", async () => {
    const { spans, tracer } = captureSpans()
    await Effect.runPromise(Stream.runDrain(streamer(pacedClient(30, 0)).runStream("count")).pipe(Effect.withTracer(tracer)))
    await Effect.runPromise(streamer(pacedClient(0, 0)).runEffect("count").pipe(Effect.withTracer(tracer)))
    const chats = spans.filter((s) => s.name.startsWith("chat")).map((s) => Object.fromEntries(s.attributes))
    expect(chats).toHaveLength(2)
    expect(chats[0]!["gen_ai.response.time_to_first_chunk"]).toBeGreaterThanOrEqual(0.025)
    expect(chats[1]).not.toHaveProperty("gen_ai.response.time_to_first_chunk")
  })

  it("reach an OpenTelemetry exporter as histograms in seconds", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 })
    const layer = NodeSdk.layer(() => ({ resource: { serviceName: "chunk-metrics-test" }, metricReader: reader }))
    const metrics = await Effect.gen(function*() {
      yield* Stream.runDrain(streamer(pacedClient(5, 5)).runStream("count"))
      yield* Effect.promise(() => reader.forceFlush())
      return exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
    }).pipe(Effect.provide(layer), Effect.provideService(Metric.MetricRegistry, new Map()), Effect.runPromise)
    for (const name of ["gen_ai.client.operation.time_to_first_chunk", "gen_ai.client.operation.time_per_output_chunk"]) {
      const metric = metrics.find((m) => m.descriptor.name === name)
      expect(metric?.descriptor.unit, name).toBe("s")
      expect(metric?.dataPoints[0]?.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini" })
    }
  })
})
