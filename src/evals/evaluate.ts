/**
 * `evaluate(agent, dataset, scorers)`: runs every case of a dataset through an agent (or any function
 * to an Effect), `repetitions` times each, with bounded concurrency and an optional budget (cases,
 * tokens, dollars), grades each answer with every scorer, and returns the report. Effect-native: its
 * requirements are the agent's and the scorers' services, time comes from the `Clock`, interrupting
 * it stops the runs. A case never fails the evaluation: a failed run is an `errored` row (or
 * repetition), a failing scorer a 0 with its reason.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { AgentBuilder, AgentShape } from "../dsl/agent.ts"
import { AgentConfigError, ModelError } from "../errors.ts"
import type { AgentEvent } from "../dsl/events.ts"
import type { RunResultOf } from "../dsl/run-outcome.ts"
import type { Usage } from "../model/messages.ts"
import type { Dataset, EvalCase } from "./dataset.ts"
import { type CaseResult, type EvalReport, ownValue, type RepetitionResult, REPORT_VERSION, scorerStats, summarize } from "./report.ts"
import { type RunTrace, type Score, type Scorer, ScorerError, type TracedToolCall } from "./scorer.ts"
import { costOf, type Pricing } from "./scorers.ts"
import { shownValue } from "../internal/shown-value.ts"

/**
 * Limits over the whole evaluation: cases past a limit are `skipped` (the report says why). Limits
 * are checked as each case starts (its first repetition; a case that started runs all its
 * repetitions), so with `concurrency` N the runs already going (at most N - 1) may finish past a
 * token or dollar limit. `maxUsd` needs `pricing` (the types say so): without prices
 * no dollar is counted, and the limit would never apply.
 */
export type EvalBudget = {
  /** Run at most this many cases (the first ones). */
  readonly maxCases?: number
  /** Start no case once this many tokens (input + output) were spent. */
  readonly maxTokens?: number
} & (
  | {
    /** Start no case once this many dollars were spent at `pricing`. */
    readonly maxUsd: number
    readonly pricing: Pricing
  }
  | { readonly maxUsd?: undefined; readonly pricing?: Pricing }
)

/**
 * One finished case, for progress displays. With `repetitions` > 1 one finished run: `done` and
 * `total` count runs (cases × repetitions), `result` is that run's row and `repetition` its number,
 * from 1.
 */
export interface EvalProgress {
  readonly done: number
  readonly total: number
  readonly result: CaseResult
  readonly repetition?: number
}

/** Options of `evaluate`. */
export interface EvaluateOptions {
  /** Report name. Default: the dataset's name. */
  readonly name?: string
  /** Cases run at once: a whole number ≥ 1, or `Infinity` for all at once. Default 1. Anything else throws `AgentConfigError`. */
  readonly concurrency?: number
  /**
   * Runs of each case, for answers that vary from run to run: a whole number ≥ 1, default 1. Above 1
   * each case's row keeps every run (`repetitions`) and each scorer's mean, pass rate, min, max and
   * standard deviation over them (`stats`); runs share the `concurrency` limit with other cases' runs.
   * Anything else throws `AgentConfigError`.
   */
  readonly repetitions?: number
  readonly budget?: EvalBudget
  /**
   * A case (each repetition of it) running longer than this is `errored`; a scorer grading longer
   * than this (a judge that hangs) scores 0 with the reason, and the evaluation goes on.
   */
  readonly caseTimeout?: Duration.Input
  /** Called after each case, or each repetition (see `EvalProgress` and `terminalProgress`). */
  readonly onProgress?: (progress: EvalProgress) => void
}

/** Anything `evaluate` can run: an agent builder, or a function from an input to an Effect of an output. */
export type EvalSubject<I, O, R> = ((input: I) => Effect.Effect<O, unknown, R>)

const zero: Usage = { inputTokens: 0, outputTokens: 0 }

/** The trace of a run from its events. */
const traceOf = (events: ReadonlyArray<AgentEvent>, durationMs: number): RunTrace => {
  const toolCalls: Array<TracedToolCall> = []
  let inputTokens = 0
  let outputTokens = 0
  let modelCalls = 0
  for (const e of events) {
    if (e._tag === "ToolUse") toolCalls.push({ tool: e.tool, args: e.args, ok: true })
    else if (e._tag === "ToolError") toolCalls.push({ tool: e.tool, args: e.args, ok: false })
    else if (e._tag === "ModelCall") modelCalls++
    else if (e._tag === "ModelResponse" && e.response.usage !== undefined) {
      inputTokens += e.response.usage.inputTokens
      outputTokens += e.response.usage.outputTokens
    }
  }
  return { toolCalls, usage: { inputTokens, outputTokens }, durationMs, modelCalls }
}

/**
 * The trace with the tokens of the model call the run failed on: a `ModelError` carries what a failed
 * call cost (a reply cut off at the token limit, say) and no `ModelResponse` event counts them.
 */
const withFailedCallUsage = (trace: RunTrace, exit: Exit.Exit<unknown, unknown>): RunTrace => {
  if (Exit.isSuccess(exit)) return trace
  const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
  const error = failure?._tag === "Fail" ? failure.error : undefined
  if (!(error instanceof ModelError) || error.usage === undefined) return trace
  return {
    ...trace,
    usage: { inputTokens: trace.usage.inputTokens + error.usage.inputTokens, outputTokens: trace.usage.outputTokens + error.usage.outputTokens }
  }
}

const messageOf = (cause: Cause.Cause<unknown>): string => {
  if (Cause.hasInterruptsOnly(cause)) return "interrupted"
  const failure = cause.reasons.find((r) => r._tag === "Fail")
  if (failure?._tag === "Fail") {
    const error = failure.error as { readonly _tag?: unknown; readonly message?: unknown }
    if (error !== null && typeof error === "object" && typeof error.message === "string") {
      return typeof error._tag === "string" ? `${error._tag}: ${error.message}` : error.message
    }
    return String(failure.error)
  }
  return `defect: ${Cause.pretty(cause).split("\n")[0] ?? ""}`
}

const isBuilder = (subject: unknown): subject is AgentBuilder<AgentShape> =>
  typeof subject === "object" && subject !== null && "runEffect" in subject && "onEvent" in subject

/**
 * Runs `data` through `subject`, grades each case with `scorers`, and returns the report.
 *
 * @example
 * ```ts
 * const report = yield* evaluate(calculator, yield* dataset("arithmetic", cases), [exactMatch(), toolTrajectory(), latency({ maxMs: 5000 })], {
 *   concurrency: 4, budget: { maxTokens: 50_000 }, onProgress: terminalProgress()
 * })
 * console.log(formatTable(report))
 * ```
 */
export function evaluate<T extends AgentShape, E = unknown, RS = never>(
  subject: AgentBuilder<T>,
  data: Dataset<T["input"], E>,
  scorers: ReadonlyArray<Scorer<T["input"], RunResultOf<T["tools"], T["output"]>, E, RS>>,
  options?: EvaluateOptions
): Effect.Effect<EvalReport, never, T["requirements"] | RS>
export function evaluate<I, O, R, E = unknown, RS = never>(
  subject: EvalSubject<I, O, R>,
  data: Dataset<I, E>,
  scorers: ReadonlyArray<Scorer<I, O, E, RS>>,
  options?: EvaluateOptions
): Effect.Effect<EvalReport, never, R | RS>
export function evaluate(
  subject: unknown,
  data: Dataset<any, any>,
  scorers: ReadonlyArray<Scorer<any, any, any, any>>,
  options: EvaluateOptions = {}
): Effect.Effect<EvalReport, never, unknown> {
  const concurrency = options.concurrency ?? 1
  // 1.5 ran two cases at once, and NaN, 0 or a negative number one: refused, as the builder refuses a bad budget.
  if (!(Number.isInteger(concurrency) && concurrency >= 1) && concurrency !== Number.POSITIVE_INFINITY) {
    throw new AgentConfigError({ subject: "evaluate(...)", reason: `concurrency must be a whole number ≥ 1 (or Infinity), got ${shownValue(concurrency)}` })
  }
  const repetitions: unknown = options.repetitions ?? 1
  // Checked for plain JavaScript callers too: 1.5 or NaN would miscount the runs, and "3" half work ("3" * 2 is 6, "3" === 3 is false).
  if (typeof repetitions !== "number" || !Number.isInteger(repetitions) || repetitions < 1) {
    const got = typeof repetitions === "number" ? String(repetitions) : `${typeof repetitions} ${JSON.stringify(repetitions) ?? String(repetitions)}`
    throw new AgentConfigError({ subject: "evaluate(...)", reason: `repetitions must be a whole number ≥ 1, got ${got}` })
  }
  return Effect.gen(function*() {
    const budget = options.budget ?? {}
    const total = data.cases.length * repetitions
    let done = 0
    const spent = { inputTokens: 0, outputTokens: 0 }
    const started = yield* Clock.currentTimeMillis

    const skip = (c: EvalCase<unknown, unknown>, why: string): CaseResult => ({
      id: c.id,
      status: "skipped",
      input: c.input,
      ...(c.expected === undefined ? {} : { expected: c.expected }),
      error: why,
      scores: {},
      durationMs: 0,
      usage: zero,
      toolCalls: []
    })

    const overBudget = (index: number): string | undefined => {
      if (budget.maxCases !== undefined && index >= budget.maxCases) return `budget: maxCases ${budget.maxCases}`
      const tokens = spent.inputTokens + spent.outputTokens
      if (budget.maxTokens !== undefined && tokens >= budget.maxTokens) return `budget: ${tokens} tokens spent (maxTokens ${budget.maxTokens})`
      if (budget.maxUsd !== undefined && budget.pricing !== undefined) {
        const usd = costOf(spent, budget.pricing)
        if (usd >= budget.maxUsd) return `budget: $${usd.toFixed(4)} spent (maxUsd ${budget.maxUsd})`
      }
      return undefined
    }
    // The budget is asked once per case, when its first run starts: the other runs follow that answer.
    const verdicts = new Map<number, string | undefined>()
    const budgetFor = (index: number): string | undefined => {
      if (!verdicts.has(index)) verdicts.set(index, overBudget(index))
      return verdicts.get(index)
    }

    const runOnce = (c: EvalCase<unknown, unknown>) =>
      Effect.gen(function*() {
        const events: Array<AgentEvent> = []
        const program: Effect.Effect<unknown, unknown, unknown> = isBuilder(subject)
          ? (subject.onEvent((event: AgentEvent) => {
            events.push(event)
          }) as unknown as AgentBuilder<AgentShape>).runEffect(c.input)
          : Effect.suspend(() => (subject as EvalSubject<unknown, unknown, unknown>)(c.input))
        const start = yield* Clock.currentTimeMillis
        const exit = yield* Effect.exit(options.caseTimeout === undefined ? program : Effect.timeout(program, options.caseTimeout))
        const end = yield* Clock.currentTimeMillis
        const trace = withFailedCallUsage(traceOf(events, end - start), exit)
        spent.inputTokens += trace.usage.inputTokens
        spent.outputTokens += trace.usage.outputTokens
        const output = Exit.isSuccess(exit) ? exit.value : undefined
        const error = Exit.isSuccess(exit) ? undefined : messageOf(exit.cause)
        const graded: Array<[string, Score]> = []
        for (const s of scorers) {
          // Suspended: a hand-written `score` may throw before it returns an Effect.
          const scoring = Effect.suspend(() => s.score({ case: c, output, error, trace }))
          // A hung judge must not hang the evaluation: the case's time limit bounds each scorer too.
          const scored = yield* Effect.exit(
            options.caseTimeout === undefined ? scoring : Effect.timeoutOrElse(scoring, {
              duration: options.caseTimeout,
              orElse: () => Effect.fail(new ScorerError({ scorer: s.name, reason: `did not finish within caseTimeout (${Duration.format(Duration.fromInputUnsafe(options.caseTimeout!))})` }))
            })
          )
          graded.push([s.name, Exit.isSuccess(scored) ? scored.value : { score: 0, pass: false, reason: messageOf(scored.cause) }])
        }
        // fromEntries: a scorer named "__proto__" is an own key like any other.
        const scores: Record<string, Score> = Object.fromEntries(graded)
        const run: RepetitionResult = {
          status: error !== undefined ? "errored" : Object.values(scores).every((s) => s.pass) ? "passed" : "failed",
          ...(output === undefined ? {} : { output }),
          ...(error === undefined ? {} : { error }),
          scores,
          durationMs: trace.durationMs,
          usage: trace.usage,
          toolCalls: trace.toolCalls
        }
        return run
      })

    /** A run as a case's row: the whole row when each case runs once, and a progress row otherwise. */
    const rowOf = (c: EvalCase<unknown, unknown>, run: RepetitionResult): CaseResult => ({
      id: c.id,
      status: run.status,
      input: c.input,
      ...(c.expected === undefined ? {} : { expected: c.expected }),
      ...(run.output === undefined ? {} : { output: run.output }),
      ...(run.error === undefined ? {} : { error: run.error }),
      scores: run.scores,
      durationMs: run.durationMs,
      usage: run.usage,
      toolCalls: run.toolCalls
    })

    /** A case's runs as its row: means, spread, and every run kept. */
    const repeatedRow = (c: EvalCase<unknown, unknown>, runs: ReadonlyArray<RepetitionResult>): CaseResult => {
      const stats = scorerStats(runs, true)
      const passing = (name: string) => runs.filter((r) => ownValue(r.scores, name)?.pass === true).length
      const scores: Record<string, Score> = Object.fromEntries(Object.entries(stats).map(([name, s]): [string, Score] => {
        const passed = passing(name)
        return [name, passed === runs.length ? { score: s.mean, pass: true } : { score: s.mean, pass: false, reason: `passed ${passed} of ${runs.length} repetitions` }]
      }))
      const status = runs.every((r) => r.status === "passed") ? "passed" : runs.every((r) => r.status === "errored") ? "errored" : "failed"
      return {
        id: c.id,
        status,
        input: c.input,
        ...(c.expected === undefined ? {} : { expected: c.expected }),
        ...(status === "errored" ? { error: `all ${runs.length} repetitions errored; #1: ${runs[0]?.error ?? ""}` } : {}),
        scores,
        durationMs: runs.reduce((ms, r) => ms + r.durationMs, 0),
        usage: {
          inputTokens: runs.reduce((n, r) => n + r.usage.inputTokens, 0),
          outputTokens: runs.reduce((n, r) => n + r.usage.outputTokens, 0)
        },
        toolCalls: runs.flatMap((r) => r.toolCalls),
        repetitions: runs,
        stats
      }
    }

    // One unit of work per run, so that a case's repetitions share the concurrency limit with the other cases' runs.
    const units = data.cases.flatMap((c, index) => Array.from({ length: repetitions }, (_, repetition) => ({ c, index, repetition })))
    const runUnit = ({ c, index, repetition }: (typeof units)[number]) =>
      Effect.suspend((): Effect.Effect<RepetitionResult | string, never, unknown> => {
        const why = budgetFor(index)
        return why === undefined ? runOnce(c) : Effect.succeed(why)
      }).pipe(
        Effect.tap((run) =>
          Effect.suspend(() => {
            done += 1
            const result = typeof run === "string" ? skip(c, run) : rowOf(c, run)
            const progress: EvalProgress = repetitions === 1 ? { done, total, result } : { done, total, result, repetition: repetition + 1 }
            // A progress display that throws must not lose the cases already paid for: warn and go on.
            return Effect.try({ try: () => options.onProgress?.(progress), catch: (error) => error }).pipe(
              Effect.catch((error) => Effect.logWarning(`evaluate: onProgress threw on case ${result.id}`, error))
            )
          })
        )
      )

    const runs = yield* Effect.forEach(units, runUnit, { concurrency: concurrency === Number.POSITIVE_INFINITY ? "unbounded" : concurrency })
    const cases = data.cases.map((c, index): CaseResult => {
      const own = runs.slice(index * repetitions, (index + 1) * repetitions)
      const ran = own.filter((run): run is RepetitionResult => typeof run !== "string")
      // A case's runs are all skipped or all run: the budget is asked once per case.
      if (ran.length < own.length) return skip(c, own.find((run): run is string => typeof run === "string")!)
      return repetitions === 1 ? rowOf(c, ran[0]!) : repeatedRow(c, ran)
    })
    const finished = yield* Clock.currentTimeMillis
    return { version: REPORT_VERSION, name: options.name ?? data.name, cases, summary: summarize(cases, finished - started) } satisfies EvalReport
  })
}
