/**
 * Content capture off keeps content off the spans everywhere, not only in the conventions' attributes:
 * the `tool.repaired` attribute (its corrections' `from` and `to` are the model's arguments) and our
 * log lines that quote content (a retry's reason, which may repeat the prompt; what a hook threw),
 * which Effect's `tracerLogger` would otherwise make events of the current span. The lines still
 * reach the loggers; with capture on, all of it is on the spans as before.
 */
import { Effect, Logger, Schema, type Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { agent, announceRetry, CaptureMessageContent, ModelClient, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { captureSpans } from "../fixtures.ts"

const secret = "SECRET4242"

/** Every span attribute and event (name and attributes) of a run, as one text; and the log lines it wrote. */
const traced = async (run: Effect.Effect<unknown, unknown>, capture: boolean) => {
  const { spans, tracer } = captureSpans()
  const lines: Array<string> = []
  const collect = Logger.make(({ message }) => {
    lines.push(String(Array.isArray(message) ? message.join(" ") : message))
  })
  await Effect.runPromise(
    run.pipe(
      Effect.provideService(CaptureMessageContent, capture),
      Effect.withTracer(tracer),
      Effect.provide(Logger.layer([collect, Logger.tracerLogger])),
      Effect.exit
    )
  )
  const onSpans = spans.map((span) => {
    const events = (span as unknown as { readonly _events?: ReadonlyArray<readonly [string, bigint, Record<string, unknown>]> })._events ?? []
    return JSON.stringify({ name: span.name, attributes: Object.fromEntries(span.attributes), events: events.map(([name, , attributes]) => ({ name, attributes })) })
  }).join("\n")
  return { onSpans, lines, spans: spans as ReadonlyArray<Tracer.Span> }
}

describe("content capture off", () => {
  const Tag = Schema.Struct({ tag: Schema.Literals(["aSECRET4242", "other"]) })
  const tagged = tool("tagged", { args: Tag, repair: true, run: () => "ok" })
  const repairing = () =>
    agent("r").model(scriptedModel([toolCalls([{ id: "c1", name: "tagged", arguments: { tag: "ASECRET4242" } }]), text("done")])).tools({ tagged })

  it("puts a repaired call's corrections on the span by path and kind only, values too when capture is on", async () => {
    const off = await traced(repairing().runEffect("go"), false)
    expect(off.onSpans).toContain("tool.repaired")
    expect(off.onSpans).toContain("literal")
    expect(off.onSpans).not.toContain(secret)
    const on = await traced(repairing().runEffect("go"), true)
    const repaired = on.spans.flatMap((span) => [...span.attributes].filter(([key]) => key === "tool.repaired").map(([, value]) => JSON.parse(String(value))))
    expect(repaired).toEqual([[{ path: ["tag"], kind: "literal", from: "ASECRET4242", to: "aSECRET4242" }]])
  })

  it("keeps a hook's error out of the span events, and still logs it", async () => {
    const hooked = () =>
      agent("h").model(scriptedModel([text("hi")])).onModelResponse(() => {
        throw new Error(`hook ${secret}`)
      })
    const off = await traced(hooked().runEffect("go"), false)
    expect(off.lines.some((line) => line.includes(secret))).toBe(true)
    expect(off.onSpans).not.toContain(secret)
    const on = await traced(hooked().runEffect("go"), true)
    expect(on.onSpans).toContain(secret)
  })

  it("keeps a retry's reason out of the span events, and still logs it", async () => {
    const retrying = () => {
      const client: ModelClient = {
        chat: () =>
          announceRetry({ provider: "test", attempt: 2, maxAttempts: 3, waitMs: 0, status: 429, reason: `rate limited on "my card is ${secret}"` }).pipe(
            Effect.as({ _tag: "Text" as const, content: "ok" })
          )
      }
      return agent("t").model(client)
    }
    const off = await traced(retrying().runEffect("go"), false)
    expect(off.lines.some((line) => line.includes(secret))).toBe(true)
    expect(off.onSpans).not.toContain(secret)
    const on = await traced(retrying().runEffect("go"), true)
    expect(on.onSpans).toContain(secret)
  })
})
