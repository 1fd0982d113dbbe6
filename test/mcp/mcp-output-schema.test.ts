/**
 * A server's `outputSchema`, from a server this project did not write (the SDK's own `Server`). The
 * SDK's client would check `structuredContent` with ajv, whose patterns backtrack (`^(a+)+$` against
 * "aaaa…!" held the process for seconds, past any budget) and whose compilation of one bad output
 * schema failed the listing of the whole server. Our connection checks structured output in linear
 * time (RE2), and a tool whose output schema cannot be validated is refused or skipped on its own.
 */
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { agent, text, toolCalls } from "../../src/index.ts"
import { executeTool } from "../../src/dsl/tool.ts"
import { McpError, mcpStdio, mcpTools } from "../../src/mcp/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const outServer = (env: Record<string, string> = {}) =>
  mcpStdio("o", { command: process.execPath, args: [join(import.meta.dirname, "fixtures/output-schema-server.mjs")], env: { ...process.env, ...env } as Record<string, string> })

describe("MCP client: a server's output schemas", { timeout: 30_000 }, () => {
  it("checks structuredContent against a backtracking pattern in linear time: the event loop keeps turning, the run keeps its budget", async () => {
    let ticks = 0
    const timer = setInterval(() => ticks++, 20)
    try {
      const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        // 27 "a"s take seconds in a backtracking engine; each further one doubles it.
        const { tools } = yield* mcpTools(outServer({ N: "27" }), { untrustedOutput: false })
        const model = scriptedModel([toolCalls([{ id: "1", name: "o_redos", arguments: {} }]), text("done")])
        const started = Date.now()
        ticks = 0
        yield* agent("a").model(model).tools(tools).budget({ maxDuration: "5 seconds" }).runEffect("go")
        return { ms: Date.now() - started, feedback: model.requests.at(-1)!.messages.find((m) => m.role === "tool")?.content }
      })))
      expect(out.ms).toBeLessThan(1_500)
      expect(ticks).toBeGreaterThan(0)
      // Refused, as the SDK's own check refused it: the structured output does not keep its schema.
      expect(out.feedback).toMatch(/does not match its outputSchema[\s\S]*\^\(a\+\)\+\$/)
    } finally {
      clearInterval(timer)
    }
  })

  it("keeps the SDK's checks of structured output: a value that does not match, or none when a schema is declared, fails the call", async () => {
    const [bad, bare, good] = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { tools } = yield* mcpTools(outServer({ TYPED: "{\"n\":\"one\"}" }), { untrustedOutput: false })
      const call = (name: string) => Effect.promise(() => runExit(executeTool(tools[name] as never, {} as never, `c-${name}`)))
      return [yield* call("o_typed"), yield* call("o_bare"), yield* call("o_echo")] as const
    })))
    expect(failureOf(bad)).toMatchObject({ _tag: "McpError", operation: "call", reason: expect.stringMatching(/does not match its outputSchema[\s\S]*\["n"\]/) })
    // Said by the SDK for tools on the list's last page, by our connection for the others.
    expect(failureOf(bare)).toMatchObject({ _tag: "McpError", reason: expect.stringMatching(/output ?schema but (did not return structured content|its result has no structuredContent)/i) })
    expect(good).toMatchObject({ _tag: "Success", value: "ok" })
    const typed = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { tools } = yield* mcpTools(outServer(), { untrustedOutput: false })
      return yield* Effect.promise(() => runExit(executeTool(tools["o_typed"] as never, {} as never, "c")))
    })))
    expect(typed).toMatchObject({ _tag: "Success", value: { n: 1 } })
  })

  it("a tool whose output schema cannot be validated is refused on its own: skipped with unsupportedSchemas, the others load", async () => {
    const server = outServer({ MODE: "badref" })
    const skipped = await Effect.runPromise(Effect.scoped(Effect.map(mcpTools(server, { unsupportedSchemas: "skip" }), ({ byServerName }) => Object.keys(byServerName))))
    expect(skipped).toEqual(["echo", "redos", "typed", "bare"])
    const declared = await Effect.runPromise(Effect.scoped(Effect.map(mcpTools(server, { tools: ["echo"] }), ({ tools }) => Object.keys(tools))))
    expect(declared).toEqual(["o_echo"])
    const error = failureOf(await runExit(Effect.scoped(mcpTools(server))))
    expect(error).toBeInstanceOf(McpError)
    expect(error).toMatchObject({ operation: "list", reason: expect.stringMatching(/tool "odd": its outputSchema cannot be validated: .*Missing/) })
  })
})
