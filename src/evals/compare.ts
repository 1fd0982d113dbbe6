/**
 * Comparing a report with a baseline, for CI: a scorer whose mean dropped by more than `tolerance`,
 * a case that passed in the baseline but does not now (failed, errored, skipped by a budget, or
 * missing from the report), and a scorer of the baseline that the report no longer has, are
 * regressions; the exit code is 1 when there is one. A gate that passed while nothing ran would
 * vouch for nothing. New cases and scorers, and baseline cases that had not passed and are now
 * missing, are listed, not counted as regressions. With
 * repetitions a scorer's mean is over every run of every case that ran, and a case passed only when
 * every one of its runs did, so reports with different repetition counts (1 included) compare too.
 */
import { type EvalReport, ownValue } from "./report.ts"

/** One regression or improvement. */
export type Change =
  | { readonly _tag: "Scorer"; readonly scorer: string; readonly baseline: number; readonly current: number }
  /** `current` is the case's status now, or `"missing"` when the report has no such case. */
  | { readonly _tag: "Case"; readonly id: string; readonly baseline: string; readonly current: string }
  /** A scorer of the baseline that graded nothing now (removed, or no case ran). */
  | { readonly _tag: "MissingScorer"; readonly scorer: string; readonly baseline: number }

/** What changed between two reports. */
export interface Comparison {
  readonly regressions: ReadonlyArray<Change>
  readonly improvements: ReadonlyArray<Change>
  /** Cases in the baseline that the current report lacks, and new ones. */
  readonly missingCases: ReadonlyArray<string>
  readonly newCases: ReadonlyArray<string>
  /** Scorers in the baseline the current report lacks (each also a regression), and new ones. */
  readonly missingScorers: ReadonlyArray<string>
  readonly newScorers: ReadonlyArray<string>
  /** True when there is no regression. */
  readonly ok: boolean
}

/**
 * Compares `current` with `baseline`. `tolerance` (default 0.01) is how far a scorer's mean may drop.
 * Means and case statuses are the reports' own, repetitions or not (see the module's comment).
 *
 * @example
 * ```ts
 * const comparison = compareReports(parseReport(readFileSync("baseline.json", "utf8")), report)
 * console.log(formatComparison(comparison)); process.exitCode = exitCodeOf(comparison)
 * ```
 */
export const compareReports = (baseline: EvalReport, current: EvalReport, options: { readonly tolerance?: number } = {}): Comparison => {
  const tolerance = options.tolerance ?? 0.01
  const regressions: Array<Change> = []
  const improvements: Array<Change> = []
  for (const [scorer, was] of Object.entries(baseline.summary.scorers)) {
    const now = ownValue(current.summary.scorers, scorer)
    if (now === undefined) {
      regressions.push({ _tag: "MissingScorer", scorer, baseline: was.mean })
      continue
    }
    const change: Change = { _tag: "Scorer", scorer, baseline: was.mean, current: now.mean }
    if (now.mean < was.mean - tolerance) regressions.push(change)
    else if (now.mean > was.mean + tolerance) improvements.push(change)
  }
  const before = new Map(baseline.cases.map((c) => [c.id, c]))
  const after = new Map(current.cases.map((c) => [c.id, c]))
  for (const [id, was] of before) {
    const now = after.get(id)
    // A case that did not run in the baseline says nothing to compare with; one that passed and did not run now is a regression.
    if (was.status === "skipped") continue
    const change: Change = { _tag: "Case", id, baseline: was.status, current: now?.status ?? "missing" }
    if (was.status === "passed" && now?.status !== "passed") regressions.push(change)
    else if (was.status !== "passed" && now?.status === "passed") improvements.push(change)
  }
  return {
    regressions,
    improvements,
    missingCases: [...before.keys()].filter((id) => !after.has(id)),
    newCases: [...after.keys()].filter((id) => !before.has(id)),
    missingScorers: Object.keys(baseline.summary.scorers).filter((name) => ownValue(current.summary.scorers, name) === undefined),
    newScorers: Object.keys(current.summary.scorers).filter((name) => ownValue(baseline.summary.scorers, name) === undefined),
    ok: regressions.length === 0
  }
}

/**
 * 0 when the comparison has no regression, 1 otherwise: `process.exitCode = exitCodeOf(comparison)`.
 *
 * @example
 * ```ts
 * process.exitCode = exitCodeOf(compareReports(baseline, report))
 * ```
 */
export const exitCodeOf = (comparison: Comparison): 0 | 1 => (comparison.ok ? 0 : 1)

const describe = (change: Change): string =>
  change._tag === "Scorer"
    ? `${change.scorer}: mean ${change.baseline.toFixed(3)} → ${change.current.toFixed(3)}`
    : change._tag === "MissingScorer"
    ? `${change.scorer}: mean ${change.baseline.toFixed(3)} → not in this run (no case graded by it)`
    : `case ${change.id}: ${change.baseline} → ${change.current}`

/**
 * The comparison in words, regressions first.
 *
 * @example
 * ```ts
 * console.log(formatComparison(compareReports(baseline, report)))
 * ```
 */
export const formatComparison = (comparison: Comparison): string =>
  [
    comparison.ok ? "no regression against the baseline" : `${comparison.regressions.length} regression(s) against the baseline:`,
    ...comparison.regressions.map((c) => `  REGRESSION ${describe(c)}`),
    ...comparison.improvements.map((c) => `  improved ${describe(c)}`),
    ...(comparison.missingCases.length === 0 ? [] : [`  not in this run: ${comparison.missingCases.join(", ")}`]),
    ...(comparison.newCases.length === 0 ? [] : [`  new cases: ${comparison.newCases.join(", ")}`]),
    ...(comparison.newScorers.length === 0 ? [] : [`  new scorers: ${comparison.newScorers.join(", ")}`])
  ].join("\n")
