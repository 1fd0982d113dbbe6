/**
 * Streaming changes nothing but timing, through each provider's real wire: for any script of replies
 * (texts and arguments with any Unicode, several calls, unknown tools, thinking) and any way of tearing
 * the stream (delta sizes, byte offsets inside UTF-8 characters, SSE lines and JSON, CRLF, keep-alive
 * comments), a streamed run (`runStream`) against a loopback server speaking the provider's documented
 * stream format makes the same requests, ends with the same outcome and runs the same tools as the
 * non-streamed run (`runEffect`) against the same server's non-streamed replies. Providers: anthropic,
 * ollama (NDJSON), openaiResponses, gemini, openai and fromAiSdk on the V3 and V4 openai-compatible
 * providers (Chat Completions SSE). `PROPERTY_RUNS` scales the runs (a tenth of it per provider).
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Schema, Stream } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect } from "vitest"
import { createOpenAICompatible as createV3 } from "@ai-sdk/openai-compatible"
import { createOpenAICompatible as createV4 } from "ai-sdk-openai-compatible-v4"
import { agent, anthropic, fromAiSdk, gemini, type ModelClient, ollama, openai, openaiResponses, type ModelRequest, type RunEndEvent, tool } from "../../src/index.ts"
import { anthropicEvents, anthropicJson, geminiEvents, geminiJson, ollamaJson, ollamaLines, openAiChatEvents, openAiChatJson, responsesEvents, responsesJson, sse, tearBytes, type Wire, type WireReply } from "../providers/wire.ts"
import { quietLogs } from "../support/quiet-logs.ts"

quietLogs()

const numRuns = Math.max(5, Math.floor(Number(process.env.PROPERTY_RUNS ?? 200) / 10))

const anthropicWire: Wire = {
  name: "anthropic (Messages SSE)",
  client: (url) => anthropic("claude-sonnet-4-6", { apiKey: "k", baseURL: url, retry: false, idleTimeout: "20 seconds" }),
  json: (reply) => anthropicJson(reply),
  stream: (reply, _turn, sizes, style) => sse(anthropicEvents(reply, sizes), style),
  isStream: (_url, body) => body?.stream === true
}

const chatWire = (name: string, client: (url: string) => ModelClient): Wire => ({
  name,
  client,
  json: (reply, turn) => openAiChatJson(reply, turn),
  stream: (reply, turn, sizes, style) => sse(openAiChatEvents(reply, turn, sizes), style, style.crlf === true ? "data: [DONE]\r\n\r\n" : "data: [DONE]\n\n"),
  isStream: (_url, body) => body?.stream === true,
  comparable: (body) => {
    const { stream: _, stream_options: __, ...rest } = body ?? {}
    return rest
  }
})
const streamOptions = { retry: false, idleTimeout: "20 seconds" } as const

const responsesWire: Wire = {
  name: "openaiResponses (Responses SSE)",
  client: (url) => openaiResponses("gpt-5-mini", { apiKey: "k", baseURL: `${url}/v1`, store: false, ...streamOptions }),
  json: (reply, turn) => responsesJson(reply, turn),
  stream: (reply, turn, sizes, style) => sse(responsesEvents(reply, turn, sizes), style),
  isStream: (_url, body) => body?.stream === true
}

const geminiWire: Wire = {
  name: "gemini (streamGenerateContent SSE)",
  client: (url) => gemini("gemini-2.5-flash", { apiKey: "k", baseURL: url, ...streamOptions }),
  json: (reply) => geminiJson(reply),
  stream: (reply, _turn, sizes, style) => sse(geminiEvents(reply, sizes), style),
  isStream: (url) => url.includes(":streamGenerateContent")
}

// Ollama sends no call ids: the client assigns them (at random without streaming, by turn and index
// with it), so its requests are compared with ids renamed in order of appearance.
const ollamaWire: Wire = {
  name: "ollama (/api/chat NDJSON)",
  client: (url) => ollama("qwen3:8b", { host: url, ...streamOptions }),
  json: (reply) => ollamaJson(reply),
  stream: (reply, _turn, sizes) => ollamaLines(reply, sizes),
  isStream: (_url, body) => body?.stream === true,
  assignsIds: true
}

const wires: ReadonlyArray<Wire> = [
  anthropicWire,
  ollamaWire,
  responsesWire,
  geminiWire,
  chatWire("openai (Chat Completions SSE)", (url) => openai("gpt-4o-mini", { apiKey: "k", baseURL: `${url}/v1`, ...streamOptions })),
  chatWire("fromAiSdk(@ai-sdk/openai-compatible V3)", (url) => fromAiSdk(createV3({ name: "w", baseURL: `${url}/v1`, apiKey: "k" })("m"), streamOptions)),
  chatWire("fromAiSdk(ai-sdk-openai-compatible-v4 V4)", (url) => fromAiSdk(createV4({ name: "w", baseURL: `${url}/v1`, apiKey: "k" })("m"), streamOptions))
]

const arbText = fc.string({ unit: fc.constantFrom("grapheme", "binary"), maxLength: 24 })
const arbCall = (turn: number) =>
  fc.tuple(fc.constantFrom("add", "multiply", "unknown_tool"), fc.oneof(
    fc.record({ a: fc.integer(), b: fc.integer() }),
    fc.record({ a: arbText, b: fc.integer() }),
    fc.constant({})
  ))
    .map(([name, input]) => ({ name, input: input as Record<string, unknown>, turn }))
const arbReply: fc.Arbitrary<WireReply> = fc.record({
  thinking: fc.option(fc.record({ text: arbText.filter((t) => t.trim() !== ""), signature: fc.base64String({ minLength: 4, maxLength: 40 }) }), { nil: undefined }),
  text: arbText,
  calls: fc.array(arbCall(0), { maxLength: 3 }),
  usage: fc.record({ input: fc.nat(500), output: fc.nat(500) })
}).map((r) => ({ ...r, calls: r.calls.map((c, i) => ({ id: `toolu_${i}`, name: c.name, input: c.input })) }))

const arbScenario = fc.record({
  script: fc.array(arbReply, { minLength: 1, maxLength: 4 }),
  deltaSizes: fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 }),
  byteSizes: fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
  style: fc.record({ crlf: fc.boolean(), keepAlive: fc.boolean() })
})
type Scenario = typeof arbScenario extends fc.Arbitrary<infer S> ? S : never

const finalReply: WireReply = { text: "done", calls: [], usage: { input: 1, output: 1 } }

/** A loopback server answering the n-th streamed (or not) request with the n-th reply of the script. */
const serveScript = async (wire: Wire, scenario: Scenario) => {
  const bodies: Array<unknown> = []
  let plain = 0
  let streamed = 0
  const server = createServer((req, res) => {
    let data = ""
    req.setEncoding("utf8")
    req.on("data", (c) => (data += c))
    req.on("end", () => {
      const body = data === "" ? undefined : JSON.parse(data)
      const isStream = wire.isStream(req.url ?? "", body)
      const turn = isStream ? streamed++ : plain++
      bodies.push({ stream: isStream, body: (wire.comparable ?? ((b: any) => { const { stream: _, ...rest } = b ?? {}; return rest }))(body) })
      const reply = scenario.script[turn] ?? finalReply
      if (!isStream) {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify(wire.json(reply, turn)))
        return
      }
      res.writeHead(200, { "content-type": "text/event-stream" })
      const pieces = tearBytes(wire.stream(reply, turn, scenario.deltaSizes, scenario.style), scenario.byteSizes)
      const write = (i: number) => {
        if (res.destroyed) return
        if (i >= pieces.length) return void res.end()
        res.write(pieces[i]!)
        setImmediate(() => write(i + 1))
      }
      write(0)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())))
  }
}

const setup = (client: ModelClient) => {
  const executed: Array<{ tool: string; args: unknown }> = []
  const requests: Array<ModelRequest> = []
  let end: RunEndEvent | undefined
  const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
  const add = tool("add", { args: Operands, run: (args) => (executed.push({ tool: "add", args }), args.a + args.b) })
  const multiply = tool("multiply", { args: Operands, run: (args) => (executed.push({ tool: "multiply", args }), args.a * args.b) })
  const subject = agent("subject")
    .model(client)
    .budget({ maxTurns: 4 })
    .tools({ add, multiply })
    .onModelCall((e) => void requests.push(e.request))
    .onRunEnd((e) => void (end = e))
  return { subject, executed, requests, end: () => end }
}

/** Tool call ids (`call_...`) renamed `id0`, `id1`, ... in order of appearance. */
const canonicalIds = <A>(value: A): A => {
  const names = new Map<string, string>()
  const json = JSON.stringify(value, (_key, v) =>
    typeof v === "string" && /^call_[A-Za-z0-9_]+$/.test(v) ? (names.get(v) ?? (names.set(v, `id${names.size}`), names.get(v))) : v
  )
  return json === undefined ? value : JSON.parse(json)
}

const outcomeOf = (end: RunEndEvent | undefined) =>
  end === undefined
    ? undefined
    : end.outcome._tag === "Failure"
    ? { _tag: "Failure", error: end.outcome.error._tag, message: end.outcome.error.message.replace(/\(HTTP \d+\)/, "") }
    : end.outcome

describe.each(wires)("a streamed run through $name equals the non-streamed run", (wire) => {
  test.prop([arbScenario], { numRuns })("same requests, outcome and tool executions, for any chunking", async (scenario) => {
    const server = await serveScript(wire, scenario)
    try {
      const plain = setup(wire.client(server.url))
      await Effect.runPromiseExit(plain.subject.runEffect("compute"))
      const plainBodies = server.bodies.splice(0)
      const live = setup(wire.client(server.url))
      const texts: Array<string> = []
      await Effect.runPromiseExit(live.subject.runStream("compute").pipe(Stream.runForEach((e) => Effect.sync(() => {
        if (e._tag === "TextDelta") texts.push(e.delta)
      }))))
      const ids = wire.assignsIds === true ? canonicalIds : <A>(a: A) => a
      expect(ids(live.requests)).toEqual(ids(plain.requests))
      expect(ids(server.bodies.map((b: any) => b.body))).toEqual(ids(plainBodies.map((b: any) => b.body)))
      expect(server.bodies.every((b: any) => b.stream)).toBe(true)
      expect(live.executed).toEqual(plain.executed)
      expect(outcomeOf(live.end())).toEqual(outcomeOf(plain.end()))
    } finally {
      await server.close()
    }
  })
})
