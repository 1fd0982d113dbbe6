/**
 * The types of `evaluate`: its requirements are the agent's (a missing model is `ModelClientService`)
 * and the scorers'; the dataset's inputs must be the agent's input; a custom scorer sees the agent's
 * output type.
 */
import { Context, Effect, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { agent, type ModelClientService } from "../../src/index.ts"
import { type CaseResult, type Dataset, type EvalReport, evaluate, type EvaluateOptions, exactMatch, type RepetitionResult, scorer } from "../../src/evals/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

class Rubrics extends Context.Service<Rubrics, { readonly strict: boolean }>()("test/Rubrics") {}

describe("evaluate types", () => {
  const texts = {} as Dataset<string, string>
  const numbers = {} as Dataset<number, string>

  it("requires what the agent and the scorers require", () => {
    const withoutModel = evaluate(agent("a"), texts, [exactMatch()])
    expectTypeOf(withoutModel).toEqualTypeOf<Effect.Effect<EvalReport, never, ModelClientService>>()
    const withModel = evaluate(agent("a").model(scriptedModel([])), texts, [exactMatch()])
    expectTypeOf(withModel).toEqualTypeOf<Effect.Effect<EvalReport, never, never>>()
    const needsRubrics = scorer("strict", () => Effect.map(Effect.service(Rubrics), (r) => r.strict))
    const withService = evaluate(agent("a").model(scriptedModel([])), texts, [exactMatch(), needsRubrics])
    expectTypeOf(withService).toEqualTypeOf<Effect.Effect<EvalReport, never, Rubrics>>()
  })

  it("checks the dataset against the agent's input, and types the output for scorers", () => {
    const typed = agent("t", { input: Schema.String, output: Schema.Struct({ total: Schema.Number }) }).model(scriptedModel([]))
    evaluate(typed, texts, [scorer<string, { total: number }, string>("total", ({ output }) => output?.total === 8)])
    // @ts-expect-error the agent takes strings, the dataset has numbers
    evaluate(typed, numbers, [exactMatch()])
    const fn = (n: number) => Effect.succeed(n * 2)
    expectTypeOf(evaluate(fn, numbers, [scorer<number, number, string>("even", ({ output }) => (output ?? 1) % 2 === 0)])).toEqualTypeOf<Effect.Effect<EvalReport, never, never>>()
  })
  it("refuses a dollar budget without the prices to count it", () => {
    const fn = (n: number) => Effect.succeed(n * 2)
    evaluate(fn, numbers, [exactMatch()], { budget: { maxUsd: 1, pricing: { inputPerMillion: 0.15, outputPerMillion: 0.6 } } })
    evaluate(fn, numbers, [exactMatch()], { budget: { maxTokens: 1_000, pricing: { inputPerMillion: 0.15, outputPerMillion: 0.6 } } })
    // @ts-expect-error maxUsd needs pricing: without it no dollar is counted and the limit would never apply
    evaluate(fn, numbers, [exactMatch()], { budget: { maxUsd: 1 } })
  })
  it("takes repetitions as a number, and types the runs it keeps", () => {
    const fn = (n: number) => Effect.succeed(n * 2)
    expectTypeOf<EvaluateOptions["repetitions"]>().toEqualTypeOf<number | undefined>()
    evaluate(fn, numbers, [exactMatch()], { repetitions: 3, concurrency: 4 })
    // Not called: at run time "3" throws AgentConfigError (test/evals/repetitions.test.ts).
    const fromJavaScript = () =>
      // @ts-expect-error repetitions is a number: "3" is refused here (and at run time, for JavaScript callers)
      evaluate(fn, numbers, [exactMatch()], { repetitions: "3" })
    expectTypeOf(fromJavaScript).toBeFunction()
    expectTypeOf<CaseResult["repetitions"]>().toEqualTypeOf<ReadonlyArray<RepetitionResult> | undefined>()
  })
})
