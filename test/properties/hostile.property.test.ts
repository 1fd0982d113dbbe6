/**
 * Issue #19: the loop under hostile input and misbehaving user code, with Effect's TestClock for time.
 * Raw model clients that throw, die, interrupt themselves, break the protocol (negative usage, missing
 * ids, throwing getters, BigInt/cyclic/deep arguments); hooks that throw hostile values, reject, never
 * settle or interrupt; tools that return or throw hostile values, never settle, ignore their signal or
 * interrupt themselves, or hang their thread for a moment. Every run must end within its budget
 * (maxDuration plus one hookTimeout, however many listeners hang; issue 28 item 8), in success or a
 * documented tagged error, and agree with `RunEnd`.
 */
import { fc, test } from "@fast-check/vitest"
import { Cause, Effect, Exit, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { agent, type AgentEvent, isAgentError, type LlmResponse, type RunEndEvent, tool } from "../../src/index.ts"
import {
  arbClientBehaviour,
  arbHookBehaviour,
  arbToolBehaviour,
  type ClientBehaviour,
  hostileClient,
  hostileHook,
  hostileToolRun,
  type ToolObservations
} from "../../src/testing/arbitraries.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const numRuns = Number(process.env.PROPERTY_RUNS ?? 50)

const maxDuration = 60_000
const hookTimeout = 1_000

const arbAnswer: fc.Arbitrary<{ readonly kind: "t" | "add" | "unknown" | "text" | "submit"; readonly tokens: number }> = fc.record({
  kind: fc.constantFrom("t", "add", "unknown", "text", "submit"),
  tokens: fc.integer({ min: 0, max: 40 })
})

const arbScenario = fc.record({
  client: fc.array(arbClientBehaviour(), { minLength: 1, maxLength: 6 }),
  answers: fc.array(arbAnswer, { minLength: 1, maxLength: 6 }),
  tool: arbToolBehaviour(2),
  hooks: fc.record({
    runStart: arbHookBehaviour(),
    event: arbHookBehaviour(),
    runEnd: arbHookBehaviour(),
    budgetExceeded: arbHookBehaviour(),
    error: arbHookBehaviour(),
    hookFailed: arbHookBehaviour()
  }),
  maxTurns: fc.integer({ min: 1, max: 5 }),
  perToolTimeout: fc.option(fc.constant(10_000), { nil: undefined }),
  maxTokens: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
  typed: fc.boolean()
})
type Scenario = typeof arbScenario extends fc.Arbitrary<infer S> ? S : never

const misbehaviours = new Set<ClientBehaviour["_tag"]>(["ThrowsSync", "NotAnEffect", "Dies", "FailsWithNonModelError", "Interrupts", "NegativeUsage", "ThrowingGetter"])

const answerOf = (scenario: Scenario, typed: boolean) => (_: unknown, n: number): LlmResponse => {
  const a = scenario.answers[Math.min(n, scenario.answers.length - 1)]!
  const usage = { inputTokens: a.tokens, outputTokens: 0 }
  const calls = (name: string, args: string) => ({ _tag: "ToolCalls" as const, calls: [{ id: `c${n}`, name, arguments: args }], usage })
  switch (a.kind) {
    case "t":
      return calls("t", "{}")
    case "add":
      return calls("add", '{"a":1,"b":2}')
    case "unknown":
      return calls("rm_rf", '{"path":"/"}')
    case "submit":
      return typed ? calls("submit", '{"value":4}') : { _tag: "Text", content: "4", usage }
    case "text":
      return { _tag: "Text", content: typed ? '{"value":4}' : "4", usage }
  }
}

const wedged = Symbol("wedged")
const overBudget = wedged

const runScenario = async (scenario: Scenario) => {
  const observed: ToolObservations = { lateSignals: [] }
  const served: Array<ClientBehaviour["_tag"]> = []
  const behaviours = scenario.client
  const client = hostileClient(behaviours, answerOf(scenario, scenario.typed))
  const counting = { chat: (request: Parameters<typeof client.chat>[0]) => {
    served.push((behaviours[Math.min(served.length, behaviours.length - 1)] ?? { _tag: "Script" })._tag)
    return client.chat(request)
  } }
  const t = tool("t", { args: Schema.Struct({}), run: hostileToolRun(scenario.tool, observed) })
  const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
  let runEnd: RunEndEvent | undefined
  const base = scenario.typed ? agent("hostile", { output: Schema.Struct({ value: Schema.Number }) }) : agent("hostile")
  const subject = (base as typeof base & ReturnType<typeof agent>)
    .model(counting)
    .tools({ t, add })
    .budget({
      maxTurns: scenario.maxTurns,
      maxDuration,
      hookTimeout,
      ...(scenario.perToolTimeout === undefined ? {} : { perToolTimeout: scenario.perToolTimeout }),
      ...(scenario.maxTokens === undefined ? {} : { maxTokens: scenario.maxTokens })
    })
    .onRunEnd((e) => void (runEnd = e))
    .onRunStart(hostileHook(scenario.hooks.runStart))
    .onEvent(hostileHook<AgentEvent>(scenario.hooks.event))
    .onRunEnd(hostileHook(scenario.hooks.runEnd))
    .onBudgetExceeded(hostileHook(scenario.hooks.budgetExceeded))
    .onError(hostileHook(scenario.hooks.error))
    .onHookFailed(hostileHook(scenario.hooks.hookFailed))
  // The bound: the run's maxDuration, then one hookTimeout for all the listeners of the events after it.
  const bound = maxDuration + hookTimeout
  const program = Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(subject.runEffect("compute"))
    // Virtual time in small steps, with a real macrotask between them: hooks and tools answering real
    // Promises continue the run on the event loop, and the sleeps they start must still be reached.
    for (let elapsed = 0; elapsed < bound; elapsed += hookTimeout) {
      yield* TestClock.adjust(hookTimeout)
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
    }
    // Still running at the bound: over budget (reported as wedged).
    if (fiber.pollUnsafe() === undefined) return yield* Effect.as(Fiber.interrupt(fiber), overBudget)
    return yield* Effect.exit(Fiber.join(fiber))
  }).pipe(Effect.provide(TestClock.layer()))
  let timer: ReturnType<typeof setTimeout> | undefined
  const exit: unknown = await Promise.race([
    Effect.runPromise(program).catch((defect) => Exit.die(defect)),
    new Promise<typeof wedged>((resolve) => (timer = setTimeout(() => resolve(wedged), 10_000)))
  ])
  clearTimeout(timer)
  // Let tools that read their signal late (a few real milliseconds after their start) do so.
  await new Promise((resolve) => setTimeout(resolve, 10))
  return { exit, wedged, observed, served, runEnd }
}

const settledExit = (result: Awaited<ReturnType<typeof runScenario>>) => {
  expect(result.exit, "the run did not end within its budget (it is wedged)").not.toBe(result.wedged)
  return result.exit as Exit.Exit<unknown, unknown>
}

/** What found issue 28 item 8: a tool that never settles runs into maxDuration while an onEvent listener hangs. */
const hungOnEvent: Scenario = {
  client: [{ _tag: "Script" }],
  answers: [{ kind: "t", tokens: 0 }],
  tool: { _tag: "NeverSettles" },
  hooks: { runStart: { _tag: "Ok" }, event: { _tag: "NeverSettles" }, runEnd: { _tag: "Ok" }, budgetExceeded: { _tag: "EffectNever" }, error: { _tag: "Ok" }, hookFailed: { _tag: "Ok" } },
  maxTurns: 5,
  perToolTimeout: undefined,
  maxTokens: undefined,
  typed: false
}

describe("hostile input and misbehaving user code", () => {
  test.prop([arbScenario], { numRuns, examples: [[hungOnEvent]] })("every run ends within its budget in success or a documented tagged error", async (scenario) => {
    const exit = settledExit(await runScenario(scenario))
    if (Exit.isSuccess(exit)) return
    expect(Cause.hasDies(exit.cause), `a defect: ${String(Cause.squash(exit.cause))}`).toBe(false)
    expect(Cause.hasInterrupts(exit.cause), "the run was interrupted by user code").toBe(false)
    expect(isAgentError(Cause.squash(exit.cause))).toBe(true)
  }, 600_000)

  test.prop([arbScenario], { numRuns })("RunEnd tells the outcome the caller gets", async (scenario) => {
    const result = await runScenario(scenario)
    const exit = settledExit(result)
    expect(result.runEnd).toBeDefined()
    if (Exit.isSuccess(exit)) expect(result.runEnd?.outcome).toEqual({ _tag: "Success", output: exit.value })
    else expect(result.runEnd?.outcome).toMatchObject({ _tag: "Failure", error: Cause.squash(exit.cause) })
  }, 600_000)

  test.prop([arbScenario], { numRuns })("a client's misbehaviour (negative usage included) ends the run with ModelError", async (scenario) => {
    const result = await runScenario(scenario)
    const exit = settledExit(result)
    const last = result.served.at(-1)
    if (last !== undefined && misbehaviours.has(last)) {
      expect(Exit.isFailure(exit) && (Cause.squash(exit.cause) as { _tag?: string })._tag).toBe("ModelError")
    }
  }, 600_000)

  test.prop([arbScenario], { numRuns })("a tool that reads its signal after an await and keeps running sees it aborted", async (scenario) => {
    const result = await runScenario(scenario)
    settledExit(result)
    for (const signal of result.observed.lateSignals) expect(signal.aborted).toBe(true)
  }, 600_000)
})
