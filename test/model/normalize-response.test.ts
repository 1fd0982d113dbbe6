import { fc, test as prop } from "@fast-check/vitest"
import { Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import { agent, ModelClient, text, toolCalls } from "../../src/index.ts"
import { checkResponse, normalizeResponse } from "../../src/model/normalize-response.ts"
import { fromOllamaResponse } from "../../src/providers/ollama.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { arbLlmResponse } from "../../src/testing/arbitraries.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"

const { add, multiply } = makeCalculatorTools()

describe("normalizeResponse (user-written responses)", () => {
  it("serialises object arguments once and keeps JSON text as it is", () => {
    const normalized = normalizeResponse(toolCalls([
      { id: "a", name: "add", arguments: { a: 1, b: 2 } },
      { id: "b", name: "add", arguments: '{"a":3,"b":4}' }
    ]), 1)
    expect(normalized).toEqual(Result.succeed({
      _tag: "ToolCalls",
      calls: [{ id: "a", name: "add", arguments: '{"a":1,"b":2}' }, { id: "b", name: "add", arguments: '{"a":3,"b":4}' }]
    }))
  })

  it("assigns missing, empty and repeated ids from the call number and position", () => {
    const normalized = normalizeResponse(toolCalls([
      { name: "add", arguments: {} },
      { id: "", name: "add", arguments: {} },
      { id: "x", name: "add", arguments: {} },
      { id: "x", name: "add", arguments: {} }
    ]), 3)
    expect(Result.getOrThrow(normalized)).toMatchObject({ calls: [{ id: "call_3_0" }, { id: "call_3_1" }, { id: "x" }, { id: "call_3_3" }] })
  })

  it("refuses what is not a response", () => {
    expect(Result.isFailure(normalizeResponse({ _tag: "Mystery" }, 1))).toBe(true)
    expect(Result.isFailure(normalizeResponse({ _tag: "ToolCalls", calls: [{ arguments: {} }] }, 1))).toBe(true)
    const cyclic: Record<string, unknown> = {}
    cyclic["self"] = cyclic
    expect(Result.isFailure(normalizeResponse({ _tag: "ToolCalls", calls: [{ name: "add", arguments: cyclic }] }, 1))).toBe(true)
  })

  prop.prop([arbLlmResponse([add, multiply], { invalidRate: 0.5, jsonStringRate: 0.5 })], { numRuns: 200 })(
    "always gives JSON text arguments and ids unique in the response, which checkResponse accepts",
    (response) => {
      const normalized = Result.getOrThrow(normalizeResponse(response, 1))
      if (normalized._tag === "ToolCalls") {
        expect(normalized.calls.every((c) => typeof c.arguments === "string")).toBe(true)
        expect(new Set(normalized.calls.map((c) => c.id)).size).toBe(normalized.calls.length)
      }
      expect(Result.isSuccess(checkResponse(normalized))).toBe(true)
    }
  )
})

describe("clients normalise, the loop checks", () => {
  it("fromFunction numbers its answers, so assigned ids differ across turns", async () => {
    const seen: Array<string> = []
    let turn = 0
    const model = ModelClient.fromFunction(() => (++turn <= 2 ? toolCalls([{ name: "add", arguments: { a: turn, b: 1 } }]) : text("done")))
    await agent("a").model(model).tools({ add }).onToolUse((e) => {
      seen.push(e.toolCallId)
    }).run("x")
    expect(seen).toEqual(["call_1_0", "call_2_0"])
  })

  it("a custom client handing the loop object arguments fails with ModelError", async () => {
    const raw = { chat: () => Effect.succeed({ _tag: "ToolCalls", calls: [{ id: "1", name: "add", arguments: { a: 1, b: 2 } }] }) }
    const error = failureOf(await runExit(agent("a").model(raw as never).tools({ add }).runEffect("x")))
    expect(error).toMatchObject({ _tag: "ModelError" })
    expect(error.message).toContain("arguments must be the JSON text")
  })

  it("scriptedModel normalises function steps with the same numbering", async () => {
    const model = scriptedModel([() => toolCalls([{ name: "add", arguments: { a: 1, b: 1 } }]), text("2")])
    await agent("a").model(model).tools({ add }).run("x")
    const assistant = model.requests[1]!.messages.find((m) => m.role === "assistant")
    expect(assistant).toMatchObject({ toolCalls: [{ id: "call_1_0", name: "add", arguments: '{"a":1,"b":1}' }] })
  })
})

describe("the Ollama adapter normalises its wire", () => {
  const reply = (calls: Array<{ function: { name: string; arguments: Record<string, unknown> } }>) =>
    ({ message: { role: "assistant", content: "", tool_calls: calls } }) as never

  it("serialises argument objects once and assigns ids unique across answers", async () => {
    const first = await Effect.runPromise(fromOllamaResponse(reply([{ function: { name: "add", arguments: { a: 1, b: 2 } } }])))
    const second = await Effect.runPromise(fromOllamaResponse(reply([
      { function: { name: "add", arguments: { a: 3, b: 4 } } },
      { function: { name: "multiply", arguments: {} } }
    ])))
    expect(first).toMatchObject({ calls: [{ arguments: '{"a":1,"b":2}' }] })
    expect(second).toMatchObject({ calls: [{ arguments: '{"a":3,"b":4}' }, { arguments: "{}" }] })
    const ids = [first, second].flatMap((r) => (r._tag === "ToolCalls" ? r.calls.map((c) => c.id) : []))
    expect(ids.every((id) => /^call_/.test(id))).toBe(true)
    expect(new Set(ids).size).toBe(3)
  })
})

describe("a property over whole runs", () => {
  prop.prop([fc.array(arbLlmResponse([add, multiply], { invalidRate: 0.3 }), { maxLength: 5 })], { numRuns: 50 })(
    "every tool call in every request carries JSON text arguments",
    async (script) => {
      const model = scriptedModel(script)
      await Effect.runPromise(Effect.exit(agent("a").model(model).tools({ add, multiply }).budget({ maxTurns: 6 }).runEffect("x")))
      for (const request of model.requests) {
        for (const message of request.messages) {
          if (message.role === "assistant") {
            for (const call of message.toolCalls ?? []) expect(typeof call.arguments).toBe("string")
          }
        }
      }
    }
  )
})
