/**
 * effect-agent-dsl/evals: measure an agent's answers over a dataset. Datasets from arrays or JSON
 * Lines, scorers (exact, JSON and Schema match, tool-call trajectory, latency, token cost, an
 * LLM-as-judge with a typed verdict), `evaluate` with concurrency and a budget, reports as a table and
 * as stable JSON, comparison with a baseline for CI, and matchers for vitest. No network of its own:
 * give it a scripted or replayed model (`effect-agent-dsl/testing`) and it runs in CI.
 *
 * @module effect-agent-dsl/evals
 */
export { compareReports, exitCodeOf, formatComparison } from "./compare.ts"
export type { Change, Comparison } from "./compare.ts"
export { dataset, DatasetError, datasetFromJsonl, loadJsonl } from "./dataset.ts"
export type { Dataset, EvalCase, EvalCaseInit, ExpectedToolCall, JsonlOptions } from "./dataset.ts"
export { evaluate } from "./evaluate.ts"
export type { EvalBudget, EvalProgress, EvalSubject, EvaluateOptions } from "./evaluate.ts"
export { JudgeVerdict, judgeRequest, llmJudge } from "./llm-judge.ts"
export type { LlmJudgeOptions } from "./llm-judge.ts"
export { evalMatchers, scoresOf } from "./matchers.ts"
export type { EvalMatchers, MatcherResult } from "./matchers.ts"
export { terminalProgress } from "./progress.ts"
export type { ProgressSink } from "./progress.ts"
export { formatTable, parseReport, REPORT_VERSION, ReportError, reportJson, summarize } from "./report.ts"
export type { CaseResult, CaseStatus, EvalReport, RepetitionResult, RepetitionSummary, ReportSummary, ScorerSummary } from "./report.ts"
export { scorer, ScorerError, toScore } from "./scorer.ts"
export type { RunTrace, Score, ScoreContext, Scorer, ScoreInit, TracedToolCall } from "./scorer.ts"
export { costOf, exactMatch, jsonMatch, latency, schemaMatch, tokenCost, toolTrajectory } from "./scorers.ts"
export type { Pricing, TrajectoryOptions, TrajectoryOrder } from "./scorers.ts"
