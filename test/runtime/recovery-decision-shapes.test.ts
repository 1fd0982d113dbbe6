/**
 * What a recovery handler answers is read once and checked: `Recovery.retry(NaN)` is no retry (never
 * "no bound"), and a hand-made decision that is not one (a missing or NaN count, a getter that throws)
 * is reported as a hook failure and the next level decides, instead of crashing the run or re-running
 * a tool until the budget stops it.
 */
import { fc, test } from "@fast-check/vitest"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type HookFailedEvent, isAgentError, Recovery, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"

quietLogs()

const failingTool = (decide: () => unknown) => {
  let runs = 0
  const flaky = tool("flaky", {
    args: Schema.Struct({}),
    run: () => {
      runs++
      throw new Error("boom")
    },
    recover: { executionError: decide as never }
  })
  return { flaky, runs: () => runs }
}

const runOnce = (flaky: ReturnType<typeof failingTool>["flaky"]) => {
  const failures: Array<HookFailedEvent> = []
  const model = scriptedModel([toolCalls([{ id: "c1", name: "flaky", arguments: {} }]), text("done")])
  const run = agent("a").model(model).tools({ flaky }).onHookFailed((e) => void failures.push(e)).runEffect("x")
  return { run, failures, model }
}

describe("Recovery.retry", () => {
  it("retry(NaN) re-runs the tool no time at all", async () => {
    expect(Recovery.retry(Number.NaN)).toMatchObject({ _tag: "Retry", times: 0 })
    const { flaky, runs } = failingTool(() => Recovery.retry(Number.NaN))
    const { run } = runOnce(flaky)
    const exit = await runExit(run)
    expect(exit._tag).toBe("Success")
    expect(runs()).toBe(1)
  })
})

describe("a hand-made decision that is not one", () => {
  it.each([
    ["a Retry without a count", { _tag: "Retry" }],
    ["a Retry with a NaN count", { _tag: "Retry", times: Number.NaN }],
    ["a Retry whose count is a string", { _tag: "Retry", times: "3" }],
    ["an Escalate with an unknown severity", { _tag: "Escalate", reason: "r", severity: "URGENT" }],
    ["a ThrowException without a reason", { _tag: "ThrowException" }]
  ])("%s is reported, and the default decides", async (_, decision) => {
    const { flaky, runs } = failingTool(() => decision)
    const { run, failures, model } = runOnce(flaky)
    const exit = await runExit(run)
    expect(exit._tag).toBe("Success")
    expect(runs()).toBe(1)
    expect(failures.map((f) => f.hook)).toEqual(["ToolError"])
    // The default, feedback: the model got the error.
    expect(model.requests[1]!.messages.at(-1)!.content).toContain("boom")
  })

  it("a decision whose field throws when read is reported, never a crash", async () => {
    const { flaky, runs } = failingTool(() => ({
      _tag: "Retry",
      get times(): number {
        throw new Error("getter")
      }
    }))
    const { run, failures } = runOnce(flaky)
    const exit = await runExit(run)
    expect(exit._tag).toBe("Success")
    expect(runs()).toBe(1)
    expect(failures).toHaveLength(1)
  })

  it("a decision read once: a getter answering differently later changes nothing", async () => {
    // Each decision answers 0 on its first read, then Infinity: read once, it is "no re-run".
    const { flaky, runs } = failingTool(() => {
      let reads = 0
      return {
        _tag: "Retry",
        get times(): number {
          return reads++ === 0 ? 0 : Number.POSITIVE_INFINITY
        }
      }
    })
    const exit = await runExit(runOnce(flaky).run)
    expect(exit._tag).toBe("Success")
    expect(runs()).toBe(1)
  })
})

const arbDecision: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything(),
  fc.record({ _tag: fc.constantFrom("Retry", "Fixed", "Escalate", "Fail", "ThrowException", "Substitute", "Feedback", "Nope"), times: fc.oneof(fc.double(), fc.anything()), reason: fc.anything(), severity: fc.anything(), args: fc.anything() }, { requiredKeys: ["_tag"] })
)

describe("whatever a handler answers", () => {
  test.prop([arbDecision], { numRuns: 150 })("the run ends in success or a tagged error, and the tool runs within the tool-call budget", async (decision) => {
    const { flaky, runs } = failingTool(() => decision)
    const model = scriptedModel([toolCalls([{ id: "c1", name: "flaky", arguments: {} }]), text("done"), text("done")])
    const exit = await runExit(agent("a").model(model).tools({ flaky }).budget({ maxToolCalls: 4, maxTurns: 3 }).runEffect("x"))
    // A typed, documented error (failureOf throws on a defect or an interruption).
    if (exit._tag === "Failure") expect(isAgentError(failureOf(exit))).toBe(true)
    expect(runs()).toBeLessThanOrEqual(4)
  })
})
