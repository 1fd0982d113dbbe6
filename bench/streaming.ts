/**
 * Streaming: time to the first text delta and time per delta, for our `agent.runStream`, the AI SDK's
 * `streamText` and the OpenAI Agents SDK's `run(agent, input, { stream: true })`, over the same
 * in-process mock stream (an async generator of `deltas` text pieces, each a microtask apart, usage
 * reported at the end), consumed the way an application would (for await over the events).
 * Every run is checked: one model call, every delta seen in order, the run's answer the whole text.
 * Figures are medians over `runs` runs, in blocks, the libraries interleaved block by block, each block
 * after a few unmeasured runs (so that no block pays for its neighbour's garbage); and the
 * CPU time per delta (`cpuPerDelta`: runs of 200 deltas minus runs of one), which preemption on a loaded
 * machine does not inflate. Mastra (`Agent.stream`) reads the same streaming AI SDK model as `streamText`.
 */
import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider"
import { Agent as MastraAgent } from "@mastra/core/agent"
import { Agent, type Model, type ModelResponse, run, type StreamEvent } from "@openai/agents"
import { streamText } from "ai"
import { Effect, Stream } from "effect"
import type { ModelClient } from "../src/index.ts"
import { usageData } from "./calculator/openai-agents.ts"
import { callUsage } from "./calculator/script.ts"
import { usage } from "./calculator/vercel-ai.ts"
import { deltaClock, type DeltaTiming, settleEventLoop, show, summarize } from "./measure.ts"
import { ours as lib } from "./ours-lib.ts"

const { agent } = lib

/** The mock stream every library reads: `deltas` words. */
async function* words(deltas: number): AsyncGenerator<string> {
  for (let i = 0; i < deltas; i++) yield `w${i} `
}

const wholeText = (deltas: number) => Array.from({ length: deltas }, (_, i) => `w${i} `).join("")

/** One streamed run: calls `onDelta` per text delta, resolves to the run's final answer. */
type Consume = (onDelta: (delta: string) => void) => Promise<string>

interface Subject {
  readonly name: string
  readonly consume: Consume
  /** Model calls made so far (each run must make exactly one). */
  readonly modelCalls: () => number
}

const measure = async (subject: Subject, deltas: number): Promise<DeltaTiming> => {
  const callsBefore = subject.modelCalls()
  const clock = deltaClock()
  const answer = await subject.consume(clock.see)
  await settleEventLoop()
  const seen = clock.seen()
  const text = clock.text()
  const expected = wholeText(deltas)
  const calls = subject.modelCalls() - callsBefore
  if (seen !== deltas || text !== expected || answer !== expected || calls !== 1) {
    throw new Error(`${subject.name}: saw ${seen}/${deltas} deltas, ${calls}/1 model calls, deltas ${text === expected ? "" : "not "}in order, answer ${answer === expected ? "whole" : JSON.stringify(answer.slice(0, 40))}`)
  }
  return clock.timing()
}

const ours = (deltas: number): Subject => {
  let calls = 0
  const model: ModelClient = {
    chat: () => Effect.die("streaming only"),
    stream: () =>
      Stream.suspend(() => {
        calls++
        return Stream.fromAsyncIterable(words(deltas), (e) => e as never).pipe(
          Stream.map((delta) => ({ _tag: "TextDelta" as const, delta })),
          Stream.concat(Stream.make({ _tag: "Usage" as const, usage: callUsage }, { _tag: "Finish" as const, reason: "stop" as const }))
        )
      })
  }
  const writer = agent("writer").prompt("Write.").model(model)
  return {
    name: "effect-agent-dsl runStream",
    modelCalls: () => calls,
    consume: async (onDelta) => {
      let answer = ""
      for await (const event of Stream.toAsyncIterable(writer.runStream("go"))) {
        if (event._tag === "TextDelta") onDelta(event.delta)
        else if (event._tag === "RunEnd" && event.outcome._tag === "Success") answer = String(event.outcome.output)
      }
      return answer
    }
  }
}

/** A plain language-model object (not the recording `MockLanguageModelV3`) that streams `deltas` words. */
const streamingModel = (deltas: number, counted: () => void): LanguageModelV3 => ({
  specificationVersion: "v3",
  provider: "bench",
  modelId: "writer",
  supportedUrls: {},
  doGenerate: () => Promise.reject(new Error("streaming only")),
  doStream: async () => {
    counted()
    const chunks: Array<LanguageModelV3StreamPart> = [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t" }]
    const body = new ReadableStream<LanguageModelV3StreamPart>({
      async start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk)
        for await (const delta of words(deltas)) controller.enqueue({ type: "text-delta", id: "t", delta })
        controller.enqueue({ type: "text-end", id: "t" })
        controller.enqueue({ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage })
        controller.close()
      }
    })
    return { stream: body }
  }
})

const vercel = (deltas: number): Subject => {
  let calls = 0
  const model = streamingModel(deltas, () => calls++)
  return {
    name: "ai (Vercel AI SDK) 6 streamText",
    modelCalls: () => calls,
    consume: async (onDelta) => {
      const result = streamText({ model, system: "Write.", prompt: "go" })
      for await (const part of result.fullStream) if (part.type === "text-delta") onDelta(part.text)
      return result.text
    }
  }
}

/** Mastra's `Agent.stream` over the same streaming AI SDK model; its `fullStream` chunks carry `payload.text`. */
const mastra = (deltas: number): Subject => {
  let calls = 0
  const writer = new MastraAgent({ id: "writer", name: "writer", instructions: "Write.", model: streamingModel(deltas, () => calls++) })
  return {
    name: "@mastra/core 1.71 Agent.stream",
    modelCalls: () => calls,
    consume: async (onDelta) => {
      const output = await writer.stream("go")
      for await (const chunk of output.fullStream) if (chunk.type === "text-delta") onDelta(chunk.payload.text)
      return await output.text
    }
  }
}

/** A plain `Model` for the Agents SDK that only streams: the deltas, then `response_done` with the whole message. */
class StreamingModel implements Model {
  calls = 0
  constructor(private readonly deltas: number) {}

  getResponse(): Promise<ModelResponse> {
    return Promise.reject(new Error("streaming only"))
  }

  async *getStreamedResponse(): AsyncIterable<StreamEvent> {
    const id = this.calls++
    yield { type: "response_started" }
    let text = ""
    for await (const delta of words(this.deltas)) {
      text += delta
      yield { type: "output_text_delta", delta }
    }
    yield {
      type: "response_done",
      response: {
        id: `resp_${id}`,
        usage: usageData,
        output: [{ type: "message", id: `msg_${id}`, role: "assistant", status: "completed", content: [{ type: "output_text", text }] }]
      }
    }
  }
}

const openAiAgents = (deltas: number): Subject => {
  const model = new StreamingModel(deltas)
  const writer = new Agent({ name: "writer", instructions: "Write.", model })
  return {
    name: "@openai/agents 0.14 run({ stream: true })",
    modelCalls: () => model.calls,
    consume: async (onDelta) => {
      const result = await run(writer, "go", { stream: true })
      for await (const event of result) {
        if (event.type === "raw_model_stream_event" && event.data.type === "output_text_delta") onDelta(event.data.delta)
      }
      await result.completed
      return String(result.finalOutput)
    }
  }
}

const factories = [ours, vercel, openAiAgents, mastra]

/** CPU µs of `runs` runs of `subject` (each checked like a timed run). */
const cpuOf = async (subject: Subject, deltas: number, runs: number): Promise<number> => {
  const before = process.cpuUsage()
  for (let i = 0; i < runs; i++) await measure(subject, deltas)
  const used = process.cpuUsage(before)
  return used.user + used.system
}

/**
 * Unmeasured runs of `subject` before its block of timed runs, so that the block pays for its own
 * library's garbage, not its neighbour's. (No forced collection: it shrinks V8's young generation and
 * slows the next runs down, see `interleavedRounds`.)
 */
const settle = async (subject: Subject, deltas: number, runs: number) => {
  for (let i = 0; i < runs; i++) await measure(subject, deltas)
}

/**
 * CPU µs per delta, which a loaded machine's preemption does not inflate as it does wall time: the CPU
 * time of runs streaming `deltas` deltas minus that of the same runs streaming one, ÷ (`deltas` − 1),
 * per round of `runsPerRound` runs of each; the libraries interleaved, their order alternating.
 */
const cpuPerDelta = async (deltas: number, rounds: number, runsPerRound: number) => {
  const subjects = factories.map((make) => ({ long: make(deltas), short: make(1), perDelta: [] as Array<number> }))
  for (let round = 0; round < rounds + 1; round++) {
    for (const s of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      await settle(s.long, deltas, settleRuns)
      const long = await cpuOf(s.long, deltas, runsPerRound)
      await settle(s.short, 1, settleRuns)
      const short = await cpuOf(s.short, 1, runsPerRound)
      if (round > 0) s.perDelta.push((long - short) / runsPerRound / (deltas - 1))
    }
  }
  return subjects.map((s) => summarize(s.perDelta))
}

/** Unmeasured runs before each block (`settle`). */
const settleRuns = 10

/**
 * Runs every library in blocks of `runs ÷ rounds` timed runs, the libraries interleaved block by block
 * (their order alternating, a warm-up block first), and returns the medians over every timed run.
 */
export const runStreaming = async (options: { readonly runs?: number; readonly deltas?: number; readonly rounds?: number; readonly cpuRounds?: number } = {}) => {
  const runs = options.runs ?? 200
  const deltas = options.deltas ?? 200
  const rounds = options.rounds ?? 8
  const perRound = Math.max(1, Math.ceil(runs / rounds))
  const subjects = factories.map((make) => make(deltas)).map((subject) => ({ subject, timings: [] as Array<DeltaTiming> }))
  for (let round = 0; round < rounds + 1; round++) {
    // Alternate the order, as the CPU rounds do, so that no library always runs after the same neighbour.
    for (const s of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      await settle(s.subject, deltas, settleRuns)
      for (let i = 0; i < perRound; i++) {
        const timing = await measure(s.subject, deltas)
        if (round > 0) s.timings.push(timing)
      }
    }
  }
  const cpu = await cpuPerDelta(deltas, options.cpuRounds ?? 7, Math.max(5, Math.round(runs / 10)))
  return subjects.map((s, index) => ({
    library: s.subject.name,
    "first delta ms (min–max)": show(summarize(s.timings.map((t) => t.firstMs)), 3),
    "per delta µs wall (min–max)": show(summarize(s.timings.map((t) => t.perDeltaUs)), 2),
    "per delta µs CPU (min–max)": show(cpu[index]!, 2),
    deltas
  }))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await runStreaming())
}
