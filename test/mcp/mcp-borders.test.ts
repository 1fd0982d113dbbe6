/**
 * MCP borders found by review, crossed with servers and clients this project did not write (the SDK's
 * own `Server` and `Client`): a tool list that never ends is refused within the connect timeout; a
 * tool on a later page survives a `tools/list_changed`; a schema whose `$ref`s only loop is refused
 * at load (skipped with `unsupportedSchemas: "skip"`); our HTTP server refuses a foreign Host or
 * Origin; a served agent that stops to wait for an approval answers `isError` without its snapshot.
 */
import { request } from "node:http"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Exit, Schema, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { agent, text, tool, toolCalls } from "../../src/index.ts"
import { compileJsonSchema } from "../../src/dsl/json-schema-tool.ts"
import { mcpServer, mcpStdio, mcpTools, serveHttp } from "../../src/mcp/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const paged = (mode: string) =>
  mcpStdio("paged", { command: process.execPath, args: [join(import.meta.dirname, "fixtures/paged-server.mjs")], env: { ...process.env, MODE: mode } as Record<string, string> })

describe("MCP client borders", { timeout: 30_000 }, () => {
  it("a tool list that never ends is refused within the connect timeout", async () => {
    const started = Date.now()
    const error = failureOf(await runExit(Effect.scoped(mcpTools(paged("endless"), { connectTimeoutMs: 3_000 }))))
    expect(error).toMatchObject({ _tag: "McpError" })
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it("a tool on the list's second page still works after tools/list_changed", async () => {
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { tools, nameOf } = yield* mcpTools(paged("paged"), { untrustedOutput: false, listChangedDebounceMs: 10 })
      const echo = nameOf("echo")!
      const change = nameOf("change")!
      yield* agent("a").model(scriptedModel([toolCalls([{ id: "c", name: change, arguments: {} }]), text("changed")])).tools(tools).runEffect("x")
      yield* Effect.sleep("500 millis")
      const model = scriptedModel([toolCalls([{ id: "e", name: echo, arguments: { n: 1 } }]), text("done")])
      yield* agent("b").model(model).tools(tools).runEffect("x")
      return model.requests.at(-1)!.messages.find((m) => m.role === "tool")?.content
    })))
    expect(out).toBe('ran echo {"n":1}')
  })

  it("a schema whose $refs only loop is refused at load, or skipped", async () => {
    expect(() => compileJsonSchema({ type: "object", properties: { n: { $ref: "#/$defs/A" } }, $defs: { A: { $ref: "#/$defs/B" }, B: { $ref: "#/$defs/A" } } }, { strict: false })).toThrow(/comes back to itself/)
    // A recursive schema with structure between its references is fine.
    const tree = compileJsonSchema({ type: "object", properties: { root: { $ref: "#/$defs/Node" } }, $defs: { Node: { type: "object", properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } } } } } }, { strict: false })
    expect(tree.decode({ root: { children: [{ children: [] }] } })._tag).toBe("Success")
    // Arguments nested deeper than the stack goes through it: refused, never a defect.
    let deep: unknown = { children: [] }
    for (let i = 0; i < 20_000; i++) deep = { children: [deep] }
    expect(tree.decode({ root: deep })._tag).toBe("Failure")
    expect(failureOf(await runExit(Effect.scoped(mcpTools(paged("cycle")))))).toMatchObject({ _tag: "McpError" })
    const names = await Effect.runPromise(Effect.scoped(Effect.map(mcpTools(paged("cycle"), { unsupportedSchemas: "skip" }), ({ byServerName }) => Object.keys(byServerName))))
    expect(names).toEqual(["plain"])
  })

  it("a server's pattern that backtracks catastrophically is checked in linear time: a hostile argument is refused at once, the server never called", async () => {
    const hostile = "a".repeat(25) + "!" // about 2.5 s in a backtracking engine, and every further "a" doubles it
    const { contents, ms } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { tools, nameOf } = yield* mcpTools(paged("redos"), { untrustedOutput: false })
      const match = nameOf("match")!
      const nonblank = nameOf("nonblank")!
      const model = scriptedModel([
        toolCalls([
          { id: "h", name: match, arguments: { s: hostile } },
          { id: "v", name: match, arguments: { s: "aaaa" } },
          { id: "b", name: nonblank, arguments: { s: "   " } },
          { id: "n", name: nonblank, arguments: { s: " x" } }
        ]),
        text("done")
      ])
      const started = Date.now()
      yield* agent("a").model(model).tools(tools).runEffect("x")
      const ms = Date.now() - started
      return { contents: model.requests.at(-1)!.messages.filter((m) => m.role === "tool").map((m) => m.content), ms }
    })))
    expect(contents[0]).toMatch(/\^\(a\+\)\+\$/)
    expect(contents[0]).not.toMatch(/^ran/)
    expect(contents[1]).toBe('ran match {"s":"aaaa"}')
    // A pattern RE2 cannot run (lookahead) is still applied, by the native engine.
    expect(contents[2]).not.toMatch(/^ran/)
    expect(contents[3]).toBe('ran nonblank {"s":" x"}')
    expect(ms).toBeLessThan(1_500)
  })
})

describe("MCP server borders", { timeout: 30_000 }, () => {
  const rawStatus = (port: number, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })
      const req = request({ host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      })
      req.on("error", reject)
      req.end(body)
    })

  it("over HTTP, refuses a foreign Host (DNS rebinding) and a foreign Origin; takes its own", async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
      const { port } = await Effect.runPromise(serveHttp(mcpServer({ name: "guarded", tools: { add } })).pipe(Scope.provide(scope)))
      expect(await rawStatus(port, { host: "evil.example" })).toBe(403)
      expect(await rawStatus(port, { host: `127.0.0.1:${port}`, origin: "http://evil.example" })).toBe(403)
      expect(await rawStatus(port, { host: `127.0.0.1:${port}` })).toBe(200)
      expect(await rawStatus(port, { host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(200)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("a served agent that stops to wait for an approval answers isError naming the tool, without its snapshot", async () => {
    const ran: Array<unknown> = []
    const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String }), needsApproval: true, run: (args) => void ran.push(args) })
    const teller = agent("teller").prompt("You are teller, with secrets.").model(scriptedModel([toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob" } }]), text("done")])).tools({ transfer })
    const scope = Effect.runSync(Scope.make())
    try {
      const { url } = await Effect.runPromise(serveHttp(mcpServer({ name: "bank", agents: [teller] })).pipe(Scope.provide(scope)))
      const client = new Client({ name: "test", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      const result = await client.callTool({ name: "teller", arguments: { input: "pay bob" } })
      await client.close()
      expect(result.isError).toBe(true)
      const textOut = (result.content as ReadonlyArray<{ readonly text?: string }>).map((part) => part.text ?? "").join("")
      expect(textOut).toContain('"transfer"')
      expect(textOut).not.toContain("secrets")
      expect(textOut).not.toContain("snapshot")
      expect(ran).toEqual([])
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
