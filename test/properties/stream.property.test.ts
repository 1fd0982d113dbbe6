/**
 * Streaming changes nothing but timing: for any script (valid, invalid, unknown calls, hostile
 * arguments and texts, model errors) and any way of tearing its texts into chunks, a streamed run's
 * transcript (every request the model saw), outcome and tool executions equal the non-streamed run's,
 * and its deltas concatenate to the texts the model sent.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Exit, Schema, Stream } from "effect"
import { describe, expect } from "vitest"
import {
  agent,
  type Chunker,
  type LlmResponseInit,
  ModelError,
  type ModelRequest,
  Recovery,
  type RunEndEvent,
  type RunStreamEvent,
  skill,
  tool,
  type ToolCallInit
} from "../../src/index.ts"
import { scriptedModel, type ScriptStep } from "../../src/testing/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })

const arbArguments: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ a: fc.integer(), b: fc.integer() }),
  fc.record({ a: fc.string({ unit: "binary" }), b: fc.integer() }),
  fc.constantFrom("not json", "{\"a\": 1, \"b\":", "", "null", "{\"a\":\"\\ud83d\\ude00\",\"b\":1}"),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.anything()
)
const arbCall: fc.Arbitrary<ToolCallInit> = fc.record({
  id: fc.string({ maxLength: 6 }),
  name: fc.constantFrom("add", "multiply", "delete_all", ""),
  arguments: arbArguments
})
const arbResponse: fc.Arbitrary<ScriptStep> = fc.oneof(
  { weight: 5, arbitrary: fc.array(arbCall, { maxLength: 3 }).map((calls): LlmResponseInit => ({ _tag: "ToolCalls", calls })) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.array(arbCall, { minLength: 1, maxLength: 2 }), fc.string({ unit: "binary", maxLength: 20 }))
      .map(([calls, content]): LlmResponseInit => ({ _tag: "ToolCalls", calls, content }))
  },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }).map((content): LlmResponseInit => ({ _tag: "Text", content })) },
  { weight: 1, arbitrary: fc.constant(new ModelError({ provider: "scripted", reason: "rate limited", status: 429 })) }
)
/** Tears texts at arbitrary positions: piece sizes cycle through `sizes` (surrogate pairs may be split). */
const arbChunker: fc.Arbitrary<Chunker> = fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 }).map((sizes) => (text: string) => {
  const pieces: Array<string> = []
  for (let i = 0, k = 0; i < text.length; k++) {
    const size = sizes[k % sizes.length]!
    pieces.push(text.slice(i, i + size))
    i += size
  }
  return pieces
})

const arbScenario = fc.record({
  script: fc.array(arbResponse, { maxLength: 8 }),
  chunk: arbChunker,
  maxTurns: fc.integer({ min: 1, max: 5 }),
  recovery: fc.constantFrom(Recovery.feedback, Recovery.fail, Recovery.substitute("substituted"))
})
type Scenario = typeof arbScenario extends fc.Arbitrary<infer S> ? S : never

const setup = (scenario: Scenario, streaming: boolean) => {
  const executed: Array<{ tool: string; args: unknown }> = []
  const requests: Array<ModelRequest> = []
  let end: RunEndEvent | undefined
  const add = tool("add", { args: Operands, run: (args) => (executed.push({ tool: "add", args }), args.a + args.b) })
  const multiply = tool("multiply", {
    args: Operands,
    run: (args) => {
      executed.push({ tool: "multiply", args })
      if (args.b % 3 === 0) throw new Error("flaky")
      return args.a * args.b
    }
  })
  const deleteAll = tool("delete_all", { args: Schema.Struct({}), run: () => executed.push({ tool: "delete_all", args: {} }) })
  const model = scriptedModel(scenario.script, streaming ? { chunk: scenario.chunk } : {})
  const subject = agent("subject")
    .model(model)
    .budget({ maxTurns: scenario.maxTurns })
    .tools({ add, multiply, delete_all: deleteAll })
    .skills(({ add, multiply }) => [skill("compute", "arithmetic").tools(add, multiply)])
    .recover({ invalidArgs: () => scenario.recovery, executionError: () => scenario.recovery })
    .onModelCall((e) => {
      requests.push(e.request)
    })
    .onRunEnd((e) => {
      end = e
    })
  return { subject, executed, requests, end: () => end }
}

/** What must not differ: failures compared by tag and message, successes by value. */
const outcomeOf = (end: RunEndEvent | undefined) =>
  end === undefined
    ? undefined
    : end.outcome._tag === "Failure"
    ? { _tag: "Failure", error: end.outcome.error._tag, message: end.outcome.error.message }
    : end.outcome

describe("streaming is a view of the same run", () => {
  test.prop([arbScenario], { numRuns })("same transcript, outcome and tool executions as the non-streamed run, for any chunking", async (scenario) => {
    const plain = setup(scenario, false)
    const plainExit = await Effect.runPromiseExit(plain.subject.runEffect("compute"))
    const live = setup(scenario, true)
    const events: Array<RunStreamEvent> = []
    const liveExit = await Effect.runPromiseExit(live.subject.runStream("compute").pipe(Stream.runForEach((e) => Effect.sync(() => events.push(e)))))
    expect(live.requests).toEqual(plain.requests)
    expect(live.executed).toEqual(plain.executed)
    expect(outcomeOf(live.end())).toEqual(outcomeOf(plain.end()))
    expect(Exit.isSuccess(liveExit)).toBe(Exit.isSuccess(plainExit))
    expect(events.at(-1)?._tag).toBe("RunEnd")
    // Every answer's text deltas concatenate to the text the model sent in that turn.
    for (const response of events.flatMap((e) => (e._tag === "ModelResponse" ? [e] : []))) {
      const deltas = events.filter((e) => e._tag === "TextDelta" && e.turn === response.turn).map((e) => (e as { delta: string }).delta)
      expect(deltas.join("")).toBe(response.response.content ?? "")
    }
  })
})
