import { join, resolve } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Exit, Schema, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, AgentConfigError, ModelClient, text, tool } from "../../src/index.ts"
import { mcpHttp, mcpServer, mcpTools, serveHttp } from "../../src/mcp/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const root = resolve(import.meta.dirname, "../..")
const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) => (result.content as Array<{ type: string; text?: string }>).map((c) => c.text).join("")

describe("examples/mcp-server.ts over stdio, with the SDK's client", { timeout: 30_000 }, () => {
  let client: Client
  beforeAll(async () => {
    client = new Client({ name: "test", version: "1.0.0" })
    // AI_PROVIDER set but empty (as `AI_PROVIDER= npm run …` leaves it): still the offline model, not `fromEnv`.
    const env = { ...getDefaultEnvironment(), AI_PROVIDER: "" }
    await client.connect(new StdioClientTransport({ command: process.execPath, args: ["--import", "tsx", join(root, "examples/mcp-server.ts")], cwd: root, env, stderr: "ignore" }))
  }, 30_000)
  afterAll(async () => {
    await client?.close()
  })

  it("lists the tools with their JSON Schemas and the agent as a tool", async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(["add", "shout", "adder"])
    expect(tools[0]!.inputSchema).toMatchObject({ type: "object", required: ["a", "b"], additionalProperties: false })
    expect(tools[1]!.inputSchema).toEqual({ type: "object", properties: { text: { type: "string", minLength: 1 } }, required: ["text"], additionalProperties: false })
    expect(tools[2]!.inputSchema).toEqual({ type: "object", properties: { input: { type: "string" } }, required: ["input"], additionalProperties: false })
  })

  it("runs tools on decoded arguments, and refuses invalid ones with readable issues", async () => {
    expect(textOf(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))).toBe("5")
    expect(textOf(await client.callTool({ name: "shout", arguments: { text: "hi" } }))).toBe("HI")
    const refused = await client.callTool({ name: "shout", arguments: { text: "" } })
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toMatch(/Invalid arguments for tool "shout":[\s\S]*\["text"\]/)
  })

  it("runs the agent on its input and returns its output", async () => {
    expect(textOf(await client.callTool({ name: "adder", arguments: { input: "What is 2 + 40?" } }))).toBe("The sum is 42.")
  })
})

describe("serveHttp, with the SDK's client and with mcpTools", { timeout: 20_000 }, () => {
  const Order = Schema.Struct({ item: Schema.String, quantity: Schema.Int })
  const Receipt = Schema.Struct({ item: Schema.String, total: Schema.Finite })
  const failing = tool("explode", { args: Schema.Struct({}), run: () => Promise.reject(new Error("kaboom")) })
  const shop = agent("shop", { input: Order, output: Receipt })
    .model(scriptedModel(() => text(JSON.stringify({ item: "apple", total: 1.5 }))))
  let scope: Scope.Closeable
  let url = ""
  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    const server = mcpServer({ name: "shop", tools: [failing], agents: [shop] })
    url = (await Effect.runPromise(serveHttp(server).pipe(Scope.provide(scope)))).url
  })
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("serves an agent with object input and output: the input schema is the agent's, the output structured", async () => {
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    try {
      const { tools } = await client.listTools()
      expect(tools.find((t) => t.name === "shop")!.inputSchema).toMatchObject({ type: "object", required: ["item", "quantity"] })
      const result = await client.callTool({ name: "shop", arguments: { item: "apple", quantity: 3 } })
      expect(result.structuredContent).toEqual({ item: "apple", total: 1.5 })
      const invalid = await client.callTool({ name: "shop", arguments: { item: "apple", quantity: 1.5 } })
      expect(invalid.isError).toBe(true)
      const failed = await client.callTool({ name: "explode", arguments: {} })
      expect(failed.isError).toBe(true)
      expect(textOf(failed)).toContain("kaboom")
    } finally {
      await client.close()
    }
  })

  it("round-trips through this library's own MCP client, into another agent", async () => {
    const model = scriptedModel([
      { _tag: "ToolCalls", calls: [{ id: "c1", name: "shop_shop", arguments: { item: "pear", quantity: 2 } }] },
      text("bought")
    ])
    const answer = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { tools } = yield* mcpTools(mcpHttp("shop", url), { tools: ["shop"], untrustedOutput: false })
      return yield* agent("buyer").model(model).tools(tools).runEffect("buy")
    })))
    expect(answer).toBe("bought")
    expect(model.requests[1]!.messages.at(-1)!.content).toBe(JSON.stringify({ item: "apple", total: 1.5 }))
  })

  it("stops listening when its scope closes", async () => {
    const own = Effect.runSync(Scope.make())
    const address = await Effect.runPromise(serveHttp(mcpServer({ name: "x", tools: [failing] })).pipe(Scope.provide(own)))
    await Effect.runPromise(Scope.close(own, Exit.void))
    await expect(fetch(address.url, { method: "POST", body: "{}" })).rejects.toThrow()
  })

  it("refuses duplicate names", () => {
    expect(() => mcpServer({ name: "x", tools: [failing, failing] })).toThrow(AgentConfigError)
    expect(() => mcpServer({ name: "x", tools: [failing], agents: [agent("explode").model(ModelClient.fromFunction(() => text("")))] })).toThrow(/two tools or agents are named "explode"/)
  })
})
