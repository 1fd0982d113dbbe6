/**
 * The ends of calls over streamable HTTP. Our server answers every POST that carries a request: a call
 * cancelled by `notifications/cancelled` (what an SDK client sends on a timeout) gets a JSON-RPC error
 * `-32800`, and a call whose session ends (DELETE) gets `-32000`, instead of an HTTP request held open
 * for ever. Our client re-checks a call it sends again on a restarted server's new session against the
 * schema listed then, and fails a call at once when the server dies mid-answer (its event stream
 * breaks), without sending it again.
 */
import { createServer, type Server as HttpServer } from "node:http"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Exit, Schema, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { tool } from "../../src/index.ts"
import { executeTool } from "../../src/dsl/tool.ts"
import { McpError, mcpHttp, mcpServer, type McpServerOptions, mcpTools, serveHttp } from "../../src/mcp/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const eventually = async (check: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Serves `tools` over HTTP in a scope of its own, on `port` (0: a free one). */
const serveIn = async (tools: NonNullable<McpServerOptions["tools"]>, port = 0) => {
  const scope = Effect.runSync(Scope.make())
  const address = await Effect.runPromise(serveHttp(mcpServer({ name: "remote", tools }), { port }).pipe(Scope.provide(scope)))
  return { ...address, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** A tool that waits `ms` or until its call is cancelled, logging what happens by tag. */
const slowTool = (log: Array<string>) =>
  tool("slow", {
    args: Schema.Struct({ ms: Schema.Finite, tag: Schema.String }),
    run: async ({ ms, tag }, { signal }) => {
      log.push(`start ${tag}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms)
        signal.addEventListener("abort", () => (clearTimeout(timer), log.push(`abort ${tag}`), resolve()))
      })
      return `done ${tag}`
    }
  })

const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }

/** A raw session with `url`: its headers, and a sender of one JSON-RPC message. */
const rawSession = async (url: string) => {
  const init = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })
  })
  await init.text()
  const session = { ...headers, "mcp-session-id": init.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-06-18" }
  const send = (message: unknown) => fetch(url, { method: "POST", headers: session, body: JSON.stringify(message) })
  await (await send({ jsonrpc: "2.0", method: "notifications/initialized" })).text()
  return { session, send }
}

/** What a POST was answered with, or "no answer" after `ms`. */
const answerWithin = async (response: Promise<Response>, ms: number) =>
  Promise.race([
    response.then(async (r) => ({ status: r.status, body: await r.json() as { id?: unknown; error?: { code: number; message: string } } })),
    new Promise<"no answer">((resolve) => setTimeout(() => resolve("no answer"), ms))
  ])

describe("MCP server over HTTP: every POST of a call is answered", { timeout: 20_000 }, () => {
  it("answers a call cancelled by notifications/cancelled with a JSON-RPC error, and the call stops", async () => {
    const log: Array<string> = []
    const server = await serveIn({ slow: slowTool(log) })
    try {
      const { send } = await rawSession(server.url)
      const call = send({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "slow", arguments: { ms: 10_000, tag: "cancelled" } } })
      await eventually(() => log.includes("start cancelled"))
      const notified = await send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "timed out" } })
      expect(notified.status).toBe(202)
      const answer = await answerWithin(call, 3_000)
      expect(answer).toMatchObject({ status: 200, body: { id: 7, error: { code: -32800, message: expect.stringMatching(/cancelled: timed out/) } } })
      await eventually(() => log.includes("abort cancelled"))
    } finally {
      await server.close()
    }
  })

  it("answers the calls of a session ended by DELETE while they run", async () => {
    const log: Array<string> = []
    const server = await serveIn({ slow: slowTool(log) })
    try {
      const { session, send } = await rawSession(server.url)
      const call = send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "slow", arguments: { ms: 10_000, tag: "deleted" } } })
      await eventually(() => log.includes("start deleted"))
      expect((await fetch(server.url, { method: "DELETE", headers: session })).status).toBe(200)
      const answer = await answerWithin(call, 3_000)
      expect(answer).toMatchObject({ status: 200, body: { id: 1, error: { code: -32000, message: expect.stringMatching(/session ended/) } } })
      await eventually(() => log.includes("abort deleted"))
    } finally {
      await server.close()
    }
  })

  it("our client's timed-out calls leave no POST open on the server", async () => {
    const log: Array<string> = []
    const server = await serveIn({ slow: slowTool(log) })
    const answered: Array<number> = []
    // A proxy that counts the POSTs of calls the server answered, passing everything on.
    const proxy: HttpServer = createServer(async (req, res) => {
      const chunks: Array<Buffer> = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const forwarded: Record<string, string> = {}
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "content-length") forwarded[k] = v
      const body = Buffer.concat(chunks)
      const upstream = await fetch(server.url, { method: req.method!, headers: forwarded, ...(body.length === 0 ? {} : { body }) })
      const text = await upstream.text()
      if (body.toString().includes(`"tools/call"`)) answered.push(upstream.status)
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers.entries())).end(text)
    })
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
    try {
      await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const { tools } = yield* mcpTools(mcpHttp("remote", `http://127.0.0.1:${(proxy.address() as { port: number }).port}/mcp`), { timeoutMs: 300 })
        for (const tag of ["a", "b", "c"]) {
          const exit = yield* Effect.promise(() => runExit(executeTool(tools["remote_slow"] as never, { ms: 10_000, tag } as never, tag)))
          expect(failureOf(exit)).toMatchObject({ _tag: "McpError", reason: expect.stringMatching(/timed out/i) })
        }
      })))
      await eventually(() => answered.length === 3, 3_000)
      expect(log.filter((l) => l.startsWith("abort"))).toHaveLength(3)
    } finally {
      proxy.closeAllConnections()
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
      await server.close()
    }
  })
})

describe("MCP client over HTTP: calls across a restart or a crash", { timeout: 30_000 }, () => {
  const short = (maxLength: number, runs: Array<string>) =>
    tool("short", {
      parameters: { type: "object", properties: { s: { type: "string", maxLength } }, required: ["s"], additionalProperties: false },
      run: (args: unknown) => (runs.push((args as { s: string }).s), "ran")
    })

  it("checks a call sent again on a restarted server's new session against the schema listed then: refused, nothing sent", async () => {
    const runs: Array<string> = []
    let server = await serveIn({ short: short(5, runs) })
    try {
      const exit = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const { tools } = yield* mcpTools(mcpHttp("remote", server.url))
        expect(yield* Effect.promise(() => runExit(executeTool(tools["remote_short"] as never, { s: "abcd" } as never, "1")))).toEqual(Exit.succeed("ran"))
        // Redeployed with a tighter schema at the same address: the old session is unknown (404).
        yield* Effect.promise(() => server.close())
        server = yield* Effect.promise(() => serveIn({ short: short(2, runs) }, server.port))
        yield* Effect.sleep("100 millis")
        return yield* Effect.promise(() => runExit(executeTool(tools["remote_short"] as never, { s: "abcd" } as never, "2")))
      })))
      const error = failureOf(exit)
      expect(error).toBeInstanceOf(McpError)
      expect(error).toMatchObject({ operation: "call", reason: expect.stringMatching(/invalid arguments: the server restarted[\s\S]*nothing was sent/) })
      expect(runs).toEqual(["abcd"])
    } finally {
      await server.close()
    }
  })

  it("fails a call at once when the server dies while its event stream is open, and does not send it again", async () => {
    const calls: Array<string> = []
    const http: HttpServer = createServer(async (req, res) => {
      const server = new Server({ name: "crashing", version: "1.0.0" }, { capabilities: { tools: {} } })
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: "crash", inputSchema: { type: "object" as const } }] }))
      server.setRequestHandler(CallToolRequestSchema, async () => {
        calls.push("crash")
        // The process dies: every connection is cut, the call's event stream with it.
        setTimeout(() => http.closeAllConnections(), 50)
        return await new Promise<never>(() => undefined)
      })
      // Event-stream answers (the SDK's default), without event ids: nothing to resume.
      const transport = new StreamableHTTPServerTransport({}) // stateless: no session ids
      await server.connect(transport)
      await transport.handleRequest(req, res)
    })
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
    try {
      const started = Date.now()
      const exit = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const { tools } = yield* mcpTools(mcpHttp("h", `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`), { timeoutMs: 20_000 })
        return yield* Effect.promise(() => runExit(executeTool(tools["h_crash"] as never, {} as never, "1")))
      })))
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(failureOf(exit)).toMatchObject({ _tag: "McpError", operation: "call", reason: expect.stringMatching(/connection to the server was lost during the call.*not sent again/) })
      expect(calls).toEqual(["crash"])
    } finally {
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    }
  })
})
