/**
 * Server tools named like the members of `Object.prototype` (`constructor`, `toString`,
 * `hasOwnProperty`, `__proto__`) or anything else a server may send: each is loaded, found by its
 * server name (`byServerName`, `nameOf`) as an own key, never shadowed by an inherited member, and
 * calls its own tool. A server on the SDK's own `Server` (stateless HTTP, in process) lists them.
 */
import { createServer, type Server as HttpServer } from "node:http"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { executeTool } from "../../src/dsl/tool.ts"
import { mcpHttp, mcpTools } from "../../src/mcp/index.ts"
import { runExit } from "../fixtures.ts"

/** The names the server lists now (set by each test before it connects). */
let listed: ReadonlyArray<string> = []
let http: HttpServer
let url = ""

beforeAll(async () => {
  http = createServer(async (req, res) => {
    const server = new Server({ name: "names", version: "1.0.0" }, { capabilities: { tools: {} } })
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed.map((name) => ({ name, inputSchema: { type: "object" as const } })) }))
    server.setRequestHandler(CallToolRequestSchema, (request) => ({ content: [{ type: "text", text: `ran ${request.params.name}` }] }))
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true }) // stateless: no session ids
    await server.connect(transport)
    await transport.handleRequest(req, res)
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`
})
afterAll(async () => {
  http.closeAllConnections()
  await new Promise<void>((resolve) => http.close(() => resolve()))
})

const prototypeNames = [...Object.getOwnPropertyNames(Object.prototype), "prototype"]

describe("MCP client: server tools named like prototype members", { timeout: 60_000 }, () => {
  it("loads constructor, toString, hasOwnProperty and __proto__, declared or not, each an own key calling its own tool", async () => {
    listed = ["constructor", "toString", "hasOwnProperty", "__proto__", "echo"]
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const all = yield* mcpTools(mcpHttp("n", url), { untrustedOutput: false })
      const declared = yield* mcpTools(mcpHttp("n", url), { untrustedOutput: false, tools: ["constructor", "__proto__"] })
      const ran = yield* Effect.promise(() => runExit(executeTool(declared.tools.n_constructor, {}, "c")))
      return { all, declared, ran }
    })))
    expect(Object.keys(out.all.byServerName).sort()).toEqual([...listed].sort())
    for (const name of listed) expect(Object.hasOwn(out.all.byServerName, name)).toBe(true)
    expect(out.all.nameOf("__proto__")).toBe("n___proto__")
    expect(out.declared.tools.n_constructor.name).toBe("n_constructor")
    expect(out.declared.tools.n___proto__.name).toBe("n___proto__")
    expect(out.declared.nameOf("constructor")).toBe("n_constructor")
    expect(out.ran).toMatchObject({ _tag: "Success", value: "ran constructor" })
  })

  it("property: any list of names (prototype members and hostile strings) loads every tool, found by its own name", async () => {
    const name = fc.oneof(fc.constantFrom(...prototypeNames), fc.string({ minLength: 1, maxLength: 12 }))
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(name, { minLength: 1, maxLength: 8 }), async (names) => {
        listed = names
        const toolset = await Effect.runPromise(Effect.scoped(mcpTools(mcpHttp("n", url), { untrustedOutput: false })))
        expect(Object.keys(toolset.byServerName).sort()).toEqual([...names].sort())
        expect(Object.keys(toolset.tools)).toHaveLength(names.length)
        for (const n of names) {
          expect(Object.hasOwn(toolset.byServerName, n)).toBe(true)
          const agentName = toolset.nameOf(n)
          expect(agentName).toBeDefined()
          expect(toolset.tools[agentName!]).toBe(toolset.byServerName[n])
        }
        // Nothing else is found: an inherited member is not a tool.
        for (const n of prototypeNames.filter((p) => !names.includes(p))) {
          expect(toolset.byServerName[n]).toBeUndefined()
          expect(toolset.nameOf(n)).toBeUndefined()
        }
      }),
      { numRuns: 25 }
    )
  })
})
