/**
 * A runner stopped in the middle of a tool (its fibers interrupted, as a killed process's stop), then
 * a fresh runner on the same storage: the run replays from its recorded steps and each tool effect
 * class behaves as documented.
 */
import { Deferred, Effect, Layer, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, text, tool, toolCalls } from "../../src/index.ts"
import { durable } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { clusterEngine, sharedStorage, sharedStores, startRunner } from "./harness.ts"

describe("a runner stopped in a tool, and a fresh one on the same storage", () => {
  it("replays the run: a readOnly tool runs again, the model is not asked again", async () => {
    let runs = 0
    const entered = Deferred.makeUnsafe<void>()
    const look = tool("look", {
      args: Schema.Struct({ q: Schema.String }),
      effect: "readOnly",
      run: ({ q }) =>
        Effect.gen(function*() {
          runs++
          if (runs === 1) {
            yield* Deferred.succeed(entered, undefined)
            return yield* Effect.never
          }
          return `seen ${q}`
        })
    })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "look", arguments: { q: "x" } }]), text("done")])
    const d = durable(agent("looker").model(model).tools({ look }))
    const program = Effect.gen(function*() {
      const driver = yield* sharedStorage()
      const stores = yield* sharedStores()
      const runner = () => d.layer.pipe(Layer.provideMerge(clusterEngine(driver)), Layer.provideMerge(Layer.succeedContext(stores)))
      const first = yield* startRunner(runner())
      yield* d.start("look at x", { runId: "crash-1" }).pipe(Effect.provide(first.context))
      yield* Deferred.await(entered)
      yield* first.stop
      const second = yield* startRunner(runner())
      const result = yield* d.result("crash-1").pipe(Effect.provide(second.context))
      yield* second.stop
      return result
    })
    const result = await Effect.runPromise(program.pipe(Effect.timeout("20 seconds")))
    expect(result).toEqual({ _tag: "Completed", output: "done" })
    expect(runs).toBe(2)
    expect(model.requests.length).toBe(2)
  }, 30_000)
})
