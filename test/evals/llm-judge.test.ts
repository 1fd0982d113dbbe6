/**
 * llmJudge with a scripted judge (verdicts good, malformed, out of range, a tool call, a model error,
 * a custom verdict Schema) and with a recorded one: `fixtures/judge.cassette.json` was recorded from
 * `openai(...)` over a loopback Chat Completions server (`RECORD_FIXTURES=1` records it again) and is
 * replayed here with no server. A changed rubric no longer matches the cassette.
 */
import { Effect, Schema } from "effect"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { agent, ModelError, openai, text, toolCalls } from "../../src/index.ts"
import { dataset, evaluate, llmJudge, type Scorer } from "../../src/evals/index.ts"
import { recordCassette, replayCassette, scriptedModel } from "../../src/testing/index.ts"
import { openAiText, startLoopback } from "../providers/loopback.ts"

const grade = (judge: Scorer, output: unknown = "Paris") =>
  Effect.runPromiseExit(judge.score({ case: { id: "c", input: "Capital of France?", expected: "Paris" }, output, error: undefined, trace: { toolCalls: [], usage: { inputTokens: 0, outputTokens: 0 }, durationMs: 1, modelCalls: 1 } }))
const scoreOf = async (judge: Scorer, output?: unknown) => {
  const exit = await grade(judge, output)
  if (exit._tag === "Failure") throw new Error(`unexpected failure: ${JSON.stringify(exit.cause)}`)
  return exit.value
}
const failureOf = async (judge: Scorer) => {
  const exit = await grade(judge)
  expect(exit._tag).toBe("Failure")
  return exit._tag === "Failure" ? (exit.cause.reasons[0] as { error: { _tag: string; message: string } }).error : undefined
}
const rubric = "The answer names the capital city correctly."

describe("llmJudge, scripted", () => {
  it("decodes the verdict, asks for structured output, and shows the judge the case", async () => {
    const model = scriptedModel(text('Sure! ```json\n{"score": 0.9, "reason": "correct"}\n```'))
    expect(await scoreOf(llmJudge({ model, rubric }))).toEqual({ score: 0.9, pass: true, reason: "correct" })
    const request = model.requests[0]!
    expect(request.responseFormat).toMatchObject({ type: "json_schema", name: "verdict" })
    expect(request.messages[0]!.content).toContain(rubric)
    expect(JSON.parse(request.messages[1]!.content)).toEqual({ input: "Capital of France?", expected: "Paris", output: "Paris" })
    expect(await scoreOf(llmJudge({ model: scriptedModel(text('{"score":0.3,"reason":"vague"}')), rubric }))).toEqual({ score: 0.3, pass: false, reason: "vague" })
    expect(await scoreOf(llmJudge({ model: scriptedModel(text('{"score":0.3,"reason":"vague"}')), rubric, threshold: 0.25 }))).toMatchObject({ pass: true })
  })

  it("a verdict that is not JSON, out of its Schema, a tool call or a model error is a ScorerError", async () => {
    const cases: Array<[ReturnType<typeof scriptedModel>, string]> = [
      [scriptedModel(text("I think it is fine.")), "the verdict is not JSON"],
      [scriptedModel(text('{"score": 7, "reason": "great"}')), "does not match its Schema"],
      [scriptedModel(text('{"score": 0.5}')), "does not match its Schema"],
      [scriptedModel(toolCalls([{ name: "search", arguments: {} }])), "the judge called tools (search)"],
      [scriptedModel(new ModelError({ provider: "x", reason: "overloaded" })), "the judge's model failed"]
    ]
    for (const [model, reason] of cases) {
      const error = await failureOf(llmJudge({ model, rubric }))
      expect(error?._tag).toBe("ScorerError")
      expect(error?.message).toContain(reason)
    }
  })

  it("takes a custom verdict Schema and maps it to a score", async () => {
    const Verdict = Schema.Struct({ correct: Schema.Boolean, grade: Schema.Literals(["A", "B", "C"]) })
    const judge = llmJudge({ model: scriptedModel(text('{"correct":true,"grade":"B"}')), rubric, verdict: Verdict, toScore: (v) => ({ score: v.grade === "A" ? 1 : v.grade === "B" ? 0.7 : 0.3, pass: v.correct }) })
    expect(await scoreOf(judge)).toEqual({ score: 0.7, pass: true })
  })

  it("a judge failing on a case gives that case 0 in an evaluation, with the reason", async () => {
    const data = await Effect.runPromise(dataset("d", [{ input: "Capital of France?", expected: "Paris" }]))
    const report = await Effect.runPromise(evaluate((q: string) => Effect.succeed(`${q} Paris`), data, [llmJudge({ model: scriptedModel(text("no idea")), rubric })]))
    expect(report.cases[0]).toMatchObject({ status: "failed", scores: { judge: { score: 0, pass: false } } })
    expect(report.cases[0]!.scores.judge!.reason).toContain("the verdict is not JSON")
  })
})

describe("llmJudge, recorded", () => {
  const fixture = fileURLToPath(new URL("./fixtures/judge.cassette.json", import.meta.url))
  const answers = ["Paris.", "Lyon, I believe."]

  it.runIf(process.env.RECORD_FIXTURES === "1")("records the fixture from openai(...) over loopback", async () => {
    const server = await startLoopback([
      openAiText('{"reason":"Names Paris, the capital.","score":1}'),
      openAiText('{"reason":"Lyon is not the capital of France.","score":0}')
    ])
    try {
      const judge = llmJudge({ model: recordCassette(openai("gpt-4o-mini", { baseURL: `${server.url}/v1`, apiKey: "sk-fixture-not-a-key" }), { cassette: fixture }), rubric })
      for (const answer of answers) await scoreOf(judge, answer)
    } finally {
      await server.close()
    }
  })

  it("replays the recorded verdicts with no server", async () => {
    const replay = replayCassette(fixture)
    const judge = llmJudge({ model: replay, rubric })
    expect(await scoreOf(judge, answers[0])).toEqual({ score: 1, pass: true, reason: "Names Paris, the capital." })
    expect(await scoreOf(judge, answers[1])).toEqual({ score: 0, pass: false, reason: "Lyon is not the capital of France." })
    expect(replay.unused()).toEqual([])
    expect(replay.metadata).toMatchObject({ provider: "openai", model: "gpt-4o-mini" })
  })

  it("a changed rubric no longer matches the recording, and says so", async () => {
    const error = await failureOf(llmJudge({ model: replayCassette(fixture), rubric: "Be generous." }))
    expect(error?.message).toContain("system prompt line 2")
    expect(error?.message).toContain('"Rubric: Be generous."')
  })

  it("evaluates an agent with the recorded judge", async () => {
    const geography = agent("geo").model(scriptedModel([text("Paris."), text("Lyon, I believe.")]))
    const data = await Effect.runPromise(dataset("capitals", [{ input: "Capital of France?", expected: "Paris" }, { input: "Capital of France?", expected: "Paris" }]))
    const report = await Effect.runPromise(evaluate(geography, data, [llmJudge({ model: replayCassette(fixture), rubric })]))
    expect(report.cases.map((c) => c.status)).toEqual(["passed", "failed"])
    expect(report.summary.scorers.judge).toEqual({ mean: 0.5, passRate: 0.5 })
  })
})
