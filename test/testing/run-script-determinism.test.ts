/**
 * runScript is deterministic: a seeded Random and a virtual clock, so the same agent, script and input
 * give the same record (run ids, durations, retry waits, timeouts) on any machine, and a run that
 * waits (a sleeping tool, a retry backoff, a `maxDuration`) waits in virtual time, not wall time.
 */
import { test } from "@fast-check/vitest"
import { Effect, Schedule, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type AgentEvent, ModelError, ModelErrorPolicy, text, tool, toolCalls, withModelErrorPolicy } from "../../src/index.ts"
import { resilientCall } from "../../src/providers/resilience.ts"
import { type ModelScript, runScript, scriptedModel } from "../../src/testing/index.ts"
import { arbModelScript } from "../../src/testing/arbitraries.ts"
import { arbHookBehaviour, arbToolBehaviour, type HookBehaviour, hostileHook, hostileToolRun, type ToolBehaviour } from "../../src/testing/hostile.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const add = tool("add", { args: Operands, run: ({ a, b }) => a + b })
/** Sleeps on the run's Clock: virtual time under runScript. */
const nap = tool("nap", { args: Schema.Struct({ ms: Schema.Finite }), run: ({ ms }) => Effect.as(Effect.sleep(ms), "rested") })

const calculator = agent("calculator").tools({ add, nap })
const script: ModelScript = [
  toolCalls([{ id: "1", name: "add", arguments: { a: 3, b: 5 } }, { id: "2", name: "nap", arguments: { ms: 1500 } }]),
  text("8")
]

const wallTime = async <A>(f: () => Promise<A>): Promise<{ readonly value: A; readonly ms: number }> => {
  const started = performance.now()
  const value = await f()
  return { value, ms: performance.now() - started }
}

const durationOf = (events: ReadonlyArray<AgentEvent>, tag: "RunEnd" | "ModelResponse") =>
  events.flatMap((e) => (e._tag === tag ? [e.durationMs] : []))

describe("runScript is deterministic", () => {
  it("gives the same record twice, run ids and event times included", async () => {
    const first = await runScript(calculator, script, "3 + 5?")
    const second = await runScript(calculator, script, "3 + 5?")
    expect(second).toEqual(first)
    expect(first.outcome).toEqual({ _tag: "Success", output: "8" })
    // The nap took 1.5 s of virtual time, exactly; nothing else took any.
    expect(durationOf(first.events, "RunEnd")).toEqual([1500])
  })

  it("draws from `seed` and starts the clock at `startAt`", async () => {
    const runIdOf = (run: { readonly events: ReadonlyArray<AgentEvent> }) => run.events[0]?.runId
    const [one, again, two] = await Promise.all([
      runScript(calculator, script, "3 + 5?", { seed: 1 }),
      runScript(calculator, script, "3 + 5?", { seed: 1 }),
      runScript(calculator, script, "3 + 5?", { seed: 2 })
    ])
    expect(runIdOf(again)).toBe(runIdOf(one))
    expect(runIdOf(two)).not.toBe(runIdOf(one))
    const startAt = Date.UTC(2030, 0, 1)
    const later = await runScript(calculator, script, "3 + 5?", { startAt: new Date(startAt) })
    expect(runIdOf(later)).toMatch(new RegExp(`^run_${startAt.toString(36)}_`))
    await expect(runScript(calculator, script, "3 + 5?", { startAt: new Date("never") })).rejects.toThrow("startAt must be a finite time, got Invalid Date")
  })

  it("ends a tool sleeping past maxDuration with BudgetExceeded(duration), at once", async () => {
    const slow = agent("slow").budget({ maxDuration: "1 second" }).tools({ nap })
    const { value: run, ms } = await wallTime(() =>
      runScript(slow, [toolCalls([{ id: "1", name: "nap", arguments: { ms: 10_000 } }]), text("done")], "wait")
    )
    expect(run.outcome).toMatchObject({ _tag: "Failure", error: { _tag: "BudgetExceeded", reason: "duration", limit: 1000, used: 1000 } })
    expect(durationOf(run.events, "RunEnd")).toEqual([1000])
    expect(ms).toBeLessThan(500)
  })

  it("retries with backoff without waiting it out, and gives the same retries twice", async () => {
    // A model behind a provider's retry policy (2 s, then 4 s, jittered from Random): two failed attempts, then an answer.
    const flaky = (): ModelScript => {
      let attempts = 0
      return () =>
        resilientCall(
          { provider: "flaky", model: "m" },
          { retry: { times: 3, base: "2 seconds" } },
          async () => {
            attempts += 1
            if (attempts < 3) throw new Error("HTTP 503")
            return text("recovered")
          },
          (cause) => new ModelError({ provider: "flaky", reason: String(cause), retryable: true })
        )
    }
    const subject = agent("patient")
    const { value: first, ms } = await wallTime(() => runScript(subject, flaky(), "hello"))
    const second = await runScript(subject, flaky(), "hello")
    expect(ms).toBeLessThan(1000)
    expect(first.outcome).toEqual({ _tag: "Success", output: "recovered" })
    const waits = first.events.flatMap((e) => (e._tag === "Retrying" ? [e.waitMs] : []))
    expect(waits).toHaveLength(2)
    // The model call lasted exactly its two waits, on the virtual clock.
    expect(durationOf(first.events, "ModelResponse")).toEqual([Math.floor(waits[0]! + waits[1]!)])
    expect(second).toEqual(first)
  })

  it("retries on a model-error policy's jittered Schedule without waiting it out, the same way twice", async () => {
    const busy = new ModelError({ provider: "busy", reason: "HTTP 429", retryable: true })
    // 1 s then 2 s, each jittered by ±20 % from Random; the third attempt answers.
    const policy = ModelErrorPolicy.retry(Schedule.exponential("1 second").pipe(Schedule.jittered, Schedule.upTo({ times: 3 })))
    const patient = (): ModelScript => {
      const model = withModelErrorPolicy(scriptedModel([busy, busy, text("recovered")]), policy)
      return (request) => model.chat(request)
    }
    const subject = agent("patient")
    const { value: first, ms } = await wallTime(() => runScript(subject, patient(), "hello"))
    expect(ms).toBeLessThan(1000)
    expect(first.outcome).toEqual({ _tag: "Success", output: "recovered" })
    const [waited] = durationOf(first.events, "ModelResponse")
    expect(waited).toBeGreaterThanOrEqual(2400)
    expect(waited).toBeLessThanOrEqual(3600)
    expect(await runScript(subject, patient(), "hello")).toEqual(first)
  })

  it("never lets time pass while a tool awaits real async work: a 30 ms timer under a 10 ms maxDuration", async () => {
    const fetching = tool("fetching", { args: Schema.Struct({}), run: () => new Promise<string>((resolve) => setTimeout(() => resolve("fetched"), 30)) })
    const eager = agent("eager").budget({ maxDuration: "10 millis" }).tools({ fetching })
    const steps = [toolCalls([{ id: "1", name: "fetching", arguments: {} }]), text("done")]
    const first = await runScript(eager, steps, "go")
    expect(first.outcome).toEqual({ _tag: "Success", output: "done" })
    expect(await runScript(eager, steps, "go")).toEqual(first)
  })

  it("runs on the real clock with { clock: \"live\" }", async () => {
    const { value: run, ms } = await wallTime(() =>
      runScript(calculator, [toolCalls([{ id: "1", name: "nap", arguments: { ms: 30 } }]), text("done")], "go", { clock: "live" })
    )
    expect(run.outcome).toEqual({ _tag: "Success", output: "done" })
    expect(ms).toBeGreaterThanOrEqual(25)
    expect(durationOf(run.events, "RunEnd")[0]).toBeGreaterThanOrEqual(25)
  })

  // Hostile values that deep equality cannot compare are left out (a getter that throws when read,
  // 20,000 levels of nesting, a `toJSON` function: a new one each run); every hostile behaviour stays in.
  const incomparable: ReadonlyArray<string> = ["throwing-getter", "deep", "throwing-toJSON"]
  const comparable = (b: ToolBehaviour | HookBehaviour) => !("value" in b) || !incomparable.includes(b.value)
  const risky = (behaviour: ToolBehaviour) =>
    tool("risky", { args: Schema.Struct({ n: Schema.Finite }), run: hostileToolRun(behaviour, { lateSignals: [] }) })
  const scripts = arbModelScript([add, risky({ _tag: "Returns" })], { invalidRate: 0.3, foreignNames: ["wipe"], maxLength: 6 })

  test.prop([scripts, arbToolBehaviour().filter(comparable), arbHookBehaviour().filter(comparable)], { numRuns })(
    "for any script, hostile tool and hostile hook, two runs give deep-equal records",
    async (steps, toolBehaviour, hookBehaviour) => {
      const subject = () =>
        agent("subject")
          .budget({ maxTurns: 4, maxDuration: "2 seconds", hookTimeout: "1 second" })
          .tools({ add, risky: risky(toolBehaviour) })
          .onToolUse(hostileHook(hookBehaviour))
          .onModelResponse(hostileHook(hookBehaviour))
      const first = await runScript(subject(), steps, "What is 3 + 5?")
      const second = await runScript(subject(), steps, "What is 3 + 5?")
      expect(second).toEqual(first)
      expect(first.outcome._tag === "Success" || first.outcome._tag === "Failure").toBe(true)
    }
  )
})
