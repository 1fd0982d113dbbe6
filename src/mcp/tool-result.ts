/**
 * What an MCP tool call gives the agent. `structuredContent` wins when the server sends it (it is the
 * tool's typed output); otherwise text parts are joined into one string, and a result with other parts
 * (images, audio, resources) keeps its parts, with binary data summarised so the model's context is
 * not flooded with base64. `isError: true` is an execution error of the tool, not a result.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"

/** A tool result from an MCP server. */
export type McpToolOutput = string | Readonly<Record<string, unknown>> | ReadonlyArray<McpContentPart>

/** One content part of a result, as handed to the model. */
export type McpContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image" | "audio"; readonly mimeType: string; readonly bytes: number }
  | { readonly type: "resource"; readonly uri: string; readonly mimeType?: string; readonly text?: string }
  | { readonly type: "resource_link"; readonly uri: string; readonly name: string }

/** The outcome of mapping a result: a value, or the error text of an `isError` result. */
export type MappedResult =
  | { readonly _tag: "Output"; readonly output: McpToolOutput }
  | { readonly _tag: "ToolError"; readonly text: string }

/** Maps a `CallToolResult` to a tool output or an error. */
export const mapToolResult = (result: CallToolResult): MappedResult => {
  const parts = (result.content ?? []).map(toPart)
  if (result.isError === true) return { _tag: "ToolError", text: textOf(parts) || "the tool reported an error" }
  if (result.structuredContent !== undefined) return { _tag: "Output", output: result.structuredContent }
  if (parts.every((p) => p.type === "text")) return { _tag: "Output", output: textOf(parts) }
  return { _tag: "Output", output: Object.freeze(parts) }
}

const textOf = (parts: ReadonlyArray<McpContentPart>): string =>
  parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")

const toPart = (part: CallToolResult["content"][number]): McpContentPart => {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text }
    case "image":
    case "audio":
      return { type: part.type, mimeType: part.mimeType, bytes: Math.floor((part.data.length * 3) / 4) }
    case "resource": {
      const r = part.resource
      return {
        type: "resource",
        uri: r.uri,
        ...(r.mimeType === undefined ? {} : { mimeType: r.mimeType }),
        ...("text" in r && typeof r.text === "string" ? { text: r.text } : {})
      }
    }
    case "resource_link":
      return { type: "resource_link", uri: part.uri, name: part.name }
  }
}
