import { Data, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import {
  agent,
  BudgetExceeded,
  isAgentError,
  isRetryable,
  ModelError,
  Recovery,
  RuntimeDefect,
  skill,
  SkillFailed,
  text,
  ToolFailed
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { runOutcome } from "../../src/runtime/run-agent.ts"
import { failureOf, runExit } from "../fixtures.ts"

describe("errors are identified by a marker", () => {
  it("recognises every error class, and not look-alikes", () => {
    expect(isAgentError(new ModelError({ provider: "p", reason: "r" }))).toBe(true)
    expect(isAgentError(new RuntimeDefect({ agent: "a", cause: "boom" }))).toBe(true)
    expect(isAgentError(new BudgetExceeded({ agent: "a", reason: "turns", limit: 1, used: 1, transcript: [] }))).toBe(true)
    expect(isAgentError({ _tag: "ToolFailed", message: "forged" })).toBe(false)
    class Other extends Data.TaggedError("ToolFailed")<{}> {}
    expect(isAgentError(new Other())).toBe(false)
    expect(new ToolFailed({ agent: "a", skill: "s", tool: "t", args: {}, cause: "x" })[Symbol.for("effect-agent-dsl/AgentError") as never]).toBe(true)
  })

  it("says which errors are worth another attempt", () => {
    expect(isRetryable(new ModelError({ provider: "p", reason: "429", status: 429, retryable: true }))).toBe(true)
    expect(new ModelError({ provider: "p", reason: "429", retryable: true }).isRetryable).toBe(true)
    expect(isRetryable(new ModelError({ provider: "p", reason: "401", status: 401, retryable: false }))).toBe(false)
    expect(isRetryable(new RuntimeDefect({ agent: "a", cause: "x" }))).toBe(false)
    expect(isRetryable("nope")).toBe(false)
  })
})

describe("a failing deterministic skill is SkillFailed, not ToolFailed", () => {
  it("carries the skill, the input and the cause", async () => {
    const a = agent("a")
      .model(scriptedModel([]))
      .skills(() => [skill("broken").implementedBy((_: string): string => {
        throw new Error("no way")
      })])
    const error = failureOf(await runExit(a.runEffect("hello")))
    expect(error).toBeInstanceOf(SkillFailed)
    expect(error).toMatchObject({ _tag: "SkillFailed", skill: "broken", input: "hello" })
    expect(error.message).toContain("no way")
  })
})

describe("a defect is RuntimeDefect in RunEnd, not ModelError", () => {
  it("maps a die to RuntimeDefect and a documented failure to itself", () => {
    const defect = runOutcome("a", Exit.die(new Error("kaboom")))
    expect(defect).toMatchObject({ _tag: "Failure", error: { _tag: "RuntimeDefect", agent: "a" } })
    expect(defect._tag === "Failure" && defect.error.message).toContain("kaboom")
    const failure = new ModelError({ provider: "p", reason: "r" })
    expect(runOutcome("a", Exit.fail(failure))).toEqual({ _tag: "Failure", error: failure })
  })

  it("an Effect.die inside a deterministic skill is the skill's failure (user code never crashes the run)", async () => {
    const a = agent("a").model(scriptedModel([])).skills(() => [skill("dies").implementedBy(() => Effect.die("kaboom"))])
    expect(failureOf(await runExit(a.runEffect("x")))).toMatchObject({ _tag: "SkillFailed" })
  })
})

describe("Recovery is a Data.taggedEnum", () => {
  it("has $is and $match", () => {
    const decision = Recovery.retry(2)
    expect(Recovery.$is("Retry")(decision)).toBe(true)
    expect(Recovery.$is("Fail")(decision)).toBe(false)
    const described = Recovery.$match(decision, {
      Feedback: () => "feedback",
      Fail: () => "fail",
      ThrowException: () => "throwException",
      Substitute: () => "substitute",
      Fixed: () => "fixed",
      Retry: ({ times }) => `retry ${times}`,
      Escalate: () => "escalate"
    })
    expect(described).toBe("retry 2")
  })
})
