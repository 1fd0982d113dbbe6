/**
 * Tool names from servers this project did not write: a server built on the SDK's own `Server` with
 * names that collide after sanitising and names longer than providers accept, and the reference
 * `server-everything` started under a name that would produce reserved tool names.
 */
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, skill, text, toolCalls } from "../../src/index.ts"
import { McpError, mcpStdio, mcpTools } from "../../src/mcp/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { everythingEntry } from "./everything-server.ts"

const oddNames = (env: Record<string, string> = {}) =>
  mcpStdio("odd", { command: process.execPath, args: [join(import.meta.dirname, "fixtures/odd-names-server.mjs")], env: { ...process.env, ...env } as Record<string, string> })
const long = "fetch_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_weather_report"

describe("MCP tool names", { timeout: 20_000 }, () => {
  it("gives every server tool its own provider-valid name, and each name calls the right tool", async () => {
    const names = ["files.read", "files_read", "files/read", long, long + "_v2", "plain"]
    const { agentNames, ran } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const toolset = yield* mcpTools(oddNames(), { untrustedOutput: false })
      expect(Object.keys(toolset.tools)).toHaveLength(names.length) // none shadows another
      const agentNames = names.map((n) => toolset.byServerName[n]!.name)
      const model = scriptedModel([toolCalls(agentNames.map((name, i) => ({ id: `c${i}`, name, arguments: {} }))), text("done")])
      yield* agent("a").model(model).tools(toolset.tools).runEffect("x")
      return { agentNames, ran: model.requests.at(-1)!.messages.filter((m) => m.role === "tool").map((m) => m.content) }
    })))
    expect(new Set(agentNames).size).toBe(names.length)
    for (const name of agentNames) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
    expect(agentNames[1]).toBe("odd_files_read") // a valid name is kept as it is
    expect(agentNames[0]).toBe("odd_files_read_feef3122") // the documented, stable suffix
    expect(agentNames[5]).toBe("odd_plain")
    expect(ran).toEqual(names.map((n) => `ran ${n}`))
  })

  it("types and keys the declared tools so that looking a long name up by the server's name finds it", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const toolset = yield* mcpTools(oddNames(), { tools: [long, "plain"] })
      const byServer = toolset.byServerName[long]
      expect(byServer).toBeDefined()
      expect(toolset.tools[byServer.name]).toBe(byServer)
      expect(toolset.nameOf(long)).toBe(byServer.name)
      expect(byServer.name.length).toBeLessThanOrEqual(64)
      // Every key of the record is a name the record really holds.
      for (const [key, t] of Object.entries(toolset.tools)) expect(t.name).toBe(key)
      expect(toolset.tools.odd_plain.name).toBe("odd_plain")
      // The kept name is a typed key; the long one is not promised under `odd_${long}`.
      expectTypeOf(toolset.tools.odd_plain.name).toEqualTypeOf<"odd_plain">()
      expectTypeOf(toolset.byServerName).toHaveProperty(long)
      // The record (typed keys plus a string index) registers on an agent, whose skills take the typed handle.
      const a = agent("a").model(scriptedModel([text("ok")])).tools(toolset.tools).skills((t) => [skill("plain", "Plain").tools(t.odd_plain)])
      expect(yield* a.runEffect("x")).toBe("ok")
    })))
  })

  it("refuses at connect a server name that produces reserved tool names, saying why", async () => {
    const memory = mcpStdio("memory", { command: process.execPath, args: [everythingEntry, "stdio"] })
    const error = failureOf(await runExit(Effect.scoped(mcpTools(memory, { tools: ["echo"] }))))
    expect(error).toBeInstanceOf(McpError)
    expect((error as McpError).operation).toBe("connect")
    expect(error.message).toMatch(/"memory_echo".*reserved.*\.memory\(\).*rename the server/s)
  })
})
