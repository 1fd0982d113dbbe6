/**
 * LLM-as-judge: a model grades the answer against a rubric, and its verdict is decoded with a Schema
 * (by default `{ score: number in [0, 1], reason: string }`), so a judge that rambles, answers
 * outside the shape or calls a tool is a `ScorerError`, never a silently wrong grade. The request asks
 * for native structured output (`responseFormat`) and states the JSON Schema in the prompt for
 * providers without it; the answer is parsed leniently (prose or fences around the JSON) and decoded
 * strictly. Test a judge like any model: with `scriptedModel` or a recorded cassette.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { canonicalJson } from "../internal/canonical-json.ts"
import { parseLenientJsonValues } from "../internal/lenient-json.ts"
import type { ModelRequest } from "../model/messages.ts"
import type { ModelClient } from "../model/model-client.ts"
import { type Score, type Scorer, ScorerError, toScore } from "./scorer.ts"

/**
 * The default verdict: a score in [0, 1] and a reason.
 *
 * @example
 * ```ts
 * Schema.decodeUnknownSync(JudgeVerdict)({ score: 0.8, reason: "correct, a little verbose" })
 * ```
 */
export const JudgeVerdict = Schema.Struct({
  score: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 })).annotate({ description: "0 = wrong, 1 = fully meets the rubric" }),
  reason: Schema.String.annotate({ description: "one or two sentences" })
})

/** Options of `llmJudge`; `V` is the verdict's type. */
export interface LlmJudgeOptions<V> {
  /** The judge. */
  readonly model: ModelClient
  /** What a good answer is, in words. */
  readonly rubric: string
  /** The verdict's Schema. Default `JudgeVerdict`; give `toScore` for another. */
  readonly verdict?: Schema.Codec<V, any>
  /** From a verdict to a score. Default: the verdict's `score` and `reason`. */
  readonly toScore?: (verdict: V) => Score | number | boolean
  /** A numeric score passes at this. Default 0.5. */
  readonly threshold?: number
  readonly name?: string
}

/**
 * The request a judge receives for one case (exported for tests and for recording judges).
 *
 * @example
 * ```ts
 * judgeRequest("Names the capital.", jsonSchema, { input: "Capital of France?", expected: "Paris", output: "Paris", error: undefined })
 * ```
 */
export const judgeRequest = (rubric: string, jsonSchema: unknown, subject: { input: unknown; expected: unknown; output: unknown; error: string | undefined }): ModelRequest => ({
  messages: [
    {
      role: "system",
      content: [
        "You grade an AI agent's answer against a rubric.",
        `Rubric: ${rubric}`,
        `Answer with one JSON object and nothing else, matching this JSON Schema: ${JSON.stringify(jsonSchema)}`
      ].join("\n")
    },
    { role: "user", content: JSON.stringify(subject, null, 2) }
  ],
  tools: [],
  temperature: 0
})

/**
 * A scorer asking `model` to grade each answer against `rubric`. A verdict that does not decode, a tool
 * call, or a model error is a `ScorerError` (the case scores 0 on it, with the reason).
 *
 * @example
 * ```ts
 * const helpful = llmJudge({ model: openai("gpt-4o-mini"), rubric: "Answers the question, with the number, in one sentence." })
 * evaluate(calculator, cases, [exactMatch(), helpful])
 * ```
 */
export function llmJudge(options: LlmJudgeOptions<typeof JudgeVerdict.Type> & { readonly verdict?: undefined }): Scorer
export function llmJudge<V>(options: LlmJudgeOptions<V> & { readonly verdict: Schema.Codec<V, any>; readonly toScore: (verdict: V) => Score | number | boolean }): Scorer
export function llmJudge<V>(options: LlmJudgeOptions<V>): Scorer {
  const name = options.name ?? "judge"
  const verdict = (options.verdict ?? JudgeVerdict) as Schema.Codec<V, any>
  const jsonSchema = Schema.toJsonSchemaDocument(verdict, { onExcessProperty: "error" }).schema
  const decode = Schema.decodeUnknownResult(verdict)
  const threshold = options.threshold ?? 0.5
  const grade = options.toScore ?? ((v: V) => {
    const { score, reason } = v as unknown as typeof JudgeVerdict.Type
    return { score, pass: score >= threshold, reason }
  })
  const fail = (reason: string, cause?: unknown) => new ScorerError({ scorer: name, reason, ...(cause === undefined ? {} : { cause }) })
  return {
    name,
    score: ({ case: c, output, error }) => {
      const request = judgeRequest(options.rubric, jsonSchema, { input: c.input, expected: c.expected, output, error })
      return options.model.chat({ ...request, responseFormat: { type: "json_schema", name: "verdict", schema: jsonSchema, strict: false } }).pipe(
        Effect.mapError((e) => fail(`the judge's model failed: ${e.message}`, e)),
        Effect.flatMap((response) => {
          if (response._tag !== "Text") return Effect.fail(fail(`the judge called tools (${response.calls.map((c) => c.name).join(", ")}) instead of answering`))
          const values = parseLenientJsonValues(response.content)
          if (values.length === 0) return Effect.fail(fail(`the verdict is not JSON: ${JSON.stringify(response.content.slice(0, 200))}`))
          const decoded = values.map((value) => decode(value))
          const verdicts = decoded.flatMap((d) => (d._tag === "Success" ? [d.success] : []))
          if (verdicts.length === 0) {
            const first = decoded[0]!
            return Effect.fail(fail(`the verdict does not match its Schema: ${first._tag === "Failure" ? first.failure.message : ""}`))
          }
          // An example verdict in the prose, then the real one: which one grades is a guess, so none does.
          const distinct = [...new Set(verdicts.map((v) => canonicalJson(v)))]
          if (distinct.length > 1) {
            return Effect.fail(fail(`the judge gave ${distinct.length} different verdicts in one reply (${distinct.map((v) => v.slice(0, 80)).join("; ")}): it must give exactly one`))
          }
          const verdict = verdicts[0]!
          return Effect.try({ try: () => toScore(grade(verdict), threshold), catch: (e) => fail(`toScore threw: ${String(e)}`, e) })
        })
      )
    }
  }
}
