/**
 * The borders of the MCP server (issue #28, items 5-7), crossed by clients this project did not
 * write: the SDK's own `Client` over stdio and streamable HTTP, and a bare child process whose stdin
 * the test closes. A cancelled `tools/call` interrupts the agent's run on both transports; closing
 * stdin interrupts in-flight runs and ends the process; an agent with text input refuses what its
 * schema refuses.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join, resolve } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, ModelClient, text } from "../../src/index.ts"
import { mcpServer, serveHttp } from "../../src/mcp/index.ts"

const root = resolve(import.meta.dirname, "../..")
const fixture = join(import.meta.dirname, "fixtures/slow-agent-server.ts")

const eventually = async (check: () => boolean, ms = 8_000) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** A model that never answers, recording when it starts and when its run is interrupted. */
const neverModel = () => {
  const seen = { started: 0, interrupted: 0 }
  const model = ModelClient.fromFunction(() =>
    Effect.sync(() => void seen.started++).pipe(Effect.andThen(Effect.never), Effect.onInterrupt(() => Effect.sync(() => void seen.interrupted++)))
  )
  return { seen, model }
}

describe("MCP server over streamable HTTP, with the SDK's client", { timeout: 20_000 }, () => {
  const slow = neverModel()
  let scope: Scope.Closeable
  let url = ""
  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    const server = mcpServer({ name: "borders", agents: [agent("slow").model(slow.model), agent("echo").model(ModelClient.fromFunction((r) => text(r.messages.at(-1)!.content)))] })
    url = (await Effect.runPromise(serveHttp(server).pipe(Scope.provide(scope)))).url
  })
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("interrupts the agent's run when the client cancels the tools/call", async () => {
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    try {
      const abort = new AbortController()
      const pending = client.callTool({ name: "slow", arguments: { input: "go" } }, undefined, { signal: abort.signal })
      pending.catch(() => undefined)
      await eventually(() => slow.seen.started === 1)
      abort.abort("the user went away") // the SDK sends notifications/cancelled
      await expect(pending).rejects.toThrow()
      await eventually(() => slow.seen.interrupted === 1)
    } finally {
      await client.close()
    }
  })

  it("interrupts the run when a raw HTTP client drops the POST carrying the call", async () => {
    const post = (body: unknown, session?: string, signal?: AbortSignal) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(session === undefined ? {} : { "mcp-session-id": session }) },
        body: JSON.stringify(body),
        ...(signal === undefined ? {} : { signal })
      })
    const init = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })
    const session = init.headers.get("mcp-session-id")!
    expect(session).toMatch(/^[0-9a-f-]{36}$/)
    await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session)
    const before = slow.seen.interrupted
    const abort = new AbortController()
    const pending = post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "slow", arguments: { input: "go" } } }, session, abort.signal)
    pending.catch(() => undefined)
    await eventually(() => slow.seen.started === before + 1)
    abort.abort()
    await eventually(() => slow.seen.interrupted === before + 1)
    // A request under an unknown session is refused.
    expect((await post({ jsonrpc: "2.0", id: 3, method: "tools/list" }, "no-such-session")).status).toBe(404)
  })

  it("refuses keys the advertised schema of a text-input agent does not allow", async () => {
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    try {
      const { tools } = await client.listTools()
      expect(tools.find((t) => t.name === "echo")!.inputSchema).toMatchObject({ additionalProperties: false })
      const ok = await client.callTool({ name: "echo", arguments: { input: "hi" } })
      expect(ok.isError).toBeUndefined()
      const extra = await client.callTool({ name: "echo", arguments: { input: "hi", temperature: 2 } })
      expect(extra.isError).toBe(true)
      expect((extra.content as Array<{ text: string }>)[0]!.text).toMatch(/Invalid input for agent "echo"[\s\S]*temperature/)
    } finally {
      await client.close()
    }
  })
})

describe("MCP server sessions over HTTP", { timeout: 20_000 }, () => {
  it("ends a session idle for sessionIdleMs, and not one whose call is still running", async () => {
    const slow = neverModel()
    const scope = Effect.runSync(Scope.make())
    const server = mcpServer({ name: "idle", agents: [agent("slow").model(slow.model), agent("echo").model(ModelClient.fromFunction((r) => text(r.messages.at(-1)!.content)))] })
    const { url } = await Effect.runPromise(serveHttp(server, { sessionIdleMs: 150 }).pipe(Scope.provide(scope)))
    const busy = new Client({ name: "busy", version: "1.0.0" })
    const idle = new Client({ name: "idle", version: "1.0.0" })
    try {
      await busy.connect(new StreamableHTTPClientTransport(new URL(url)))
      await idle.connect(new StreamableHTTPClientTransport(new URL(url)))
      const running = busy.callTool({ name: "slow", arguments: { input: "go" } })
      running.catch(() => undefined)
      await eventually(() => slow.seen.started === 1)
      await new Promise((r) => setTimeout(r, 600))
      await expect(idle.callTool({ name: "echo", arguments: { input: "hi" } })).rejects.toThrow(/404|Session not found/)
      expect(slow.seen.interrupted).toBe(0)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      await busy.close()
      await idle.close()
    }
    // Closing the scope cancelled the running call.
    expect(slow.seen.interrupted).toBe(1)
  })

  it("refuses a sessionIdleMs that is not a positive number, with McpError", async () => {
    const exit = await Effect.runPromiseExit(Effect.scoped(serveHttp(mcpServer({ name: "x" }), { sessionIdleMs: Number.NaN })))
    expect(Exit.isFailure(exit) && String(exit.cause)).toMatch(/sessionIdleMs must be a positive number/)
  })
})

describe("MCP server over stdio, as a child process", { timeout: 30_000 }, () => {
  it("interrupts the agent's run when the SDK's client cancels the tools/call", async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: ["--import", "tsx", fixture], cwd: root, stderr: "pipe" })
    let log = ""
    transport.stderr!.on("data", (chunk: Buffer) => void (log += chunk.toString()))
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(transport)
    try {
      const abort = new AbortController()
      const pending = client.callTool({ name: "slow", arguments: { input: "go" } }, undefined, { signal: abort.signal })
      pending.catch(() => undefined)
      await eventually(() => log.includes("model started"))
      abort.abort("cancelled")
      await eventually(() => log.includes("model interrupted"))
    } finally {
      await client.close()
    }
  })

  it("interrupts in-flight runs and exits when its stdin closes", async () => {
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", fixture], { cwd: root, stdio: ["pipe", "pipe", "pipe"] })
    let log = ""
    child.stderr!.on("data", (chunk: Buffer) => void (log += chunk.toString()))
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)))
    try {
      const send = (message: unknown) => child.stdin!.write(`${JSON.stringify(message)}\n`)
      send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })
      send({ jsonrpc: "2.0", method: "notifications/initialized" })
      send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "slow", arguments: { input: "go" } } })
      await eventually(() => log.includes("model started"))
      child.stdin!.end() // the client went away
      await eventually(() => log.includes("model interrupted"), 5_000)
      const code = await Promise.race([exited, new Promise<"lingering">((r) => setTimeout(() => r("lingering"), 5_000))])
      expect(code).toBe(0)
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    }
  })
})
