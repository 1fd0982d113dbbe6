/**
 * Spans are made only when a tracer other than Effect's native one is installed (and tracing is
 * enabled): under the native tracer no span of ours is made and nothing is annotated on the caller's
 * span; with any real tracer the span tree is complete (observability.test.ts).
 */
import { Effect, References, Schema, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { agent, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { captureSpans } from "../fixtures.ts"

/** An agent whose tool records the span it runs in. */
const probe = () => {
  const seen: Array<string | undefined> = []
  const look = tool("look", {
    args: Schema.Struct({}),
    run: () =>
      Effect.map(Effect.option(Effect.currentSpan), (span) => {
        seen.push(span._tag === "Some" ? span.value.name : undefined)
        return "ok"
      })
  })
  const a = agent("a").model(scriptedModel([toolCalls([{ id: "c1", name: "look", arguments: {} }]), text("done")])).tools({ look })
  return { a, seen }
}

describe("spans only when traced", () => {
  it("under Effect's native tracer, a tool runs in the caller's span and the caller's span gets no attribute of ours", async () => {
    const { a, seen } = probe()
    const outer = await Effect.runPromise(
      Effect.gen(function*() {
        expect(yield* a.runEffect("x")).toBe("done")
        return yield* Effect.currentSpan
      }).pipe(Effect.withSpan("caller"))
    )
    expect(seen).toEqual(["caller"])
    expect(outer.name).toBe("caller")
    expect([...(outer as Tracer.NativeSpan).attributes.keys()].filter((k) => k.startsWith("agent.") || k.startsWith("tool.") || k.startsWith("model.") || k.startsWith("gen_ai.") || k === "error.type")).toEqual([])
  })

  it("with a tracer installed, the tool runs in its execute_tool span", async () => {
    const { a, seen } = probe()
    const { spans, tracer } = captureSpans()
    await Effect.runPromise(a.runEffect("x").pipe(Effect.withSpan("caller"), Effect.withTracer(tracer)))
    expect(seen).toEqual(["execute_tool look"])
    expect(spans.map((s) => s.name)).toEqual(["caller", "invoke_agent a", "agent.turn", "chat", "execute_tool look", "agent.turn", "chat"])
    expect(spans[1]!.attributes.get("agent.outcome")).toBe("Success")
  })

  it("with a tracer installed but tracing disabled, no span is made", async () => {
    const { a } = probe()
    const { spans, tracer } = captureSpans()
    await Effect.runPromise(a.runEffect("x").pipe(Effect.withTracer(tracer), Effect.provideService(References.TracerEnabled, false)))
    expect(spans).toEqual([])
  })
})
