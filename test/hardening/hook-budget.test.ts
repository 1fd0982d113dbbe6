/**
 * Issue #28 item 8: a hung listener holds the caller for at most one hook timeout after `maxDuration`.
 * The `HookFailed` report about a listener is never delivered back to that listener (an `onEvent`
 * listener hears every tag, `HookFailed` included), so a hung one is not awaited a second time.
 */
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { agent, ModelClient } from "../../src/index.ts"
import { runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const never = () => new Promise<never>(() => {})

/** Whether `effect` has ended once virtual time reached `at` milliseconds. */
const endedBy = (effect: Effect.Effect<unknown, unknown>, at: number) =>
  runExit(
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(effect)
      yield* TestClock.adjust(at)
      const done = fiber.pollUnsafe() !== undefined
      yield* Fiber.interrupt(fiber)
      return done
    }).pipe(Effect.provide(TestClock.layer()))
  ).then((exit) => (exit._tag === "Success" ? exit.value : Promise.reject(exit.cause)))

describe("a hung listener costs one hook timeout (item 8)", () => {
  const hanging = ModelClient.fromFunction(() => Effect.never)
  const base = agent("a").model(hanging).budget({ maxDuration: "1 minute", hookTimeout: "2 seconds" })

  it("onEvent: the run ends within maxDuration + one hook timeout", async () => {
    const a = base.onEvent(never)
    expect(await endedBy(a.runEffect("x"), 60_000 + 2_000 + 100)).toBe(true)
  })

  it("several hung listeners of BudgetExceeded still cost one hook timeout in all", async () => {
    const a = base.onEvent(never).onBudgetExceeded(never).onHookFailed(never)
    expect(await endedBy(a.runEffect("x"), 60_000 + 2_000 + 100)).toBe(true)
  })

  it("onEvent: the report of its own failure is not delivered back to it", async () => {
    const seen: Array<string> = []
    const a = base.onEvent((e) => {
      seen.push(e._tag)
      return e._tag === "BudgetExceeded" ? never() : undefined
    })
    await endedBy(a.runEffect("x"), 70_000)
    const after = seen.slice(seen.indexOf("BudgetExceeded"))
    expect(after).not.toContain("HookFailed")
  })

  it("another listener still hears the HookFailed report", async () => {
    const failed: Array<string> = []
    const a = base.onEvent((e) => (e._tag === "BudgetExceeded" ? never() : undefined))
      .onHookFailed((e) => void failed.push(e.hook))
    await endedBy(a.runEffect("x"), 70_000)
    expect(failed).toContain("BudgetExceeded")
  })
})
