/**
 * A server's tool list read entry by entry: one entry the SDK's list schema refuses (a `false`
 * subschema, valid JSON Schema) or that cannot be used (no input schema object, no name) no longer
 * refuses the whole list; a task-only tool loads and its call is refused, as the SDK's `callTool`
 * refuses it. The server is the SDK's own low-level `Server`.
 */
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { agent, text, toolCalls } from "../../src/index.ts"
import { McpError, mcpStdio, mcpTools } from "../../src/mcp/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const rawList = (tools: ReadonlyArray<unknown>) =>
  mcpStdio("s", {
    command: process.execPath,
    args: [join(import.meta.dirname, "fixtures/raw-list-server.mjs")],
    env: { ...process.env, RAW_TOOLS: JSON.stringify(tools) } as Record<string, string>
  })

const good = { name: "good", inputSchema: { type: "object", properties: { q: { type: "string" } } } }
// `false`: the property may not be there (valid JSON Schema; the SDK's list schema wants an object).
const falseProperty = { name: "odd", inputSchema: { type: "object", properties: { x: false, y: { type: "string" } } } }
const noSchema = { name: "bare", inputSchema: "none" }
const taskOnly = { name: "slow", inputSchema: { type: "object" }, execution: { taskSupport: "required" } }

const loaded = (tools: ReadonlyArray<unknown>, options: { readonly unsupportedSchemas?: "skip" } = {}) =>
  Effect.runPromise(Effect.scoped(Effect.map(mcpTools(rawList(tools), options), ({ byServerName }) => Object.keys(byServerName))))

describe("MCP tool list entries", { timeout: 20_000 }, () => {
  it("loads a tool whose schema the SDK's list schema refuses, and enforces that schema", async () => {
    const ran = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const toolset = yield* mcpTools(rawList([good, falseProperty]), { untrustedOutput: false })
      expect(Object.keys(toolset.byServerName)).toEqual(["good", "odd"])
      const model = scriptedModel([
        toolCalls([{ id: "c1", name: "s_odd", arguments: { x: 1 } }, { id: "c2", name: "s_odd", arguments: { y: "a" } }]),
        text("done")
      ])
      yield* agent("a").model(model).tools(toolset.tools).runEffect("x")
      return model.requests.at(-1)!.messages.filter((m) => m.role === "tool").map((m) => m.content)
    })))
    expect(ran[0]).toContain("Invalid arguments") // `x` refused: nothing sent
    expect(ran[1]).toBe(`ran odd {"y":"a"}`)
  })

  it("skips unusable entries with unsupportedSchemas: skip, and the others load", async () => {
    expect(await loaded([noSchema, good], { unsupportedSchemas: "skip" })).toEqual(["good"])
  })

  it("refuses an unusable entry by default, saying which and why", async () => {
    const error = failureOf(await runExit(Effect.scoped(mcpTools(rawList([good, noSchema])))))
    expect(error).toBeInstanceOf(McpError)
    expect((error as McpError).reason).toContain(`tool "bare": its inputSchema is not a JSON Schema object`)
  })

  it("loads a task-only tool and refuses its call without sending it", async () => {
    const outcome = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const toolset = yield* mcpTools(rawList([good, taskOnly]))
      expect(Object.keys(toolset.byServerName)).toEqual(["good", "slow"])
      return yield* Effect.tryPromise({ try: () => toolset.connection.callTool("slow", {}), catch: (error) => String(error) }).pipe(
        Effect.match({ onFailure: (reason) => reason, onSuccess: () => "sent" })
      )
    })))
    expect(outcome).toContain(`tool "slow" runs only as a task`)
  })

  it("leaves out entries without a name (nothing could call them)", async () => {
    expect(await loaded([{ inputSchema: { type: "object" } }, { name: 7, inputSchema: { type: "object" } }, good])).toEqual(["good"])
  })
})
