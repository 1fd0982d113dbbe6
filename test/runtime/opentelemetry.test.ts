/**
 * Spans exported through @effect/opentelemetry to OpenTelemetry's in-memory exporter: the span tree and
 * its attributes, as an OpenTelemetry backend would receive them.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { SpanKind } from "@opentelemetry/api"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { agent, skill, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeCalculatorTools } from "../fixtures.ts"

const tree = (spans: ReadonlyArray<ReadableSpan>) => {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]))
  const depth = (s: ReadableSpan): number => {
    const parent = s.parentSpanContext?.spanId
    const p = parent === undefined ? undefined : byId.get(parent)
    return p === undefined ? 0 : depth(p) + 1
  }
  return [...spans]
    .sort((a, b) => (a.startTime[0] - b.startTime[0]) * 1e9 + (a.startTime[1] - b.startTime[1]))
    .map((s) => `${"  ".repeat(depth(s))}${s.name}`)
}

describe("OpenTelemetry export", () => {
  it("exports the invoke_agent → turn → chat/execute_tool span tree with attributes", async () => {
    const exporter = new InMemorySpanExporter()
    const { add, multiply } = makeCalculatorTools()
    const calculator = agent("calculator")
      .model(scriptedModel([
        toolCalls([{ id: "c1", name: "add", arguments: '{"a":3,"b":5}' }]),
        toolCalls([{ id: "c2", name: "multiply", arguments: '{"a":8,"b":2}' }]),
        text("16", { inputTokens: 40, outputTokens: 3 })
      ]))
      .tools({ add, multiply })
      .skills(({ add, multiply }) => [skill("compute").tools(add, multiply)])
    const tracing = NodeSdk.layer(() => ({
      resource: { serviceName: "calculator-test" },
      spanProcessor: new SimpleSpanProcessor(exporter)
    }))
    // Read the spans inside the layer's scope: shutting the SDK down empties the in-memory exporter.
    const { output, spans } = await Effect.runPromise(
      Effect.gen(function*() {
        const output = yield* calculator.runEffect("(3 + 5) * 2")
        return { output, spans: [...exporter.getFinishedSpans()] }
      }).pipe(Effect.provide(tracing))
    )
    expect(output).toBe("16")
    expect(tree(spans)).toEqual([
      "invoke_agent calculator",
      "  agent.turn",
      "    chat",
      "    execute_tool add",
      "  agent.turn",
      "    chat",
      "    execute_tool multiply",
      "  agent.turn",
      "    chat"
    ])
    const run = spans.find((s) => s.name === "invoke_agent calculator")!
    expect(run.kind).toBe(SpanKind.INTERNAL)
    expect(run.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "calculator",
      "agent.name": "calculator",
      "agent.skill": "compute",
      "agent.outcome": "Success",
      "agent.turns": 3,
      "agent.tool_calls": 2
    })
    expect(run.resource.attributes["service.name"]).toBe("calculator-test")
    const tools = spans.filter((s) => s.name.startsWith("execute_tool ")).map((s) => s.attributes)
    expect(tools).toEqual([
      expect.objectContaining({ "gen_ai.tool.name": "add", "gen_ai.tool.call.id": "c1", "tool.outcome": "success", "agent.turn": 1 }),
      expect.objectContaining({ "gen_ai.tool.name": "multiply", "gen_ai.tool.call.id": "c2", "tool.outcome": "success", "agent.turn": 2 })
    ])
    const lastModel = spans.filter((s) => s.name === "chat").at(-1)!
    expect(lastModel.kind).toBe(SpanKind.CLIENT)
    expect(lastModel.attributes).toMatchObject({ "gen_ai.usage.input_tokens": 40, "gen_ai.usage.output_tokens": 3, "model.response": "Text" })
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1)
  })
})
