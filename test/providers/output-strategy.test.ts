/**
 * Native structured output (issue #13): a typed agent asks the provider for JSON matching its output
 * Schema (OpenAI `response_format: json_schema`, Ollama `format`) instead of the `submit` tool, and the
 * answer is decoded and corrected the same way.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, ollama, openai, outputStrategy, skill } from "../../src/index.ts"
import { makeCalculatorTools } from "../fixtures.ts"
import { ollamaText, openAiText, openAiToolCalls, useLoopback } from "./loopback.ts"

const serve = useLoopback()
const Answer = Schema.Struct({ result: Schema.Finite, explanation: Schema.String })
const answerSchema = {
  type: "object",
  properties: { result: { type: "number" }, explanation: { type: "string" } },
  required: ["result", "explanation"],
  additionalProperties: false
}

describe("output strategy native", () => {
  it("OpenAI: sends response_format json_schema (strict), no submit tool, and decodes the JSON text", async () => {
    const s = await serve([openAiText('{"result":4,"explanation":"2+2"}')])
    const typed = agent("typed", { output: outputStrategy(Answer, "native") }).model(openai("gpt-4o-mini", { apiKey: "k", baseURL: s.url }))
    expect(await typed.run("2+2")).toEqual({ result: 4, explanation: "2+2" })
    const body = s.requests[0]!.body
    expect(body.response_format).toEqual({ type: "json_schema", json_schema: { name: "output", schema: answerSchema, strict: true } })
    expect(body.tools).toBeUndefined()
    expect(body.tool_choice).toBeUndefined()
  })

  it("an answer that does not decode is corrected the same way as with the submit tool", async () => {
    const s = await serve([openAiText('{"result":"four"}'), openAiText('{"result":4,"explanation":"sum"}')])
    const typed = agent("typed", { output: outputStrategy(Answer, "native") }).model(openai("m", { apiKey: "k", baseURL: s.url }))
    expect(await typed.run("2+2")).toEqual({ result: 4, explanation: "sum" })
    const correction = s.requests[1]!.body.messages.at(-1)
    expect(correction.role).toBe("user")
    expect(correction.content).toContain("does not match the required output format")
    expect(s.requests[1]!.body.response_format.type).toBe("json_schema")
  })

  it("a Schema with optional keys is sent non-strict (OpenAI strict needs every key required)", async () => {
    const s = await serve([openAiText('{"result":1}')])
    const Loose = Schema.Struct({ result: Schema.Finite, note: Schema.optionalKey(Schema.String) })
    await agent("typed", { output: outputStrategy(Loose, "native") }).model(openai("m", { apiKey: "k", baseURL: s.url })).run("1")
    expect(s.requests[0]!.body.response_format.json_schema.strict).toBe(false)
  })

  it("works beside tools: the model calls tools, then answers JSON under response_format", async () => {
    const s = await serve([openAiToolCalls([{ id: "c1", name: "add", arguments: '{"a":2,"b":2}' }]), openAiText('{"result":4,"explanation":"add"}')])
    const tools = makeCalculatorTools()
    const typed = agent("typed", { output: outputStrategy(Answer, "native") })
      .model(openai("m", { apiKey: "k", baseURL: s.url }))
      .tools({ add: tools.add })
      .skills(({ add }) => [skill("compute", "Compute").tools(add)])
    expect(await typed.run("2+2")).toEqual({ result: 4, explanation: "add" })
    expect(s.requests[0]!.body.tools.map((t: any) => t.function.name)).toEqual(["add"])
    expect(s.requests[0]!.body.tool_choice).toBe("auto")
    expect(s.requests.every((r) => r.body.response_format?.type === "json_schema")).toBe(true)
  })

  it("Ollama: sends the schema as format", async () => {
    const s = await serve([ollamaText('{"result":4,"explanation":"2+2"}')])
    const typed = agent("typed", { output: outputStrategy(Answer, "native") }).model(ollama("qwen3", { host: s.url }))
    expect(await typed.run("2+2")).toEqual({ result: 4, explanation: "2+2" })
    expect(s.requests[0]!.body.format).toEqual(answerSchema)
    expect(s.requests[0]!.body.tools).toBeUndefined()
  })
})

describe("output strategy auto and tool", () => {
  it("auto is native without tools, and the submit tool with tools", async () => {
    const s = await serve([openAiText('{"result":4,"explanation":"x"}')])
    const Auto = outputStrategy(Answer, "auto")
    await agent("plain", { output: Auto }).model(openai("m", { apiKey: "k", baseURL: s.url })).run("2+2")
    expect(s.requests[0]!.body.response_format?.type).toBe("json_schema")
    await s.close()

    const t = await serve([openAiToolCalls([{ id: "c1", name: "submit", arguments: '{"result":4,"explanation":"x"}' }])])
    const tools = makeCalculatorTools()
    const withTools = agent("tools", { output: Auto })
      .model(openai("m", { apiKey: "k", baseURL: t.url }))
      .tools({ add: tools.add })
      .skills(({ add }) => [skill("compute", "Compute").tools(add)])
    expect(await withTools.run("2+2")).toEqual({ result: 4, explanation: "x" })
    expect(t.requests[0]!.body.response_format).toBeUndefined()
    expect(t.requests[0]!.body.tools.map((x: any) => x.function.name)).toEqual(["add", "submit"])
  })

  it("tool (the default) keeps the submit tool and sends no response_format", async () => {
    const s = await serve([openAiToolCalls([{ id: "c1", name: "submit", arguments: '{"result":4,"explanation":"x"}' }])])
    expect(await agent("typed", { output: Answer }).model(openai("m", { apiKey: "k", baseURL: s.url })).run("2+2")).toEqual({
      result: 4,
      explanation: "x"
    })
    expect(s.requests[0]!.body.response_format).toBeUndefined()
    expect(s.requests[0]!.body.tool_choice).toEqual({ type: "function", function: { name: "submit" } })
  })
})
