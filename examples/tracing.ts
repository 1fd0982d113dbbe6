/**
 * Tracing a run two ways, on a scripted model:
 * 1. OpenTelemetry: Effect spans exported through @effect/opentelemetry (here to an in-memory exporter,
 *    printed as a tree; swap in an OTLP exporter for Jaeger, Honeycomb, Grafana Tempo...).
 * 2. A JSON Lines trace file, rendered as a timeline (what `npm run trace -- <file>` prints).
 * Run: npx tsx examples/tracing.ts
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Schema } from "effect"
import { agent, jsonlTrace, renderTrace, skill, text, tool, toolCalls } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const add = tool("add", { description: "Add two numbers", args: Operands, run: ({ a, b }) => a + b })
const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, run: ({ a, b }) => a * b })

const traceDir = mkdtempSync(join(tmpdir(), "agent-trace-"))
const traceFile = join(traceDir, "trace.jsonl")
const calculator = agent("calculator")
  .model(scriptedModel([
    toolCalls([{ id: "call_1", name: "add", arguments: '{"a":3,"b":5}' }]),
    toolCalls([{ id: "call_2", name: "multiply", arguments: '{"a":8,"b":"2"}' }]),
    toolCalls([{ id: "call_3", name: "multiply", arguments: '{"a":8,"b":2}' }]),
    text("16", { inputTokens: 120, outputTokens: 4 })
  ]))
  .tools({ add, multiply })
  .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  .onEvent(jsonlTrace(traceFile))

const exporter = new InMemorySpanExporter()
const tracing = NodeSdk.layer(() => ({ resource: { serviceName: "calculator" }, spanProcessor: new SimpleSpanProcessor(exporter) }))

const spans = await Effect.runPromise(
  Effect.gen(function*() {
    yield* calculator.runEffect("What is (3 + 5) * 2?")
    return [...exporter.getFinishedSpans()]
  }).pipe(Effect.provide(tracing))
)

const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
const depth = (s: ReadableSpan): number => {
  const parent = s.parentSpanContext === undefined ? undefined : byId.get(s.parentSpanContext.spanId)
  return parent === undefined ? 0 : depth(parent) + 1
}
const interesting = ["agent.skill", "agent.turn", "tool.name", "tool.outcome", "model.response", "model.usage.input_tokens", "agent.outcome"]
console.log("model: scripted (a deterministic mock; no LLM is called)\n")
console.log("OpenTelemetry spans:")
for (const span of [...spans].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])) {
  const attributes = interesting.filter((k) => span.attributes[k] !== undefined).map((k) => `${k}=${String(span.attributes[k])}`)
  console.log(`  ${"  ".repeat(depth(span))}${span.name}  ${attributes.join(" ")}`)
}
console.log(`\nJSON Lines trace (${traceFile}, removed after printing):`)
console.log(renderTrace(readFileSync(traceFile, "utf8")))
rmSync(traceDir, { recursive: true, force: true })
