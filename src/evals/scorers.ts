/**
 * The built-in scorers: exact text, JSON and Schema match of the answer; the tool-call trajectory
 * (which tools, with which arguments, in order or as a set); latency and token cost against limits.
 * Each is a `Scorer` like any other; `llmJudge` is in its own module.
 */
import * as Schema from "effect/Schema"
import { canonicalJson } from "../internal/canonical-json.ts"
import type { ExpectedToolCall } from "./dataset.ts"
import { type Score, type Scorer, scorer, type TracedToolCall } from "./scorer.ts"

const asText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value) ?? String(value))

/**
 * 1 when the output equals the case's `expected` as text (`trim`: surrounding whitespace ignored,
 * default true; `ignoreCase`: default false), else 0.
 *
 * @example
 * ```ts
 * evaluate(calculator, cases, [exactMatch()])
 * ```
 */
export const exactMatch = (options: { readonly trim?: boolean; readonly ignoreCase?: boolean; readonly name?: string } = {}): Scorer =>
  scorer(options.name ?? "exact", ({ output, case: c }): Score => {
    if (c.expected === undefined) return { score: 0, pass: false, reason: "the case has no expected value" }
    const norm = (v: unknown) => {
      let s = asText(v)
      if (options.trim ?? true) s = s.trim()
      return options.ignoreCase === true ? s.toLowerCase() : s
    }
    const pass = output !== undefined && norm(output) === norm(c.expected)
    return pass ? { score: 1, pass } : { score: 0, pass, reason: `expected ${JSON.stringify(norm(c.expected))}, got ${output === undefined ? "no output" : JSON.stringify(norm(output))}` }
  })

const parsed = (value: unknown): { readonly value: unknown } | undefined => {
  if (typeof value !== "string") return { value }
  try {
    return { value: JSON.parse(value) }
  } catch {
    return undefined
  }
}

/** Whether `actual` holds everything in `expected` (objects: every expected key; arrays and scalars: equal). */
const contains = (actual: unknown, expected: unknown): boolean => {
  if (expected !== null && typeof expected === "object" && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false
    return Object.entries(expected).every(([k, v]) => contains((actual as Record<string, unknown>)[k], v))
  }
  return sameJson(actual, expected)
}

const sameJson = (a: unknown, b: unknown): boolean => {
  try {
    return canonicalJson(a) === canonicalJson(b)
  } catch {
    return false
  }
}

/**
 * 1 when the output (a JSON text or a value) equals `expected` as JSON, key order ignored; with
 * `subset: true`, when it holds every key of `expected` (extra keys allowed, recursively).
 *
 * @example
 * ```ts
 * evaluate(extractor, cases, [jsonMatch({ subset: true })])
 * ```
 */
export const jsonMatch = (options: { readonly subset?: boolean; readonly name?: string } = {}): Scorer =>
  scorer(options.name ?? "json", ({ output, case: c }): Score => {
    const actual = parsed(output)
    if (actual === undefined) return { score: 0, pass: false, reason: "the output is not JSON" }
    const expected = parsed(c.expected)
    if (c.expected === undefined || expected === undefined) return { score: 0, pass: false, reason: "the case has no expected JSON" }
    const pass = options.subset === true ? contains(actual.value, expected.value) : sameJson(actual.value, expected.value)
    return pass ? { score: 1, pass } : { score: 0, pass, reason: `expected ${asText(expected.value).slice(0, 200)}, got ${asText(actual.value).slice(0, 200)}` }
  })

/**
 * 1 when the output (a JSON text or a value) decodes with `schema`, else 0 with the Schema's issues.
 *
 * @example
 * ```ts
 * schemaMatch(Schema.Struct({ city: Schema.String, population: Schema.Finite }))
 * ```
 */
export const schemaMatch = (schema: Schema.Top, options: { readonly name?: string } = {}): Scorer =>
  scorer(options.name ?? "schema", ({ output }): Score => {
    const actual = parsed(output)
    if (actual === undefined) return { score: 0, pass: false, reason: "the output is not JSON" }
    const result = Schema.decodeUnknownResult(schema as Schema.Codec<unknown, unknown>)(actual.value, { errors: "all" })
    return result._tag === "Success" ? { score: 1, pass: true } : { score: 0, pass: false, reason: result.failure.message }
  })

/** How `toolTrajectory` compares the calls made with the calls expected. */
export type TrajectoryOrder =
  /** The same calls in the same order, nothing else. */
  | "exact"
  /** The expected calls in this order, other calls allowed between them. */
  | "in-order"
  /** The same calls in any order, nothing else. */
  | "set"

/** Options of `toolTrajectory`. */
export interface TrajectoryOptions {
  /** Default `"exact"`. */
  readonly order?: TrajectoryOrder
  /**
   * How arguments compare: `"equal"` (default; JSON equality, key order ignored), `"subset"` (the
   * expected keys, extra keys allowed), `"ignore"` (tool names only). A call expected without `args`
   * matches any arguments.
   */
  readonly args?: "equal" | "subset" | "ignore"
  readonly name?: string
}

const describeCall = (c: { readonly tool: string; readonly args?: unknown }) => (c.args === undefined ? c.tool : `${c.tool}(${asText(c.args)})`)

/**
 * Grades the tools the agent ran (from its `ToolUse`/`ToolError` events, arguments as decoded) against
 * the case's `tools`: the score is the share of expected calls matched (divided by the larger of the
 * two counts for `exact` and `set`, so extra calls cost too); it passes only on a full match.
 *
 * @example
 * ```ts
 * const cases = dataset("calc", [{ input: "(3 + 5) * 2?", tools: [{ tool: "add", args: { a: 3, b: 5 } }, { tool: "multiply" }] }])
 * evaluate(calculator, cases, [toolTrajectory({ order: "exact" })])
 * ```
 */
export const toolTrajectory = (options: TrajectoryOptions = {}): Scorer =>
  scorer(options.name ?? "trajectory", ({ case: c, trace }): Score => {
    const expected = c.tools
    if (expected === undefined) return { score: 0, pass: false, reason: "the case has no expected tools" }
    const actual: ReadonlyArray<TracedToolCall> = trace.toolCalls
    const mode = options.args ?? "equal"
    const matches = (want: ExpectedToolCall, got: TracedToolCall) =>
      want.tool === got.tool && (mode === "ignore" || want.args === undefined || (mode === "subset" ? contains(got.args, want.args) : sameJson(got.args, want.args)))
    const order = options.order ?? "exact"
    let matched = 0
    const unmatched: Array<string> = []
    if (order === "exact") {
      for (let i = 0; i < expected.length; i++) {
        if (actual[i] !== undefined && matches(expected[i]!, actual[i]!)) matched++
        else unmatched.push(`call ${i + 1}: expected ${describeCall(expected[i]!)}, got ${actual[i] === undefined ? "nothing" : describeCall(actual[i]!)}`)
      }
    } else if (order === "in-order") {
      let at = 0
      for (const want of expected) {
        while (at < actual.length && !matches(want, actual[at]!)) at++
        if (at < actual.length) {
          matched++
          at++
        } else unmatched.push(`missing ${describeCall(want)} (in order)`)
      }
    } else {
      const free = [...actual]
      for (const want of expected) {
        const i = free.findIndex((got) => matches(want, got))
        if (i >= 0) {
          matched++
          free.splice(i, 1)
        } else unmatched.push(`missing ${describeCall(want)}`)
      }
    }
    const extra = order === "in-order" ? 0 : Math.max(0, actual.length - matched)
    const denominator = order === "in-order" ? expected.length : Math.max(expected.length, actual.length)
    const score = denominator === 0 ? 1 : matched / denominator
    const pass = matched === expected.length && extra === 0
    if (extra > 0 && order !== "exact") unmatched.push(`${extra} unexpected call(s): ${actual.map(describeCall).join(", ")}`)
    if (extra > 0 && order === "exact" && unmatched.length === 0) unmatched.push(`${extra} extra call(s) after the expected ones`)
    return pass ? { score, pass } : { score, pass, reason: unmatched.join("; ") }
  })

/**
 * 1 when the case ran within `maxMs`, else `maxMs / duration` (and fails).
 *
 * @example
 * ```ts
 * latency({ maxMs: 2000 })
 * ```
 */
export const latency = (options: { readonly maxMs: number; readonly name?: string }): Scorer =>
  scorer(options.name ?? "latency", ({ trace }): Score => {
    const pass = trace.durationMs <= options.maxMs
    return { score: pass ? 1 : options.maxMs / trace.durationMs, pass, reason: `${Math.round(trace.durationMs)} ms (limit ${options.maxMs} ms)` }
  })

/** Prices in US dollars per million tokens. */
export interface Pricing {
  readonly inputPerMillion: number
  readonly outputPerMillion: number
}

/**
 * The cost of `usage` at `pricing`, in US dollars.
 *
 * @example
 * ```ts
 * costOf({ inputTokens: 1000, outputTokens: 100 }, { inputPerMillion: 0.15, outputPerMillion: 0.6 }) // 0.00021
 * ```
 */
export const costOf = (usage: { readonly inputTokens: number; readonly outputTokens: number }, pricing: Pricing): number =>
  (usage.inputTokens * pricing.inputPerMillion + usage.outputTokens * pricing.outputPerMillion) / 1_000_000

/**
 * Grades the tokens a case spent: against `maxTokens` (input + output), or against `maxUsd` at
 * `pricing`; 1 within the limit, else limit / spent (and fails).
 *
 * @example
 * ```ts
 * tokenCost({ maxTokens: 4000 })
 * tokenCost({ maxUsd: 0.01, pricing: { inputPerMillion: 0.15, outputPerMillion: 0.6 } })
 * ```
 */
export const tokenCost = (
  options: { readonly maxTokens: number; readonly name?: string } | { readonly maxUsd: number; readonly pricing: Pricing; readonly name?: string }
): Scorer =>
  scorer(options.name ?? "cost", ({ trace }): Score => {
    const tokens = trace.usage.inputTokens + trace.usage.outputTokens
    const [spent, limit, unit] = "maxTokens" in options ? [tokens, options.maxTokens, "tokens"] : [costOf(trace.usage, options.pricing), options.maxUsd, "USD"]
    const pass = spent <= limit
    return { score: pass ? 1 : limit / spent, pass, reason: `${unit === "USD" ? spent.toFixed(6) : spent} ${unit} (limit ${limit}; ${tokens} tokens)` }
  })
