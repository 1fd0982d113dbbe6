/**
 * The run deadline on the live clock (one timer that interrupts the run's fiber); the TestClock path
 * (Effect.timeoutOrElse) is covered by the budget and hardening suites.
 */
import { Context, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { Schema } from "effect"
import { agent, ModelClient, type RunEndEvent, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { withDeadline } from "../../src/runtime/deadline.ts"
import { failureOf, runExit } from "../fixtures.ts"

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length

describe("withDeadline on the live clock", () => {
  it("answers with onTimeout once the time is up, after the body's finalizers ran", async () => {
    const log: Array<string> = []
    const started = Date.now()
    const exit = await runExit(
      withDeadline(Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => log.push("body interrupted")))), 30, () =>
        Effect.sync(() => (log.push("timeout"), "late")))
    )
    expect(exit).toEqual(Exit.succeed("late"))
    expect(log).toEqual(["body interrupted", "timeout"])
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it("passes the body's success and failure through and leaves no timer behind", async () => {
    const before = timers()
    expect(await runExit(withDeadline(Effect.succeed(1), 60_000, () => Effect.succeed(2)))).toEqual(Exit.succeed(1))
    expect(await runExit(withDeadline(Effect.fail("no"), 60_000, () => Effect.succeed(2)))).toEqual(Exit.fail("no"))
    expect(await runExit(withDeadline(Effect.sleep("5 millis").pipe(Effect.as(3)), 60_000, () => Effect.succeed(2)))).toEqual(Exit.succeed(3))
    expect(timers()).toBe(before)
  })

  it("an interruption from outside interrupts the body and waits for it", async () => {
    const log: Array<string> = []
    const exit = await runExit(
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(
          withDeadline(
            Effect.never.pipe(Effect.onInterrupt(() => Effect.sleep("10 millis").pipe(Effect.andThen(Effect.sync(() => log.push("body done")))))),
            60_000,
            () => Effect.succeed("timeout")
          )
        )
        yield* Effect.sleep("5 millis")
        yield* Fiber.interrupt(fiber)
        log.push("interrupted")
        return yield* Fiber.await(fiber)
      })
    )
    expect(log).toEqual(["body done", "interrupted"])
    expect(Exit.isSuccess(exit) && Exit.hasInterrupts(exit.value)).toBe(true)
  })

  it("deadlines of different lengths in flight together (one timer for all) each expire in their own time, and leave no timer behind", async () => {
    const before = timers()
    const order: Array<number> = []
    const started = Date.now()
    const timed = (millis: number) => withDeadline(Effect.never, millis, () => Effect.sync(() => (order.push(millis), Date.now() - started)))
    // The longest first: the shorter ones come before the earliest deadline in the list, and arm the timer again.
    const [long, short, middle, finished] = await Promise.all([
      Effect.runPromise(timed(300)),
      Effect.runPromise(timed(20)),
      Effect.runPromise(timed(80)),
      Effect.runPromise(withDeadline(Effect.succeed("done"), 40, () => Effect.succeed("late")))
    ])
    expect(order).toEqual([20, 80, 300])
    expect(finished).toBe("done")
    expect(short).toBeGreaterThanOrEqual(19)
    expect(short).toBeLessThan(middle)
    expect(middle).toBeGreaterThanOrEqual(79)
    expect(long).toBeGreaterThanOrEqual(299)
    // At most as many as before: the test runner's own timers may have ended meanwhile.
    expect(timers()).toBeLessThanOrEqual(before)
  })

  it("sees the caller's services", async () => {
    const Greeting = Context.Service<{ readonly word: string }>("test/Greeting")
    const exit = await runExit(
      withDeadline(Effect.gen(function*() { return (yield* Greeting).word }), 1_000, () => Effect.succeed("timeout")).pipe(
        Effect.provideService(Greeting, { word: "hello" })
      )
    )
    expect(exit).toEqual(Exit.succeed("hello"))
  })
})

describe("maxDuration on the live clock", () => {
  it("ends a run whose model hangs with BudgetExceeded (duration), RunEnd agreeing", async () => {
    const ends: Array<RunEndEvent["outcome"]["_tag"]> = []
    let interrupted = false
    const hanging: ModelClient = { chat: () => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => void (interrupted = true)))) }
    const a = agent("a").model(hanging).budget({ maxDuration: "40 millis" }).onRunEnd((e) => void ends.push(e.outcome._tag))
    const exit = await runExit(a.runEffect("x"))
    expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded", reason: "duration", limit: 40 })
    expect(ends).toEqual(["Failure"])
    expect(interrupted).toBe(true)
  })

  it("a run within its deadline is unaffected, and leaves no timer behind", async () => {
    const before = timers()
    const a = agent("a").model(ModelClient.fromFunction(async () => text("done"))).budget({ maxDuration: "10 seconds" })
    expect(await a.run("x")).toBe("done")
    expect(timers()).toBe(before)
  })

  // `agent.run` (a Promise) runs its body on the fiber `runPromise` started, which the deadline
  // interrupts itself: the same outcome, events and hooks as a run whose body has a fiber of its own.
  describe("through agent.run (its own fiber interrupted, no fiber of the body's)", () => {
    it("rejects with BudgetExceeded (duration) once the time is up: the tool's signal aborted, BudgetExceeded then RunEnd to the hooks, no timer left", async () => {
      const before = timers()
      const events: Array<string> = []
      let aborted = false
      const slow = tool("slow", {
        args: Schema.Struct({}),
        run: (_, { signal }) =>
          new Promise<string>((resolve) => {
            signal.addEventListener("abort", () => void (aborted = true))
            setTimeout(() => resolve("late"), 5_000).unref()
          })
      })
      const a = agent("a")
        .model(scriptedModel([toolCalls([{ id: "s1", name: "slow", arguments: {} }]), text("never")]))
        .tools({ slow })
        .budget({ maxDuration: "60 millis" })
        .onBudgetExceeded((e) => void events.push(`BudgetExceeded ${e.reason}`))
        .onRunEnd((e) => void events.push(`RunEnd ${e.outcome._tag === "Failure" ? e.outcome.error._tag : e.outcome._tag}`))
      const started = Date.now()
      await expect(a.run("go")).rejects.toMatchObject({ _tag: "BudgetExceeded", reason: "duration", limit: 60 })
      expect(Date.now() - started).toBeLessThan(2_000)
      expect(aborted).toBe(true)
      expect(events).toEqual(["BudgetExceeded duration", "RunEnd BudgetExceeded"])
      expect(timers()).toBeLessThanOrEqual(before)
    })

    it("a child agent's own deadline ends the child, not the run; the run's deadline ends the child with it", async () => {
      const hanging: ModelClient = { chat: () => Effect.never }
      const child = agent("child").model(hanging).budget({ maxDuration: "40 millis" })
      const parentModel = () => scriptedModel((request) => request.messages.at(-1)?.role === "tool" ? text(`parent saw: ${request.messages.at(-1)!.content}`) : toolCalls([{ id: "c1", name: "child", arguments: { input: "go" } }]))
      const parent = agent("parent").model(parentModel()).tools({ child: child.asTool({ name: "child", description: "A child" }) }).budget({ maxDuration: "10 seconds" })
      expect(await parent.run("go")).toMatch(/^parent saw: .*BudgetExceeded|^parent saw: .*duration/)
      const slowChild = agent("child").model(hanging).budget({ maxDuration: "10 seconds" })
      const hurried = agent("parent").model(parentModel()).tools({ child: slowChild.asTool({ name: "child", description: "A child" }) }).budget({ maxDuration: "60 millis" })
      await expect(hurried.run("go")).rejects.toMatchObject({ _tag: "BudgetExceeded", agent: "parent", reason: "duration" })
    })

    it("a deadline past setTimeout's limit (30 days) is left to withDeadline: no timer overflow, the run completes", async () => {
      const warnings: Array<string> = []
      const onWarning = (warning: Error) => void warnings.push(warning.name)
      process.on("warning", onWarning)
      try {
        const a = agent("a").model(ModelClient.fromFunction(async () => text("done"))).budget({ maxDuration: "30 days" })
        expect(await a.run("x")).toBe("done")
        await new Promise((resolve) => setTimeout(resolve, 20))
      } finally {
        process.off("warning", onWarning)
      }
      expect(warnings).not.toContain("TimeoutOverflowWarning")
    })

    it("runs started one inside another (a tool calling agent.run) each keep their own deadline", async () => {
      const inner = agent("inner").model(ModelClient.fromFunction(async () => text("inner done"))).budget({ maxDuration: "5 seconds" })
      const callsInner = tool("callsInner", { args: Schema.Struct({}), run: () => inner.run("x") })
      const outer = agent("outer")
        .model(scriptedModel((request) => request.messages.at(-1)?.role === "tool" ? text(`outer: ${request.messages.at(-1)!.content}`) : toolCalls([{ id: "i1", name: "callsInner", arguments: {} }])))
        .tools({ callsInner })
        .budget({ maxDuration: "5 seconds" })
      const results = await Promise.all([outer.run("a"), outer.run("b"), inner.run("c")])
      expect(results).toEqual(["outer: inner done", "outer: inner done", "inner done"])
    })
  })
})
