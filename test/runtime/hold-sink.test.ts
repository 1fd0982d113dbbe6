/**
 * `holdSink`: what a run sends past its deadline waits for the reader in order, and an event that comes
 * while the held ones are being sent (a hook's late failure) goes after them, never ahead.
 */
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import type { RunStreamEvent } from "../../src/index.ts"
import { holdSink } from "../../src/runtime/emit.ts"

const event = (tag: string) => ({ _tag: tag }) as unknown as RunStreamEvent

describe("holdSink", () => {
  it("sends the held events in order, then what came during the release, then passes through", async () => {
    const sent: Array<string> = []
    const slow = (e: RunStreamEvent) => Effect.andThen(Effect.sleep("5 millis"), Effect.sync(() => void sent.push(e._tag)))
    const held = holdSink(slow)
    await Effect.runPromise(Effect.gen(function*() {
      yield* held.sink(event("BudgetExceeded"))
      yield* held.sink(event("RunEnd"))
      expect(held.held()).toBe(true)
      expect(sent).toEqual([])
      const releasing = yield* Effect.forkChild(held.release)
      yield* Effect.sleep("2 millis")
      // A hook's late report, while the first held event is being sent.
      yield* held.sink(event("HookFailed"))
      yield* Fiber.join(releasing)
      yield* held.sink(event("Late"))
    }))
    expect(sent).toEqual(["BudgetExceeded", "RunEnd", "HookFailed", "Late"])
  })
})
