/** toolConcurrency (#19): the calls of one response run concurrently with a cap, results in call order, budgets exact. */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const probe = () => {
  let inFlight = 0
  let maxInFlight = 0
  const started: Array<number> = []
  const slow = tool("slow", {
    args: Schema.Struct({ n: Schema.Number }),
    // Later calls finish first: call order must still be the order of the results.
    run: ({ n }) =>
      Effect.gen(function*() {
        started.push(n)
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        yield* Effect.sleep(`${30 - n * 5} millis`)
        inFlight--
        return `result ${n}`
      })
  })
  return { slow, started, stats: () => ({ maxInFlight }) }
}

const fiveCalls = toolCalls(Array.from({ length: 5 }, (_, n) => ({ id: `c${n}`, name: "slow", arguments: { n } })))

describe("toolConcurrency", () => {
  it("is 1 by default: one call after the other", async () => {
    const { slow, stats } = probe()
    await agent("a").model(scriptedModel([fiveCalls, text("ok")])).tools({ slow }).run("x")
    expect(stats().maxInFlight).toBe(1)
  })

  it("runs at most `toolConcurrency` calls at once and appends results in call order", async () => {
    const { slow, stats } = probe()
    const model = scriptedModel([fiveCalls, text("ok")])
    expect(await agent("a").model(model).tools({ slow }).budget({ toolConcurrency: 2 }).run("x")).toBe("ok")
    expect(stats().maxInFlight).toBe(2)
    const results = model.requests[1]!.messages.filter((m) => m.role === "tool")
    expect(results.map((m) => m.role === "tool" && m.toolCallId)).toEqual(["c0", "c1", "c2", "c3", "c4"])
    expect(results.map((m) => m.content)).toEqual(["result 0", "result 1", "result 2", "result 3", "result 4"])
  })

  it("keeps maxToolCalls exact under concurrency", async () => {
    const { slow, started } = probe()
    const error = await agent("a").model(scriptedModel([fiveCalls, text("ok")])).tools({ slow })
      .budget({ toolConcurrency: 5, maxToolCalls: 3 }).run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "toolCalls", limit: 3, used: 3 })
    expect(started).toHaveLength(3)
  })

  it("is validated at construction", () => {
    expect(() => agent("a").budget({ toolConcurrency: 0 })).toThrow(/toolConcurrency/)
  })
})
