/**
 * Keys named like the members of `Object.prototype` in tool arguments, crossing MCP both ways with the
 * SDK's own `Client` and `Server` over real transports. The SDK rebuilds `tools/call` arguments and
 * silently drops a `"__proto__"` key (its request schema at the top level, an `McpServer`'s input
 * schema in every object or record below), so a call carrying one cannot run with the arguments that were checked: our
 * client refuses it before the call leaves the process, our server refuses it instead of running with
 * it dropped. `constructor`, `toString` and `prototype` are ordinary keys: an absent one is absent,
 * never read from the prototype.
 */
import { join, resolve } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Exit, Schema, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { agent, ModelClient, text, tool, toolCalls } from "../../src/index.ts"
import { mcpServer, mcpStdio, mcpTools, serveHttp } from "../../src/mcp/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const root = resolve(import.meta.dirname, "../..")
const protoServer = mcpStdio("p", { command: process.execPath, args: [join(import.meta.dirname, "fixtures/proto-keys-server.mjs")] })

/** Each call's tool message, in order: what the fixture server saw, or the feedback the model got. */
const runCalls = (calls: ReadonlyArray<readonly [name: string, args: string]>) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const { tools } = yield* mcpTools(protoServer, { untrustedOutput: false })
    const model = scriptedModel([toolCalls(calls.map(([name, args], i) => ({ id: `c${i}`, name, arguments: args }))), text("done")])
    yield* agent("a").model(model).tools(tools).runEffect("x")
    return model.requests.at(-1)!.messages.filter((m) => m.role === "tool").map((m) => m.content)
  })))

/** The fixture's answer: the arguments on the wire and those its handler received, as JSON text. */
const reached = (content: string | undefined): { readonly wire: string; readonly received: string } => {
  expect(content, "the call reached the server").toMatch(/^\{"wire":/)
  return JSON.parse(content!)
}

const textOf = (result: unknown) => (result as { readonly content: ReadonlyArray<{ readonly text?: string }> }).content.map((part) => part.text ?? "").join("")

afterEach(() => {
  // Nothing anywhere in this process ever got a polluted prototype.
  expect(({} as Record<string, unknown>).x).toBeUndefined()
  expect(Object.prototype).not.toHaveProperty("x")
})

describe("MCP client: keys named like prototype members in a model's arguments", { timeout: 30_000 }, () => {
  it("refuses a \"__proto__\" key at any depth before the call leaves the process, as invalid arguments", async () => {
    const out = await runCalls([
      ["p_open", '{"__proto__":{"x":1},"a":1}'],
      ["p_map", '{"__proto__":{"x":1},"k":{}}'],
      ["p_declared", '{"__proto__":{"x":1}}'],
      ["p_open", '{"a":1,"b":[{"__proto__":{"x":1}}]}'],
      ["p_open", '{"a":1}']
    ])
    // Without the refusal the server ran `open` with {"a":1} and `declared` with {} (a required key
    // missing): the SDK's server dropped the key the schema check had accepted.
    expect(out[0]).toMatch(/^Invalid arguments for tool "p_open":\n.*"__proto__".*\n {2}at \["__proto__"\]/)
    expect(out[1]).toMatch(/^Invalid arguments for tool "p_map":[\s\S]*at \["__proto__"\]/)
    expect(out[2]).toMatch(/^Invalid arguments for tool "p_declared":[\s\S]*at \["__proto__"\]/)
    expect(out[3]).toMatch(/^Invalid arguments for tool "p_open":[\s\S]*at \["b"\]\[0\]\["__proto__"\]/)
    // A call without one reaches the server exactly as checked.
    expect(reached(out[4])).toEqual({ wire: '{"a":1}', received: '{"a":1}' })
  })

  it("reads only the arguments' own keys: an absent constructor or toString is absent, a present one is sent as it is", async () => {
    const out = await runCalls([
      ["p_members", "{}"],
      ["p_members", '{"constructor":"c","toString":"t","prototype":"p"}'],
      ["p_member_required", "{}"],
      ["p_member_required", '{"constructor":{"name":"Object"}}']
    ])
    // Without it, `{}` was refused ("Expected string at constructor", read from Object.prototype).
    expect(reached(out[0])).toEqual({ wire: "{}", received: "{}" })
    expect(reached(out[1])).toEqual({ wire: '{"constructor":"c","toString":"t","prototype":"p"}', received: '{"constructor":"c","toString":"t","prototype":"p"}' })
    // A required key that is absent is reported missing (not "Expected JSON value": Object's constructor).
    expect(out[2]).toMatch(/^Invalid arguments for tool "p_member_required":\nMissing key\n {2}at \["constructor"\]/)
    expect(reached(out[3])).toEqual({ wire: '{"constructor":{"name":"Object"}}', received: '{"constructor":{"name":"Object"}}' })
  })
})

describe("MCP server: a client's arguments with a \"__proto__\" key", { timeout: 30_000 }, () => {
  it("over HTTP, refuses it at any depth as invalid arguments, for tools and agents, instead of running with it dropped", async () => {
    const ran: Array<unknown> = []
    const sum = tool("sum", { args: Schema.Struct({ a: Schema.Finite }), run: (args) => void ran.push(args) })
    const keys = tool("keys", { args: Schema.Record(Schema.String, Schema.Json), run: (args) => void ran.push(args) })
    const models: Array<string> = []
    const echo = agent("echo").model(ModelClient.fromFunction((request) => {
      models.push(request.messages.at(-1)!.content)
      return text("hi")
    }))
    const scope = Effect.runSync(Scope.make())
    const client = new Client({ name: "test", version: "1.0.0" })
    try {
      const { url } = await Effect.runPromise(serveHttp(mcpServer({ name: "p", tools: { sum, keys }, agents: [echo] })).pipe(Scope.provide(scope)))
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      const call = (name: string, args: string) => client.callTool({ name, arguments: JSON.parse(args) })
      // Without the refusal, `sum` ran with {"a":1} (the advertised schema is closed), `keys` with {"b":2}.
      const closed = await call("sum", '{"__proto__":{"x":1},"a":1}')
      const record = await call("keys", '{"__proto__":1,"b":2}')
      const nested = await call("keys", '{"b":{"c":[{"__proto__":{"x":1}}]}}')
      const agentInput = await call("echo", '{"input":"hi","__proto__":{"x":1}}')
      expect([closed, record, nested, agentInput].map((r) => r.isError)).toEqual([true, true, true, true])
      expect(textOf(closed)).toMatch(/^Invalid arguments for tool "sum":\n.*"__proto__".*\n {2}at \["__proto__"\]/)
      expect(textOf(record)).toMatch(/^Invalid arguments for tool "keys":[\s\S]*at \["__proto__"\]/)
      expect(textOf(nested)).toMatch(/at \["b"\]\["c"\]\[0\]\["__proto__"\]/)
      expect(textOf(agentInput)).toMatch(/^Invalid input for agent "echo":[\s\S]*at \["__proto__"\]/)
      expect(ran).toEqual([])
      expect(models).toEqual([])
      // Arguments without one run as they were sent.
      expect((await call("keys", '{"b":2,"constructor":"c"}')).isError).toBeUndefined()
      expect((await call("echo", '{"input":"hi"}')).isError).toBeUndefined()
      expect(ran).toEqual([{ b: 2, constructor: "c" }])
      expect(models).toEqual(["hi"])
      // Arguments that are no object are invalid params, as the SDK's own schema has them: nothing runs.
      for (const bad of ["a string", 42, [1, 2], null]) {
        const refused = await client.request({ method: "tools/call", params: { name: "keys", arguments: bad as never } }, CallToolResultSchema).then(() => "answered", (error: unknown) => String(error))
        expect(refused).toMatch(/-32602/)
      }
      expect(ran).toEqual([{ b: 2, constructor: "c" }])
    } finally {
      await client.close()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("over stdio, refuses it as invalid arguments instead of running with it dropped", async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: ["--import", "tsx", join(import.meta.dirname, "fixtures/keys-tool-server.ts")], cwd: root })
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(transport)
    try {
      const refused = await client.callTool({ name: "keys", arguments: JSON.parse('{"__proto__":{"x":1},"b":1}') })
      // Without the refusal it answered {"args":{"b":1},"own":["b"]}.
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toMatch(/^Invalid arguments for tool "keys":[\s\S]*at \["__proto__"\]/)
      const ok = await client.callTool({ name: "keys", arguments: { b: 1 } })
      expect(JSON.parse(textOf(ok))).toEqual({ args: { b: 1 }, own: ["b"] })
    } finally {
      await client.close()
    }
  })
})
