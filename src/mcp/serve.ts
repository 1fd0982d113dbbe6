/**
 * Agents and tools served over MCP. `mcpServer({ name, tools, agents })` describes what is offered:
 * every tool keeps its name, description and JSON Schema, and its calls are decoded with the tool's
 * own validator before it runs (so a client gets the same readable issues a model would); every agent
 * becomes one tool that takes the agent's input and returns its output. `serveStdio` and `serveHttp`
 * serve that description for the lifetime of a scope.
 *
 * HTTP is served statelessly (a fresh protocol server per request, JSON responses), which is what
 * tools without server-initiated messages need and lets any number of clients call concurrently.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { type CallToolResult, CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { AgentDefinitionKey, definitionOf } from "../dsl/agent.ts"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import { type AnyTool, executeTool, isTool, toolNamePattern } from "../dsl/tool.ts"
import { AgentConfigError, McpError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"

/** An agent that can be served: anything built by `agent(...)` with a model. */
export interface ServableAgent {
  readonly name: string
  readonly [AgentDefinitionKey]: AgentDefinition
  readonly runEffect: (input: any) => Effect.Effect<unknown, unknown, any>
}

/** One tool as served. */
interface ServedTool {
  readonly name: string
  readonly description: string | undefined
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly call: (args: unknown, signal: AbortSignal) => Promise<CallToolResult>
}

/** What an MCP server offers; build it with {@link mcpServer}. */
export interface McpServerDefinition {
  readonly _tag: "McpServerDefinition"
  readonly name: string
  readonly version: string
  readonly tools: ReadonlyArray<ServedTool>
}

/** Options of {@link mcpServer}. */
export interface McpServerOptions {
  readonly name: string
  readonly version?: string
  /** Tools to serve, as a record (`{ add, multiply }`) or a list. */
  readonly tools?: Readonly<Record<string, AnyTool>> | ReadonlyArray<AnyTool>
  /** Agents to serve, each as one tool named after the agent (they must have a model). */
  readonly agents?: ReadonlyArray<ServableAgent | { readonly agent: ServableAgent; readonly description: string }>
}

/**
 * Describes an MCP server offering tools and agents. Duplicate names are refused.
 *
 * @example
 * ```ts
 * const server = mcpServer({ name: "calc", tools: { add, multiply }, agents: [{ agent: calculator, description: "Solves arithmetic" }] })
 * await Effect.runPromise(Effect.scoped(Effect.andThen(serveStdio(server), Effect.never)))
 * ```
 */
export const mcpServer = (options: McpServerOptions): McpServerDefinition => {
  const fail = (reason: string) => new AgentConfigError({ subject: `MCP server "${options.name}"`, reason })
  const tools: Array<AnyTool> = options.tools === undefined ? [] : Array.isArray(options.tools) ? [...options.tools] : Object.values(options.tools)
  const served: Array<ServedTool> = []
  for (const t of tools) {
    if (!isTool(t)) throw fail("`tools` must contain tools built with tool(...)")
    served.push(serveTool(t))
  }
  for (const entry of options.agents ?? []) {
    const [agent, description] = "agent" in entry ? [entry.agent, entry.description] : [entry, undefined]
    if (!toolNamePattern.test(agent.name)) throw fail(`agent name "${agent.name}" is not a valid tool name`)
    served.push(serveAgent(agent, description))
  }
  const names = served.map((t) => t.name)
  const duplicate = names.find((n, i) => names.indexOf(n) !== i)
  if (duplicate !== undefined) throw fail(`two tools or agents are named "${duplicate}"`)
  return Object.freeze({ _tag: "McpServerDefinition", name: options.name, version: options.version ?? "0.1.0", tools: Object.freeze(served) })
}

const serveTool = (t: AnyTool): ServedTool => ({
  name: t.name,
  description: t.description,
  inputSchema: t.definition.parameters as Record<string, unknown>,
  call: async (raw, signal) => {
    let args: unknown = raw ?? {}
    if (t.codec.validated) {
      const decoded = t.codec.check(args)
      if (Result.isFailure(decoded)) return errorResult(`Invalid arguments for tool "${t.name}":\n${decoded.failure}`)
      args = decoded.success
    }
    // Nobody is there to approve a call over MCP: a tool that may need approval is refused, never run unasked.
    if (t.mayNeedApproval) return errorResult(`Tool "${t.name}" needs human approval and cannot be called over MCP`)
    try {
      return successResult(await Effect.runPromise(executeTool(t, args, `mcp-${Date.now()}`), { signal }))
    } catch (error) {
      return errorResult(`Tool "${t.name}" failed: ${describeCause(error)}`)
    }
  }
})

const serveAgent = (agent: ServableAgent, description: string | undefined): ServedTool => {
  const definition = definitionOf(agent)
  const input = definition.input ?? Schema.String
  const inputJson = Schema.toJsonSchemaDocument(input, { onExcessProperty: "error" })
  const isObject = inputJson.schema.type === "object"
  const defs = Object.keys(inputJson.definitions).length === 0 ? {} : { $defs: inputJson.definitions }
  const inputSchema = isObject
    ? { ...inputJson.schema, ...defs }
    : { type: "object", properties: { input: inputJson.schema }, required: ["input"], additionalProperties: false, ...defs }
  const decode = Schema.decodeUnknownResult(Schema.toCodecJson(input))
  const encodeOutput = definition.output === undefined ? undefined : Schema.encodeUnknownSync(Schema.toCodecJson(definition.output))
  return {
    name: agent.name,
    description: description ?? `Runs the agent "${agent.name}" on its input and returns its answer.`,
    inputSchema,
    call: async (raw, signal) => {
      const candidate = isObject ? raw : (raw as { readonly input?: unknown } | undefined)?.input
      const decoded = decode(candidate, { errors: "all", onExcessProperty: "error" })
      if (Result.isFailure(decoded)) return errorResult(`Invalid input for agent "${agent.name}":\n${decoded.failure.message}`)
      try {
        const output = await Effect.runPromise(agent.runEffect(decoded.success) as Effect.Effect<unknown, unknown>, { signal })
        return successResult(encodeOutput === undefined ? output : encodeOutput(output))
      } catch (error) {
        return errorResult(`Agent "${agent.name}" failed: ${describeCause(error)}`)
      }
    }
  }
}

const successResult = (value: unknown): CallToolResult => {
  const isRecord = typeof value === "object" && value !== null && !Array.isArray(value)
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "null"
  return isRecord
    ? { content: [{ type: "text", text }], structuredContent: value as Record<string, unknown> }
    : { content: [{ type: "text", text }] }
}

const errorResult = (text: string): CallToolResult => ({ content: [{ type: "text", text }], isError: true })

/** A fresh protocol server for `definition` (one per stdio connection or HTTP request). */
const protocolServer = (definition: McpServerDefinition): Server => {
  const server = new Server({ name: definition.name, version: definition.version }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: definition.tools.map((t) => ({
      name: t.name,
      ...(t.description === undefined ? {} : { description: t.description }),
      inputSchema: t.inputSchema as { type: "object" }
    }))
  }))
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const served = definition.tools.find((t) => t.name === request.params.name)
    if (served === undefined) return errorResult(`Unknown tool "${request.params.name}"`)
    return served.call(request.params.arguments, extra.signal)
  })
  return server
}

/**
 * Serves `definition` over stdio (this process's stdin and stdout by default) until the scope closes.
 *
 * @example
 * ```ts
 * Effect.runFork(Effect.scoped(Effect.andThen(serveStdio(server), Effect.never)))
 * ```
 */
export const serveStdio = (
  definition: McpServerDefinition,
  options: { readonly stdin?: NodeJS.ReadableStream; readonly stdout?: NodeJS.WritableStream } = {}
): Effect.Effect<void, McpError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const server = protocolServer(definition)
        await server.connect(new StdioServerTransport(options.stdin as never, options.stdout as never))
        return server
      },
      catch: (cause) => new McpError({ server: definition.name, operation: "serve", reason: describeCause(cause), cause })
    }),
    (server) => Effect.promise(() => server.close().catch(() => undefined))
  ).pipe(Effect.asVoid)

/** Where an HTTP server listens. */
export interface McpHttpAddress {
  readonly url: string
  readonly port: number
}

/**
 * Serves `definition` over streamable HTTP at `http://host:port/path` until the scope closes. Port 0
 * (the default) picks a free port; the address says which.
 *
 * @example
 * ```ts
 * const { url } = yield* serveHttp(server, { port: 3001 })
 * ```
 */
export const serveHttp = (
  definition: McpServerDefinition,
  options: { readonly port?: number; readonly host?: string; readonly path?: string } = {}
): Effect.Effect<McpHttpAddress, McpError, Scope.Scope> => {
  const host = options.host ?? "127.0.0.1"
  const path = options.path ?? "/mcp"
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        new Promise<{ readonly http: ReturnType<typeof createServer>; readonly port: number }>((resolve, reject) => {
          const http = createServer((req, res) => void handle(definition, path, req, res))
          http.once("error", reject)
          http.listen(options.port ?? 0, host, () => {
            const address = http.address()
            resolve({ http, port: typeof address === "object" && address !== null ? address.port : 0 })
          })
        }),
      catch: (cause) => new McpError({ server: definition.name, operation: "serve", reason: describeCause(cause), cause })
    }),
    ({ http }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          http.close(() => resolve())
          http.closeAllConnections()
        })
      )
  ).pipe(Effect.map(({ port }) => Object.freeze({ url: `http://${host}:${port}${path}`, port })))
}

const handle = async (definition: McpServerDefinition, path: string, req: IncomingMessage, res: ServerResponse) => {
  const pathname = new URL(req.url ?? "/", "http://localhost").pathname
  if (pathname !== path) return void res.writeHead(404).end()
  if (req.method !== "POST") {
    // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
    return void res.writeHead(405, { allow: "POST", "content-type": "application/json" }).end(
      JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null })
    )
  }
  const server = protocolServer(definition)
  const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true }) // no sessionIdGenerator: stateless
  res.on("close", () => {
    void transport.close()
    void server.close()
  })
  try {
    await server.connect(transport)
    await transport.handleRequest(req, res)
  } catch (error) {
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "application/json" }).end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: describeCause(error) }, id: null })
      )
    }
  }
}
