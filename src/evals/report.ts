/**
 * The result of an evaluation: one row per case (status, output or error, a score per scorer, duration,
 * usage, tool calls) and a summary (per scorer: mean and pass rate; counts; totals). It prints as a
 * table for the terminal and as stable JSON (sorted keys) to keep as a baseline; `parseReport` reads
 * one back, refusing an unknown `version`.
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

/** One case's row. */
export interface CaseResult {
  readonly id: string
  readonly status: CaseStatus
  readonly input: unknown
  readonly expected?: unknown
  readonly output?: unknown
  /** Why the run failed, or why the case was skipped. */
  readonly error?: string
  readonly scores: Readonly<Record<string, Score>>
  readonly durationMs: number
  readonly usage: Usage
  readonly toolCalls: ReadonlyArray<TracedToolCall>
}

/** A scorer over the whole run: mean score and share of cases passing (skipped cases left out). */
export interface ScorerSummary {
  readonly mean: number
  readonly passRate: number
}

/** The totals of a report. */
export interface ReportSummary {
  readonly cases: number
  readonly passed: number
  readonly failed: number
  readonly errored: number
  readonly skipped: number
  readonly scorers: Readonly<Record<string, ScorerSummary>>
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
 * The summary of `cases` (means over the cases that ran; skipped cases are counted, not scored).
 *
 * @example
 * ```ts
 * summarize(report.cases, report.summary.durationMs).scorers.exact?.mean
 * ```
 */
export const summarize = (cases: ReadonlyArray<CaseResult>, durationMs: number): ReportSummary => {
  const ran = cases.filter((c) => c.status !== "skipped")
  const names = [...new Set(ran.flatMap((c) => Object.keys(c.scores)))].sort()
  const scorers: Record<string, ScorerSummary> = Object.fromEntries(names.map((name) => {
    const scores = ran.map((c) => ownValue(c.scores, name) ?? { score: 0, pass: false })
    const mean = scores.reduce((sum, s) => sum + (Number.isFinite(s.score) ? s.score : 0), 0) / Math.max(1, scores.length)
    return [name, { mean, passRate: scores.filter((s) => s.pass).length / Math.max(1, scores.length) }]
  }))
  const count = (status: CaseStatus) => cases.filter((c) => c.status === status).length
  return {
    cases: cases.length,
    passed: count("passed"),
    failed: count("failed"),
    errored: count("errored"),
    skipped: count("skipped"),
    scorers,
    usage: {
      inputTokens: cases.reduce((n, c) => n + c.usage.inputTokens, 0),
      outputTokens: cases.reduce((n, c) => n + c.usage.outputTokens, 0)
    },
    durationMs
  }
}

/** Values JSON can hold (undefined dropped, non-finite numbers as null, errors as their message). */
const jsonSafe = (value: unknown): unknown => {
  if (typeof value === "number") return Number.isFinite(value) ? value : null
  if (typeof value === "bigint") return value.toString()
  if (value instanceof Error) return value.message
  if (Array.isArray(value)) return value.map(jsonSafe)
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== "function").map(([k, v]) => [k, jsonSafe(v)]))
  if (typeof value === "function" || typeof value === "symbol") return undefined
  return value
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
 * of what failed, and the summary (mean and pass rate per scorer).
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
    mark[c.status],
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
  const notes = report.cases.flatMap((c) => [
    ...(c.error === undefined ? [] : [`  ${c.id}: ${clip(c.error, 200)}`]),
    ...Object.entries(c.scores).filter(([, s]) => !s.pass && s.reason !== undefined).map(([name, s]) => `  ${c.id} ${name}: ${clip(s.reason!, 200)}`)
  ])
  const rates = scorers.map((s) => `${s} ${(Number(ownValue(report.summary.scorers, s)?.passRate) * 100).toFixed(0)}%`).join(", ")
  return [
    `${report.name}: ${report.summary.passed} passed, ${report.summary.failed} failed, ${report.summary.errored} errored, ${report.summary.skipped} skipped`,
    line(header),
    rule,
    ...rows.map(line),
    rule,
    line(mean),
    ...(scorers.length === 0 ? [] : [`pass rates: ${rates}`]),
    ...(notes.length === 0 ? [] : ["", "why:", ...notes])
  ].join("\n")
}
