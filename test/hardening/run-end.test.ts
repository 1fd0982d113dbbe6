/**
 * Issue #19 item 6b: a run interrupted while its `onRunEnd` hooks are slow. Hooks and the caller must
 * agree on the outcome: the outcome is sealed when the run's body ends, and `RunEnd` listeners are
 * delivered outside the caller's fiber (bounded by `hookTimeout`), so the caller is never held by them
 * and an interruption arriving while they run cannot change what the caller gets.
 */
import { Deferred, type Duration, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { agent, ModelClient, ModelError, type RunEndEvent, text } from "../../src/index.ts"
import { runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

type Outcome = RunEndEvent["outcome"]["_tag"]

const outcomeOfExit = (exit: Exit.Exit<unknown, unknown>): Outcome =>
  Exit.isSuccess(exit) ? "Success" : Exit.hasInterrupts(exit) && exit.cause.reasons.every((r) => r._tag === "Interrupt") ? "Interrupted" : "Failure"

const never = () => new Promise<never>(() => {})

/**
 * Interrupts `fiber` and waits for its exit, moving the TestClock on meanwhile: an interruption held by
 * a hook (as before the fix, until `hookTimeout`) still completes, so a disagreement fails the test
 * instead of hanging it.
 */
const interruptAndAwait = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.gen(function*() {
    const interrupting = yield* Effect.forkChild(Fiber.interrupt(fiber))
    yield* TestClock.adjust("10 minutes")
    yield* Fiber.join(interrupting)
    return yield* Fiber.await(fiber)
  })

/** A model answering "done" after `delay` (TestClock time). */
const slowModel = (delay: Duration.Input) => ModelClient.fromFunction(() => Effect.as(Effect.sleep(delay), text("done")))

describe("RunEnd and the caller agree (item 6b)", () => {
  it("a run interrupted during a slow onRunEnd: the hook and the caller both see Success", async () => {
    const seen: Array<Outcome> = []
    const result = await runExit(
      Effect.gen(function*() {
        const hookStarted = yield* Deferred.make<void>()
        const a = agent("a").model(slowModel("1 second")).onRunEnd((e) =>
          Effect.gen(function*() {
            seen.push(e.outcome._tag)
            yield* Deferred.succeed(hookStarted, undefined)
            yield* Effect.sleep("1 minute")
          })
        )
        const fiber = yield* Effect.forkChild(a.runEffect("x"))
        yield* TestClock.adjust("1 second")
        yield* Deferred.await(hookStarted)
        return yield* interruptAndAwait(fiber)
      }).pipe(Effect.provide(TestClock.layer()))
    )
    expect(Exit.isSuccess(result)).toBe(true)
    const exit = (result as Exit.Success<Exit.Exit<unknown, unknown>>).value
    expect(seen).toEqual(["Success"])
    expect(outcomeOfExit(exit)).toBe("Success")
    expect(exit).toEqual(Exit.succeed("done"))
  })

  it("a run interrupted before its body ended: the hook and the caller both see Interrupted", async () => {
    const seen: Array<Outcome> = []
    const a = agent("a").model(slowModel("1 minute")).onRunEnd((e) => void seen.push(e.outcome._tag))
    const result = await runExit(
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(a.runEffect("x"))
        yield* TestClock.adjust("1 second")
        yield* Fiber.interrupt(fiber)
        return yield* Fiber.await(fiber)
      }).pipe(Effect.provide(TestClock.layer()))
    )
    const exit = (result as Exit.Success<Exit.Exit<unknown, unknown>>).value
    expect(seen).toEqual(["Interrupted"])
    expect(outcomeOfExit(exit)).toBe("Interrupted")
  })

  it("a synchronous onRunEnd (and onError) has run when run() returns", async () => {
    const ends: Array<Outcome> = []
    const errors: Array<string> = []
    const ok = agent("ok").model(ModelClient.fromFunction(() => text("done"))).onRunEnd((e) => void ends.push(e.outcome._tag))
    expect(await ok.run("x")).toBe("done")
    expect(ends).toEqual(["Success"])
    const failing = agent("bad").model(ModelClient.fromFunction(() => Promise.reject(new Error("down"))))
      .onError((e) => void errors.push(e._tag))
    await expect(failing.run("x")).rejects.toMatchObject({ _tag: "ModelError" })
    expect(errors).toEqual(["ModelError"])
  })

  it("the caller is not held by an onRunEnd that never settles", async () => {
    const a = agent("a").model(ModelClient.fromFunction(() => text("done"))).onRunEnd(never)
    const raced = await Promise.race([a.run("x"), new Promise((resolve) => setTimeout(() => resolve("held"), 1_000))])
    expect(raced).toBe("done")
  })

  it("hookTimeout still bounds an onRunEnd hook, reported as HookFailed", async () => {
    const failed: Array<unknown> = []
    const a = agent("a").model(ModelClient.fromFunction(() => text("done"))).budget({ hookTimeout: "2 seconds" })
      .onRunEnd(never).onHookFailed((e) => void failed.push(e.error))
    const result = await runExit(
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(a.runEffect("x"))
        yield* TestClock.adjust("3 seconds")
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(TestClock.layer()))
    )
    expect(result).toEqual(Exit.succeed("done"))
    expect(String(failed[0])).toMatch(/did not settle within 2000 ms/)
  })

  test.prop([
    fc.integer({ min: 0, max: 4 }), // model delay (s)
    fc.integer({ min: 0, max: 4 }), // hook duration (s)
    fc.integer({ min: 0, max: 10 }), // when the caller interrupts (s)
    fc.boolean() // whether the model fails
  ], { numRuns: Number(process.env["PROPERTY_RUNS"] ?? 60) })(
    "whenever the interruption comes, RunEnd's outcome is what the caller gets",
    async (modelDelay, hookSeconds, interruptAt, fails) => {
      const seen: Array<Outcome> = []
      const model = ModelClient.fromFunction(() =>
        Effect.sleep(`${modelDelay} seconds`).pipe(
          Effect.andThen(fails ? Effect.fail(new ModelError({ provider: "test", reason: "down", retryable: false })) : Effect.succeed(text("done")))
        )
      )
      const a = agent("a").model(model).budget({ hookTimeout: "3 seconds" }).onRunEnd((e) => {
        seen.push(e.outcome._tag)
        return Effect.sleep(`${hookSeconds} seconds`)
      })
      const result = await runExit(
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(a.runEffect("x"))
          yield* TestClock.adjust(`${interruptAt} seconds`)
          return yield* interruptAndAwait(fiber)
        }).pipe(Effect.provide(TestClock.layer()))
      )
      const exit = (result as Exit.Success<Exit.Exit<unknown, unknown>>).value
      expect(seen).toHaveLength(1)
      expect(seen[0]).toBe(outcomeOfExit(exit))
    }
  )
})
