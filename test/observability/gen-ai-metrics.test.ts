/**
 * The GenAI client metrics: `gen_ai.client.operation.duration` per model call (failed ones with
 * `error.type`) and `gen_ai.client.token.usage` per token type, read from Effect's metric registry and
 * as `@effect/opentelemetry` hands them to an OpenTelemetry metric exporter.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { AggregationTemporality, DataPointType, InMemoryMetricExporter, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { Effect, Layer, Metric, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, genAiOperationDuration, genAiTokenUsage, ModelClient, ModelError, text, tool, toolCalls } from "../../src/index.ts"
import { durable, memoryEngine } from "../../src/durable/index.ts"
import { makeBank } from "../approvals/bank.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const metadata = { provider: "openai", model: "gpt-4o-mini" }
const script = () => [
  { ...toolCalls([{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }]), usage: { inputTokens: 100, outputTokens: 10 } },
  text("3", { inputTokens: 120, outputTokens: 1 })
]
const scripted = (): ModelClient => ({ ...scriptedModel(script()), metadata })
/** The same answers from a `fromFunction` client, which the loop calls without a generator of its own (`plainCall`). */
const fromFunction = (): ModelClient => {
  const answers = script()
  return ModelClient.fromFunction(() => answers.shift()!, metadata)
}
const calculator = (model: () => ModelClient = scripted) => agent("calculator").model(model()).tools({ add })

const chat = { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini" }

describe("GenAI client metrics", () => {
  it.each([["a scripted model", scripted], ["a fromFunction client", fromFunction]] as const)("record every call's duration and its tokens by type: %s", async (_, model) => {
    const { duration, input, output } = await Effect.runPromise(
      Effect.gen(function*() {
        yield* calculator(model).runEffect("1 + 2")
        return {
          duration: yield* Metric.value(Metric.withAttributes(genAiOperationDuration, { ...chat, unit: "s" })),
          input: yield* Metric.value(Metric.withAttributes(genAiTokenUsage, { ...chat, "gen_ai.token.type": "input", unit: "{token}" })),
          output: yield* Metric.value(Metric.withAttributes(genAiTokenUsage, { ...chat, "gen_ai.token.type": "output", unit: "{token}" }))
        }
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
    )
    expect(duration.count).toBe(2)
    expect(duration.min).toBeGreaterThanOrEqual(0)
    expect([input.count, input.sum, input.min, input.max]).toEqual([2, 220, 100, 120])
    expect([output.count, output.sum]).toEqual([2, 11])
  })

  it("record a failed call's duration with its error.type, and no tokens", async () => {
    const failing = ModelClient.fromFunction(() => Effect.fail(new ModelError({ provider: "x", reason: "boom", retryable: false })), metadata)
    const { failed, tokens } = await Effect.runPromise(
      Effect.gen(function*() {
        yield* Effect.exit(agent("a").model(failing).runEffect("hi"))
        return {
          failed: yield* Metric.value(Metric.withAttributes(genAiOperationDuration, { ...chat, "error.type": "ModelError", unit: "s" })),
          tokens: yield* Metric.value(Metric.withAttributes(genAiTokenUsage, { ...chat, "gen_ai.token.type": "input", unit: "{token}" }))
        }
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()))
    )
    expect(failed.count).toBe(1)
    expect(tokens.count).toBe(0)
  })

  it("reach an OpenTelemetry exporter as histograms with the conventions' names, units and attributes", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 })
    const layer = NodeSdk.layer(() => ({ resource: { serviceName: "metrics-test" }, metricReader: reader }))
    const metrics = await Effect.runPromise(
      Effect.gen(function*() {
        yield* calculator().runEffect("1 + 2")
        yield* Effect.promise(() => reader.forceFlush())
        return exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
      }).pipe(Effect.provide(layer), Effect.provideService(Metric.MetricRegistry, new Map()))
    )
    const usage = metrics.find((m) => m.descriptor.name === "gen_ai.client.token.usage")!
    expect(usage.dataPointType).toBe(DataPointType.HISTOGRAM)
    expect(usage.descriptor.unit).toBe("{token}")
    const points = usage.dataPoints.map((p) => ({ type: p.attributes["gen_ai.token.type"], model: p.attributes["gen_ai.request.model"], sum: (p.value as { sum: number }).sum }))
    expect(points.sort((a, b) => String(a.type).localeCompare(String(b.type)))).toEqual([
      { type: "input", model: "gpt-4o-mini", sum: 220 },
      { type: "output", model: "gpt-4o-mini", sum: 11 }
    ])
    const duration = metrics.find((m) => m.descriptor.name === "gen_ai.client.operation.duration")!
    expect(duration.descriptor.unit).toBe("s")
    expect(duration.dataPoints[0]!.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai" })
  })
})

describe("GenAI client metrics of a durable run", () => {
  it("count each call to the model once: a replay after a decision reads the recorded answer and is not measured again", async () => {
    const { bank } = makeBank({
      ...scriptedModel([
        { ...toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), usage: { inputTokens: 100, outputTokens: 10 } },
        text("paid", { inputTokens: 200, outputTokens: 20 })
      ]),
      metadata
    })
    const d = durable(bank)
    const { duration, input } = await Effect.gen(function*() {
      yield* d.run("pay bob", { runId: "m-1" })
      yield* d.decide("m-1", { k1: Decision.approve })
      expect(yield* d.join("m-1")).toBe("paid")
      return {
        duration: yield* Metric.value(Metric.withAttributes(genAiOperationDuration, { ...chat, unit: "s" })),
        input: yield* Metric.value(Metric.withAttributes(genAiTokenUsage, { ...chat, "gen_ai.token.type": "input", unit: "{token}" }))
      }
    }).pipe(
      Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))),
      Effect.provideService(Metric.MetricRegistry, new Map()),
      Effect.timeout("10 seconds"),
      Effect.runPromise
    )
    expect(duration.count).toBe(2)
    expect([input.count, input.sum]).toEqual([2, 300])
  })
})
