/**
 * What untyped callers (plain JavaScript, `as any`) hand the composition operators is checked when the
 * composite is built, as the agent builder checks its own: an `AgentConfigError` naming the option,
 * with a near miss or the right place suggested, never a silent no-op or a raw `TypeError`.
 */
import { describe, expect, it } from "vitest"
import { AgentConfigError, agent, text } from "../../src/index.ts"
import { forum, parallel, pipeline } from "../../src/compose/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const member = (name: string) => agent(name).model(scriptedModel(() => text("fine")))

/** The AgentConfigError `build` throws (a test failure for anything else). */
const refusal = (build: () => unknown): AgentConfigError => {
  try {
    build()
  } catch (error) {
    expect(error).toBeInstanceOf(AgentConfigError)
    return error as AgentConfigError
  }
  throw new Error("expected an AgentConfigError, but it was built")
}

describe("composite.budget(...)", () => {
  const composite = () => parallel("p", [member("a")])

  it("refuses a misspelt limit, naming the near miss", () => {
    expect(refusal(() => composite().budget({ maxToolCall: 3 } as any)).message).toMatch(
      /unknown option `maxToolCall` of \.budget\(\.\.\.\) \(did you mean `maxToolCalls`\?\); known: maxDuration, maxTokens, maxToolCalls, hookTimeout/
    )
  })

  it("refuses an agent's own limit (maxTurns), pointing at the agents' budgets", () => {
    expect(refusal(() => composite().budget({ maxTurns: 2 } as any)).message).toMatch(/`maxTurns` of \.budget\(\.\.\.\) \(maxTurns is an agent's own limit: set it on each agent's \.budget/)
    expect(refusal(() => composite().budget({ perToolTimeout: 10 } as any)).message).toMatch(/perToolTimeout is an agent's own limit/)
  })

  it("takes hookTimeout as an agent's budget does, and refuses one that is not a positive duration", () => {
    expect(composite().budget({ hookTimeout: "2 seconds", maxDuration: 1_000 }).name).toBe("p")
    expect(refusal(() => composite().budget({ hookTimeout: 0 })).message).toMatch(/hookTimeout must be a positive duration, got 0/)
  })
})

describe("operators' arguments", () => {
  it("parallel refuses an onFailure it does not know, listing the ones it does", () => {
    expect(refusal(() => parallel("p", [member("a")], { onFailure: "ignore" } as any)).message).toMatch(/`onFailure` takes "failFast" or "collect", got "ignore"/)
  })

  it("parallel refuses an option it does not know", () => {
    expect(refusal(() => parallel("p", [member("a")], { concurency: 2 } as any)).message).toMatch(/unknown option `concurency`.*did you mean `concurrency`/)
  })

  it("parallel and forum refuse members that are not an array (not a TypeError)", () => {
    expect(refusal(() => parallel("p", member("a") as any)).message).toMatch(/Invalid parallel "p": its members must be an array of agents or composites/)
    expect(refusal(() => forum("f", member("a") as any, () => "x")).message).toMatch(/Invalid forum "f": its members must be an array/)
  })

  it("hooks must be functions", () => {
    const composite = pipeline("flow", member("a"), member("b"))
    expect(refusal(() => composite.onRunEnd("log" as any)).message).toMatch(/\.onRunEnd\(\.\.\.\) takes a function, got a string/)
    expect(refusal(() => composite.onHookFailed(undefined as any)).message).toMatch(/\.onHookFailed\(\.\.\.\) takes a function/)
  })
})
