/**
 * Issue #28 item 10: every error class of the library carries the `isAgentError` marker, the
 * composition errors included (the README says so).
 */
import { describe, expect, it } from "vitest"
import { BranchNotRouted, isAgentError, LoopLimitExceeded, StepFailed } from "../../src/index.ts"

describe("isAgentError and the composition errors (item 10)", () => {
  const errors = [
    new LoopLimitExceeded({ loop: "l", maxIterations: 2, iterations: [1, 2] }),
    new BranchNotRouted({ branch: "b", tag: "X", cases: ["A"] }),
    new StepFailed({ composite: "c", step: "until", cause: new Error("boom") })
  ]
  for (const error of errors) {
    it(`recognises ${error._tag}`, () => {
      expect(isAgentError(error)).toBe(true)
    })
  }

  it("still refuses look-alikes", () => {
    expect(isAgentError({ _tag: "LoopLimitExceeded", loop: "l" })).toBe(false)
  })
})
