/**
 * Evaluations in vitest (or Jest): `scoresOf(report)` gives each scorer's mean for plain `expect`
 * calls, and `evalMatchers` adds `toMeetScores` (every listed scorer's mean at least its bar, and no
 * errored case) for `expect.extend`. Nothing here imports vitest: matchers are plain functions.
 */
import { type EvalReport, ownValue } from "./report.ts"

/**
 * Each scorer's mean score over the cases that ran.
 *
 * @example
 * ```ts
 * expect(scoresOf(report).exact).toBeGreaterThanOrEqual(0.9)
 * ```
 */
export const scoresOf = (report: EvalReport): Readonly<Record<string, number>> =>
  Object.fromEntries(Object.entries(report.summary.scorers).map(([name, s]) => [name, s.mean]))

/** What `toMeetScores` reports to the test runner. */
export interface MatcherResult {
  readonly pass: boolean
  readonly message: () => string
}

/**
 * The matcher `toMeetScores(bars, { allowErrored? })`: passes when every scorer in `bars` has a mean of
 * at least its bar and (unless `allowErrored`) no case errored; its message lists what fell short.
 */
const toMeetScores = (received: unknown, bars: Readonly<Record<string, number>>, options: { readonly allowErrored?: boolean } = {}): MatcherResult => {
  const report = received as EvalReport
  if (report === null || typeof report !== "object" || report.summary === undefined) {
    return { pass: false, message: () => "expected an evaluation report (the result of evaluate)" }
  }
  const means = scoresOf(report)
  const short = Object.entries(bars).flatMap(([name, bar]) =>
    {
      const mean = ownValue(means, name)
      return mean === undefined ? [`${name}: no such scorer (have ${Object.keys(means).join(", ") || "none"})`] : mean < bar ? [`${name}: mean ${mean.toFixed(3)} < ${bar}`] : []
    }
  )
  const errored = options.allowErrored === true ? [] : report.cases.filter((c) => c.status === "errored").map((c) => `case ${c.id} errored: ${c.error ?? ""}`)
  const problems = [...short, ...errored]
  return {
    pass: problems.length === 0,
    message: () =>
      problems.length === 0
        ? `expected ${report.name} not to meet ${JSON.stringify(bars)}, but it did`
        : `expected ${report.name} to meet ${JSON.stringify(bars)}:\n  ${problems.join("\n  ")}`
  }
}

/**
 * Matchers for `expect.extend(evalMatchers)`. For the types, add once in a `.d.ts` of your tests:
 * `declare module "vitest" { interface Assertion<T> extends EvalMatchers<T> {} }`.
 *
 * @example
 * ```ts
 * expect.extend(evalMatchers)
 * expect(report).toMeetScores({ exact: 0.9, trajectory: 0.8 })
 * ```
 */
export const evalMatchers = { toMeetScores }

/**
 * The types of `evalMatchers` for a test runner's `Assertion` interface.
 *
 * @example
 * ```ts
 * declare module "vitest" { interface Assertion<T> extends EvalMatchers<T> {} }
 * ```
 */
export interface EvalMatchers<R = unknown> {
  toMeetScores(bars: Readonly<Record<string, number>>, options?: { readonly allowErrored?: boolean }): R
}
