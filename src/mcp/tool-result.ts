/**
 * What an MCP tool call gives the agent. `structuredContent` wins when the server sends it (it is the
 * tool's typed output); otherwise text parts are joined into one string, and a result with other parts
 * (images, audio, resources) keeps its parts. `isError: true` is an execution error of the tool, not a
 * result.
 *
 * The model's context is guarded on the way in. Binary data is described, never inlined: image and
 * audio parts and blob resources become `{ type, mimeType, bytes }`, and inside `structuredContent` a
 * base64 string of 1 KiB or more, or a base64 `data:` URI longer than 256 characters, becomes
 * `"[binary data: <mime>, <n> bytes, base64, not inlined]"`. (Tool results reach providers as text, so
 * there is no way to hand an image to the model through a tool result.) Then the result is capped:
 * when its text (a string as it is, anything else as JSON) is longer than `maxResultBytes` UTF-8 bytes
 * (default {@link defaultMaxResultBytes}), it becomes a string cut on a character boundary and ending
 * with a note that says it was truncated, from how many bytes, and under which cap; the whole is at
 * most `maxResultBytes` bytes when the cap has room for the note ({@link minMaxResultBytes} always has;
 * below it, a result may be the note alone, which `mcpTools` refuses by refusing such a cap).
 *
 * A result the model cannot be given is `Unusable`, not an output: `structuredContent` nested deeper
 * than {@link maxResultDepth} levels (JSON can be nested past what the stack takes to write it out,
 * and deep values would not all be checked for binary data).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"

/** A tool result from an MCP server. */
export type McpToolOutput = string | Readonly<Record<string, unknown>> | ReadonlyArray<McpContentPart>

/** One content part of a result, as handed to the model. */
export type McpContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image" | "audio"; readonly mimeType: string; readonly bytes: number }
  | { readonly type: "resource"; readonly uri: string; readonly mimeType?: string; readonly text?: string; readonly bytes?: number }
  | { readonly type: "resource_link"; readonly uri: string; readonly name: string }

/**
 * The outcome of mapping a result: a value, the error text of an `isError` result, or why a result
 * cannot be used.
 */
export type MappedResult =
  | { readonly _tag: "Output"; readonly output: McpToolOutput }
  | { readonly _tag: "ToolError"; readonly text: string }
  | { readonly _tag: "Unusable"; readonly reason: string }

/**
 * The deepest `structuredContent` accepted, in levels of objects and arrays (`{ "a": [1] }` is 2).
 *
 * @example
 * ```ts
 * let deep: unknown = {}
 * for (let i = 0; i < maxResultDepth; i++) deep = { a: deep }
 * mapToolResult({ content: [], structuredContent: deep as Record<string, unknown> })._tag // "Unusable"
 * ```
 */
export const maxResultDepth = 64

/**
 * The default cap of a tool result handed to the model: 64 KiB of UTF-8.
 *
 * @example
 * ```ts
 * yield* mcpTools(server, { maxResultBytes: 4 * defaultMaxResultBytes })
 * ```
 */
export const defaultMaxResultBytes = 65_536

/**
 * The smallest cap `mcpTools` takes: room for the truncation note (at most 106 bytes under this cap)
 * and some of the result, so that the cap always holds.
 *
 * @example
 * ```ts
 * yield* mcpTools(server, { maxResultBytes: minMaxResultBytes }) // any smaller cap is refused
 * ```
 */
export const minMaxResultBytes = 128

/** Options of {@link mapToolResult}. */
export interface MapToolResultOptions {
  /** The cap, in UTF-8 bytes, of the result's text (default {@link defaultMaxResultBytes}). */
  readonly maxResultBytes?: number
}

/**
 * Maps a `CallToolResult` to a tool output or an error, describing binary data and applying the cap.
 *
 * @example
 * ```ts
 * mapToolResult({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] })
 * // { _tag: "Output", output: [{ type: "image", mimeType: "image/png", bytes: 3 }] }
 * ```
 */
export const mapToolResult = (result: CallToolResult, options: MapToolResultOptions = {}): MappedResult => {
  const cap = options.maxResultBytes ?? defaultMaxResultBytes
  const parts = (result.content ?? []).map(toPart)
  if (result.isError === true) return { _tag: "ToolError", text: capText(textOf(parts) || "the tool reported an error", cap) }
  if (result.structuredContent !== undefined) {
    // Checked before anything walks or writes it out, which would overflow the stack on a deep value.
    if (deeperThan(result.structuredContent, maxResultDepth)) {
      return { _tag: "Unusable", reason: `its structuredContent is nested deeper than ${maxResultDepth} levels` }
    }
    return { _tag: "Output", output: capOutput(describeBinary(result.structuredContent) as Record<string, unknown>, cap) }
  }
  if (parts.every((p) => p.type === "text")) return { _tag: "Output", output: capOutput(textOf(parts), cap) }
  return { _tag: "Output", output: capOutput(Object.freeze(parts), cap) }
}

const textOf = (parts: ReadonlyArray<McpContentPart>): string =>
  parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")

/** The decoded size of base64 text. */
const base64Bytes = (data: string): number => {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding)
}

const toPart = (part: CallToolResult["content"][number]): McpContentPart => {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text }
    case "image":
    case "audio":
      return { type: part.type, mimeType: part.mimeType, bytes: base64Bytes(part.data) }
    case "resource": {
      const r = part.resource
      return {
        type: "resource",
        uri: r.uri,
        ...(r.mimeType === undefined ? {} : { mimeType: r.mimeType }),
        ...("text" in r && typeof r.text === "string" ? { text: r.text } : {}),
        ...("blob" in r && typeof r.blob === "string" ? { bytes: base64Bytes(r.blob) } : {})
      }
    }
    case "resource_link":
      return { type: "resource_link", uri: part.uri, name: part.name }
  }
}

const base64Text = /^[A-Za-z0-9+/]+={0,2}$/
const dataUri = /^data:([^;,]*)(?:;[^;,]*)*;base64,([A-Za-z0-9+/=\s]*)$/

/**
 * A string that is binary data in base64: a `data:` URI, or long text of the base64 alphabet with both
 * letter cases (so a long run of one word is not taken for data).
 */
const describeString = (s: string): string => {
  if (s.length > 256 && s.startsWith("data:")) {
    const match = dataUri.exec(s)
    if (match !== null) {
      const mime = match[1] === "" ? "" : `${match[1]}, `
      return `[binary data: ${mime}${base64Bytes(match[2]!.replace(/\s/g, ""))} bytes, base64, not inlined]`
    }
  }
  if (s.length >= 1024 && s.length % 4 === 0 && base64Text.test(s) && /[a-z]/.test(s) && /[A-Z]/.test(s)) {
    return `[binary data: ${base64Bytes(s)} bytes, base64, not inlined]`
  }
  return s
}

/** Whether `value` has objects or arrays nested more than `levels` deep (a cycle is): stops there, never recurses further. */
const deeperThan = (value: unknown, levels: number): boolean => {
  if (typeof value !== "object" || value === null) return false
  if (levels === 0) return true
  for (const v of Array.isArray(value) ? value : Object.values(value)) {
    if (deeperThan(v, levels - 1)) return true
  }
  return false
}

/** Binary strings described, at every level (the value is at most {@link maxResultDepth} deep). */
const describeBinary = (value: unknown): unknown => {
  if (typeof value === "string") return describeString(value)
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) return value.map(describeBinary)
  // Defined, not assigned: an own "__proto__" key stays a key instead of setting the prototype.
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, describeBinary(v)]))
}

const encoder = new TextEncoder()

/** `text` cut to at most `cap` UTF-8 bytes on a character boundary, with the note. */
const capText = (text: string, cap: number): string => {
  const total = Buffer.byteLength(text, "utf8")
  if (total <= cap) return text
  const note = `[truncated by the MCP client: the result was ${total} bytes, over the cap of ${cap} bytes (maxResultBytes)]`
  const room = cap - Buffer.byteLength(note, "utf8") - 1
  if (room <= 0) return note
  const { read } = encoder.encodeInto(text, new Uint8Array(room))
  return `${text.slice(0, read)}\n${note}`
}

const capOutput = (output: McpToolOutput, cap: number): McpToolOutput => {
  if (typeof output === "string") return capText(output, cap)
  const json = JSON.stringify(output)
  return Buffer.byteLength(json, "utf8") <= cap ? output : capText(json, cap)
}
