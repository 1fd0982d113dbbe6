/**
 * Sessions of MCP over streamable HTTP, from both ends. Our server, spoken to by a raw HTTP client:
 * a request whose JSON-RPC id is already in flight in the session is refused (-32600) and runs
 * nothing, the one in flight keeps its answer, and a dropped POST cancels only the call it carried.
 * Our client (`mcpTools(mcpHttp(url))`): when the server has ended the session (idle, or restarted) it
 * gets 404, starts a new session and sends the call once more; it never sends a call again after any
 * other failure, where the server may have run it.
 */
import { createServer, type IncomingMessage, type Server as HttpServer } from "node:http"
import { Effect, Exit, Schema, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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

/** A tool that waits `ms` (or until its call is cancelled), logging what happens to each call by tag. */
const slowTool = (log: Array<string>) =>
  tool("slow", {
    args: Schema.Struct({ ms: Schema.Finite, tag: Schema.String }),
    run: async ({ ms, tag }, { signal }) => {
      log.push(`start ${tag}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms)
        signal.addEventListener("abort", () => {
          clearTimeout(timer)
          log.push(`abort ${tag}`)
          resolve()
        })
      })
      return `done ${tag}`
    }
  })

/** An echo tool counting its runs. */
const echoTool = (runs: Array<string>) =>
  tool("echo", { args: Schema.Struct({ text: Schema.String }), run: ({ text }) => (runs.push(text), text) })

describe("MCP server over HTTP: request ids within a session", { timeout: 20_000 }, () => {
  const log: Array<string> = []
  let scope: Scope.Closeable
  let url = ""
  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    url = (await Effect.runPromise(serveHttp(mcpServer({ name: "ids", tools: { slow: slowTool(log) } })).pipe(Scope.provide(scope)))).url
  })
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
  const openSession = async () => {
    const init = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })
    })
    const session = { ...headers, "mcp-session-id": init.headers.get("mcp-session-id")!, "mcp-protocol-version": "2025-06-18" }
    await fetch(url, { method: "POST", headers: session, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) })
    return (id: number, ms: number, tag: string, signal?: AbortSignal) =>
      fetch(url, {
        method: "POST",
        headers: session,
        body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "slow", arguments: { ms, tag } } }),
        ...(signal === undefined ? {} : { signal })
      })
  }
  const answerOf = async (response: Response) => ({ status: response.status, body: await response.json() as { id: unknown; result?: { content: Array<{ text: string }> }; error?: { code: number; message: string } } })

  it("refuses a request whose id is in flight, runs nothing for it, and lets the one in flight answer", async () => {
    const call = await openSession()
    const first = call(50, 600, "first")
    await eventually(() => log.includes("start first"))
    const second = await answerOf(await call(50, 10, "second"))
    expect(second.status).toBe(400)
    expect(second.body.error).toMatchObject({ code: -32600, message: expect.stringMatching(/request id 50 is already in use/) })
    const answer = await answerOf(await first)
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ id: 50, result: { content: [{ text: "done first" }] } })
    expect(log).not.toContain("start second")
    expect(log).not.toContain("abort first")
    // Answered, the id can be used again.
    const again = await answerOf(await call(50, 10, "again"))
    expect(again.body).toMatchObject({ id: 50, result: { content: [{ text: "done again" }] } })
  })

  it("a dropped POST cancels only the call it carried: a request under the same id is refused, not cancelled nor given its answer", async () => {
    const call = await openSession()
    const drop = new AbortController()
    const first = call(60, 5_000, "dropped", drop.signal)
    first.catch(() => undefined)
    await eventually(() => log.includes("start dropped"))
    const second = await answerOf(await call(60, 10, "same-id"))
    expect(second.body.error).toMatchObject({ code: -32600 })
    drop.abort()
    await eventually(() => log.includes("abort dropped"))
    expect(log).not.toContain("start same-id")
    // Once the cancelled call has settled, its id is free, and a call under it gets its own answer.
    let next = await answerOf(await call(60, 10, "next"))
    for (const end = Date.now() + 2_000; next.status === 400 && Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 20))
      next = await answerOf(await call(60, 10, "next"))
    }
    expect(next.body).toMatchObject({ id: 60, result: { content: [{ text: "done next" }] } })
    expect(log).not.toContain("abort next")
  })
})

/** Serves `tools` over HTTP in a scope of its own, on `port` (0: a free one). */
const serveIn = async (tools: NonNullable<McpServerOptions["tools"]>, options: { readonly port?: number; readonly sessionIdleMs?: number } = {}) => {
  const scope = Effect.runSync(Scope.make())
  const address = await Effect.runPromise(serveHttp(mcpServer({ name: "remote", tools }), options).pipe(Scope.provide(scope)))
  return { ...address, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** Calls the remote echo tool through `mcpTools`, returning what it answered or its typed failure. */
const callEcho = (tools: Record<string, unknown>, text: string) => runExit(executeTool(tools["remote_echo"] as never, { text } as never, `c-${text}`))

describe("MCP client over HTTP: a session the server ended", { timeout: 20_000 }, () => {
  it("starts a new session when the server ended an idle one, and sends the call once more", async () => {
    const runs: Array<string> = []
    const server = await serveIn({ echo: echoTool(runs) }, { sessionIdleMs: 150 })
    try {
      await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const { tools, connection } = yield* mcpTools(mcpHttp("remote", server.url))
        expect(Exit.isSuccess(yield* Effect.promise(() => callEcho(tools, "before")))).toBe(true)
        yield* Effect.sleep("600 millis") // the server's sweep ends the idle session
        const after = yield* Effect.promise(() => callEcho(tools, "after idle"))
        expect(after).toEqual(Exit.succeed("after idle"))
        expect(yield* Effect.promise(() => callEcho(tools, "again"))).toEqual(Exit.succeed("again"))
        expect(connection.listed().map((t) => t.name)).toEqual(["echo"])
      })))
      expect(runs).toEqual(["before", "after idle", "again"])
    } finally {
      await server.close()
    }
  })

  it("starts a new session with a restarted server at the same address", async () => {
    const runs: Array<string> = []
    let server = await serveIn({ echo: echoTool(runs) })
    try {
      await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const { tools } = yield* mcpTools(mcpHttp("remote", server.url))
        expect(yield* Effect.promise(() => callEcho(tools, "first"))).toEqual(Exit.succeed("first"))
        yield* Effect.promise(() => server.close())
        server = yield* Effect.promise(() => serveIn({ echo: echoTool(runs) }, { port: server.port }))
        // Let the client see its kept-alive sockets to the old server closed: a call sent on one of them
        // fails as a lost connection, which (the server may have run it) is rightly never sent again.
        yield* Effect.sleep("100 millis")
        expect(yield* Effect.promise(() => callEcho(tools, "restarted"))).toEqual(Exit.succeed("restarted"))
      })))
      expect(runs).toEqual(["first", "restarted"])
    } finally {
      await server.close()
    }
  })

  it("never sends a call again after a failure other than a 404 to its session", async () => {
    const runs: Array<string> = []
    const server = await serveIn({ echo: echoTool(runs) })
    // A proxy that passes everything on, but answers 502 to a tools/call after the server has run it.
    const forward = async (req: IncomingMessage, body: Buffer) => {
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string" && k !== "host" && k !== "content-length") headers[k] = v
      return fetch(server.url, { method: req.method!, headers, ...(body.length === 0 ? {} : { body }) })
    }
    const proxy: HttpServer = createServer(async (req, res) => {
      const chunks: Array<Buffer> = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const body = Buffer.concat(chunks)
      const upstream = await forward(req, body)
      const text = await upstream.text()
      if (body.toString().includes(`"tools/call"`)) return void res.writeHead(502).end("bad gateway")
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers.entries())).end(text)
    })
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
    const port = (proxy.address() as { port: number }).port
    try {
      const exit = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const { tools } = yield* mcpTools(mcpHttp("remote", `http://127.0.0.1:${port}/mcp`))
        return yield* Effect.promise(() => callEcho(tools, "once"))
      })))
      const error = failureOf(exit)
      expect(error).toBeInstanceOf(McpError)
      expect(error).toMatchObject({ operation: "call", reason: expect.stringMatching(/bad gateway/) })
      expect(runs).toEqual(["once"])
    } finally {
      proxy.closeAllConnections()
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
      await server.close()
    }
  })
})
