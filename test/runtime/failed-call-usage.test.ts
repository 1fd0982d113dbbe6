/**
 * A model call that fails after the model spent tokens (a reply cut off at the token limit, refused or
 * filtered; `jsonMode`'s replies and corrections before it gave up) still costs them: the `ModelError`
 * carries them (`usage`), and a run counts them as it counts an answered call's: in the GenAI token
 * metric, on its `invoke_agent` span, and against its budget and every budget it runs under (an agent
 * used as a tool whose call failed leaves its tokens charged to the parent's `maxTokens`).
 */
import { Effect, Metric, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, genAiTokenUsage, jsonMode, ModelClient, ModelError, type ResponsePart, text, toolCalls } from "../../src/index.ts"
import { fromResponsesResponse } from "../../src/providers/openai-responses.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { captureSpans, failureOf, runExit } from "../fixtures.ts"

const metadata = { provider: "openai", model: "gpt-4o-mini" }
const tokens = (type: "input" | "output") =>
  Metric.value(Metric.withAttributes(genAiTokenUsage, { "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.token.type": type, unit: "{token}" }))

/** A client whose every call fails with a truncated reply that cost `input`/`output` tokens. */
const truncating = (input: number, output: number): ModelClient => ({
  chat: () => Effect.fail(new ModelError({ provider: "openai", reason: "cut off", kind: "length", retryable: false, usage: { inputTokens: input, outputTokens: output } })),
  metadata
})

/** The same failure from a `fromFunction` client: the loop calls it without a generator of its own (`plainCall`). */
const truncatingFunction = (input: number, output: number): ModelClient =>
  ModelClient.fromFunction(() => {
    throw new ModelError({ provider: "openai", reason: "cut off", kind: "length", retryable: false, usage: { inputTokens: input, outputTokens: output } })
  }, metadata)

const failingClients = [["a client's own chat", truncating], ["a fromFunction client (the loop's plain call)", truncatingFunction]] as const

describe("the tokens of a model call that failed", () => {
  it("jsonMode's ModelError after its corrections carries what every reply cost", async () => {
    const model = scriptedModel([text("not json", { inputTokens: 10, outputTokens: 5 }), text("still not", { inputTokens: 12, outputTokens: 6 })])
    const error = failureOf(await runExit(agent("j").model(jsonMode(model, { maxRepairs: 1 })).runEffect("q")))
    expect(error).toMatchObject({ _tag: "ModelError", provider: "json-mode", usage: { inputTokens: 22, outputTokens: 11 } })
  })

  it("jsonMode's correction that fails on the wire carries the replies paid for before it", async () => {
    let calls = 0
    const flaky = ModelClient.fromFunction(() => {
      calls++
      if (calls === 1) return text("oops", { inputTokens: 7, outputTokens: 3 })
      throw new ModelError({ provider: "p", reason: "down", retryable: false, usage: { inputTokens: 1, outputTokens: 0 } })
    })
    const error = failureOf(await runExit(agent("j").model(jsonMode(flaky, { maxRepairs: 2 })).runEffect("q")))
    expect(error).toMatchObject({ _tag: "ModelError", reason: expect.stringContaining("down"), usage: { inputTokens: 8, outputTokens: 3 } })
  })

  it("a provider's reply cut off at the token limit fails with what it cost", async () => {
    const exit = await Effect.runPromiseExit(fromResponsesResponse({
      id: "resp_1",
      model: "gpt-4o-mini",
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "The answer is" }] }],
      usage: { input_tokens: 40, output_tokens: 16, total_tokens: 56 }
    } as never))
    expect(failureOf(exit)).toMatchObject({ _tag: "ModelError", kind: "length", partial: "The answer is", usage: { inputTokens: 40, outputTokens: 16 } })
  })

  it("a stream that fails after reporting usage fails with it", async () => {
    const parts: Array<ResponsePart> = [{ _tag: "TextDelta", delta: "The" }, { _tag: "Usage", usage: { inputTokens: 9, outputTokens: 2 } }]
    const client: ModelClient = {
      chat: () => Effect.die("not used"),
      stream: () => Stream.concat(Stream.fromIterable(parts), Stream.fail(new ModelError({ provider: "p", reason: "reset", retryable: false }))),
      metadata
    }
    const exit = await Effect.runPromiseExit(Stream.runDrain(agent("s").model(client).runStream("q")))
    expect(failureOf(exit)).toMatchObject({ _tag: "ModelError", reason: "reset", usage: { inputTokens: 9, outputTokens: 2 } })
  })

  it.each(failingClients)("are recorded in the GenAI token metric and on the run's invoke_agent span: %s", async (_, truncating) => {
    const { input, output } = await Effect.gen(function*() {
      yield* Effect.exit(agent("t").model(truncating(30, 4096)).runEffect("q"))
      return { input: yield* tokens("input"), output: yield* tokens("output") }
    }).pipe(Effect.provideService(Metric.MetricRegistry, new Map()), Effect.runPromise)
    expect([input.count, input.sum, output.sum]).toEqual([1, 30, 4096])
    const { spans, tracer } = captureSpans()
    await Effect.runPromiseExit(agent("t").model(truncating(30, 4096)).runEffect("q").pipe(Effect.withTracer(tracer)))
    const invoke = Object.fromEntries(spans.find((s) => s.name.startsWith("invoke_agent"))!.attributes)
    expect(invoke).toMatchObject({ "gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 4096 })
  })

  it.each(failingClients)("are charged to the budget a child agent runs under: the parent's maxTokens sees them: %s", async (_, truncating) => {
    const child = agent("writer").model(truncating(10, 4000))
    const parentModel = scriptedModel([
      { ...toolCalls([{ id: "w1", name: "write", arguments: { input: "an essay" } }]), usage: { inputTokens: 10, outputTokens: 5 } },
      text("I could not write it", { inputTokens: 20, outputTokens: 5 })
    ])
    const parent = agent("editor").model(parentModel).tools({ write: child.asTool({ name: "write", description: "Write a text" }) }).budget({ maxTokens: 1000 })
    const error = failureOf(await runExit(parent.runEffect("write me an essay")))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "tokens", limit: 1000 })
    expect((error as { used: number }).used).toBeGreaterThan(4000)
  })
})
