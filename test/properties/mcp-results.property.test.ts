/**
 * Issue #28 (item 4): the cap on MCP tool results. For any text (any unicode) and any cap, the text
 * handed to the model is at most the cap in UTF-8 bytes (or only the note, when the cap is smaller
 * than the note), is a prefix of the original followed by a note that says it truncated, and is the
 * original itself when it fits.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect } from "vitest"
import { mapToolResult } from "../../src/mcp/tool-result.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)
const bytes = (s: string) => Buffer.byteLength(s, "utf8")

describe("MCP result cap (property)", () => {
  test.prop([fc.string({ unit: "binary", maxLength: 400 }), fc.integer({ min: 1, max: 600 })], { numRuns })("text results", (text, cap) => {
    const mapped = mapToolResult({ content: [{ type: "text", text }] }, { maxResultBytes: cap })
    const output = (mapped as { readonly output: string }).output
    if (bytes(text) <= cap) return void expect(output).toBe(text)
    const note = output.slice(output.indexOf("[truncated by the MCP client"))
    expect(note).toMatch(/^\[truncated by the MCP client: the result was \d+ bytes, over the cap of \d+ bytes \(maxResultBytes\)\]$/)
    if (output !== note) {
      expect(bytes(output)).toBeLessThanOrEqual(cap)
      expect(text.startsWith(output.slice(0, output.length - note.length - 1))).toBe(true)
    }
  })

  test.prop([fc.jsonValue({ maxDepth: 3 }), fc.integer({ min: 120, max: 400 })], { numRuns })("structured results", (value, cap) => {
    const mapped = mapToolResult({ content: [], structuredContent: { value } }, { maxResultBytes: cap })
    const output = (mapped as { readonly output: unknown }).output
    const text = typeof output === "string" ? output : JSON.stringify(output)
    expect(bytes(text)).toBeLessThanOrEqual(cap)
  })
})
