/**
 * Properties of fan-out: for any members (each succeeding or failing after an arbitrary number of
 * scheduler yields, or hanging) and any concurrency cap, `failFast` ends with a failure exactly when a
 * member fails, with one of the failing members' errors, and leaves no member running; `collect` gives
 * each member's own result, in order.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Exit, Result } from "effect"
import { describe, expect } from "vitest"
import { parallel, type Runnable } from "../../src/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

type Plan = { readonly kind: "ok" | "fail"; readonly yields: number } | { readonly kind: "hang" }

const arbPlan = (hang: boolean): fc.Arbitrary<Plan> =>
  fc.oneof(
    fc.record({ kind: fc.constantFrom("ok" as const, "fail" as const), yields: fc.nat({ max: 20 }) }),
    ...(hang ? [fc.constant({ kind: "hang" as const })] : [])
  )

/** Members that follow their plans and report how many are running. */
const members = (plans: ReadonlyArray<Plan>) => {
  const running = new Set<number>()
  const interrupted = new Set<number>()
  const list = plans.map((plan, i): Runnable<string, string, string> => ({
    name: `m${i}`,
    runEffect: () =>
      Effect.gen(function*() {
        running.add(i)
        if (plan.kind === "hang") return yield* Effect.never
        for (let n = 0; n < plan.yields; n++) yield* Effect.yieldNow
        running.delete(i)
        if (plan.kind === "fail") return yield* Effect.fail(`e${i}`)
        return `v${i}`
      }).pipe(Effect.onInterrupt(() => Effect.sync(() => {
        running.delete(i)
        interrupted.add(i)
      })))
  }))
  return { list, running, interrupted }
}

describe("parallel failure policies", () => {
  test.prop([fc.array(arbPlan(true), { minLength: 1, maxLength: 6 }), fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined })], { numRuns })(
    "failFast fails exactly when a member fails, with a member's error, and leaves nothing running",
    async (plans, cap) => {
      const fails = plans.some((p) => p.kind === "fail")
      const hangs = plans.some((p) => p.kind === "hang")
      // A capped fan-out may wait on a hanging member forever before a failing one starts: leave those out.
      fc.pre(fails ? cap === undefined || !hangs : !hangs)
      const { list, running, interrupted } = members(plans)
      const fan = parallel("fan", list as unknown as readonly [Runnable<string, string, string>], cap === undefined ? {} : { concurrency: cap })
      const exit = await Effect.runPromise(Effect.exit(fan.runEffect("go")))
      expect(running.size).toBe(0)
      if (fails) {
        expect(Exit.isFailure(exit)).toBe(true)
        const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail") : undefined
        const index = Number(String(error?._tag === "Fail" ? error.error : "").slice(1))
        expect(plans[index]?.kind).toBe("fail")
        // Members that started and had not finished were interrupted: none is left running (checked above).
      } else {
        expect(exit).toEqual(Exit.succeed(plans.map((_, i) => `v${i}`)))
        expect(interrupted.size).toBe(0)
      }
    }
  )

  test.prop([fc.array(arbPlan(false), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 6 })], { numRuns })(
    "collect gives each member's own result, in order, and interrupts nothing",
    async (plans, cap) => {
      const { list, interrupted } = members(plans)
      const fan = parallel("fan", list as unknown as readonly [Runnable<string, string, string>], { onFailure: "collect", concurrency: cap })
      const settled = await Effect.runPromise(fan.runEffect("go"))
      expect(settled).toEqual(plans.map((p, i) => (p.kind === "ok" ? Result.succeed(`v${i}`) : Result.fail(`e${i}`))))
      expect(interrupted.size).toBe(0)
    }
  )
})
