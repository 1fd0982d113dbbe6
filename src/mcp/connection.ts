/**
 * A live connection to one MCP server, as a scoped resource: `connectMcp` starts the transport (spawns
 * the process or opens the HTTP session), initialises the protocol and lists the tools; closing the
 * scope closes the client, which stops the child process or ends the HTTP session. The tool list is
 * kept current: a `notifications/tools/list_changed` from the server triggers a new listing and the
 * registered listeners.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type CallToolResult, ListRootsRequestSchema, type Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { McpError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import type { McpServerSpec } from "./server-spec.ts"

/** A tool as a server lists it. */
export interface McpToolInfo {
  readonly name: string
  readonly description: string | undefined
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly outputSchema: Readonly<Record<string, unknown>> | undefined
  /** The server's hint that the tool has no side effects. */
  readonly readOnly: boolean
}

/** Options of one call. */
export interface McpCallOptions {
  readonly signal?: AbortSignal
  /** Milliseconds before the call fails with a timeout (the SDK's default is 60 s). */
  readonly timeoutMs?: number
}

/** An open connection. */
export interface McpConnection {
  readonly server: string
  /** The tools the server offers now (updated on `tools/list_changed`). */
  readonly listed: () => ReadonlyArray<McpToolInfo>
  /** Registers a listener for changes of the tool list; returns a function that removes it. */
  readonly onToolsChanged: (listener: (tools: ReadonlyArray<McpToolInfo>) => void) => () => void
  /** Lists the tools again (also done automatically on `tools/list_changed`). */
  readonly refresh: Effect.Effect<ReadonlyArray<McpToolInfo>, McpError>
  readonly callTool: (name: string, args: unknown, options?: McpCallOptions) => Promise<CallToolResult>
}

/** Client options beyond the server spec. */
export interface McpConnectOptions {
  /** Milliseconds to wait for the connection and the first listing (default 30 s). */
  readonly connectTimeoutMs?: number
  /** Debounce of `tools/list_changed` refreshes, in milliseconds (default 50). */
  readonly listChangedDebounceMs?: number
}

const clientInfo = { name: "effect-agent-dsl", version: "0.1.0" }

/**
 * Connects to `spec` for the lifetime of the current scope.
 *
 * @example
 * ```ts
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const connection = yield* connectMcp(everything)
 *   return connection.listed().map((t) => t.name)
 * }))
 * ```
 */
export const connectMcp = (spec: McpServerSpec, options: McpConnectOptions = {}): Effect.Effect<McpConnection, McpError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: (signal) => open(spec, options, signal),
      catch: (cause) => new McpError({ server: spec.name, operation: "connect", reason: describeCause(cause), cause })
    }),
    (opened) => Effect.promise(() => opened.close().catch(() => undefined))
  ).pipe(Effect.map((opened) => opened.connection))

const open = async (spec: McpServerSpec, options: McpConnectOptions, signal: AbortSignal) => {
  let tools: ReadonlyArray<McpToolInfo> = []
  const listeners = new Set<(tools: ReadonlyArray<McpToolInfo>) => void>()
  const publish = (next: ReadonlyArray<McpToolInfo>) => {
    tools = next
    for (const listener of listeners) {
      try {
        listener(next)
      } catch {
        // A listener's failure must not break the connection.
      }
    }
  }
  const client = new Client(clientInfo, {
    capabilities: spec.roots === undefined ? {} : { roots: { listChanged: false } },
    listChanged: {
      tools: {
        // Not the SDK's refresh (its first page only: tools on later pages would be dropped): every page.
        autoRefresh: false,
        debounceMs: options.listChangedDebounceMs ?? 50,
        onChanged: () => {
          listAll(client, { signal: AbortSignal.timeout(timeout), timeout }).then(publish, () => {
            // A failed re-listing keeps the tools as they were listed; the next change lists again.
          })
        }
      }
    }
  })
  if (spec.roots !== undefined) {
    const roots = spec.roots.map((r) => (r.name === undefined ? { uri: r.uri } : { uri: r.uri, name: r.name }))
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots }))
  }
  const transport = spec.transport._tag === "Stdio"
    ? new StdioClientTransport({
      command: spec.transport.command,
      args: [...spec.transport.args],
      ...(spec.transport.env === undefined ? {} : { env: { ...spec.transport.env } }),
      ...(spec.transport.cwd === undefined ? {} : { cwd: spec.transport.cwd }),
      stderr: spec.transport.stderr
    })
    : new StreamableHTTPClientTransport(spec.transport.url, {
      ...(spec.transport.headers === undefined ? {} : { requestInit: { headers: { ...spec.transport.headers } } })
    })
  const timeout = options.connectTimeoutMs ?? 30_000
  try {
    await client.connect(transport, { signal, timeout })
    tools = await listAll(client, { signal, timeout })
  } catch (error) {
    await client.close().catch(() => undefined)
    throw error
  }
  const connection: McpConnection = {
    server: spec.name,
    listed: () => tools,
    onToolsChanged: (listener) => {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    refresh: Effect.tryPromise({
      try: async (signal) => {
        const next = await listAll(client, { signal, timeout })
        publish(next)
        return next
      },
      catch: (cause) => new McpError({ server: spec.name, operation: "list", reason: describeCause(cause), cause })
    }),
    callTool: async (name, args, callOptions = {}) =>
      (await client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, {
        ...(callOptions.signal === undefined ? {} : { signal: callOptions.signal }),
        ...(callOptions.timeoutMs === undefined ? {} : { timeout: callOptions.timeoutMs })
      })) as CallToolResult
  }
  const close = async () => {
    // Ends the HTTP session on the server (DELETE); a stdio child is stopped by `client.close()`.
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined)
    await client.close()
  }
  return { connection: Object.freeze(connection), close }
}

/** Pages of a tool list read at most: a server whose list goes on (or loops) is refused, not followed for ever. */
const maxListPages = 1000

/** Every page of the server's tool list, within `timeout` in all (not per page). */
const listAll = async (client: Client, options: { readonly signal: AbortSignal; readonly timeout: number }) => {
  const out: Array<McpToolInfo> = []
  const seen = new Set<string>()
  const deadline = Date.now() + options.timeout
  let cursor: string | undefined
  for (let pages = 0; ; pages++) {
    if (pages === maxListPages) throw new Error(`the server's tool list goes on past ${maxListPages} pages`)
    const left = deadline - Date.now()
    if (left <= 0) throw new Error(`listing the server's tools took over ${options.timeout} ms`)
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { signal: options.signal, timeout: left })
    out.push(...page.tools.map(toInfo))
    cursor = page.nextCursor
    if (cursor === undefined) return Object.freeze(out)
    if (seen.has(cursor)) throw new Error(`the server's tool list comes back to a page it gave (cursor ${JSON.stringify(cursor)})`)
    seen.add(cursor)
  }
}

const toInfo = (tool: SdkTool): McpToolInfo =>
  Object.freeze({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as Record<string, unknown>,
    outputSchema: tool.outputSchema as Record<string, unknown> | undefined,
    readOnly: tool.annotations?.readOnlyHint === true
  })
