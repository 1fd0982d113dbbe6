/**
 * The result of an evaluation: one row per case (status, output or error, a score per scorer, duration,
 * usage, tool calls) and a summary (per scorer: mean and pass rate; counts; totals). With
 * `repetitions` > 1 a case's row also keeps each repetition's own row and its scorers' spread (min,
 * max, standard deviation). It prints as a table for the terminal and as stable JSON (sorted keys) to
 * keep as a baseline; `parseReport` reads one back, refusing an unknown `version`.
 */
import * as Data from "effect/Data"
import { canonicalJson } from "../internal/canonical-json.ts"
import type { Usage } from "../model/messages.ts"
import type { Score, TracedToolCall } from "./scorer.ts"

/**
 * The report format this library writes and reads.
 *
 * @example
 * ```ts
 * parseReport(text).version === REPORT_VERSION
 * ```
 */
export const REPORT_VERSION = 1

/** How a case ended: every scorer passed, one did not, the run failed, or the budget left it out. */
export type CaseStatus = "passed" | "failed" | "errored" | "skipped"

/** One run of a case when `evaluate` repeats it (`repetitions` > 1): what that run answered and how it scored. */
export interface RepetitionResult {
  /** Every scorer passed, one did not, or the run failed (still scored, as a case is). */
  readonly status: Exclude<CaseStatus, "skipped">
  readonly output?: unknown
  /** Why the run failed. */
  readonly error?: string
  readonly scores: Readonly<Record<string, Score>>
  readonly durationMs: number
  readonly usage: Usage
  readonly toolCalls: ReadonlyArray<TracedToolCall>
}

/**
 * One case's row. With `repetitions` > 1 (and the case not skipped) it sums up its runs: `status` is
 * `passed` when every repetition passed, `errored` when every one errored, `failed` otherwise; each
 * `scores` entry is the mean score, passing when every repetition passed; `durationMs`, `usage` and
 * `toolCalls` are the repetitions' together; `repetitions` keeps each run and `stats` each scorer's
 * spread. Without repetitions those two keys are absent.
 */
export interface CaseResult extends Omit<RepetitionResult, "status" | "error"> {
  readonly id: string
  readonly status: CaseStatus
  readonly input: unknown
  readonly expected?: unknown
  /** Why the run failed (with repetitions: why every one did), or why the case was skipped. */
  readonly error?: string
  /** With `repetitions` > 1: each run, in order. */
  readonly repetitions?: ReadonlyArray<RepetitionResult>
  /** With `repetitions` > 1: each scorer over this case's runs (mean, pass rate, min, max, standard deviation). */
  readonly stats?: Readonly<Record<string, ScorerSummary>>
}

/**
 * A scorer over the whole run: mean score and share of cases passing (skipped cases left out). With
 * repetitions the rows are the runs: mean and pass rate over every repetition, and their spread.
 */
export interface ScorerSummary {
  readonly mean: number
  readonly passRate: number
  /** With repetitions: the lowest score of a run. */
  readonly min?: number
  /** With repetitions: the highest score of a run. */
  readonly max?: number
  /** With repetitions: the population standard deviation of the runs' scores. */
  readonly stdDev?: number
}

/** How the runs of a report with repetitions ended (skipped cases have none). */
export interface RepetitionSummary {
  /** Runs of each case that ran. */
  readonly perCase: number
  readonly runs: number
  readonly passed: number
  readonly failed: number
  readonly errored: number
}

/** The totals of a report. */
export interface ReportSummary {
  readonly cases: number
  readonly passed: number
  readonly failed: number
  readonly errored: number
  readonly skipped: number
  readonly scorers: Readonly<Record<string, ScorerSummary>>
  /** With `repetitions` > 1: how the runs ended. */
  readonly repetitions?: RepetitionSummary
  readonly usage: Usage
  readonly durationMs: number
}

/** A whole evaluation. */
export interface EvalReport {
  readonly version: typeof REPORT_VERSION
  readonly name: string
  readonly cases: ReadonlyArray<CaseResult>
  readonly summary: ReportSummary
}

/**
 * A report could not be read: not JSON, not a report, or an unknown `version`.
 *
 * @example
 * ```ts
 * try { parseReport(text) } catch (e) { if (e instanceof ReportError) console.error(e.message) }
 * ```
 */
export class ReportError extends Data.TaggedError("ReportError")<{ readonly reason: string }> {
  override get message(): string {
    return `Evaluation report: ${this.reason}`
  }
}

/**
 * Internal: `record[key]` when it is the record's own (a scorer named "constructor" or "__proto__" is
 * a name like any other, never something inherited).
 *
 * @example
 * ```ts
 * ownValue({}, "constructor") // undefined
 * ```
 */
export const ownValue = <A>(record: Readonly<Record<string, A>>, key: string): A | undefined =>
  Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined

/**
 * Internal: each scorer over `rows` (a missing score counts as a failed 0, a non-finite one as 0): mean
 * and pass rate, and with `spread` also min, max and the population standard deviation.
 *
 * @example
 * ```ts
 * scorerStats([{ scores: { exact: { score: 1, pass: true } } }, { scores: {} }], true).exact // { mean: 0.5, passRate: 0.5, min: 0, max: 1, stdDev: 0.5 }
 * ```
 */
export const scorerStats = (rows: ReadonlyArray<{ readonly scores: Readonly<Record<string, Score>> }>, spread: boolean): Record<string, ScorerSummary> => {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.scores)))].sort()
  return Object.fromEntries(names.map((name) => {
    const scores = rows.map((r) => ownValue(r.scores, name) ?? { score: 0, pass: false })
    const values = scores.map((s) => (Number.isFinite(s.score) ? s.score : 0))
    const n = Math.max(1, values.length)
    const mean = values.reduce((sum, v) => sum + v, 0) / n
    const passRate = scores.filter((s) => s.pass).length / n
    if (!spread) return [name, { mean, passRate }]
    const stdDev = Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / n)
    // reduce, not Math.min(...values): a large evaluation's runs would overflow the call's arguments.
    const min = values.reduce((lowest, v) => Math.min(lowest, v), Number.POSITIVE_INFINITY)
    const max = values.reduce((highest, v) => Math.max(highest, v), Number.NEGATIVE_INFINITY)
    return [name, { mean, passRate, min, max, stdDev }]
  }))
}

/**
 * The summary of `cases` (means over the cases that ran; skipped cases are counted, not scored). When
 * cases carry `repetitions`, scorers are summed up over every run, with their spread, and
 * `repetitions` counts how the runs ended.
 *
 * @example
 * ```ts
 * summarize(report.cases, report.summary.durationMs).scorers.exact?.mean
 * ```
 */
export const summarize = (cases: ReadonlyArray<CaseResult>, durationMs: number): ReportSummary => {
  const ran = cases.filter((c) => c.status !== "skipped")
  const repeated = ran.some((c) => c.repetitions !== undefined)
  // A hand-made report may mix rows with and without repetitions: a row without is one run.
  const rows: ReadonlyArray<CaseResult | RepetitionResult> = repeated ? ran.flatMap((c): ReadonlyArray<CaseResult | RepetitionResult> => c.repetitions ?? [c]) : ran
  const count = (status: CaseStatus) => cases.filter((c) => c.status === status).length
  const countRuns = (status: CaseStatus) => rows.filter((r) => r.status === status).length
  return {
    cases: cases.length,
    passed: count("passed"),
    failed: count("failed"),
    errored: count("errored"),
    skipped: count("skipped"),
    scorers: scorerStats(rows, repeated),
    ...(repeated
      ? {
        repetitions: {
          perCase: ran.reduce((most, c) => Math.max(most, c.repetitions?.length ?? 1), 0),
          runs: rows.length,
          passed: countRuns("passed"),
          failed: countRuns("failed"),
          errored: countRuns("errored")
        }
      }
      : {}),
    usage: {
      inputTokens: cases.reduce((n, c) => n + c.usage.inputTokens, 0),
      outputTokens: cases.reduce((n, c) => n + c.usage.outputTokens, 0)
    },
    durationMs
  }
}

/**
 * Values JSON can hold (undefined dropped, non-finite numbers as null, errors as their message, a
 * `Date` as its ISO text, a `Map` as an object of its entries and a `Set` as an array; a value met
 * again inside itself as `"[cycle]"`): an agent's output may be any of them, and a report must
 * still be written.
 */
const jsonSafe = (value: unknown, open: Set<object> = new Set()): unknown => {
  if (typeof value === "number") return Number.isFinite(value) ? value : null
  if (typeof value === "bigint") return value.toString()
  if (typeof value === "function" || typeof value === "symbol") return undefined
  if (value === null || typeof value !== "object") return value
  if (value instanceof Error) return value.message
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString()
  if (open.has(value)) return "[cycle]"
  open.add(value)
  try {
    if (Array.isArray(value)) return value.map((v) => jsonSafe(v, open) ?? null)
    if (value instanceof Set) return [...value].map((v) => jsonSafe(v, open) ?? null)
    const entries: Array<[string, unknown]> = value instanceof Map
      ? [...value].map(([k, v]) => [typeof k === "string" ? k : String(jsonSafe(k, open) ?? k), v])
      : Object.entries(value)
    return Object.fromEntries(entries.filter(([, v]) => v !== undefined && typeof v !== "function" && typeof v !== "symbol").map(([k, v]) => [k, jsonSafe(v, open)]))
  } finally {
    open.delete(value)
  }
}

/**
 * The report as stable JSON: sorted keys, two-space indentation, a final newline (a baseline diffs
 * line by line).
 *
 * @example
 * ```ts
 * writeFileSync("evals/baseline.json", reportJson(report))
 * ```
 */
export const reportJson = (report: EvalReport): string => `${JSON.stringify(JSON.parse(canonicalJson(jsonSafe(report))), null, 2)}\n`

/**
 * A report from its JSON text; throws `ReportError` on anything else.
 *
 * @example
 * ```ts
 * const baseline = parseReport(readFileSync("evals/baseline.json", "utf8"))
 * ```
 */
export const parseReport = (text: string): EvalReport => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new ReportError({ reason: `not JSON (${error instanceof Error ? error.message : String(error)})` })
  }
  if (json === null || typeof json !== "object") throw new ReportError({ reason: "not a JSON object" })
  const { version, cases, summary } = json as Partial<EvalReport>
  if (version !== REPORT_VERSION) throw new ReportError({ reason: `unsupported report version ${JSON.stringify(version) ?? "(none)"}: this library reads version ${REPORT_VERSION}` })
  if (!Array.isArray(cases) || summary === undefined || typeof summary !== "object" || typeof summary.scorers !== "object") {
    throw new ReportError({ reason: "not an evaluation report (no cases or summary)" })
  }
  return json as EvalReport
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + " ".repeat(n - s.length))
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s)
const mark: Record<CaseStatus, string> = { passed: "pass", failed: "FAIL", errored: "ERROR", skipped: "skip" }

/**
 * The report as a text table: a row per case (status, each scorer's score, ms, tokens), the reasons
 * of what failed, and the summary (mean and pass rate per scorer). With repetitions a case's status
 * says how many of its runs passed (`FAIL 2/4`), its scores are means, the reasons name the run
 * (`sum #2 exact: ...`), and the summary adds how the runs ended and each scorer's spread.
 *
 * @example
 * ```ts
 * console.log(formatTable(report))
 * ```
 */
export const formatTable = (report: EvalReport): string => {
  const scorers = Object.keys(report.summary.scorers)
  const header = ["case", "status", ...scorers, "ms", "tokens"]
  const rows = report.cases.map((c) => [
    clip(c.id, 32),
    c.repetitions === undefined ? mark[c.status] : `${mark[c.status]} ${c.repetitions.filter((r) => r.status === "passed").length}/${c.repetitions.length}`,
    ...scorers.map((s) => {
      const score = ownValue(c.scores, s)
      return score === undefined ? "-" : `${Number(score.score).toFixed(2)}${score.pass ? "" : "✗"}`
    }),
    String(Math.round(c.durationMs)),
    String(c.usage.inputTokens + c.usage.outputTokens)
  ])
  const mean = ["mean", `${report.summary.passed}/${report.summary.cases}`, ...scorers.map((s) => Number(ownValue(report.summary.scorers, s)?.mean).toFixed(2)), String(Math.round(report.summary.durationMs)), String(report.summary.usage.inputTokens + report.summary.usage.outputTokens)]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length), mean[i]!.length))
  const line = (cells: ReadonlyArray<string>) => cells.map((cell, i) => pad(cell, widths[i]!)).join("  ").trimEnd()
  const rule = widths.map((w) => "-".repeat(w)).join("  ")
  const why = (label: string, row: { readonly error?: string; readonly scores: Readonly<Record<string, Score>> }) => [
    ...(row.error === undefined ? [] : [`  ${label}: ${clip(row.error, 200)}`]),
    ...Object.entries(row.scores).filter(([, s]) => !s.pass && s.reason !== undefined).map(([name, s]) => `  ${label} ${name}: ${clip(s.reason!, 200)}`)
  ]
  // With repetitions the reasons are the runs' own: the case's would only repeat them.
  const notes = report.cases.flatMap((c) => c.repetitions === undefined ? why(c.id, c) : c.repetitions.flatMap((r, i) => why(`${c.id} #${i + 1}`, r)))
  const rates = scorers.map((s) => `${s} ${(Number(ownValue(report.summary.scorers, s)?.passRate) * 100).toFixed(0)}%`).join(", ")
  const runs = report.summary.repetitions
  const spread = scorers.map((s) => {
    const stats = ownValue(report.summary.scorers, s)
    return `${s} ${Number(stats?.min).toFixed(2)}–${Number(stats?.max).toFixed(2)} (sd ${Number(stats?.stdDev).toFixed(2)})`
  }).join(", ")
  return [
    `${report.name}: ${report.summary.passed} passed, ${report.summary.failed} failed, ${report.summary.errored} errored, ${report.summary.skipped} skipped` +
    (runs === undefined ? "" : `; ${runs.runs} runs (${runs.perCase} per case): ${runs.passed} passed, ${runs.failed} failed, ${runs.errored} errored`),
    line(header),
    rule,
    ...rows.map(line),
    rule,
    line(mean),
    ...(scorers.length === 0 ? [] : [`pass rates: ${rates}`]),
    ...(scorers.length === 0 || runs === undefined ? [] : [`spread over runs: ${spread}`]),
    ...(notes.length === 0 ? [] : ["", "why:", ...notes])
  ].join("\n")
}
