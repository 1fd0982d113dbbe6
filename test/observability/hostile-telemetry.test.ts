/**
 * Telemetry never changes a run, whatever the content: a model answer whose tool-call arguments JSON
 * cannot write back (nesting deeper than `JSON.stringify`'s stack) is captured as the text the model
 * sent; a trace line with a value JSON cannot hold keeps every other field; a long trace renders in
 * linear time; the GenAI histograms keep the advised boundaries and count every value in a bucket.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { AggregationTemporality, InMemoryMetricExporter, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics"
import { Effect, Exit, Metric, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, CaptureMessageContent, renderTrace, text, tool, toolCalls } from "../../src/index.ts"
import type { AgentEvent } from "../../src/dsl/events.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { inputContent, outputContent } from "../../src/runtime/gen-ai-content.ts"
import { stringifyTraceLine, traceLine } from "../../src/trace/trace-line.ts"
import { captureSpans } from "../fixtures.ts"

const echo = tool("echo", { args: Schema.Struct({ text: Schema.String }), run: ({ text }) => text })
/** Valid JSON that `JSON.parse` reads and `JSON.stringify` cannot write back (RangeError: call stack). */
const deep = "[".repeat(50_000) + "]".repeat(50_000)

describe("content capture of hostile answers", () => {
  it("a run ends as it would without capture when the model sends arguments nested too deep to re-encode", async () => {
    const run = (capture: boolean) => {
      const { spans, tracer } = captureSpans()
      const model = scriptedModel([toolCalls([{ id: "d1", name: "echo", arguments: deep }]), text("ok")])
      const program = agent("deep").model(model).tools({ echo }).runEffect("go")
      return Effect.runPromise(Effect.exit(program.pipe(Effect.provideService(CaptureMessageContent, capture), Effect.withTracer(tracer)))).then((exit) => ({ exit, spans }))
    }
    const plain = await run(false)
    const captured = await run(true)
    expect(plain.exit).toEqual(Exit.succeed("ok"))
    expect(captured.exit).toEqual(Exit.succeed("ok"))
    const chats = captured.spans.filter((s) => s.name === "chat")
    expect(chats.map((s) => s.attributes.get("error.type"))).toEqual([undefined, undefined])
    // The call the model sent, as it sent it: the text of its arguments.
    const [answer] = JSON.parse(String(chats[0]!.attributes.get("gen_ai.output.messages")))
    expect(answer.parts).toEqual([{ type: "tool_call", id: "d1", name: "echo", arguments: deep }])
    const input = JSON.parse(String(chats[1]!.attributes.get("gen_ai.input.messages")))
    expect(input[1].parts).toEqual([{ type: "tool_call", id: "d1", name: "echo", arguments: deep }])
  })

  it("inputContent and outputContent keep parsing the arguments that can be written back", () => {
    const calls = [{ id: "a", name: "t", arguments: '{"x":[1,2]}' }, { id: "b", name: "t", arguments: deep }]
    const [out] = JSON.parse(outputContent({ _tag: "ToolCalls", calls })["gen_ai.output.messages"]!)
    expect(out.parts.map((p: { arguments: unknown }) => p.arguments)).toEqual([{ x: [1, 2] }, deep])
    const input = JSON.parse(inputContent([{ role: "user", content: "hi" }, { role: "assistant", content: "", toolCalls: calls }])["gen_ai.input.messages"]!)
    expect(input[1].parts.map((p: { arguments: unknown }) => p.arguments)).toEqual([{ x: [1, 2] }, deep])
  })
})

describe("JSON Lines trace of hostile values", () => {
  const cyclic = (): Record<string, unknown> => {
    const value: Record<string, unknown> = { ok: 1 }
    value["self"] = value
    return value
  }

  it("a value JSON cannot hold becomes a note; the line keeps its other fields", () => {
    const event = { _tag: "ToolUse", agent: "a", runId: "r1", skill: "s", turn: 2, tool: "t", toolCallId: "c1", args: { q: 1 }, result: cyclic(), durationMs: 5, validated: true } as unknown as AgentEvent
    const line = JSON.parse(stringifyTraceLine(traceLine(event, 10)))
    expect(line).toMatchObject({ v: 1, ts: 10, run: "r1", agent: "a", event: "ToolUse", skill: "s", turn: 2, tool: "t", callId: "c1", args: { q: 1 }, durationMs: 5, validated: true })
    expect(line.result).toEqual(expect.stringContaining("unserialisable"))
  })

  it("a successful run whose output JSON cannot hold is rendered as a success, not as interrupted", () => {
    const end = { _tag: "RunEnd", agent: "a", runId: "r1", outcome: { _tag: "Success", output: cyclic() }, turns: 3, toolCalls: 2, durationMs: 40 } as unknown as AgentEvent
    const start = { _tag: "RunStart", agent: "a", runId: "r1", input: "hi" } as unknown as AgentEvent
    const rendered = renderTrace([stringifyTraceLine(traceLine(start, 0)), stringifyTraceLine(traceLine(end, 40))].join("\n"))
    expect(rendered).toContain("end success")
    expect(rendered).toContain("(3 turns, 2 tool calls, 40 ms)")
  })

  it("renders a long trace in linear time", () => {
    const lines = (n: number) =>
      Array.from({ length: n }, (_, i) => JSON.stringify({ v: 1, ts: i, run: "r1", agent: "a", event: "Turn", skill: "s", turn: i + 1 })).join("\n")
    const started = performance.now()
    const rendered = renderTrace(lines(40_000))
    // Quadratic, this took about 20 s on a 2-core machine; linear, well under a second.
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(rendered.split("\n").filter((l) => l.includes("turn "))).toHaveLength(40_000)
  })
})

describe("GenAI histograms", () => {
  it("export the advised bucket boundaries, every value in a bucket (past the last boundary too)", async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE)
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 })
    const layer = NodeSdk.layer(() => ({ resource: { serviceName: "buckets-test" }, metricReader: reader }))
    const model = { ...scriptedModel([text("x", { inputTokens: 100_000_000, outputTokens: 3 })]), metadata: { provider: "openai", model: "gpt-big" } }
    const metrics = await Effect.runPromise(
      Effect.gen(function*() {
        yield* agent("big").model(model).runEffect("hi")
        yield* Effect.promise(() => reader.forceFlush())
        return exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
      }).pipe(Effect.provide(layer), Effect.provideService(Metric.MetricRegistry, new Map()))
    )
    type Point = { readonly buckets: { readonly boundaries: Array<number>; readonly counts: Array<number> }; readonly count: number }
    const point = (name: string, type?: string) => {
      const metric = metrics.find((m) => m.descriptor.name === name)!
      return metric.dataPoints.find((p) => type === undefined || p.attributes["gen_ai.token.type"] === type)!.value as Point
    }
    const duration = point("gen_ai.client.operation.duration")
    expect(duration.buckets.boundaries).toEqual([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92])
    const input = point("gen_ai.client.token.usage", "input")
    expect(input.buckets.boundaries).toEqual([1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864])
    // 100M tokens lie past the last boundary: in the overflow bucket, the 15th.
    expect(input.buckets.counts).toHaveLength(15)
    expect(input.buckets.counts.at(-1)).toBe(1)
    expect(input.buckets.counts.reduce((a, b) => a + b, 0)).toBe(input.count)
  })
})
