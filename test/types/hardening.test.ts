/**
 * Compile-time checks of the hardening API (#19). `tsc --noEmit` fails if an `@ts-expect-error` line
 * stops being an error.
 */
import { Schedule } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { agent, type BudgetExceeded, type ModelClient, ModelErrorPolicy, Recovery, skill, withModelErrorPolicy } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

describe("hardening API types", () => {
  it("budget options take durations and counts", () => {
    agent("a").budget({ hookTimeout: "2 seconds", maxToolArgsBytes: 64_000, toolConcurrency: 4 })
    // Never called: the construction-time check would throw; only the type error matters here.
    void (() =>
      // @ts-expect-error toolConcurrency is a number of calls, not a duration
      agent("a").budget({ toolConcurrency: "4 calls" }))
  })

  it("a policy-wrapped client is a ModelClient", () => {
    const wrapped = withModelErrorPolicy(scriptedModel([]), ModelErrorPolicy.retry(Schedule.recurs(2)))
    expectTypeOf(wrapped).toEqualTypeOf<ModelClient>()
    // @ts-expect-error fallback takes a list of clients, not one
    ModelErrorPolicy.fallback(scriptedModel([]))
    // @ts-expect-error a fixed answer is an LlmResponse, not a string
    ModelErrorPolicy.respond("busy")
  })

  it("recovery with a reason, chat skills, per-skill memory, preloaded knowledge", () => {
    expectTypeOf(Recovery.throwException("x")).toEqualTypeOf<Recovery>()
    // @ts-expect-error throwException needs the reason
    Recovery.throwException()
    agent("a").skills(() => [skill("talk", "chat").chat(), skill("notes", "n").memory(), skill("faq", "f").knowledge("k", "d", () => "t", { preload: true })])
    expectTypeOf<BudgetExceeded["tool"]>().toEqualTypeOf<string | undefined>()
  })
})
