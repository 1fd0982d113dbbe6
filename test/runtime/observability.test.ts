import { Effect, Schema, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { agent, skill, text, tool, toolCalls } from "../../src/index.ts"
import type { AgentEvent } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { captureSpans, makeCalculatorTools } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()


const parentName = (span: Tracer.NativeSpan, all: ReadonlyArray<Tracer.NativeSpan>) => {
  const parent = span.parent
  if (parent === undefined || parent._tag !== "Some") return undefined
  return all.find((s) => s.spanId === parent.value.spanId)?.name
}

const calculator = () => {
  const { add, multiply } = makeCalculatorTools()
  return agent("calculator")
    .model(scriptedModel([
      toolCalls([{ id: "c1", name: "add", arguments: { a: 3, b: 5 } }], undefined),
      toolCalls([{ id: "c2", name: "multiply", arguments: { a: 8, b: 2 } }]),
      text("16", { inputTokens: 10, outputTokens: 2 })
    ]))
    .tools({ add, multiply })
    .skills(({ add, multiply }) => [skill("compute").tools(add, multiply)])
}

describe("spans", () => {
  it("traces run → turn → model / tool with attributes", async () => {
    const { spans, tracer } = captureSpans()
    await Effect.runPromise(calculator().runEffect("(3+5)*2").pipe(Effect.withTracer(tracer)))
    const tree = spans.map((s) => [s.name, parentName(s, spans)])
    // GenAI span names (the scripted model names no model, so its spans are plain `chat`); the turn is ours.
    expect(tree).toEqual([
      ["invoke_agent calculator", undefined],
      ["agent.turn", "invoke_agent calculator"],
      ["chat", "agent.turn"],
      ["execute_tool add", "agent.turn"],
      ["agent.turn", "invoke_agent calculator"],
      ["chat", "agent.turn"],
      ["execute_tool multiply", "agent.turn"],
      ["agent.turn", "invoke_agent calculator"],
      ["chat", "agent.turn"]
    ])
    const run = spans[0]!
    expect(run.kind).toBe("internal")
    expect(Object.fromEntries(run.attributes)).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "calculator",
      "agent.name": "calculator",
      "agent.skill": "compute",
      "agent.outcome": "Success",
      "agent.turns": 3,
      "agent.tool_calls": 2
    })
    const firstTool = spans.find((s) => s.name === "execute_tool add")!
    expect(firstTool.kind).toBe("internal")
    expect(Object.fromEntries(firstTool.attributes)).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "add",
      "gen_ai.tool.call.id": "c1",
      "gen_ai.tool.type": "function",
      "tool.validated": true,
      "tool.outcome": "success",
      "agent.turn": 1
    })
    const lastModel = spans.filter((s) => s.name === "chat").at(-1)!
    expect(lastModel.kind).toBe("client")
    expect(Object.fromEntries(lastModel.attributes)).toMatchObject({
      "gen_ai.operation.name": "chat",
      "model.response": "Text",
      "gen_ai.usage.input_tokens": 10,
      "gen_ai.usage.output_tokens": 2
    })
    expect(spans.every((s) => s.status._tag === "Ended")).toBe(true)
  })

  it("records the failure outcome on the run span", async () => {
    const { spans, tracer } = captureSpans()
    const a = agent("a").model(scriptedModel([toolCalls([{ id: "x", name: "nope", arguments: {} }])]))
    await Effect.runPromise(Effect.exit(a.runEffect("x").pipe(Effect.withTracer(tracer))))
    expect(spans[0]!.attributes.get("agent.outcome")).toBe("ToolNotAllowed")
    expect(spans[0]!.attributes.get("error.type")).toBe("ToolNotAllowed")
    expect(spans.find((s) => s.name === "execute_tool nope")!.attributes.get("tool.outcome")).toBe("not_allowed")
  })
})

describe("hooks", () => {
  it("fire in the documented order", async () => {
    const events: Array<string> = []
    const record = (e: AgentEvent) => {
      events.push("tool" in e ? `${e._tag}:${e.tool}` : e._tag)
    }
    await calculator()
      .onRunStart(record)
      .onSkillChosen(record)
      .onTurn(record)
      .onModelCall(record)
      .onModelResponse(record)
      .onToolUse(record)
      .onRunEnd(record)
      .run("(3+5)*2")
    expect(events).toEqual([
      "RunStart",
      "SkillChosen",
      "Turn",
      "ModelCall",
      "ModelResponse",
      "ToolUse:add",
      "Turn",
      "ModelCall",
      "ModelResponse",
      "ToolUse:multiply",
      "Turn",
      "ModelCall",
      "ModelResponse",
      "RunEnd"
    ])
  })

  it("may be async or Effects, and run before the loop goes on", async () => {
    const order: Array<string> = []
    await calculator()
      .onToolUse(async (e) => {
        await new Promise((resolve) => setTimeout(resolve, 5))
        order.push(`async:${e.tool}`)
      })
      .onToolUse((e) => Effect.sync(() => order.push(`effect:${e.tool}`)))
      .onModelCall(() => {
        order.push("model")
      })
      .run("x")
    expect(order).toEqual(["model", "async:add", "effect:add", "model", "async:multiply", "effect:multiply", "model"])
  })

  it("report a failing hook to onHookFailed without changing the run", async () => {
    const failures: Array<string> = []
    const output = await calculator()
      .onToolUse(() => {
        throw new Error("hook bug")
      })
      .onTurn(() => Effect.fail("effect hook bug"))
      .onHookFailed((e) => {
        failures.push(`${e.hook}: ${e.error instanceof Error ? e.error.message : String(e.error)}`)
      })
      .run("x")
    expect(output).toBe("16")
    expect(failures).toEqual([
      "Turn: effect hook bug",
      "ToolUse: hook bug",
      "Turn: effect hook bug",
      "ToolUse: hook bug",
      "Turn: effect hook bug"
    ])
  })

  it("mark calls of unsafeNoSchema tools as not validated", async () => {
    const { unsafeNoSchema } = await import("../../src/index.ts")
    const raw = tool("raw", { args: unsafeNoSchema({ mode: "read-only" }), run: (args) => JSON.stringify(args) })
    const uses: Array<unknown> = []
    await agent("a")
      .model(scriptedModel([toolCalls([{ id: "1", name: "raw", arguments: '{"any":"thing"}' }]), text("ok")]))
      .tools({ raw })
      .onToolUse(({ args, validated }) => {
        uses.push({ args, validated })
      })
      .run("x")
    expect(uses).toEqual([{ args: { any: "thing" }, validated: false }])
  })

  it("give onToolUse listeners typed args and results per tool", async () => {
    const seen: Array<number> = []
    const square = tool("square", { args: Schema.Struct({ n: Schema.Finite }), run: ({ n }) => n * n })
    await agent("a")
      .model(scriptedModel([toolCalls([{ id: "1", name: "square", arguments: { n: 4 } }]), text("16")]))
      .tools({ square })
      .onToolUse((e) => {
        if (e.tool === "square") seen.push(e.args.n, e.result)
      })
      .run("x")
    expect(seen).toEqual([4, 16])
  })
})
