import { Effect, Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, compileJsonSchema, jsonMode, type ModelResponseEvent, text, tool } from "../../src/index.ts"
import { composeEnvelope } from "../../src/providers/json-mode.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"

const reply = (value: unknown) => text(JSON.stringify(value))

describe("jsonMode: tool calling for models without native tools", () => {
  it("composes one { output, calls: [{ _tool, ...args }] } schema that is itself a valid, enforceable JSON Schema", () => {
    const tree = tool("tree", {
      parameters: { type: "object", $defs: { Node: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } }, properties: { root: { $ref: "#/$defs/Node" } }, required: ["root"] },
      run: () => "ok"
    })
    const { add } = makeCalculatorTools()
    const envelope = composeEnvelope([add.definition, tree.definition], "auto", { type: "string" })
    expect(envelope.properties).toMatchObject({ output: { type: "string" }, calls: { type: "array" } })
    expect(envelope.$defs).toEqual({ tree__Node: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } })
    const decode = compileJsonSchema(envelope, { strict: false }).decode
    expect(Result.isSuccess(decode({ calls: [{ _tool: "add", _reasoningForCall: "sum", a: 1, b: 2 }, { _tool: "tree", root: { id: "r" } }] }))).toBe(true)
    expect(Result.isSuccess(decode({ output: "done" }))).toBe(true)
    expect(Result.isFailure(decode({ calls: [{ _tool: "tree", root: {} }] }))).toBe(true)
    expect(Result.isFailure(decode({ calls: [{ _tool: "nope" }] }))).toBe(true)
    const forced = composeEnvelope([add.definition, tree.definition], { tool: "add" }, { type: "string" })
    expect(forced).toMatchObject({ required: ["calls"], properties: { calls: { minItems: 1, items: { properties: { _tool: { const: "add" } } } } } })
  })

  it("turns replies into tool calls and a final answer; the wrapped model never sees native tools", async () => {
    const { add, multiply, addSpy } = makeCalculatorTools()
    const inner = scriptedModel([
      reply({ calls: [{ _tool: "add", _reasoningForCall: "3 + 5 first", a: 3, b: 5 }] }),
      text("```json\n" + JSON.stringify({ calls: [{ _tool: "multiply", a: 8, b: 2 }] }) + "\n```"),
      reply({ output: "16" })
    ])
    const responses: Array<ModelResponseEvent> = []
    const answer = await agent("calc").model(jsonMode(inner)).tools({ add, multiply }).onModelResponse((e) => void responses.push(e)).run("(3+5)*2?")
    expect(answer).toBe("16")
    expect(addSpy.calls).toEqual([{ a: 3, b: 5 }])
    for (const request of inner.requests) {
      expect(request.tools).toEqual([])
      expect(request.messages.some((m) => m.role === "tool")).toBe(false)
    }
    expect(inner.requests[0]!.messages.at(-1)!.content).toContain(`"_tool":{"const":"add"}`)
    expect(inner.requests[1]!.messages.some((m) => m.role === "user" && m.content.startsWith("Result of add"))).toBe(true)
    expect(responses[0]!.response).toMatchObject({ _tag: "ToolCalls", content: "add: 3 + 5 first" })
  })

  it("keeps the wrapped model's usage, response id and model on the parsed response", async () => {
    const meta = { usage: { inputTokens: 9, outputTokens: 4 }, responseId: "chatcmpl-j1", responseModel: "llama3.2:3b" }
    const inner = scriptedModel([{ ...reply({ calls: [{ _tool: "add", a: 1, b: 2 }] }), ...meta }, { ...reply({ output: "3" }), ...meta }])
    const { add } = makeCalculatorTools()
    const request = { messages: [{ role: "user" as const, content: "1+2?" }], tools: [add.definition] }
    const calls = await Effect.runPromise(jsonMode(inner).chat(request))
    expect(calls).toMatchObject({ _tag: "ToolCalls", ...meta })
    expect(await Effect.runPromise(jsonMode(inner).chat(request))).toMatchObject({ _tag: "Text", content: "3", ...meta })
  })

  it("routes invalid arguments inside calls through the tool pipeline (the tool never runs on them)", async () => {
    const { add, addSpy } = makeCalculatorTools()
    const inner = scriptedModel([reply({ calls: [{ _tool: "add", a: "three", b: 5 }] }), reply({ output: "gave up" })])
    expect(await agent("calc").model(jsonMode(inner)).tools({ add }).run("x")).toBe("gave up")
    expect(addSpy.calls).toEqual([])
    expect(inner.requests[1]!.messages.some((m) => m.content.includes(`["a"]`))).toBe(true)
  })

  it("sends malformed replies back with their issues, then fails with ModelError", async () => {
    const { add } = makeCalculatorTools()
    const recovering = scriptedModel([text("The answer is 8"), reply({ calls: [{ _tool: "ad", a: 1 }] }), reply({ output: "8" })])
    expect(await agent("calc").model(jsonMode(recovering)).tools({ add }).run("x")).toBe("8")
    expect(recovering.requests[1]!.messages.at(-1)!.content).toContain("expected one JSON object")
    expect(recovering.requests[2]!.messages.at(-1)!.content).toContain(`"_tool" must name one of the tools: add`)
    const hopeless = scriptedModel([text("no"), text("no"), text("no")])
    const error = failureOf(await runExit(agent("calc").model(jsonMode(hopeless, { maxRepairs: 2 })).tools({ add }).runEffect("x")))
    expect(error._tag).toBe("ModelError")
    expect(hopeless.requests).toHaveLength(3)
  })

  it("composes the output Schema; object outputs come back through the submit tool", async () => {
    const scalar = scriptedModel([reply({ output: 42 })])
    expect(await agent("n", { output: Schema.Finite }).model(jsonMode(scalar, { output: Schema.Finite })).run("n?")).toBe(42)
    expect(scalar.requests[0]!.messages.at(-1)!.content).toContain(`"properties":{"output":{"type":"number"}}`)
    const Answer = Schema.Struct({ value: Schema.Finite, unit: Schema.String })
    const structured = scriptedModel([reply({ calls: [{ _tool: "submit", value: 21, unit: "°C" }] })])
    const result = await agent("t", { output: Answer }).model(jsonMode(structured, { output: Answer })).run("temperature?")
    expect(result).toEqual({ value: 21, unit: "°C" })
    expect(structured.requests[0]!.messages.at(-1)!.content).toContain("You must call at least one tool now.")
  })
})
