/**
 * Issue #28 (items 1-2): the names the MCP client gives a server's tools. For any server name and any
 * list of server tool names (colliding after sanitising, too long, unicode, hash-shaped), the agent
 * names are unique, at most 64 characters, valid for providers, map back to the right server tool,
 * keep a valid name as it is, and do not depend on the order the server lists its tools.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect } from "vitest"
import { toolNamePattern } from "../../src/dsl/tool.ts"
import { mcpToolNames } from "../../src/mcp/tool-names.ts"
import { arbMcpServerName, arbMcpToolNames } from "../../src/testing/arbitraries.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

describe("MCP tool names (property)", () => {
  test.prop([arbMcpServerName(), arbMcpToolNames()], { numRuns })("are unique, valid, ≤ 64 chars and map back to their server tool", (server, names) => {
    const { toAgent, toServer } = mcpToolNames(server, names)
    expect(toAgent.size).toBe(names.length)
    expect(new Set(toAgent.values()).size).toBe(names.length)
    for (const tool of names) {
      const name = toAgent.get(tool)!
      expect(name.length).toBeLessThanOrEqual(64)
      expect(name).toMatch(toolNamePattern)
      expect(toServer.get(name)).toBe(tool)
      if (toolNamePattern.test(`${server}_${tool}`)) expect(name).toBe(`${server}_${tool}`)
    }
  })

  test.prop([arbMcpServerName(), arbMcpToolNames().chain((names) => fc.tuple(fc.constant(names), fc.shuffledSubarray([...names], { minLength: names.length })))], { numRuns })(
    "do not depend on the order of the list",
    (server, [names, shuffled]) => {
      expect([...mcpToolNames(server, shuffled).toAgent].sort()).toEqual([...mcpToolNames(server, names).toAgent].sort())
    }
  )

  test("the generators do produce collisions and long names", () => {
    const samples = fc.sample(fc.tuple(arbMcpServerName(), arbMcpToolNames()), { numRuns: 200, seed: 28 })
    const sanitise = (s: string, t: string) => `${s}_${t}`.replace(/[^A-Za-z0-9_-]/g, "_")
    const colliding = samples.filter(([s, names]) => new Set(names.map((n) => sanitise(s, n))).size < names.length)
    const long = samples.filter(([s, names]) => names.some((n) => sanitise(s, n).length > 64))
    expect(colliding.length).toBeGreaterThan(20)
    expect(long.length).toBeGreaterThan(20)
  })
})
