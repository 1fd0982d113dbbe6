/**
 * effect-agent-dsl/mcp: Model Context Protocol on `@modelcontextprotocol/sdk` (an optional peer
 * dependency: install it to use this subpath). The client side turns a server's tools into tools of
 * an agent; the server side serves agents and tools to any MCP client.
 *
 * @module effect-agent-dsl/mcp
 */
export { connectMcp } from "./connection.ts"
export type { McpCallOptions, McpConnection, McpConnectOptions, McpToolInfo } from "./connection.ts"
export { mcpTools } from "./mcp-tools.ts"
export { maxToolNameLength, mcpToolName, mcpToolNames } from "./tool-names.ts"
export type { IsValidToolName, McpToolNaming } from "./tool-names.ts"
export type { McpTool, McpToolRecord, McpToolset, McpToolsOptions } from "./mcp-tools.ts"
export { mcpHttp, mcpStdio } from "./server-spec.ts"
export type { McpServerSpec, McpTransportSpec } from "./server-spec.ts"
export { defaultMaxResultBytes, mapToolResult, maxResultDepth, minMaxResultBytes } from "./tool-result.ts"
export type { MappedResult, MapToolResultOptions, McpContentPart, McpToolOutput } from "./tool-result.ts"
export { McpError } from "../errors.ts"
export { mcpServer, serveHttp, serveStdio } from "./serve.ts"
export type { McpHttpAddress, McpServerDefinition, McpServerOptions, McpStdioServer, ServableAgent } from "./serve.ts"
