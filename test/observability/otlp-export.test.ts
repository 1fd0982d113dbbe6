/**
 * The GenAI spans as a backend receives them: exported by the official OpenTelemetry JS exporter
 * (`@opentelemetry/exporter-trace-otlp-http`, OTLP/HTTP with JSON bodies) through `@effect/opentelemetry`
 * to a loopback receiver started here, which decodes the real OTLP payload. The run: a tool call with
 * invalid arguments (fed back to the model), the corrected call, then a tool that fails the run.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Exit, Schema } from "effect"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, CaptureMessageContent, Recovery, skill, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

/** One span as OTLP/JSON carries it, attributes flattened to plain values. */
interface ReceivedSpan {
  readonly name: string
  readonly kind: number
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly status: { readonly code?: number; readonly message?: string }
  readonly attributes: Record<string, unknown>
  readonly events: ReadonlyArray<{ readonly name: string }>
}

/** OTLP `SpanKind`: 1 INTERNAL, 3 CLIENT. `StatusCode`: 2 ERROR. */
const INTERNAL = 1
const CLIENT = 3
const ERROR = 2

const anyValue = (v: Record<string, unknown>): unknown => {
  if ("stringValue" in v) return v.stringValue
  if ("intValue" in v) return Number(v.intValue)
  if ("doubleValue" in v) return v.doubleValue
  if ("boolValue" in v) return v.boolValue
  if ("arrayValue" in v) return ((v.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []).map(anyValue)
  return v
}

const decode = (body: any): Array<ReceivedSpan> =>
  (body.resourceSpans ?? []).flatMap((rs: any) =>
    (rs.scopeSpans ?? []).flatMap((ss: any) =>
      (ss.spans ?? []).map((s: any): ReceivedSpan => ({
        name: s.name,
        kind: s.kind,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId === undefined || s.parentSpanId === "" ? undefined : s.parentSpanId,
        status: s.status ?? {},
        attributes: Object.fromEntries((s.attributes ?? []).map((a: any) => [a.key, anyValue(a.value)])),
        events: s.events ?? []
      }))
    )
  )

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

let server: Server
let url: string
const received: Array<ReceivedSpan> = []
const contentTypes: Array<string | undefined> = []

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = await readBody(req)
    contentTypes.push(req.headers["content-type"])
    if (req.url === "/v1/traces" && req.headers["content-type"] === "application/json") received.push(...decode(JSON.parse(body)))
    res.writeHead(200, { "content-type": "application/json" })
    res.end("{}")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const add = tool("add", {
  description: "Add two numbers",
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  run: ({ a, b }) => a + b
})
const explode = tool("explode", {
  description: "Always fails",
  args: Schema.Struct({}),
  run: () => Promise.reject(new Error("disk full"))
})

const usage = { inputTokens: 12, outputTokens: 4 }
const calculator = agent("calculator")
  .model({
    ...scriptedModel([
      { ...toolCalls([{ id: "c1", name: "add", arguments: { a: "three", b: 5 } }]), usage },
      { ...toolCalls([{ id: "c2", name: "add", arguments: { a: 3, b: 5 } }]), usage },
      { ...toolCalls([{ id: "c3", name: "explode", arguments: {} }]), usage },
      text("never reached")
    ]),
    metadata: { provider: "openai", model: "gpt-4o-mini", temperature: 0, maxTokens: 256 }
  })
  .tools({ add, explode })
  .skills(({ add, explode }) => [skill("compute").tools(add, explode)])
  .recover({ executionError: () => Recovery.fail })

describe("OTLP/HTTP export of GenAI spans", () => {
  it("a backend receives invoke_agent → chat / execute_tool with the GenAI attributes, the retry and the error", async () => {
    const tracing = NodeSdk.layer(() => ({
      resource: { serviceName: "otlp-genai-test" },
      spanProcessor: new SimpleSpanProcessor(new OTLPTraceExporter({ url }))
    }))
    // Content capture on for this run: the payload carries the messages and tool arguments.
    const exit = await Effect.runPromise(
      Effect.exit(calculator.runEffect("(3 + 5) then explode")).pipe(
        Effect.provideService(CaptureMessageContent, true),
        Effect.provide(tracing)
      )
    )
    expect(Exit.isFailure(exit)).toBe(true)
    // The layer's shutdown flushed the exporter: everything has arrived.
    expect(contentTypes.every((t) => t === "application/json")).toBe(true)
    const spans = received
    const byId = new Map(spans.map((s) => [s.spanId, s]))
    const parentName = (s: ReceivedSpan) => (s.parentSpanId === undefined ? undefined : byId.get(s.parentSpanId)?.name)
    expect(spans.map((s) => [s.name, parentName(s)]).sort()).toEqual([
      ["agent.turn", "invoke_agent calculator"],
      ["agent.turn", "invoke_agent calculator"],
      ["agent.turn", "invoke_agent calculator"],
      ["chat gpt-4o-mini", "agent.turn"],
      ["chat gpt-4o-mini", "agent.turn"],
      ["chat gpt-4o-mini", "agent.turn"],
      ["execute_tool add", "agent.turn"],
      ["execute_tool add", "agent.turn"],
      ["execute_tool explode", "agent.turn"],
      ["invoke_agent calculator", undefined]
    ])

    const run = spans.find((s) => s.name === "invoke_agent calculator")!
    expect(run.kind).toBe(INTERNAL)
    expect(run.status.code).toBe(ERROR)
    expect(run.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "calculator",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "gpt-4o-mini",
      "error.type": "ToolFailed",
      "agent.name": "calculator",
      "agent.skill": "compute",
      "agent.outcome": "ToolFailed",
      "agent.turns": 3
    })
    expect(run.attributes["agent.run_id"]).toEqual(expect.any(String))

    const chats = spans.filter((s) => s.name === "chat gpt-4o-mini")
    for (const chat of chats) {
      expect(chat.kind).toBe(CLIENT)
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.request.temperature": 0,
        "gen_ai.request.max_tokens": 256,
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 4,
        "model.response": "ToolCalls"
      })
      // @effect/opentelemetry writes a non-primitive attribute as its JSON text.
      expect(JSON.parse(String(chat.attributes["gen_ai.response.finish_reasons"]))).toEqual(["tool_call"])
    }
    const [first, second] = [...chats].sort((a, b) => String(a.attributes["agent.turn"]).localeCompare(String(b.attributes["agent.turn"])))
    expect(JSON.parse(String(first!.attributes["gen_ai.input.messages"]))).toEqual([
      { role: "user", parts: [{ type: "text", content: "(3 + 5) then explode" }] }
    ])
    expect(JSON.parse(String(first!.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "tool_call", id: "c1", name: "add", arguments: { a: "three", b: 5 } }], finish_reason: "tool_call" }
    ])
    // The second call sees the invalid-arguments feedback as the tool's response.
    const secondInput = JSON.parse(String(second!.attributes["gen_ai.input.messages"]))
    expect(secondInput.at(-1)).toMatchObject({ role: "tool", parts: [{ type: "tool_call_response", id: "c1" }] })

    const adds = spans.filter((s) => s.name === "execute_tool add").sort((a, b) => String(a.attributes["gen_ai.tool.call.id"]).localeCompare(String(b.attributes["gen_ai.tool.call.id"])))
    for (const s of adds) {
      expect(s.kind).toBe(INTERNAL)
      expect(s.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two numbers"
      })
    }
    expect(adds[0]!.attributes).toMatchObject({
      "gen_ai.tool.call.id": "c1",
      "tool.outcome": "invalid_args",
      "error.type": "InvalidToolArgs",
      "gen_ai.tool.call.arguments": '{"a":"three","b":5}'
    })
    expect(adds[0]!.status.code).not.toBe(ERROR)
    expect(adds[1]!.attributes).toMatchObject({ "gen_ai.tool.call.id": "c2", "tool.outcome": "success", "gen_ai.tool.call.result": "8" })
    expect(adds[1]!.attributes).not.toHaveProperty("error.type")

    const exploded = spans.find((s) => s.name === "execute_tool explode")!
    expect(exploded.status.code).toBe(ERROR)
    expect(exploded.attributes).toMatchObject({ "gen_ai.tool.call.id": "c3", "tool.outcome": "failed", "error.type": "ToolFailed" })
  })
})
