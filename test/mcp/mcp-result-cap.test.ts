/**
 * `maxResultBytes` holds: `mcpTools` refuses a cap with no room for the note that says a result was
 * truncated (below `minMaxResultBytes`), with a clear error and before anything starts; under any cap
 * it takes, a result handed to the model is at most that many UTF-8 bytes, whatever its text, and a
 * result within the cap is given as it is.
 */
import fc from "fast-check"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { mapToolResult, McpError, mcpStdio, mcpTools, minMaxResultBytes } from "../../src/mcp/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const bytes = (s: string) => Buffer.byteLength(s, "utf8")
const textOf = (output: unknown) => (typeof output === "string" ? output : JSON.stringify(output))

describe("MCP tool results: the cap", () => {
  it("refuses a maxResultBytes too small for the truncation note, before starting the server", async () => {
    // A command that does not exist: reaching it would fail otherwise.
    const server = mcpStdio("s", { command: "/nonexistent/never-started" })
    for (const cap of [16, minMaxResultBytes - 1, 0, 1.5]) {
      const error = failureOf(await runExit(Effect.scoped(mcpTools(server, { maxResultBytes: cap }))))
      expect(error).toBeInstanceOf(McpError)
      expect(error).toMatchObject({ operation: "connect", reason: `maxResultBytes must be an integer of at least 128 (room for the note saying a result was truncated), got ${cap}` })
    }
  })

  it("property: any result under any cap mcpTools takes is at most the cap, and one within it is unchanged", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "é", "€", "😀", "\n"), maxLength: 400 })
    const result = fc.oneof(
      text.map((t) => ({ content: [{ type: "text" as const, text: t }] })),
      text.map((t) => ({ content: [{ type: "text" as const, text: t }], isError: true })),
      text.map((t) => ({ content: [], structuredContent: { t } }))
    )
    fc.assert(
      fc.property(result, fc.integer({ min: minMaxResultBytes, max: 1_000 }), (r, cap) => {
        const mapped = mapToolResult(r, { maxResultBytes: cap })
        const out = mapped._tag === "Output" ? textOf(mapped.output) : mapped._tag === "ToolError" ? mapped.text : ""
        expect(bytes(out)).toBeLessThanOrEqual(cap)
        const whole = "structuredContent" in r ? JSON.stringify(r.structuredContent) : r.content[0]!.text
        if (bytes(whole) <= cap && whole !== "") expect(out).toBe(whole)
        if (bytes(whole) > cap) expect(out).toMatch(/\n\[truncated by the MCP client: the result was \d+ bytes, over the cap of \d+ bytes \(maxResultBytes\)\]$/)
      }),
      { numRuns: 500 }
    )
  })
})
