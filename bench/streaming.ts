/**
 * Streaming: time to the first text delta and time per delta, for our `agent.runStream` and the AI
 * SDK's `streamText`, over the same in-process mock stream (an async generator of `deltas` text pieces,
 * each a microtask apart), consumed the way an application would (for await over the events).
 * Figures are medians over `runs` runs, after a warm-up.
 */
import type { LanguageModelV3, LanguageModelV3StreamPart } from "@ai-sdk/provider"
import { streamText } from "ai"
import { Effect, Stream } from "effect"
import type { ModelClient } from "../src/index.ts"
import { show, summarize } from "./measure.ts"
import { ours as lib } from "./ours-lib.ts"

const { agent } = lib

/** The mock stream both libraries read: `deltas` words. */
async function* words(deltas: number): AsyncGenerator<string> {
  for (let i = 0; i < deltas; i++) yield `w${i} `
}

interface Timing {
  readonly firstMs: number
  readonly perDeltaUs: number
}

const measure = async (consume: (onDelta: () => void) => Promise<void>, deltas: number): Promise<Timing> => {
  let first = 0
  let last = 0
  let seen = 0
  const started = performance.now()
  await consume(() => {
    const now = performance.now()
    if (seen === 0) first = now
    last = now
    seen++
  })
  if (seen !== deltas) throw new Error(`saw ${seen} deltas, expected ${deltas}`)
  return { firstMs: first - started, perDeltaUs: ((last - first) * 1000) / (deltas - 1) }
}

const ours = (deltas: number) => {
  const model: ModelClient = {
    chat: () => Effect.die("streaming only"),
    stream: () =>
      Stream.fromAsyncIterable(words(deltas), (e) => e as never).pipe(
        Stream.map((delta) => ({ _tag: "TextDelta" as const, delta })),
        Stream.concat(Stream.make({ _tag: "Finish" as const, reason: "stop" as const }))
      )
  }
  const writer = agent("writer").prompt("Write.").model(model)
  return (onDelta: () => void) =>
    (async () => {
      for await (const event of Stream.toAsyncIterable(writer.runStream("go"))) if (event._tag === "TextDelta") onDelta()
    })()
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined }
}

const vercel = (deltas: number) => {
  // A plain language-model object (not the recording `MockLanguageModelV3`).
  const model: LanguageModelV3 = {
    specificationVersion: "v3",
    provider: "bench",
    modelId: "writer",
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error("streaming only")),
    doStream: async () => {
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
  }
  return (onDelta: () => void) =>
    (async () => {
      const result = streamText({ model, system: "Write.", prompt: "go" })
      for await (const part of result.fullStream) if (part.type === "text-delta") onDelta()
    })()
}

/** Runs both, interleaved run by run, and returns the medians. */
export const runStreaming = async (options: { readonly runs?: number; readonly deltas?: number } = {}) => {
  const runs = options.runs ?? 200
  const deltas = options.deltas ?? 200
  const subjects = [
    { name: "effect-agent-dsl runStream", consume: ours(deltas), timings: [] as Array<Timing> },
    { name: "ai (Vercel AI SDK) 6 streamText", consume: vercel(deltas), timings: [] as Array<Timing> }
  ]
  for (let i = 0; i < runs + 20; i++) {
    for (const subject of subjects) {
      const timing = await measure(subject.consume, deltas)
      if (i >= 20) subject.timings.push(timing)
    }
  }
  return subjects.map((s) => ({
    library: s.name,
    "first delta ms (min–max)": show(summarize(s.timings.map((t) => t.firstMs)), 3),
    "per delta µs (min–max)": show(summarize(s.timings.map((t) => t.perDeltaUs)), 2),
    deltas
  }))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await runStreaming())
}
