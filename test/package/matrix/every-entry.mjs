// A consumer program (plain JavaScript, run with each Node of the matrix) that uses every entry point
// of the installed package the way a user does: providers against loopback servers speaking their wire
// formats, the durable engines (embedded on PGlite files; PostgreSQL when DATABASE_URL is set), MCP
// both ways, the session store, fast-check arbitraries. Prints one JSON line of results.
import { createServer } from "node:http"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Schema } from "effect"
import { agent, anthropic, fromAiSdk, gemini, ollama, openai, skill, text, tool, toolCalls } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"
import { arbModelScript } from "effect-agent-dsl/testing/arbitraries"
import { durable, memoryEngine } from "effect-agent-dsl/durable"
import { embeddedEngine } from "effect-agent-dsl/durable/embedded"
import { postgresRunner } from "effect-agent-dsl/durable/postgres"
import { postgresSessionStore } from "effect-agent-dsl/postgres"
import { connectMcp, mcpServer, mcpHttp, serveHttp } from "effect-agent-dsl/mcp"
import { chatHandler } from "effect-agent-dsl/web"
import { agUiHandler } from "effect-agent-dsl/ag-ui"
import { a2aAgent, serveA2a } from "effect-agent-dsl/a2a"
import { dataset, evaluate, exactMatch } from "effect-agent-dsl/evals"
import fc from "fast-check"

const results = {}
const add = tool("add", {
  description: "Add two numbers",
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  run: ({ a, b }) => a + b
})
const calculator = (model) => agent("calculator").model(model).tools({ add })
  .skills(({ add }) => [skill("compute", "Add numbers").tools(add)])

/** A loopback server answering each POST with the next of `bodies` (JSON, or SSE text when a string). */
const loopback = async (bodies) => {
  const queue = [...bodies]
  const server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      const next = queue.shift()
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(next))
    })
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() }
}

// Providers: each SDK of the consumer's install, against its own wire format.
{
  const completion = (message, finish) => ({ id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })
  const s = await loopback([
    completion({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: '{"a":1,"b":2}' } }] }, "tool_calls"),
    completion({ role: "assistant", content: "3" }, "stop")
  ])
  results.openai = await calculator(openai("gpt-4o-mini", { apiKey: "k", baseURL: `${s.url}/v1` })).run("1 + 2?")
  s.close()
}
{
  const message = (content, stop) => ({ id: "m", type: "message", role: "assistant", model: "claude-sonnet-4-6", content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } })
  const s = await loopback([
    message([{ type: "tool_use", id: "t1", name: "add", input: { a: 2, b: 2 } }], "tool_use"),
    message([{ type: "text", text: "4" }], "end_turn")
  ])
  results.anthropic = await calculator(anthropic("claude-sonnet-4-6", { apiKey: "k", baseURL: s.url })).run("2 + 2?")
  s.close()
}
{
  const chat = (message) => ({ model: "qwen", created_at: new Date(0).toISOString(), message, done: true, done_reason: "stop", prompt_eval_count: 1, eval_count: 1 })
  const s = await loopback([
    chat({ role: "assistant", content: "", tool_calls: [{ function: { name: "add", arguments: { a: 3, b: 2 } } }] }),
    chat({ role: "assistant", content: "5" })
  ])
  results.ollama = await calculator(ollama("qwen2.5:7b", { host: s.url })).run("3 + 2?")
  s.close()
}
{
  const answer = (parts) => ({ candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 } })
  const s = await loopback([answer([{ functionCall: { name: "add", args: { a: 5, b: 2 } } }]), answer([{ text: "7" }])])
  results.gemini = await calculator(gemini("gemini-2.5-flash", { apiKey: "k", baseURL: s.url })).run("5 + 2?")
  s.close()
}
// The AI SDK provider the consumer installed (LanguageModelV2, V3 or V4, whichever its version speaks).
{
  const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible")
  const completion = (message, finish) => ({ id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })
  const s = await loopback([
    completion({ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: '{"a":4,"b":2}' } }] }, "tool_calls"),
    completion({ role: "assistant", content: "6" }, "stop")
  ])
  const model = createOpenAICompatible({ name: "loopback", baseURL: `${s.url}/v1`, apiKey: "k" })("m")
  results.aiSdk = `${model.specificationVersion}:${await calculator(fromAiSdk(model)).run("4 + 2?")}`
  s.close()
}

// Durable runs: in memory, embedded (PGlite files), PostgreSQL when a server is given.
const script = () => scriptedModel([
  { _tag: "ToolCalls", calls: [{ id: "c1", name: "add", arguments: '{"a":1,"b":2}' }] },
  { _tag: "Text", content: "3" }
])
const durableRun = (engine, runId) => {
  const d = durable(calculator(script()))
  return Effect.runPromise(d.run("1 + 2?", { runId }).pipe(
    Effect.map((r) => (r._tag === "Completed" ? r.output : "suspended")),
    Effect.provide(d.layer.pipe(Layer.provideMerge(engine)))
  ))
}
results.durableMemory = await durableRun(memoryEngine, "m1")
const dataDir = mkdtempSync(join(tmpdir(), "matrix-embedded-"))
results.durableEmbedded = await durableRun(embeddedEngine({ dataDir }), "e1")
rmSync(dataDir, { recursive: true, force: true })
if (process.env.DATABASE_URL) {
  const port = 20000 + Math.floor(Math.random() * 20000)
  results.durablePostgres = await durableRun(
    postgresRunner({ url: process.env.DATABASE_URL, runnerAddress: { host: "127.0.0.1", port }, shardingConfig: { shardsPerGroup: 16 } }),
    `p-${port}-${Date.now()}`
  )
  results.sessionPostgres = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
    const store = yield* postgresSessionStore({ url: process.env.DATABASE_URL })
    const id = `matrix-${Date.now()}`
    yield* store.append(id, [{ role: "user", content: "hi" }])
    return (yield* store.load(id)).length
  })))
}

// MCP: an agent served over HTTP, called through our client (both on the consumer's MCP SDK).
results.mcp = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
  const { url } = yield* serveHttp(mcpServer({ name: "calc", tools: { add } }), { port: 0 })
  const connection = yield* connectMcp(mcpHttp("calc", url))
  const answer = yield* Effect.promise(() => connection.callTool("add", { a: 20, b: 22 }))
  return answer.content.map((part) => part.text).join("")
})))

// Web and AG-UI handlers: Request in, streamed Response out (Web-standard, as a route handler sees them).
const scriptedCalculator = () => calculator(scriptedModel([toolCalls([{ id: "c1", name: "add", arguments: { a: 2, b: 3 } }]), text("5")]))
{
  const response = await chatHandler(scriptedCalculator())(new Request("http://localhost/api/chat", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "2 + 3?" }] }] })
  }))
  const body = await response.text()
  results.web = response.status === 200 && body.includes('"text-delta"') && body.includes('"5"') ? "ok" : `${response.status} ${body.slice(0, 300)}`
}
{
  const response = await agUiHandler(scriptedCalculator())(new Request("http://localhost/ag-ui", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ threadId: "t1", runId: "r1", messages: [{ id: "u1", role: "user", content: "2 + 3?" }], tools: [], context: [], state: {}, forwardedProps: {} })
  }))
  const body = await response.text()
  results.agUi = response.status === 200 && body.includes("RUN_FINISHED") && body.includes("TOOL_CALL_RESULT") ? "ok" : `${response.status} ${body.slice(0, 300)}`
}
// A2A both ways on the consumer's @a2a-js/sdk: our client calls our server.
{
  const server = await serveA2a(agent("rates").model(scriptedModel(() => text("1 EUR = 1.08 USD"))))
  const rates = await a2aAgent(server.url, { name: "rates", timeoutMs: 30_000 })
  // The remote answer comes back inside our untrusted-output envelope: only its text is compared.
  const answer = await agent("concierge")
    .model(scriptedModel((request) => request.messages.at(-1)?.role === "tool"
      ? text(String(request.messages.at(-1)?.content))
      : toolCalls([{ id: "r1", name: "rates", arguments: { input: "EUR to USD?" } }])))
    .tools({ rates })
    .run("rate?")
  results.a2a = answer.includes("1 EUR = 1.08 USD") ? "1 EUR = 1.08 USD" : answer
  await server.close()
}
// Evaluations.
results.evals = await Effect.runPromise(Effect.gen(function* () {
  const cases = yield* dataset("matrix", [{ id: "one", input: "2 + 3?", expected: "5" }])
  const report = yield* evaluate(scriptedCalculator(), cases, [exactMatch()])
  return report.summary.passed
}))

// fast-check arbitraries with the consumer's fast-check.
results.arbitraries = fc.sample(arbModelScript([add]), 3).length

console.log(JSON.stringify(results))
process.exit(0)
