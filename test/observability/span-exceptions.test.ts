/**
 * A failure's message is content: a tool's own error may quote its arguments, a Schema's refusal
 * quotes the values it refused. With content capture off (the default), the exported spans record a
 * failure by its error's type only; with it on, as it was. The run's own error is the same either way.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, BudgetExceeded, CaptureMessageContent, ModelClient, Recovery, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const secret = "4111-1111-1111-1111"

const charge = tool("charge", {
  args: Schema.Struct({ card: Schema.String }),
  run: ({ card }) => {
    throw new Error(`card ${card} was refused`)
  }
})

/** The run's exit and every exported span, with content capture `capture`. */
const traced = async <A, E>(program: Effect.Effect<A, E>, capture: boolean) => {
  const exporter = new InMemorySpanExporter()
  const tracing = NodeSdk.layer(() => ({ resource: { serviceName: "span-exceptions" }, spanProcessor: new SimpleSpanProcessor(exporter) }))
  return Effect.runPromise(
    Effect.gen(function*() {
      const exit = yield* Effect.exit(program)
      return { exit, spans: [...exporter.getFinishedSpans()] }
    }).pipe(Effect.provideService(CaptureMessageContent, capture), Effect.provide(tracing))
  )
}

/** Everything a span records of its failure: status message, exception events' attributes. */
const recorded = (spans: ReadonlyArray<ReadableSpan>): string =>
  JSON.stringify(spans.map((s) => ({ name: s.name, status: s.status, events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })) })))

const failingCharge = () =>
  agent("till")
    .model(scriptedModel([toolCalls([{ id: "c1", name: "charge", arguments: JSON.stringify({ card: secret }) }])]))
    .tools({ charge })
    .recover({ executionError: () => Recovery.fail })
    .runEffect("charge my card")

describe("span exceptions and content capture", () => {
  it("with capture off, a failed tool's message stays off every span; its type is kept; the run's error is whole", async () => {
    const { exit, spans } = await traced(failingCharge(), false)
    expect(Exit.isFailure(exit)).toBe(true)
    // The caller sees the error as it was.
    expect(String(Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error?: { message?: string } }).error?.message : "")).toContain(secret)
    const failed = spans.filter((s) => s.status.code === 2)
    expect(failed.map((s) => s.name).sort()).toEqual(["agent.turn", "execute_tool charge", "invoke_agent till"])
    expect(recorded(spans)).not.toContain(secret)
    for (const span of failed) {
      expect(span.status.message).toBe("ToolFailed: message left out (content capture is off)")
      expect(span.events.find((e) => e.name === "exception")?.attributes?.["exception.type"]).toBe("ToolFailed")
    }
    for (const name of ["execute_tool charge", "invoke_agent till"]) expect(failed.find((s) => s.name === name)?.attributes["error.type"]).toBe("ToolFailed")
  })

  it("with capture on, the spans record the message as it was", async () => {
    const { spans } = await traced(failingCharge(), true)
    expect(spans.find((s) => s.name === "execute_tool charge")?.status.message).toContain(secret)
  })

  it("a model error keeps its provider, status and kind, not its message", async () => {
    const client = ModelClient.fromFunction(() => {
      throw new Error(`the prompt ${secret} was refused`)
    })
    const { spans } = await traced(agent("a").model(client).runEffect("hi"), false)
    expect(recorded(spans)).not.toContain(secret)
    const chat = spans.find((s) => s.name.startsWith("chat"))!
    expect(chat.status.message).toMatch(/^ModelError( \(.*\))?: message left out/)
  })

  it("an error whose message quotes no content keeps it (a budget)", async () => {
    const model = scriptedModel([toolCalls([{ id: "c1", name: "echo", arguments: "{}" }]), toolCalls([{ id: "c2", name: "echo", arguments: "{}" }]), text("late")])
    const echo = tool("echo", { args: Schema.Struct({}), run: () => "ok" })
    const { exit, spans } = await traced(agent("a").model(model).tools({ echo }).budget({ maxTurns: 1 }).runEffect("go"), false)
    expect(Exit.isFailure(exit) && exit.cause.reasons.some((r) => "error" in r && r.error instanceof BudgetExceeded)).toBe(true)
    expect(spans.find((s) => s.name === "invoke_agent a")?.status.message).toBe('Agent "a" exceeded its turns budget (1 of 1) without a final answer')
  })
})
