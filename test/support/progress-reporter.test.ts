/**
 * scripts/progress-reporter.ts (what `npm run test:props` reports with): a line per file start and
 * end, slow tests, failures with their message, a summary; fed the objects vitest hands a reporter.
 */
import { afterEach, describe, expect, it, vi } from "vitest"
import type { TestCase, TestModule, TestSpecification } from "vitest/node"
import ProgressReporter from "../../scripts/progress-reporter.ts"

interface FakeTest {
  readonly name: string
  readonly state: "passed" | "failed" | "skipped"
  readonly ms?: number
  readonly error?: string
}

const testCase = (t: FakeTest): TestCase =>
  ({
    fullName: t.name,
    result: () => ({ state: t.state, errors: t.error === undefined ? [] : [{ message: t.error }] }),
    diagnostic: () => ({ duration: t.ms ?? 1 })
  }) as unknown as TestCase

const testModule = (id: string, tests: ReadonlyArray<FakeTest>, ms: number): TestModule =>
  ({
    moduleId: `/repo/${id}`,
    relativeModuleId: id,
    state: () => (tests.some((t) => t.state === "failed") ? "failed" : "passed"),
    errors: () => [],
    diagnostic: () => ({ duration: ms }),
    children: { allTests: () => tests.map(testCase)[Symbol.iterator]() }
  }) as unknown as TestModule

const spec = (id: string) => ({ moduleId: `/repo/${id}` }) as unknown as TestSpecification

describe("progress reporter", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it("prints a line per file start and end, slow tests, failures with their message, and a summary", () => {
    const out: Array<string> = []
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk))
      return true
    })
    const reporter = new ProgressReporter()
    const slow = { name: "loop > a long property", state: "passed" as const, ms: 75_000 }
    const a = testModule("test/a.test.ts", [slow, { name: "quick", state: "passed" }], 80_000)
    const b = testModule("test/b.test.ts", [{ name: "breaks", state: "failed", error: "expected 1 to be 2\nsecond line" }], 1_500)
    reporter.onTestRunStart([spec("test/a.test.ts"), spec("test/b.test.ts")])
    reporter.onTestModuleStart(a)
    for (const t of a.children.allTests()) reporter.onTestCaseResult(t)
    reporter.onTestModuleEnd(a)
    reporter.onTestModuleStart(b)
    reporter.onTestModuleEnd(b)
    reporter.onTestRunEnd([a, b], [])
    const lines = out.join("").trimEnd().split("\n")
    expect(lines.slice(0, -1)).toEqual([
      "2 test files",
      "[1/2] start test/a.test.ts",
      "        ✓ loop > a long property (1 min 15 s)",
      "[1/2] ✓ test/a.test.ts: 2 passed in 1 min 20 s",
      "[2/2] start test/b.test.ts",
      "[2/2] ✗ test/b.test.ts: 0 passed, 1 failed in 1.5 s",
      "        ✗ breaks",
      "          expected 1 to be 2",
      "          second line"
    ])
    expect(lines.at(-1)).toMatch(/^2 files \(1 failed\), 2 tests passed, 1 failed in \d/)
  })

  it("passes on what the tests print, to the stream they printed to (real warnings stay visible)", () => {
    const out: Array<string> = []
    const err: Array<string> = []
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => (out.push(String(chunk)), true))
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => (err.push(String(chunk)), true))
    const reporter = new ProgressReporter()
    reporter.onUserConsoleLog({ content: "a line", type: "stdout" } as Parameters<ProgressReporter["onUserConsoleLog"]>[0])
    reporter.onUserConsoleLog({ content: "a warning\n", type: "stderr" } as Parameters<ProgressReporter["onUserConsoleLog"]>[0])
    expect([out.join(""), err.join("")]).toEqual(["a line\n", "a warning\n"])
  })
})
