/**
 * Scorers: how a case's answer is graded. A scorer sees the case, the agent's output (or its error)
 * and the run's trace (tool calls with decoded arguments, token usage, duration, model calls), and
 * returns a `Score`: a number in [0, 1], whether it passes, and why. `scorer(name, fn)` builds one
 * from a function returning a number, a boolean, a `Score`, or an Effect of one.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type { Usage } from "../model/messages.ts"
import type { EvalCase } from "./dataset.ts"
import { shownValue } from "../internal/shown-value.ts"

/** A grade: `score` in [0, 1]; `pass` whether it meets the scorer's bar; `reason` for the report. */
export interface Score {
  readonly score: number
  readonly pass: boolean
  readonly reason?: string
}

/** A tool that ran during a case, with the arguments its Schema decoded, and whether it succeeded. */
export interface TracedToolCall {
  readonly tool: string
  readonly args: unknown
  readonly ok: boolean
}

/** What a case's run did, from its events. */
export interface RunTrace {
  readonly toolCalls: ReadonlyArray<TracedToolCall>
  readonly usage: Usage
  readonly durationMs: number
  readonly modelCalls: number
}

/** What a scorer sees. `output` is undefined when the run failed; `error` then says why. */
export interface ScoreContext<I, O, E> {
  readonly case: EvalCase<I, E>
  readonly output: O | undefined
  readonly error: string | undefined
  readonly trace: RunTrace
}

/**
 * A scorer could not grade (a judge that answered garbage, a scorer that threw). The case gets score 0
 * for it, and the report says why.
 *
 * @example
 * ```ts
 * scorer("strict", () => Effect.fail(new ScorerError({ scorer: "strict", reason: "no expected value" })))
 * ```
 */
export class ScorerError extends Data.TaggedError("ScorerError")<{
  readonly scorer: string
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `Scorer ${this.scorer} failed: ${this.reason}`
  }
}

/** A named grading function; `R` are the services it needs (a judge's model, say). */
export interface Scorer<I = any, O = any, E = any, R = never> {
  readonly name: string
  readonly score: (context: ScoreContext<I, O, E>) => Effect.Effect<Score, ScorerError, R>
}

/** What a scorer function may return: a number (passes at `threshold`), a boolean, or a `Score`. */
export type ScoreInit = number | boolean | Score

const clamp = (n: number) => (Number.isFinite(n) ? Math.min(1, Math.max(0, n)) : 0)

/**
 * A `ScoreInit` as a `Score`: numbers are clamped to [0, 1] (NaN is 0) and pass at `threshold`.
 *
 * @example
 * ```ts
 * toScore(0.8, 0.75) // { score: 0.8, pass: true }
 * toScore(false)     // { score: 0, pass: false }
 * ```
 */
export const toScore = (init: ScoreInit, threshold = 1): Score => {
  if (typeof init === "boolean") return { score: init ? 1 : 0, pass: init }
  if (typeof init === "number") return { score: clamp(init), pass: clamp(init) >= threshold }
  return { ...init, score: clamp(init.score) }
}

/** Why `init` is not a `ScoreInit`, or undefined when it is one. */
const notAScore = (init: unknown): string | undefined => {
  if (typeof init === "number" || typeof init === "boolean") return undefined
  if (init !== null && typeof init === "object" && typeof (init as { score?: unknown }).score === "number" && typeof (init as { pass?: unknown }).pass === "boolean") return undefined
  if (init !== null && typeof init === "object" && typeof (init as { then?: unknown }).then === "function") {
    return "returned a Promise: return a number, a boolean, a Score, or an Effect of one (wrap async work in Effect.promise(() => ...))"
  }
  return `returned ${shownValue(init)}, which is not a number, a boolean or a Score ({ score, pass })`
}

/**
 * A scorer from a function; a throw or a failed Effect becomes a `ScorerError`, and so does a result
 * that is not a number, a boolean, a `Score` or an Effect of one (a Promise from an `async` function
 * included: its rejection is caught, never left unhandled).
 *
 * @example
 * ```ts
 * const short = scorer("short", ({ output }) => String(output).length <= 80)
 * const close = scorer("close", ({ output, case: c }) => 1 - Math.abs(Number(output) - Number(c.expected)) / 10, { threshold: 0.9 })
 * ```
 */
export const scorer = <I = any, O = any, E = any, R = never>(
  name: string,
  fn: (context: ScoreContext<I, O, E>) => ScoreInit | Effect.Effect<ScoreInit, ScorerError, R>,
  options: { readonly threshold?: number } = {}
): Scorer<I, O, E, R> => ({
  name,
  score: (context) =>
    Effect.suspend(() => {
      const result = fn(context)
      return Effect.isEffect(result) ? result : Effect.succeed(result)
    }).pipe(
      Effect.flatMap((init: unknown) => {
        const wrong = notAScore(init)
        if (wrong === undefined) return Effect.succeed(toScore(init as ScoreInit, options.threshold))
        // A plain-JavaScript async scorer: its Promise may still reject, and must not do so unhandled.
        if (typeof (init as { then?: unknown } | null)?.then === "function") (init as PromiseLike<unknown>).then(undefined, () => undefined)
        return Effect.fail(new ScorerError({ scorer: name, reason: wrong }))
      }),
      Effect.catchDefect((cause) => Effect.fail(new ScorerError({ scorer: name, reason: cause instanceof Error ? cause.message : String(cause), cause })))
    )
})
