/**
 * What a tool result from a server this project did not write costs the model's context: the
 * reference `server-everything` (a huge echo, an embedded gzip blob, an image) and a server on the
 * SDK's own `Server` whose structuredContent carries base64 data. Binary data is described, never
 * inlined; a result over `maxResultBytes` is truncated with a note saying so. A result nested deeper
 * than the stack can write out is a typed `McpError`, never a defect.
 */
import { join } from "node:path"
import { Cause, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { agent, text, type ToolErrorEvent, toolCalls } from "../../src/index.ts"
import { executeTool } from "../../src/dsl/tool.ts"
import { defaultMaxResultBytes, mapToolResult, McpError, maxResultDepth, mcpStdio, mcpTools } from "../../src/mcp/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf } from "../fixtures.ts"
import { everythingStdio } from "./everything-server.ts"

const call = (name: string, args: unknown, id = "c1") => toolCalls([{ id, name, arguments: args }])
const runOne = (spec: Parameters<typeof mcpTools>[0], name: string, args: unknown, options: { readonly maxResultBytes?: number } = {}) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const { tools } = yield* mcpTools(spec, { untrustedOutput: false, ...options })
    const model = scriptedModel([call(name, args), text("done")])
    yield* agent("a").model(model).tools(tools).runEffect("x")
    return model.requests.at(-1)!.messages.filter((m) => m.role === "tool").map((m) => m.content)[0]!
  })))
const bytes = (s: string) => Buffer.byteLength(s, "utf8")

describe("MCP tool results reaching the model", { timeout: 20_000 }, () => {
  it("truncates a result over the default cap, saying that it did", async () => {
    const content = await runOne(everythingStdio(), "everything_echo", { message: "é".repeat(150_000) })
    expect(bytes(content)).toBeLessThanOrEqual(defaultMaxResultBytes)
    expect(content).toMatch(/\[truncated by the MCP client: the result was \d+ bytes, over the cap of 65536 bytes \(maxResultBytes\)\]$/)
    expect(content.startsWith("Echo: éé")).toBe(true)
  })

  it("honours maxResultBytes", async () => {
    const content = await runOne(everythingStdio(), "everything_echo", { message: "x".repeat(2_000) }, { maxResultBytes: 500 })
    expect(bytes(content)).toBeLessThanOrEqual(500)
    expect(content).toContain("truncated")
  })

  it("describes an embedded blob resource instead of inlining it", async () => {
    const data = `data:text/plain;base64,${Buffer.from("hello ".repeat(5_000)).toString("base64")}`
    const content = await runOne(everythingStdio(), "everything_gzip-file-as-resource", { name: "h.gz", data, outputType: "resource" })
    const parsed = JSON.parse(content) as Array<Record<string, unknown>>
    const resource = parsed.find((p) => p.type === "resource")!
    expect(resource).toMatchObject({ type: "resource", mimeType: "application/gzip", bytes: expect.any(Number) })
    expect(resource.bytes as number).toBeGreaterThan(0)
    expect(content).not.toMatch(/H4sI/) // the gzip magic number in base64
  })

  it("describes an image instead of inlining it", async () => {
    const content = await runOne(everythingStdio(), "everything_get-tiny-image", {})
    expect(content).toMatch(/"type":"image","mimeType":"image\/png","bytes":\d+/)
    expect(content.length).toBeLessThan(1_000)
  })

  it("describes base64 data inside structuredContent, keeping the rest", async () => {
    const binary = mcpStdio("binary", { command: process.execPath, args: [join(import.meta.dirname, "fixtures/binary-result-server.mjs")] })
    const content = await runOne(binary, "binary_snapshot", {})
    const parsed = JSON.parse(content) as Record<string, string>
    expect(parsed.caption).toBe("the front door")
    expect(parsed.png).toBe("[binary data: 300000 bytes, base64, not inlined]")
    expect(parsed.thumbnail).toBe("[binary data: image/png, 3000 bytes, base64, not inlined]")
  })

  it("maps results directly with a cap (mapToolResult)", () => {
    const mapped = mapToolResult({ content: [{ type: "text", text: "y".repeat(1_000) }] }, { maxResultBytes: 200 })
    expect(mapped._tag).toBe("Output")
    const output = (mapped as { output: string }).output
    expect(bytes(output)).toBeLessThanOrEqual(200)
    expect(output).toMatch(/^y+\n\[truncated/)
  })

  it("fails with McpError (call), not a defect, on structuredContent nested deeper than the stack goes", async () => {
    const deep = mcpStdio("deep", { command: process.execPath, args: [join(import.meta.dirname, "fixtures/deep-result-server.mjs")] })
    const errors: Array<ToolErrorEvent> = []
    const { direct, answer } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { tools } = yield* mcpTools(deep)
      const direct = yield* Effect.exit(executeTool(tools["deep_nested"]!, {}, "c0"))
      const model = scriptedModel([call("deep_nested", {}), text("recovered")])
      const answer = yield* agent("a").model(model).tools(tools).onToolError((e) => void errors.push(e)).runEffect("x")
      return { direct, answer }
    })))
    expect(Exit.isFailure(direct) && Cause.hasDies(direct.cause)).toBe(false)
    const error = failureOf(direct)
    expect(error).toBeInstanceOf(McpError)
    expect(error).toMatchObject({ operation: "call", reason: expect.stringMatching(/nested deeper than 64 levels/) })
    // In a run, an execution error like any other, routed to recovery.
    expect(answer).toBe("recovered")
    expect(errors.map((e) => (e.error as McpError).operation)).toEqual(["call"])
  })

  it("maps structuredContent up to maxResultDepth levels, and says why a deeper one cannot be used", () => {
    const nest = (levels: number) => {
      let value: Record<string, unknown> = {}
      for (let i = 1; i < levels; i++) value = { a: value }
      return value
    }
    expect(mapToolResult({ content: [], structuredContent: nest(maxResultDepth) })._tag).toBe("Output")
    expect(mapToolResult({ content: [], structuredContent: nest(maxResultDepth + 1) })).toEqual({
      _tag: "Unusable",
      reason: `its structuredContent is nested deeper than ${maxResultDepth} levels`
    })
    expect(mapToolResult({ content: [], structuredContent: nest(200_000) })._tag).toBe("Unusable")
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(mapToolResult({ content: [], structuredContent: cycle })._tag).toBe("Unusable")
  })

  it("keeps an own \"__proto__\" key of structuredContent as a key", () => {
    const mapped = mapToolResult({ content: [], structuredContent: JSON.parse(`{"outer":{"__proto__":{"polluted":true},"x":1}}`) })
    expect(JSON.stringify((mapped as { output: unknown }).output)).toBe(`{"outer":{"__proto__":{"polluted":true},"x":1}}`)
  })
})
