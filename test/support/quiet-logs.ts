/**
 * Keeps the log lines that a test file causes on purpose out of the test output, and lets the file
 * assert on them. Effect's default logger writes `[time] WARN (#fiber): message` through
 * `console.log`; a file whose tests fail hooks on purpose (each failure is logged as `hook X of agent
 * "a" failed: …`) or make providers retry (`retrying model call to …`) calls `quietLogs()` once at its
 * top. Only lines of Effect's logger whose message matches one of the patterns are held back; every
 * other line still prints, so a warning nobody expected stays visible.
 */
import { afterAll, beforeAll, beforeEach } from "vitest"

/** Effect's log line for a failed hook or recovery policy (src/runtime/emit.ts `reportHookFailure`). */
export const hookFailureLine = /^hook \S+ of agent .* failed: /
/** The log line of a provider's retry (src/model/model-retry.ts `retryLine`). */
export const retryLine = /^retrying model call to /

/** What `quietLogs` returns: the held-back lines of the current test, as `LEVEL message`. */
export interface QuietLogs {
  readonly lines: () => ReadonlyArray<string>
}

/** The level of an Effect default-logger prefix: `[12:00:00.000] WARN (#12):` → `WARN`. */
const effectPrefix = /^\[[^\]]*\] ([A-Z]+) \(#\d+\)(?: [^:]*)?:$/

/**
 * Holds back, for the tests of the calling file, the Effect log lines whose message matches `patterns`
 * (by default hook failures and retry notices); `lines()` lists those of the current test.
 *
 * @example
 * ```ts
 * const logs = quietLogs()
 * it("reports a throwing hook", async () => { …; expect(logs.lines()).toEqual([expect.stringMatching(/^WARN hook Turn/)]) })
 * ```
 */
export const quietLogs = (patterns: ReadonlyArray<RegExp> = [hookFailureLine, retryLine]): QuietLogs => {
  let held: Array<string> = []
  let original: typeof console.log | undefined
  beforeAll(() => {
    original = console.log
    const print = original
    console.log = (...args: Array<unknown>) => {
      const [prefix, message] = args
      const level = typeof prefix === "string" ? effectPrefix.exec(prefix)?.[1] : undefined
      if (level !== undefined && typeof message === "string" && patterns.some((p) => p.test(message))) {
        held.push(`${level} ${message}`)
        return
      }
      print(...args)
    }
  })
  beforeEach(() => {
    held = []
  })
  afterAll(() => {
    if (original !== undefined) console.log = original
  })
  return { lines: () => held }
}
