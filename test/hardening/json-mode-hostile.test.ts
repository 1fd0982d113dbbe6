/**
 * `jsonMode` under a model that answers badly: every reply it asked for is paid for (the usage of the
 * replies sent back for correction counts against `maxTokens`), the number of corrections is a real
 * bound (NaN or Infinity are refused when the client is made), and an envelope in a Markdown fence
 * followed by prose, or in prose, is read without a correction; its calls are still decoded by their
 * tools' Schemas.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, AgentConfigError, BudgetExceeded, isAgentError, jsonMode, text, tool } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

describe("jsonMode's corrections", () => {
  it("charge the tokens of every reply, not only the last", async () => {
    const inner = scriptedModel([
      text("garbage", { inputTokens: 400, outputTokens: 400 }),
      text("garbage", { inputTokens: 400, outputTokens: 400 }),
      text(`{"output":"hi"}`, { inputTokens: 1, outputTokens: 1 })
    ])
    const error = failureOf(await runExit(agent("j").model(jsonMode(inner)).budget({ maxTokens: 1_000 }).runEffect("x")))
    expect(error).toBeInstanceOf(BudgetExceeded)
    expect(error).toMatchObject({ reason: "tokens", used: 1_602 })
  })

  it("report the summed usage on the response", async () => {
    const inner = scriptedModel([text("garbage", { inputTokens: 3, outputTokens: 2, cachedInputTokens: 1 }), text(`{"output":"hi"}`, { inputTokens: 5, outputTokens: 7 })])
    const response = await Effect.runPromise(jsonMode(inner).chat({ messages: [{ role: "user", content: "x" }], tools: [] }))
    expect(response.usage).toEqual({ inputTokens: 8, outputTokens: 9, cachedInputTokens: 1 })
  })

  it.each([Number.NaN, Number.POSITIVE_INFINITY, -1, 101])("refuse maxRepairs %s when the client is made", (maxRepairs) => {
    expect(() => jsonMode(scriptedModel([]), { maxRepairs })).toThrow(AgentConfigError)
  })
})

describe("an envelope wrapped in text", () => {
  const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })

  it.each([
    ["a fence followed by prose", "```json\n{\"calls\":[{\"_tool\":\"add\",\"a\":1,\"b\":2}]}\n```\nHope this helps!"],
    ["the object followed by prose", "{\"calls\":[{\"_tool\":\"add\",\"a\":1,\"b\":2}]} Let me know."]
  ])("%s is read without a correction", async (_, reply) => {
    const inner = scriptedModel([text(reply), text(`{"output":"3"}`)])
    expect(await agent("calc").model(jsonMode(inner, { maxRepairs: 0 })).tools({ add }).run("1+2")).toBe("3")
    expect(inner.requests).toHaveLength(2)
  })

  it("calls shown inside prose are no calls: the tool does not run, the reply is sent back for a correction", async () => {
    const deleted: Array<unknown> = []
    const drop = tool("drop", { args: Schema.Struct({}), run: () => void deleted.push("dropped") })
    const inner = scriptedModel([
      text(`I will not delete anything. For reference, a deletion would look like {"calls":[{"_tool":"drop"}]} but you must confirm first.`),
      text(`{"output":"waiting for your confirmation"}`)
    ])
    expect(await agent("db").model(jsonMode(inner, { maxRepairs: 1 })).tools({ drop }).run("clean up")).toBe("waiting for your confirmation")
    expect(deleted).toEqual([])
    expect(inner.requests).toHaveLength(2)
  })

  it("a typed answer inside prose is still read (it is decoded by the output Schema)", async () => {
    const inner = scriptedModel([text(`Sure, here it is: {"output":"3"} Let me know.`)])
    expect(await agent("calc").model(jsonMode(inner, { maxRepairs: 0 })).tools({ add }).run("1+2")).toBe("3")
  })

  test.prop([fc.string(), fc.anything(), fc.string()], { numRuns: 200 })(
    "never runs a tool with arguments its Schema refused, and ends in success or a tagged error",
    async (before, args, after) => {
      let ran: Array<unknown> = []
      const spy = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: (decoded) => {
        ran.push(decoded)
        return decoded.a + decoded.b
      } })
      const body = typeof args === "object" && args !== null && !Array.isArray(args) ? { ...args, _tool: "add" } : { _tool: "add", args }
      let json: string
      try {
        json = JSON.stringify({ calls: [body] })
      } catch {
        return
      }
      ran = []
      const inner = scriptedModel([text(`${before}${json}${after}`), text(`{"output":"done"}`), text(`{"output":"done"}`)])
      const exit = await runExit(agent("calc").model(jsonMode(inner, { maxRepairs: 0 })).tools({ add: spy }).budget({ maxTurns: 3 }).runEffect("x"))
      if (exit._tag === "Failure") expect(isAgentError(failureOf(exit))).toBe(true)
      for (const decoded of ran) expect(Schema.is(Schema.Struct({ a: Schema.Finite, b: Schema.Finite }))(decoded)).toBe(true)
    }
  )
})
