/**
 * `ToolContext.progress`: what a running tool reports becomes `ToolProgress` events, for hooks and
 * streams, in the order reported and before the call's outcome; reports after the call ended are
 * dropped; nobody listening costs nothing; an interrupted stream never hangs on them.
 */
import { Effect, Schema, Stream } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { agent, type AgentEvent, eventStreamResponse, type RunStreamEvent, tool, toolCalls, text } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const callOnce = (name: string, args: unknown = {}) => scriptedModel([toolCalls([{ id: "c1", name, arguments: args }]), text("done")])

/** A report schedule: each step reports a value, synchronously or after awaiting a macrotask or a microtask. */
type Step = { readonly value: number; readonly wait: "none" | "micro" | "macro" }
const pause = (wait: Step["wait"]) =>
  wait === "none" ? undefined : wait === "micro" ? Promise.resolve() : new Promise<void>((resolve) => setTimeout(resolve, 0))

const reporter = (steps: ReadonlyArray<Step>) =>
  tool("work", {
    description: "Works in steps",
    args: Schema.Struct({}),
    run: async (_args, { progress }) => {
      for (const step of steps) {
        const waited = pause(step.wait)
        if (waited !== undefined) await waited
        progress({ step: step.value })
      }
      return "worked"
    }
  })

const tagsAround = (events: ReadonlyArray<AgentEvent | RunStreamEvent>) =>
  events.filter((e) => e._tag === "ToolProgress" || e._tag === "ToolUse" || e._tag === "ToolError").map((e) => e._tag === "ToolProgress" ? (e.data as { step: number }).step : e._tag)

describe("tool progress", () => {
  it("hooks hear each report in order, as ToolProgress events before the call's ToolUse", async () => {
    const seen: Array<AgentEvent> = []
    const worker = agent("worker").model(callOnce("work")).tools({ work: reporter([{ value: 1, wait: "none" }, { value: 2, wait: "macro" }, { value: 3, wait: "micro" }]) })
      .onEvent((e) => void seen.push(e))
    expect(await worker.run("go")).toBe("done")
    expect(tagsAround(seen)).toEqual([1, 2, 3, "ToolUse"])
    const first = seen.find((e) => e._tag === "ToolProgress")
    expect(first).toMatchObject({ _tag: "ToolProgress", agent: "worker", tool: "work", toolCallId: "c1", turn: 1, data: { step: 1 } })
  })

  it("onToolProgress is typed and hears only progress; a failing tool's reports still precede its ToolError", async () => {
    const heard: Array<unknown> = []
    const failing = tool("flaky", {
      args: Schema.Struct({}),
      run: (_args, { progress }) => Effect.sync(() => progress("half")).pipe(Effect.andThen(Effect.fail(new Error("broke"))))
    })
    const events: Array<AgentEvent> = []
    const worker = agent("worker").model(callOnce("flaky")).tools({ flaky: failing })
      .onToolProgress((e) => {
        const data: unknown = e.data
        heard.push(`${e.tool}:${String(data)}`)
      })
      .onEvent((e) => void events.push(e))
    await worker.run("go")
    expect(heard).toEqual(["flaky:half"])
    const order = events.filter((e) => e._tag === "ToolProgress" || e._tag === "ToolError").map((e) => e._tag)
    expect(order).toEqual(["ToolProgress", "ToolError"])
  })

  it("a stream carries the reports too; the UI message stream has a transient data-tool-progress part per report", async () => {
    const worker = () => agent("worker").model(callOnce("work")).tools({ work: reporter([{ value: 1, wait: "macro" }, { value: 2, wait: "none" }]) })
    const events = await Effect.runPromise(Stream.runCollect(worker().runStream("go")))
    expect(tagsAround([...events])).toEqual([1, 2, "ToolUse"])
    const body = await eventStreamResponse(worker().runStream("go"), { format: "ui-message-stream" }).text()
    const chunks = body.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)))
    const progress = chunks.filter((c) => c.type === "data-tool-progress")
    expect(progress).toEqual([
      { type: "data-tool-progress", data: { toolCallId: "c1", tool: "work", progress: { step: 1 } }, transient: true },
      { type: "data-tool-progress", data: { toolCallId: "c1", tool: "work", progress: { step: 2 } }, transient: true }
    ])
    const outputAt = chunks.findIndex((c) => c.type === "tool-output-available")
    expect(chunks.findIndex((c) => c.type === "data-tool-progress")).toBeLessThan(outputAt)
  })

  it("a report made after the call ended is dropped; with nobody listening, progress is a harmless no-op", async () => {
    let late: ((data: unknown) => void) | undefined
    const leaky = tool("leaky", { args: Schema.Struct({}), run: (_args, { progress }) => ((late = progress), progress("during"), "ok") })
    const events: Array<AgentEvent> = []
    const worker = agent("worker").model(callOnce("leaky")).tools({ leaky }).onEvent((e) => void events.push(e))
    await worker.run("go")
    late!("after")
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(events.filter((e) => e._tag === "ToolProgress").map((e) => (e as { data: unknown }).data)).toEqual(["during"])
    const silent = agent("silent").model(callOnce("leaky")).tools({ leaky })
    expect(await silent.run("go")).toBe("done")
  })

  it("a stream stopped at the first report interrupts the tool and ends, never hanging on its later reports", async () => {
    let aborted = false
    const endless = tool("endless", {
      args: Schema.Struct({}),
      run: async (_args, { progress, signal }) => {
        for (let i = 0; !signal.aborted; i++) {
          progress(i)
          await new Promise((resolve) => setTimeout(resolve, 1))
        }
        aborted = true
        return "stopped"
      }
    })
    const worker = agent("worker").model(callOnce("endless")).tools({ endless })
    const firstProgress = await Effect.runPromise(
      worker.runStream("go").pipe(Stream.filter((e) => e._tag === "ToolProgress"), Stream.take(1), Stream.runCollect)
    )
    expect([...firstProgress].map((e) => e._tag)).toEqual(["ToolProgress"])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(aborted).toBe(true)
  })

  it("property: for any schedule of reports (sync, after microtasks, after macrotasks), hooks and streams see exactly those reports, in order, before ToolUse, even behind a slow hook", async () => {
    const step = fc.record({ value: fc.integer(), wait: fc.constantFrom<Step["wait"]>("none", "micro", "macro") })
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 12 }), fc.boolean(), fc.boolean(), async (steps, streamed, slowHook) => {
        const seen: Array<AgentEvent | RunStreamEvent> = []
        const base = agent("worker").model(callOnce("work")).tools({ work: reporter(steps) })
        // A hook that takes a macrotask per report: reports queue up behind it while the tool goes on.
        const worker = slowHook ? base.onToolProgress(() => new Promise<void>((resolve) => setTimeout(resolve, 1))) : base
        if (streamed) {
          seen.push(...(await Effect.runPromise(Stream.runCollect(worker.runStream("go")))))
        } else {
          await worker.onEvent((e) => void seen.push(e)).run("go")
        }
        expect(tagsAround(seen)).toEqual([...steps.map((s) => s.value), "ToolUse"])
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 60) }
    )
  })
})
