/**
 * The built-in scorers on hand-made contexts, and datasets from arrays and JSON Lines.
 */
import { Effect, Exit, Schema } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import {
  costOf,
  dataset,
  DatasetError,
  datasetFromJsonl,
  exactMatch,
  jsonMatch,
  latency,
  loadJsonl,
  type RunTrace,
  schemaMatch,
  type Scorer,
  scorer,
  tokenCost,
  toolTrajectory,
  type TracedToolCall
} from "../../src/evals/index.ts"
import type { EvalCase } from "../../src/evals/index.ts"

const trace = (toolCalls: ReadonlyArray<TracedToolCall> = [], extra: Partial<RunTrace> = {}): RunTrace => ({
  toolCalls,
  usage: { inputTokens: 100, outputTokens: 50 },
  durationMs: 120,
  modelCalls: 1,
  ...extra
})
const grade = (s: Scorer, c: Partial<EvalCase<unknown>>, output: unknown, t: RunTrace = trace()) =>
  Effect.runPromise(s.score({ case: { id: "c", input: "q", ...c }, output, error: undefined, trace: t }))

describe("exact, JSON and Schema match", () => {
  it("exactMatch trims by default, ignores case on request", async () => {
    expect(await grade(exactMatch(), { expected: "8" }, " 8\n")).toEqual({ score: 1, pass: true })
    expect(await grade(exactMatch({ trim: false }), { expected: "8" }, " 8")).toMatchObject({ score: 0, pass: false })
    expect(await grade(exactMatch(), { expected: "Paris" }, "paris")).toMatchObject({ pass: false, reason: 'expected "Paris", got "paris"' })
    expect(await grade(exactMatch({ ignoreCase: true }), { expected: "Paris" }, "paris")).toMatchObject({ pass: true })
    expect(await grade(exactMatch(), {}, "x")).toMatchObject({ pass: false, reason: "the case has no expected value" })
    expect(await grade(exactMatch(), { expected: "8" }, undefined)).toMatchObject({ pass: false, reason: 'expected "8", got no output' })
  })

  it("jsonMatch ignores key order; subset allows extra keys", async () => {
    expect(await grade(jsonMatch(), { expected: { a: 1, b: [1, 2] } }, '{"b":[1,2],"a":1}')).toMatchObject({ pass: true })
    expect(await grade(jsonMatch(), { expected: { a: 1 } }, { a: 1, b: 2 })).toMatchObject({ pass: false })
    expect(await grade(jsonMatch({ subset: true }), { expected: { a: 1, n: { x: 1 } } }, { a: 1, b: 2, n: { x: 1, y: 2 } })).toMatchObject({ pass: true })
    expect(await grade(jsonMatch({ subset: true }), { expected: { a: [1] } }, { a: [1, 2] })).toMatchObject({ pass: false })
    expect(await grade(jsonMatch(), { expected: { a: 1 } }, "not json {")).toMatchObject({ pass: false, reason: "the output is not JSON" })
    expect(await grade(jsonMatch(), { expected: '{"a":1}' }, '{"a":1}')).toMatchObject({ pass: true })
  })

  it("schemaMatch decodes the output with the Schema and reports its issues", async () => {
    const City = Schema.Struct({ city: Schema.String, population: Schema.Finite })
    expect(await grade(schemaMatch(City), {}, '{"city":"Lyon","population":520000}')).toEqual({ score: 1, pass: true })
    const bad = await grade(schemaMatch(City), {}, { city: "Lyon", population: "many" })
    expect(bad).toMatchObject({ score: 0, pass: false })
    expect(bad.reason).toContain("population")
  })
})

describe("toolTrajectory", () => {
  const calls: ReadonlyArray<TracedToolCall> = [
    { tool: "search", args: { q: "lyon", limit: 5 }, ok: true },
    { tool: "fetch", args: { id: 1 }, ok: true },
    { tool: "answer", args: {}, ok: true }
  ]
  const expected = [{ tool: "search", args: { q: "lyon", limit: 5 } }, { tool: "fetch", args: { id: 1 } }, { tool: "answer" }]

  it("exact: same calls, same order, same arguments (key order ignored)", async () => {
    expect(await grade(toolTrajectory(), { tools: expected }, "", trace(calls))).toEqual({ score: 1, pass: true })
    const swapped = await grade(toolTrajectory(), { tools: [expected[1]!, expected[0]!, expected[2]!] }, "", trace(calls))
    expect(swapped).toMatchObject({ pass: false, score: 1 / 3 })
    expect(swapped.reason).toContain('call 1: expected fetch({"id":1}), got search({"q":"lyon","limit":5})')
    const wrongArgs = await grade(toolTrajectory(), { tools: [{ tool: "search", args: { q: "paris", limit: 5 } }, expected[1]!, expected[2]!] }, "", trace(calls))
    expect(wrongArgs).toMatchObject({ pass: false, score: 2 / 3 })
    const extra = await grade(toolTrajectory(), { tools: expected.slice(0, 2) }, "", trace(calls))
    expect(extra).toMatchObject({ pass: false, score: 2 / 3, reason: "1 extra call(s) after the expected ones" })
  })

  it("in-order allows calls between; set ignores order but not extras; args subset or ignored", async () => {
    expect(await grade(toolTrajectory({ order: "in-order" }), { tools: [{ tool: "search" }, { tool: "answer" }] }, "", trace(calls))).toMatchObject({ pass: true, score: 1 })
    expect(await grade(toolTrajectory({ order: "in-order" }), { tools: [{ tool: "answer" }, { tool: "search" }] }, "", trace(calls))).toMatchObject({ pass: false, score: 0.5 })
    expect(await grade(toolTrajectory({ order: "set" }), { tools: [expected[2]!, expected[0]!, expected[1]!] }, "", trace(calls))).toMatchObject({ pass: true })
    const missingOne = await grade(toolTrajectory({ order: "set" }), { tools: [expected[2]!, expected[0]!] }, "", trace(calls))
    expect(missingOne).toMatchObject({ pass: false, score: 2 / 3 })
    expect(missingOne.reason).toContain("1 unexpected call(s)")
    expect(await grade(toolTrajectory({ args: "subset" }), { tools: [{ tool: "search", args: { q: "lyon" } }, expected[1]!, expected[2]!] }, "", trace(calls))).toMatchObject({ pass: true })
    expect(await grade(toolTrajectory({ args: "ignore" }), { tools: [{ tool: "search", args: { q: "x" } }, { tool: "fetch", args: 0 }, { tool: "answer" }] }, "", trace(calls))).toMatchObject({ pass: true })
    expect(await grade(toolTrajectory(), { tools: [] }, "", trace())).toEqual({ score: 1, pass: true })
    expect(await grade(toolTrajectory(), {}, "", trace())).toMatchObject({ pass: false, reason: "the case has no expected tools" })
  })
})

describe("latency and cost", () => {
  it("pass within the limit; beyond it, score is limit / spent", async () => {
    expect(await grade(latency({ maxMs: 200 }), {}, "", trace([], { durationMs: 120 }))).toMatchObject({ score: 1, pass: true })
    expect(await grade(latency({ maxMs: 60 }), {}, "", trace([], { durationMs: 120 }))).toMatchObject({ score: 0.5, pass: false })
    expect(await grade(tokenCost({ maxTokens: 150 }), {}, "")).toMatchObject({ score: 1, pass: true })
    expect(await grade(tokenCost({ maxTokens: 75 }), {}, "")).toMatchObject({ score: 0.5, pass: false })
    const pricing = { inputPerMillion: 2, outputPerMillion: 4 }
    expect(costOf({ inputTokens: 100, outputTokens: 50 }, pricing)).toBeCloseTo(0.0004)
    expect(await grade(tokenCost({ maxUsd: 0.0002, pricing }), {}, "")).toMatchObject({ score: 0.5, pass: false })
  })

  it("scorer() accepts numbers (clamped, NaN is 0), booleans, Scores and Effects; a failed Effect is a ScorerError", async () => {
    expect(await grade(scorer("n", () => 1.7), {}, "")).toEqual({ score: 1, pass: true })
    expect(await grade(scorer("n", () => Number.NaN), {}, "")).toEqual({ score: 0, pass: false })
    expect(await grade(scorer("n", () => 0.8, { threshold: 0.75 }), {}, "")).toEqual({ score: 0.8, pass: true })
    expect(await grade(scorer("b", () => Effect.succeed(false)), {}, "")).toEqual({ score: 0, pass: false })
    const exit = await Effect.runPromiseExit(scorer("t", () => {
      throw new Error("bug")
    }).score({ case: { id: "c", input: "" }, output: "", error: undefined, trace: trace() }))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("ScorerError")
  })
})

describe("datasets", () => {
  it("assigns ids and refuses duplicates", async () => {
    const data = await Effect.runPromise(dataset("d", [{ input: 1 }, { id: "x", input: 2 }]))
    expect(data.cases.map((c) => c.id)).toEqual(["case-1", "x"])
    const dup = await Effect.runPromiseExit(dataset("d", [{ id: "a", input: 1 }, { id: "a", input: 2 }]))
    expect(Exit.isFailure(dup) && JSON.stringify(dup.cause)).toContain('duplicate case id \\"a\\"')
  })

  it("reads JSON Lines with Schemas, naming the line of a bad one", async () => {
    const text = '{"input":"2 + 2","expected":4,"tags":["easy"]}\n\n{"id":"m","input":"3 * 5","expected":15,"tools":[{"tool":"multiply","args":{"a":3,"b":5}}]}\n'
    const data = await Effect.runPromise(datasetFromJsonl(text, { name: "math", input: Schema.String, expected: Schema.Finite }))
    expect(data).toEqual({
      name: "math",
      cases: [
        { id: "case-1", input: "2 + 2", expected: 4, tags: ["easy"] },
        { id: "m", input: "3 * 5", expected: 15, tools: [{ tool: "multiply", args: { a: 3, b: 5 } }] }
      ]
    })
    const failures: Array<[string, string]> = [
      ['{"input":"a"}\n{"input":', "line 2: not JSON"],
      ['{"expected":1}', "line 1: Missing key\n  at [\"input\"]"],
      ['{"input":1}', "line 1: input:"],
      ['{"input":"a","expected":"x"}', "line 1: expected:"],
      ['{"input":"a","tools":[{"name":"x"}]}', "line 1:"],
      ["[1,2]", "line 1:"]
    ]
    for (const [jsonl, message] of failures) {
      const exit = await Effect.runPromiseExit(datasetFromJsonl(jsonl, { input: Schema.String, expected: Schema.Finite }))
      expect(Exit.isFailure(exit), jsonl).toBe(true)
      const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error: DatasetError }).error : undefined
      expect(error).toBeInstanceOf(DatasetError)
      expect(error!.message, jsonl).toContain(message)
    }
  })

  it("loads a JSONL file, and fails with DatasetError when it cannot", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "evals-")), "cases.jsonl")
    writeFileSync(file, '{"input":"hi","expected":"hello"}\n')
    const data = await Effect.runPromise(loadJsonl(file))
    expect(data.name).toBe(file)
    expect(data.cases).toHaveLength(1)
    const missing = await Effect.runPromiseExit(loadJsonl(join(tmpdir(), "no-such-dataset.jsonl")))
    expect(Exit.isFailure(missing) && JSON.stringify(missing.cause)).toContain("cannot read it")
  })
})
