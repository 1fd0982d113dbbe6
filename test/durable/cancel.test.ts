/**
 * `d.cancel(runId, reason)`: a durable run ends with `Cancelled` — during a tool (its signal aborted),
 * during a model call, while it waits for a decision (the tool never runs), and during a mutating call
 * that ignores its signal (waited for: its outcome is written, it ran once).
 */
import { Effect, Exit, Layer, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Cancelled, text, tool, toolCalls } from "../../src/index.ts"
import { durable, memoryEngine, ToolIntents } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank } from "../approvals/bank.ts"

const onMemory = <A, E>(d: { readonly layer: Layer.Layer<never, never, any> }, program: Effect.Effect<A, E, any>) =>
  Effect.runPromise(program.pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("20 seconds")) as Effect.Effect<A, unknown>)

const callOnce = (name: string) => scriptedModel([toolCalls([{ id: "c1", name, arguments: { q: "x" } }]), text("done")])

/** Starts `runId`, waits `afterMs`, cancels it, and answers its end and how long cancelling took. */
const cancelAfter = (d: ReturnType<typeof durable<any>>, runId: string, afterMs: number) =>
  Effect.gen(function*() {
    yield* d.start("go", { runId })
    yield* Effect.sleep(afterMs)
    const started = Date.now()
    yield* d.cancel(runId, "the user changed their mind")
    const exit = yield* Effect.exit(d.join(runId))
    return { exit, tookMs: Date.now() - started }
  })

const cancelledWith = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Exit.findErrorOption(exit).pipe(Option.getOrUndefined) : undefined)

describe("durable runs: cancel", () => {
  it("interrupts a tool in flight (its signal aborts) and ends the run with Cancelled", async () => {
    let aborted = false
    const slow = tool("slow", {
      args: Schema.Struct({ q: Schema.String }),
      effect: "readOnly",
      run: (_, { signal }) =>
        new Promise<string>((resolve) => {
          const timer = setTimeout(() => resolve("late"), 10_000)
          signal.addEventListener("abort", () => {
            aborted = true
            clearTimeout(timer)
            resolve("aborted")
          })
        })
    })
    const d = durable(agent("worker").model(callOnce("slow")).tools({ slow }))
    const { exit, tookMs } = await onMemory(d, cancelAfter(d, "t1", 300))
    const error = cancelledWith(exit)
    expect(error).toBeInstanceOf(Cancelled)
    expect(error).toMatchObject({ runId: "t1", reason: "the user changed their mind" })
    expect(aborted).toBe(true)
    expect(tookMs).toBeLessThan(3000)
  })

  it("interrupts a model call in flight", async () => {
    const model = scriptedModel(() => Effect.as(Effect.sleep("10 seconds"), text("late")))
    const d = durable(agent("thinker").model(model))
    const { exit } = await onMemory(d, cancelAfter(d, "m1", 300))
    expect(cancelledWith(exit)).toBeInstanceOf(Cancelled)
  })

  it("ends a run waiting for a decision; the call never runs", async () => {
    const { bank, executed } = makeBank(scriptedModel([toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("done")]))
    const d = durable(bank)
    const out = await onMemory(d, Effect.gen(function*() {
      const first = yield* d.run("send 500", { runId: "w1" })
      yield* d.cancel("w1")
      return { first, exit: yield* Effect.exit(d.join("w1")), polled: yield* Effect.exit(d.poll("w1")) }
    }))
    expect(out.first._tag).toBe("Suspended")
    expect(cancelledWith(out.exit)).toMatchObject({ _tag: "Cancelled", reason: "cancelled" })
    expect(cancelledWith(out.polled)).toBeInstanceOf(Cancelled)
    expect(executed).toEqual([])
  })

  it("a mutating call that ignores its signal is waited for and recorded; the run then ends Cancelled", async () => {
    const paid: Array<string> = []
    const pay = tool("pay", {
      args: Schema.Struct({ q: Schema.String }),
      run: async ({ q }) => {
        await new Promise((r) => setTimeout(r, 1200))
        paid.push(q)
        return "paid"
      }
    })
    const d = durable(agent("payer").model(callOnce("pay")).tools({ pay }))
    const out = await onMemory(d, Effect.gen(function*() {
      const ended = yield* cancelAfter(d, "p1", 300)
      const claim = yield* (yield* ToolIntents).read("tool/p1/1/c1")
      return { ...ended, claim }
    }))
    expect(cancelledWith(out.exit)).toBeInstanceOf(Cancelled)
    expect(paid).toEqual(["x"])
    expect(Option.getOrUndefined(out.claim)).toMatchObject({ _tag: "Finished", outcome: { _tag: "Succeeded", value: "paid" } })
  })

  it("a run already ended keeps its outcome", async () => {
    const d = durable(agent("quick").model(scriptedModel([text("ok")])))
    const out = await onMemory(d, Effect.gen(function*() {
      const result = yield* d.run("go", { runId: "q1" })
      yield* d.cancel("q1")
      return { result, joined: yield* d.join("q1") }
    }))
    expect(out.result).toEqual({ _tag: "Completed", output: "ok" })
    expect(out.joined).toBe("ok")
  })
})

