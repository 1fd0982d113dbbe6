/**
 * Compile-time side of composite budgets and hooks: `tsc --noEmit` fails if an `@ts-expect-error` line
 * below stops being an error. A composite's budget holds the tree's limits and its hooks' `hookTimeout`,
 * never an agent's own limits; `onHookFailed` hears `CompositeHookFailed`.
 */
import { describe, expectTypeOf, it } from "vitest"
import { agent } from "../../src/index.ts"
import { type CompositeHookFailed, parallel, pipeline } from "../../src/compose/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const a = agent("a").model(scriptedModel([]))
const b = agent("b").model(scriptedModel([]))

describe("composite budgets and hooks", () => {
  it("takes hookTimeout as an agent's budget does, and none of an agent's own limits", () => {
    pipeline("p", a, b).budget({ maxDuration: 1_000, maxTokens: 10, maxToolCalls: 3, hookTimeout: "2 seconds" })
    pipeline("p", a, b).budget({ hookTimeout: 100 })
    // Never called: they throw AgentConfigError at run time (test/compose/builder-checks.test.ts).
    void (() => {
      // @ts-expect-error maxTurns is an agent's own limit, not a composite's
      pipeline("p", a, b).budget({ maxTurns: 2 })
      // @ts-expect-error a misspelt limit
      pipeline("p", a, b).budget({ maxToolCall: 3 })
    })
  })

  it("parallel's onFailure is one of its two modes", () => {
    parallel("p", [a, b], { onFailure: "collect" })
    void (() => {
      // @ts-expect-error "ignore" is not a mode
      parallel("p", [a, b], { onFailure: "ignore" })
      // @ts-expect-error the members are an array
      parallel("p", a)
    })
  })

  it("onHookFailed hears CompositeHookFailed, naming the hook that failed", () => {
    pipeline("p", a, b).onHookFailed((event) => {
      expectTypeOf(event).toEqualTypeOf<CompositeHookFailed>()
      expectTypeOf(event.hook).toEqualTypeOf<"CompositeStart" | "CompositeEnd">()
    })
  })
})
