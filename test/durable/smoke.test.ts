import { Effect, Layer, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, text, tool, toolCalls } from "../../src/index.ts"
import { durable, memoryEngine } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

describe("durable smoke", () => {
  it("runs to the end, and once per run id", async () => {
    let adds = 0
    const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), effect: "readOnly", run: ({ a, b }) => { adds++; return a + b } })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }]), text("3")])
    const calc = agent("calc").model(model).tools({ add })
    const d = durable(calc)
    const program = Effect.gen(function*() {
      const first = yield* d.run("1+2?", { runId: "r1" })
      const second = yield* d.run("1+2?", { runId: "r1" })
      return [first, second]
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))))
    const [first, second] = await Effect.runPromise(program)
    expect(first).toEqual({ _tag: "Completed", output: "3" })
    expect(second).toEqual(first)
    expect(adds).toBe(1)
  })

  it("waits for a decision and goes on", async () => {
    let transfers = 0
    const transfer = tool("transfer", { args: Schema.Struct({ amount: Schema.Finite }), needsApproval: true, run: ({ amount }) => { transfers++; return `sent ${amount}` } })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { amount: 5 } }]), text("done")])
    const bank = agent("bank").model(model).tools({ transfer })
    const d = durable(bank)
    const program = Effect.gen(function*() {
      const first = yield* d.run("pay", { runId: "r2" })
      expect(first._tag).toBe("Suspended")
      if (first._tag !== "Suspended") return first
      yield* d.decide("r2", { [first.pending[0]!.id]: Decision.approve })
      return yield* d.result("r2")
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))))
    const result = await Effect.runPromise(program)
    expect(result).toEqual({ _tag: "Completed", output: "done" })
    expect(transfers).toBe(1)
  })
})
