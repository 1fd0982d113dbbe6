/**
 * `d.list({ status })`: the runs of a durable agent with their status — running, waiting (with the
 * calls they wait for), completed, failed, cancelled — filtered by status; bad options are
 * `InputInvalid`.
 */
import { Effect, Layer, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, InputInvalid, text, tool, toolCalls } from "../../src/index.ts"
import { durable, memoryEngine } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const transfer = tool("transfer", {
  args: Schema.Struct({ to: Schema.String }),
  needsApproval: true,
  run: ({ to }) => `sent to ${to}`
})

/** The model's answer depends on the input: ok, wait, fail, slow. */
const model = scriptedModel((request) => {
  const input = request.messages.find((m) => m.role === "user")?.content ?? ""
  const answered = request.messages.some((m) => m.role === "tool")
  if (input === "wait" && !answered) return toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob" } }])
  if (input === "fail") return toolCalls([{ id: "x1", name: "nope", arguments: {} }])
  if (input === "slow") return Effect.as(Effect.sleep("10 seconds"), text("late"))
  return text("ok")
})

describe("durable runs: list", () => {
  it("lists runs by status, a waiting run with the calls it waits for", async () => {
    const d = durable(agent("lister").model(model).tools({ transfer }))
    const out = await Effect.runPromise(Effect.gen(function*() {
      yield* d.run("ok", { runId: "r-ok" })
      yield* d.run("wait", { runId: "r-wait" })
      yield* d.run("wait", { runId: "r-cancel" })
      yield* d.cancel("r-cancel")
      yield* Effect.exit(d.join("r-cancel"))
      yield* Effect.exit(d.run("fail", { runId: "r-fail" }))
      yield* d.start("slow", { runId: "r-slow" })
      yield* Effect.sleep("100 millis")
      const all = yield* d.list()
      const waiting = yield* d.list({ status: "waiting" })
      const ended = yield* d.list({ status: ["completed", "failed", "cancelled"], limit: 10 })
      const bad = yield* Effect.flip(d.list({ status: "bogus" as never }))
      const badLimit = yield* Effect.flip(d.list({ limit: 0 }))
      return { all, waiting, ended, bad, badLimit }
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("20 seconds")))
    expect(out.all.map((r) => [r.runId, r.status])).toEqual([
      ["r-ok", "completed"],
      ["r-wait", "waiting"],
      ["r-cancel", "cancelled"],
      ["r-fail", "failed"],
      ["r-slow", "running"]
    ])
    expect(out.waiting).toEqual([{ runId: "r-wait", status: "waiting", pending: [{ id: "t1", tool: "transfer", args: { to: "bob" } }] }])
    expect(out.ended.map((r) => r.runId)).toEqual(["r-ok", "r-cancel", "r-fail"])
    expect(out.ended.find((r) => r.runId === "r-fail")?.error?._tag).toBe("ToolNotAllowed")
    expect(out.bad).toBeInstanceOf(InputInvalid)
    expect(out.badLimit).toBeInstanceOf(InputInvalid)
  })
})
