/**
 * Streaming through the providers (issue #37): time to the first text delta and cost per delta when
 * each library's own provider adapter parses the real streaming wire format from a loopback HTTP
 * server (bench/provider-wire.ts: OpenAI Chat Completions SSE with the usage chunk when asked,
 * Anthropic Messages SSE, Gemini `streamGenerateContent?alt=sse`, Ollama `/api/chat` NDJSON; each delta
 * in a read of its own, the next sent when the consumer has seen the previous one).
 *
 * Subjects, per wire format, each consumed as an application would (for await over its stream):
 *   ours         `agent(...).model(openai | anthropic | gemini | ollama(...)).runStream(...)`, the built package
 *   ai 6         `streamText` on `@ai-sdk/openai-compatible`, `@ai-sdk/anthropic`, `@ai-sdk/google`, and the
 *                community `ollama-ai-provider-v2` (no official AI SDK provider for Ollama's own API)
 *   agents 0.14  `run(agent, input, { stream: true })` on `OpenAIChatCompletionsModel` (the OpenAI wire only)
 *   mastra 1.71  `Agent.stream` on the same AI SDK models
 *   floor        `fetch`, split the body into events, `JSON.parse` each: what any library must do at least
 * Every run is checked: one model call, every delta seen in order, the answer the whole text, and no
 * stream the server had to flush (a library holding a delta back).
 *
 * Figures: first delta (ms) and wall per delta (µs) over runs of `deltas`, median (min–max), subjects
 * interleaved run by run, order alternating, the event loop settled after each run (`settleEventLoop`); CPU per delta (µs): the CPU time of runs of `deltas` deltas
 * minus that of runs of one, ÷ (`deltas` − 1), per round. The server runs in this process, so its
 * writes are in every subject's CPU time alike (the floor row shows the transport's share).
 *
 * `node --import tsx/esm bench/provider-streaming.ts` runs it alone (`BENCH_WIRES`, `BENCH_PROVIDER_LIBS`,
 * `BENCH_PROVIDER_RUNS`, `BENCH_PROVIDER_PACE`); `… profile <wire> [deltas] [ms] [library]` writes a CPU
 * profile of one library (ours by default) on one wire (bench/profiles/provider-<wire>[-<library>].cpuprofile,
 * for bench/profile-summary.ts).
 */
import { createAnthropic } from "@ai-sdk/anthropic"
import { createGoogleGenerativeAI } from "@ai-sdk/google"
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import type { LanguageModelV3 } from "@ai-sdk/provider"
import { Agent as MastraAgent } from "@mastra/core/agent"
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled } from "@openai/agents"
import { streamText } from "ai"
import { Stream } from "effect"
import OpenAI from "openai"
import { createOllama } from "ollama-ai-provider-v2"
import { collect, deltaClock, type DeltaTiming, settleEventLoop, show, summarize } from "./measure.ts"
import { ours as lib } from "./ours-lib.ts"
import { modelFor, type Pace, startWireServer, type WireFormat, type WireServer, wholeText } from "./provider-wire.ts"

setTracingDisabled(true)
// The AI SDK warns on every call that it caps an unknown model's output tokens; Mastra calls it the same way.
;(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false

const apiKey = "bench"
const wires: ReadonlyArray<WireFormat> = ["openai", "anthropic", "gemini", "ollama"]

/** One streamed run: calls `onDelta` per text delta, resolves to the run's final answer. */
type Consume = (onDelta: (delta: string) => void) => Promise<string>

interface Subject {
  readonly wire: WireFormat
  readonly library: string
  readonly consume: Consume
}

/** Makes a subject streaming `deltas` deltas from the server at `url`, or `undefined` when the library has no provider for the wire. */
type Factory = (wire: WireFormat, url: string, deltas: number) => Subject | undefined

// ---- ours ----

const oursModel = (wire: WireFormat, url: string, model: string) => {
  switch (wire) {
    case "openai":
      return lib.openai(model, { apiKey, baseURL: `${url}/v1` })
    case "anthropic":
      return lib.anthropic(model, { apiKey, baseURL: url })
    case "gemini":
      return lib.gemini(model, { apiKey, baseURL: url })
    case "ollama":
      return lib.ollama(model, { host: url })
  }
}

const ours: Factory = (wire, url, deltas) => {
  const writer = lib.agent("writer").prompt("Write.").model(oursModel(wire, url, modelFor(deltas)))
  return {
    wire,
    library: `effect-agent-dsl runStream (${wire}(...))`,
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

// ---- the AI SDK's providers (also Mastra's models) ----

const aiSdkProviderName: Record<WireFormat, string> = {
  openai: "@ai-sdk/openai-compatible 2",
  anthropic: "@ai-sdk/anthropic 3",
  gemini: "@ai-sdk/google 3",
  ollama: "ollama-ai-provider-v2 3 (community)"
}

const aiSdkModel = (wire: WireFormat, url: string, model: string): LanguageModelV3 => {
  switch (wire) {
    case "openai":
      return createOpenAICompatible({ name: "bench", baseURL: `${url}/v1`, apiKey, includeUsage: true }).chatModel(model)
    case "anthropic":
      return createAnthropic({ baseURL: `${url}/v1`, apiKey })(model)
    case "gemini":
      return createGoogleGenerativeAI({ baseURL: `${url}/v1beta`, apiKey })(model)
    case "ollama":
      return createOllama({ baseURL: `${url}/api` })(model) as LanguageModelV3
  }
}

const vercel: Factory = (wire, url, deltas) => {
  const model = aiSdkModel(wire, url, modelFor(deltas))
  return {
    wire,
    library: `ai 6 streamText (${aiSdkProviderName[wire]})`,
    consume: async (onDelta) => {
      const result = streamText({ model, system: "Write.", prompt: "go" })
      for await (const part of result.fullStream) {
        if (part.type === "text-delta") onDelta(part.text)
        else if (part.type === "error") throw part.error
      }
      return await result.text
    }
  }
}

const mastra: Factory = (wire, url, deltas) => {
  const writer = new MastraAgent({ id: "writer", name: "writer", instructions: "Write.", model: aiSdkModel(wire, url, modelFor(deltas)) })
  return {
    wire,
    library: `@mastra/core 1.71 Agent.stream (${aiSdkProviderName[wire]})`,
    consume: async (onDelta) => {
      const output = await writer.stream("go")
      for await (const chunk of output.fullStream) {
        if (chunk.type === "text-delta") onDelta(chunk.payload.text)
        else if (chunk.type === "error") throw chunk.payload.error
      }
      return await output.text
    }
  }
}

// ---- the OpenAI Agents SDK (its Chat Completions model; OpenAI wire only) ----

const openAiAgents: Factory = (wire, url, deltas) => {
  if (wire !== "openai") return undefined
  const client = new OpenAI({ apiKey, baseURL: `${url}/v1`, maxRetries: 0 })
  const writer = new Agent({ name: "writer", instructions: "Write.", model: new OpenAIChatCompletionsModel(client, modelFor(deltas)) })
  return {
    wire,
    library: "@openai/agents 0.14 run({ stream: true }) (OpenAIChatCompletionsModel)",
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

// ---- the floor: fetch, split into events, JSON.parse ----

const floorRequest = (wire: WireFormat, url: string, model: string): readonly [string, unknown] => {
  const messages = [{ role: "user", content: "go" }]
  switch (wire) {
    case "openai":
      return [`${url}/v1/chat/completions`, { model, messages, stream: true, stream_options: { include_usage: true } }]
    case "anthropic":
      return [`${url}/v1/messages`, { model, messages, max_tokens: 1024, stream: true }]
    case "gemini":
      return [`${url}/v1beta/models/${model}:streamGenerateContent?alt=sse`, { contents: [{ role: "user", parts: [{ text: "go" }] }] }]
    case "ollama":
      return [`${url}/api/chat`, { model, messages, stream: true }]
  }
}

/** The text an event carries, by wire. */
const textOf = (wire: WireFormat, event: any): string | undefined => {
  switch (wire) {
    case "openai":
      return event.choices?.[0]?.delta?.content
    case "anthropic":
      return event.type === "content_block_delta" ? event.delta?.text : undefined
    case "gemini":
      return event.candidates?.[0]?.content?.parts?.[0]?.text
    case "ollama":
      return event.message?.content
  }
}

const floor: Factory = (wire, url, deltas) => {
  const [endpoint, body] = floorRequest(wire, url, modelFor(deltas))
  const separator = wire === "ollama" ? "\n" : "\n\n"
  return {
    wire,
    library: "floor: fetch + split + JSON.parse",
    consume: async (onDelta) => {
      const response = await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      const decoder = new TextDecoder()
      let buffered = ""
      let answer = ""
      const event = (text: string) => {
        const json = wire === "ollama" ? text : text.split("\n").find((line) => line.startsWith("data: "))?.slice(6)
        if (json === undefined || json === "[DONE]" || json === "") return
        const delta = textOf(wire, JSON.parse(json))
        if (typeof delta === "string" && delta !== "") {
          answer += delta
          onDelta(delta)
        }
      }
      for await (const chunk of response.body!) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true })
        let end: number
        while ((end = buffered.indexOf(separator)) >= 0) {
          event(buffered.slice(0, end))
          buffered = buffered.slice(end + separator.length)
        }
      }
      return answer
    }
  }
}

const allFactories = { floor, ours, ai: vercel, agents: openAiAgents, mastra }
/** `BENCH_PROVIDER_LIBS=ours,ai` measures only those (keys of `allFactories`). */
const factories: ReadonlyArray<Factory> = (process.env.BENCH_PROVIDER_LIBS?.split(",") ?? Object.keys(allFactories)).map((key) => {
  const factory = allFactories[key.trim() as keyof typeof allFactories]
  if (factory === undefined) throw new Error(`BENCH_PROVIDER_LIBS: no library "${key}" (${Object.keys(allFactories).join(", ")})`)
  return factory
})

// ---- measuring ----

const measure = async (server: WireServer, subject: Subject, deltas: number): Promise<DeltaTiming> => {
  const callsBefore = server.calls[subject.wire]
  const stallsBefore = server.stalls()
  const clock = deltaClock()
  const answer = await subject.consume((delta) => {
    clock.see(delta)
    server.advance()
  })
  await settleEventLoop()
  const seen = clock.seen()
  const text = clock.text()
  const expected = wholeText(deltas)
  const calls = server.calls[subject.wire] - callsBefore
  const stalls = server.stalls() - stallsBefore
  if (seen !== deltas || text !== expected || answer !== expected || calls !== 1 || stalls !== 0) {
    throw new Error(
      `${subject.wire} ${subject.library}: saw ${seen}/${deltas} deltas, ${calls}/1 model calls, ${stalls} stalled streams, deltas ${text === expected ? "" : "not "}in order, ` +
        `answer ${answer === expected ? "whole" : JSON.stringify(answer.slice(0, 40))}`
    )
  }
  return clock.timing()
}

/** CPU µs of `runs` checked runs of `subject`. */
const cpuOf = async (server: WireServer, subject: Subject, deltas: number, runs: number): Promise<number> => {
  const before = process.cpuUsage()
  for (let i = 0; i < runs; i++) await measure(server, subject, deltas)
  const used = process.cpuUsage(before)
  return used.user + used.system
}

const subjectsFor = (url: string, deltas: number, only?: ReadonlyArray<WireFormat>) =>
  (only ?? wires).flatMap((wire) => factories.map((make) => make(wire, url, deltas)).filter((s): s is Subject => s !== undefined))

/**
 * Runs every subject of every wire format, interleaved run by run (the order alternating), then the
 * CPU per delta in `cpuRounds` rounds; returns one row per wire format and library.
 */
export const runProviderStreaming = async (
  options: {
    readonly runs?: number
    readonly deltas?: number
    readonly cpuRounds?: number
    readonly wires?: ReadonlyArray<WireFormat>
    readonly pace?: Pace
  } = {}
) => {
  const runs = options.runs ?? 50
  const deltas = options.deltas ?? 200
  const cpuRounds = options.cpuRounds ?? 7
  const server = await startWireServer(options.pace)
  try {
    const timed = subjectsFor(server.url, deltas, options.wires).map((subject) => ({ subject, timings: [] as Array<DeltaTiming> }))
    const warmUp = 10
    for (let i = 0; i < runs + warmUp; i++) {
      for (const s of i % 2 === 0 ? timed : [...timed].reverse()) {
        const timing = await measure(server, s.subject, deltas)
        if (i >= warmUp) s.timings.push(timing)
      }
    }
    collect()
    // CPU per delta: runs of `deltas` minus runs of one, per round, subjects interleaved.
    const long = subjectsFor(server.url, deltas, options.wires)
    const short = subjectsFor(server.url, 1, options.wires)
    const perDelta = long.map(() => [] as Array<number>)
    const perCall = long.map(() => [] as Array<number>)
    const runsPerRound = Math.max(5, Math.round(runs / 5))
    for (let round = 0; round < cpuRounds + 1; round++) {
      const order = long.map((_, i) => i)
      if (round % 2 === 1) order.reverse()
      for (const i of order) {
        const l = await cpuOf(server, long[i]!, deltas, runsPerRound)
        const s = await cpuOf(server, short[i]!, 1, runsPerRound)
        if (round > 0) {
          perDelta[i]!.push((l - s) / runsPerRound / (deltas - 1))
          perCall[i]!.push(s / runsPerRound)
        }
      }
    }
    const cpu = perDelta.map(summarize)
    const oursCpu = new Map<WireFormat, number>(timed.flatMap((t, i) => (t.subject.library.startsWith("effect-agent-dsl") ? [[t.subject.wire, cpu[i]!.median] as const] : [])))
    return timed.map((t, i) => ({
      wire: t.subject.wire,
      library: t.subject.library,
      "first delta ms (min–max)": show(summarize(t.timings.map((x) => x.firstMs)), 3),
      "per delta µs wall (min–max)": show(summarize(t.timings.map((x) => x.perDeltaUs)), 1),
      "per delta µs CPU (min–max)": show(cpu[i]!, 2),
      "CPU ÷ ours": +(cpu[i]!.median / (oursCpu.get(t.subject.wire) ?? Number.NaN)).toFixed(2),
      "call of 1 delta, µs CPU (min–max)": show(summarize(perCall[i]!), 0)
    }))
  } finally {
    await server.close()
  }
}

/** A CPU profile (through `node:inspector`, after a warm-up) of one library (ours by default) streaming `deltas` deltas over `wire`, for `ms` milliseconds. */
const profileLibrary = async (key: keyof typeof allFactories, wire: WireFormat, deltas: number, ms: number, pace: Pace) => {
  const { Session } = await import("node:inspector/promises")
  const { mkdirSync, writeFileSync } = await import("node:fs")
  const server = await startWireServer(pace)
  const subject = allFactories[key](wire, server.url, deltas)
  if (subject === undefined) throw new Error(`${key} has no provider for ${wire}`)
  const loop = async (until: number) => {
    let n = 0
    for (; performance.now() < until; n++) await measure(server, subject, deltas)
    return n
  }
  await loop(performance.now() + 1500)
  const session = new Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.setSamplingInterval", { interval: 100 })
  await session.post("Profiler.start")
  const cpuBefore = process.cpuUsage()
  const n = await loop(performance.now() + ms)
  const cpu = process.cpuUsage(cpuBefore)
  const { profile } = await session.post("Profiler.stop")
  session.disconnect()
  await server.close()
  const dir = new URL("./profiles/", import.meta.url)
  mkdirSync(dir, { recursive: true })
  const out = new URL(`provider-${wire}${key === "ours" ? "" : `-${key}`}.cpuprofile`, dir)
  writeFileSync(out, JSON.stringify(profile))
  console.log(`${n} runs of ${deltas} deltas (${(((cpu.user + cpu.system) / n / deltas)).toFixed(2)} µs CPU per delta, setup included, profiler on) → ${out.pathname}`)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv[2] === "profile") {
    const pace = (process.env.BENCH_PROVIDER_PACE ?? "read") as Pace
    const [wire = "openai", deltas = "1000", ms = "5000", key = "ours"] = process.argv.slice(3)
    await profileLibrary(key as keyof typeof allFactories, wire as WireFormat, Number(deltas), Number(ms), pace)
  } else {
    const only = process.env.BENCH_WIRES?.split(",") as Array<WireFormat> | undefined
    const pace = (process.env.BENCH_PROVIDER_PACE ?? "read") as Pace
    console.table(await runProviderStreaming({ runs: Number(process.env.BENCH_PROVIDER_RUNS ?? 50), pace, ...(only === undefined ? {} : { wires: only }) }))
  }
}
