/**
 * A composite's own hooks are bounded as an agent's are (docs/guide/errors.md, "User code never holds a
 * run"): each by `hookTimeout`, `onRunStart` also by `maxDuration`, `onRunEnd` never holding the caller
 * (nor an interruption of it); a hook that fails or times out is logged and reported to `onHookFailed`
 * as `CompositeHookFailed`, and the run goes on unchanged. Short timeouts, real time: each test ends
 * well under a second.
 */
import { Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type ModelClient, text } from "../../src/index.ts"
import { type CompositeHookFailed, type CompositeStreamEvent, pipeline } from "../../src/compose/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// The hooks here fail on purpose: their log lines are held back, and asserted on.
const logs = quietLogs([/^hook \S+ of \w+ ".*" failed: /])

const never = () => new Promise<never>(() => {})
const done = (name: string) => agent(name).model(scriptedModel(() => text("done")))
const flow = () => pipeline("flow", done("a"), done("b"))
const hangingModel: ModelClient = { chat: () => Effect.never }

/** `promise`, or "held" when it has not settled within `ms`. */
const within = <A>(promise: Promise<A>, ms: number) =>
  Promise.race([promise, new Promise<"held">((resolve) => setTimeout(() => resolve("held"), ms))])

describe("a composite's hooks are bounded by hookTimeout", () => {
  it("an onRunStart hook that never settles is abandoned after hookTimeout, reported, and the run goes on", async () => {
    const failed: Array<CompositeHookFailed> = []
    const composite = flow().budget({ hookTimeout: 100 }).onRunStart(never).onHookFailed((e) => void failed.push(e))
    const started = Date.now()
    expect(await within(composite.run("x"), 1_000)).toBe("done")
    expect(Date.now() - started).toBeLessThan(900)
    expect(failed).toEqual([expect.objectContaining({ _tag: "CompositeHookFailed", name: "flow", kind: "pipeline", hook: "CompositeStart" })])
    expect(String(failed[0]!.error)).toMatch(/did not settle within 100 ms/)
    expect(logs.lines()).toEqual([expect.stringMatching(/^WARN hook CompositeStart of pipeline "flow" failed: the hook did not settle within 100 ms/)])
  })

  it("an onRunStart hook that never settles is bounded by maxDuration too", async () => {
    const composite = flow().budget({ maxDuration: 100 }).onRunStart(never) // hookTimeout: the default 5 s
    const exit = await within(runExit(composite.runEffect("x")), 1_000)
    expect(exit).not.toBe("held")
    expect(failureOf(exit as Exclude<typeof exit, "held">)).toMatchObject({ _tag: "BudgetExceeded", reason: "duration", agent: "flow" })
  })

  it("an onRunEnd hook that never settles does not hold the caller, and is reported after hookTimeout", async () => {
    const failed: Array<CompositeHookFailed> = []
    const reported = new Promise<void>((resolve) => {
      void flow().budget({ hookTimeout: 100 }).onRunEnd(never).onHookFailed((e) => {
        failed.push(e)
        resolve()
      }).run("x").then((output) => void failed.push(output as never))
    })
    expect(await within(reported, 1_000)).toBeUndefined()
    expect(failed.map((e) => (typeof e === "string" ? e : e.hook))).toEqual(["done", "CompositeEnd"])
  })

  it("interrupting a run whose onRunEnd hangs completes at once (the caller's timeout wins)", async () => {
    const ends: Array<string> = []
    const composite = pipeline("slow", done("a"), agent("b").model(hangingModel))
      .onRunEnd((e) => {
        ends.push(e.outcome._tag)
        return never()
      })
    const started = Date.now()
    const exit = await within(runExit(Effect.timeout(composite.runEffect("x"), 50)), 1_000)
    expect(exit).not.toBe("held")
    expect(failureOf(exit as Exclude<typeof exit, "held">)).toMatchObject({ _tag: "TimeoutError" })
    expect(Date.now() - started).toBeLessThan(900)
    expect(ends).toEqual(["Interrupted"])
  })

  it("a synchronous onRunEnd has run when run() returns", async () => {
    const ends: Array<string> = []
    expect(await flow().onRunEnd((e) => void ends.push(e.outcome._tag)).run("x")).toBe("done")
    expect(ends).toEqual(["Success"])
  })
})

describe("a composite's failing hooks are reported as an agent's are", () => {
  it("a throwing hook goes to onHookFailed and the stream, never changing the run; a failing onHookFailed is only logged", async () => {
    const failed: Array<CompositeHookFailed> = []
    const composite = flow()
      .onRunStart(() => {
        throw new Error("boom")
      })
      .onHookFailed((e) => void failed.push(e))
      .onHookFailed(() => Effect.fail("and again"))
    const events = await Effect.runPromise(Stream.runCollect(composite.runStream("x")))
    const tags = Array.from(events, (e: CompositeStreamEvent) => e._tag)
    expect(tags.slice(0, 2)).toEqual(["CompositeHookFailed", "CompositeStart"])
    expect(tags.at(-1)).toBe("CompositeEnd")
    expect(failed).toHaveLength(1)
    expect(failed[0]).toMatchObject({ hook: "CompositeStart", name: "flow", kind: "pipeline", parentRunId: undefined })
    expect((failed[0]!.error as Error).message).toBe("boom")
    expect(failed[0]!.runId).toBe((events as ReadonlyArray<CompositeStreamEvent>).find((e) => e._tag === "CompositeStart")!.runId)
    expect(logs.lines()).toEqual([
      expect.stringMatching(/^WARN hook CompositeStart of pipeline "flow" failed: boom/),
      expect.stringMatching(/^WARN hook CompositeHookFailed of pipeline "flow" failed: and again/)
    ])
  })
})
