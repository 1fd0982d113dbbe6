/**
 * Agents and tools served over MCP. `mcpServer({ name, tools, agents })` describes what is offered:
 * every tool keeps its name, description and JSON Schema, and its calls are decoded with the tool's
 * own validator before it runs (so a client gets the same readable issues a model would); every agent
 * becomes one tool that takes the agent's input and returns its output. `serveStdio` and `serveHttp`
 * serve that description for the lifetime of a scope.
 *
 * Cancellation crosses both transports: a `notifications/cancelled` for an in-flight `tools/call`
 * interrupts the tool or the agent's run (its model request and its tools). Over HTTP each client gets
 * a session (`Mcp-Session-Id`, one protocol server per session, JSON responses) so that the
 * notification reaches the server running the call; a POST whose connection closes before its answer
 * cancels the calls it carried, and only those: a request whose id is already in flight in its session
 * (not answered, or cancelled but still running) is refused at once (-32600) and nothing runs, since
 * the SDK's server tells requests apart by their id alone. Every POST carrying a request is answered:
 * a call cancelled by `notifications/cancelled` with a JSON-RPC error (-32800), the calls of a session
 * that ends while they run with -32000. Over stdio, the client closing stdin cancels every in-flight call and
 * ends the server (`closed` completes), so a process serving stdio exits when its client goes away.
 */
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { CallToolRequestParamsSchema, type CallToolResult, CallToolRequestSchema, type JSONRPCMessage, ListToolsRequestSchema, type RequestId } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { AgentDefinitionKey, definitionOf } from "../dsl/agent.ts"
import { type AgentDefinition, mayNeedApproval } from "../dsl/agent-definition.ts"
import { type AnyTool, executeTool, isTool, toolNamePattern } from "../dsl/tool.ts"
import { AgentConfigError, McpError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { allowedHosts, refuseForeign } from "../internal/host-guard.ts"
import { protoKeyIssue } from "./argument-keys.ts"

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
    const refused = protoKeyIssue(args)
    if (refused !== undefined) return errorResult(`Invalid arguments for tool "${t.name}":\n${refused}`)
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
  // A text (non-object) input is decoded inside its `{ input }` wrapper, so that what is accepted is
  // what the advertised schema allows (no other keys).
  const decode = Schema.decodeUnknownResult(Schema.toCodecJson(isObject ? input : Schema.Struct({ input })))
  const encodeOutput = definition.output === undefined ? undefined : Schema.encodeUnknownSync(Schema.toCodecJson(definition.output))
  const suspends = mayNeedApproval(definition)
  return {
    name: agent.name,
    description: description ?? `Runs the agent "${agent.name}" on its input and returns its answer.`,
    inputSchema,
    call: async (raw, signal) => {
      const refused = protoKeyIssue(raw)
      if (refused !== undefined) return errorResult(`Invalid input for agent "${agent.name}":\n${refused}`)
      const decoded = decode(raw ?? {}, { errors: "all", onExcessProperty: "error" })
      if (Result.isFailure(decoded)) return errorResult(`Invalid input for agent "${agent.name}":\n${decoded.failure.message}`)
      const value = isObject ? decoded.success : (decoded.success as { readonly input: unknown }).input
      try {
        const result = await Effect.runPromise(agent.runEffect(value) as Effect.Effect<unknown, unknown>, { signal })
        // An agent that may suspend answers Completed or Suspended. Nobody is there to decide over MCP:
        // a suspension is an error saying what waits (never the run's snapshot: its transcript is the agent's own).
        const run = result as { readonly _tag: string; readonly output?: unknown; readonly pending?: ReadonlyArray<{ readonly tool: string }> }
        if (suspends && run._tag === "Suspended") {
          const tools = [...new Set((run.pending ?? []).map((p) => `"${p.tool}"`))].join(", ")
          return errorResult(`Agent "${agent.name}" stopped to wait for a human decision on ${tools === "" ? "a call" : tools}, which cannot be given over MCP: the call waiting was not run`)
        }
        const output = suspends ? run.output : result
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

/**
 * `tools/call` with its `arguments` as the message carried them. The SDK's own schema rebuilds them as
 * a record, which silently drops a `"__proto__"` key: a call would then run with other arguments than
 * those sent, instead of being refused (`argument-keys.ts`). The SDK still checks the request against
 * its own schema (arguments, when given, are an object) before the handler runs.
 */
const CallToolAsSent = CallToolRequestSchema.extend({ params: CallToolRequestParamsSchema.omit({ arguments: true }).loose() })

/** A protocol server for `definition` (one per stdio connection or HTTP session), with its in-flight calls. */
const protocolServer = (
  definition: McpServerDefinition
): {
  readonly server: Server
  readonly settled: () => Promise<void>
  readonly busy: () => boolean
  /** Settles once the call with this request id (if one runs) has settled, cancelled or not. */
  readonly callSettled: (id: RequestId) => Promise<void>
} => {
  const server = new Server({ name: definition.name, version: definition.version }, { capabilities: { tools: {} } })
  const inFlight = new Set<Promise<unknown>>()
  const byId = new Map<RequestId, Promise<unknown>>()
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: definition.tools.map((t) => ({
      name: t.name,
      ...(t.description === undefined ? {} : { description: t.description }),
      inputSchema: t.inputSchema as { type: "object" }
    }))
  }))
  server.setRequestHandler(CallToolAsSent, (request, extra) => {
    const served = definition.tools.find((t) => t.name === request.params.name)
    if (served === undefined) return errorResult(`Unknown tool "${request.params.name}"`)
    // `extra.signal` aborts on notifications/cancelled and when the transport closes.
    const running = served.call(request.params.arguments, extra.signal)
    inFlight.add(running)
    byId.set(extra.requestId, running)
    void running.finally(() => {
      inFlight.delete(running)
      if (byId.get(extra.requestId) === running) byId.delete(extra.requestId)
    })
    return running
  })
  return {
    server,
    settled: () => Promise.allSettled([...inFlight]).then(() => undefined),
    busy: () => inFlight.size > 0,
    callSettled: (id) => Promise.allSettled([byId.get(id)]).then(() => undefined)
  }
}

/** A stdio server being served. */
export interface McpStdioServer {
  /**
   * Completes when the client has gone away (stdin ended or closed) and the calls in flight then,
   * cancelled by it, have settled. Wait for it to let the process exit with its client.
   */
  readonly closed: Effect.Effect<void>
}

/**
 * Serves `definition` over stdio (this process's stdin and stdout by default) until the scope closes
 * or the client closes stdin, which cancels the calls in flight (their runs are interrupted) and
 * completes `closed`.
 *
 * @example
 * ```ts
 * // Serves until the client goes away, then the process exits.
 * Effect.runFork(Effect.scoped(Effect.flatMap(serveStdio(server), (served) => served.closed)))
 * ```
 */
export const serveStdio = (
  definition: McpServerDefinition,
  options: { readonly stdin?: NodeJS.ReadableStream; readonly stdout?: NodeJS.WritableStream } = {}
): Effect.Effect<McpStdioServer, McpError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const stdin = options.stdin ?? process.stdin
        const { server, settled } = protocolServer(definition)
        let resolveClosed: () => void = () => undefined
        const closed = new Promise<void>((resolve) => (resolveClosed = resolve))
        // Closing the protocol server aborts every in-flight handler's signal, interrupting the runs.
        server.onclose = () => void settled().then(resolveClosed)
        const clientGone = () => void server.close().catch(() => undefined)
        await server.connect(new StdioServerTransport(stdin as never, options.stdout as never))
        stdin.once("end", clientGone)
        stdin.once("close", clientGone)
        const stop = async () => {
          stdin.off("end", clientGone)
          stdin.off("close", clientGone)
          await server.close().catch(() => undefined)
        }
        return { stop, served: Object.freeze({ closed: Effect.promise(() => closed) }) }
      },
      catch: (cause) => new McpError({ server: definition.name, operation: "serve", reason: describeCause(cause), cause })
    }),
    ({ stop }) => Effect.promise(stop)
  ).pipe(Effect.map(({ served }) => served))

/** Where an HTTP server listens. */
export interface McpHttpAddress {
  readonly url: string
  readonly port: number
}

/**
 * Serves `definition` over streamable HTTP at `http://host:port/path` until the scope closes. Port 0
 * (the default) picks a free port; the address says which. Each client gets a session; a session ends
 * when the client ends it (DELETE), when it has been idle (no request and no call running) for
 * `sessionIdleMs` (default 30 minutes; the client then gets 404 and starts a new one, as `mcpHttp`'s does), or when the
 * scope closes; its running calls are cancelled. At most 1,000 sessions are open at once (503 beyond).
 * Requests from another site are refused (403): on a loopback address (the default) a `Host` that is
 * not one of the server's names (DNS rebinding), anywhere an `Origin` that is not the server's own.
 *
 * @example
 * ```ts
 * const { url } = yield* serveHttp(server, { port: 3001 })
 * ```
 */
export const serveHttp = (
  definition: McpServerDefinition,
  options: {
    readonly port?: number
    readonly host?: string
    readonly path?: string
    readonly sessionIdleMs?: number
    /**
     * Other `Host` values (`name:port`, or `name` for port 80) that name this server, e.g. behind a proxy.
     * On a loopback address, or when given, a request whose `Host` is not one of the server's names is
     * refused with 403 (DNS rebinding); an `Origin` must always be the server's own.
     */
    readonly allowedHosts?: ReadonlyArray<string>
  } = {}
): Effect.Effect<McpHttpAddress, McpError, Scope.Scope> => {
  const host = options.host ?? "127.0.0.1"
  const path = options.path ?? "/mcp"
  const checksHost = ["127.0.0.1", "localhost", "::1", "[::1]"].includes(host) || (options.allowedHosts ?? []).length > 0
  const idleMs = options.sessionIdleMs ?? 30 * 60_000
  if (!(Number.isFinite(idleMs) && idleMs > 0)) {
    return Effect.fail(new McpError({ server: definition.name, operation: "serve", reason: `sessionIdleMs must be a positive number of milliseconds, got ${idleMs}` }))
  }
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        new Promise<{ readonly http: ReturnType<typeof createServer>; readonly port: number; readonly sessions: Sessions }>((resolve, reject) => {
          const sessions: Sessions = new Map()
          // Known once listening (before any request): the Host and Origin values that name this server.
          const guard = { hosts: new Set<string>() as ReadonlySet<string> }
          const http = createServer((req, res) => {
            // On a loopback address (or with `allowedHosts`), the Host must be one of its names (a DNS-
            // rebinding page comes under its own); elsewhere (behind a proxy, any name) only an Origin,
            // when a browser sends one, must be the address the request came to.
            const foreign = checksHost ? refuseForeign(req, guard.hosts) : refuseForeign(req, new Set([String(req.headers.host).toLowerCase()]))
            if (foreign !== undefined) return jsonRpcError(res, 403, -32000, `Forbidden: ${foreign} (DNS rebinding and cross-site requests are refused)`)
            void handle(definition, path, sessions, req, res)
          })
          const sweep = setInterval(() => {
            const now = Date.now()
            for (const session of sessions.values()) {
              if (!session.busy() && now - session.seen.at > idleMs) void session.transport.close()
            }
          }, Math.max(10, Math.min(idleMs / 2, 60_000)))
          sweep.unref()
          http.once("close", () => clearInterval(sweep))
          http.once("error", reject)
          http.listen(options.port ?? 0, host, () => {
            const address = http.address()
            const port = typeof address === "object" && address !== null ? address.port : 0
            guard.hosts = new Set([...allowedHosts(host, port), ...(options.allowedHosts ?? []).map((name) => name.toLowerCase())])
            resolve({ http, sessions, port })
          })
        }),
      catch: (cause) => new McpError({ server: definition.name, operation: "serve", reason: describeCause(cause), cause })
    }),
    ({ http, sessions }) =>
      Effect.promise(async () => {
        // Ends every session: their in-flight calls are cancelled.
        await Promise.allSettled([...sessions.values()].map((s) => s.transport.close()))
        await new Promise<void>((resolve) => {
          http.close(() => resolve())
          http.closeAllConnections()
        })
      })
  ).pipe(Effect.map(({ port }) => Object.freeze({ url: `http://${host}:${port}${path}`, port })))
}

/** The open HTTP sessions of one server, by session id. */
type Sessions = Map<string, {
  readonly transport: StreamableHTTPServerTransport
  readonly busy: () => boolean
  readonly callSettled: (id: RequestId) => Promise<void>
  /**
   * The request ids in flight: from the POST that carries one until that POST has ended and the call
   * under its id has settled. The SDK's server keys a request's answer and its cancellation by id
   * alone, so a second request under an id in flight is refused rather than mixed up with the first.
   */
  readonly inUse: Set<RequestId>
  /** When the session last received a request (milliseconds since the epoch). */
  readonly seen: { at: number }
  /** The POSTs carrying requests that are not answered yet: answered by the server when the session ends. */
  readonly open: Set<OpenPost>
}>

/** A POST carrying requests, with their ids, until it is answered. */
interface OpenPost {
  readonly res: ServerResponse
  readonly ids: ReadonlyArray<RequestId>
}

/**
 * The JSON-RPC error a cancelled request is answered with. A cancelled request gets no answer from the
 * protocol (as the MCP cancellation asks), but its POST must be answered, and the SDK's transport
 * answers a POST only once each of its requests has an answer: without one, the POST would stay open
 * for ever. The client that cancelled ignores it (as the MCP cancellation asks of a sender).
 */
const requestCancelledCode = -32800

/** The request id a `notifications/cancelled` names, if `message` is one. */
const cancelledId = (message: JSONRPCMessage): RequestId | undefined => {
  if (!("method" in message) || message.method !== "notifications/cancelled" || "id" in message) return undefined
  const requestId = (message.params as { readonly requestId?: unknown } | undefined)?.requestId
  return typeof requestId === "string" || typeof requestId === "number" ? requestId : undefined
}

/** Answers each request of `post` with an error saying its session ended, unless it was answered. */
const endUnanswered = (post: OpenPost) => {
  if (post.res.headersSent || post.res.writableEnded) return
  const errors = post.ids.map((id) => ({
    jsonrpc: "2.0",
    id,
    error: { code: -32000, message: "the session ended (closed by the client, idle, or the server stopping) before this request was answered: it was cancelled" }
  }))
  post.res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(errors.length === 1 ? errors[0] : errors))
}

const jsonRpcError = (res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  void res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }))

const maxBodyBytes = 4 * 1024 * 1024

/** Sessions open at once, at most (each holds a server until it closes or idles out). */
const maxSessions = 1000

const readJson = (req: IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBodyBytes) reject(new Error(`the body is over ${maxBodyBytes} bytes`))
      else chunks.push(chunk)
    })
    req.once("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
      } catch (error) {
        reject(error)
      }
    })
    req.once("error", reject)
  })

/** Why the requests `ids` of one POST cannot run beside those in flight (`inUse`), or `undefined`. */
const idConflict = (ids: ReadonlyArray<RequestId>, inUse: ReadonlySet<RequestId>): string | undefined => {
  const taken = ids.find((id) => inUse.has(id))
  if (taken !== undefined) {
    return `Invalid Request: request id ${JSON.stringify(taken)} is already in use in this session (a request under it has not been answered, or is still stopping): send it under another id`
  }
  const twice = ids.find((id, i) => ids.indexOf(id) !== i)
  return twice === undefined ? undefined : `Invalid Request: request id ${JSON.stringify(twice)} appears twice in this batch`
}

/** The ids of the requests in a POST body (one message or a batch). */
const requestIds = (body: unknown): ReadonlyArray<RequestId> =>
  (Array.isArray(body) ? body : [body]).flatMap((m) =>
    typeof m === "object" && m !== null && "method" in m && "id" in m && (typeof m.id === "string" || typeof m.id === "number") ? [m.id] : []
  )

const handle = async (definition: McpServerDefinition, path: string, sessions: Sessions, req: IncomingMessage, res: ServerResponse) => {
  const pathname = new URL(req.url ?? "/", "http://localhost").pathname
  if (pathname !== path) return void res.writeHead(404).end()
  try {
    let body: unknown
    if (req.method === "POST") {
      try {
        body = await readJson(req)
      } catch (error) {
        return jsonRpcError(res, 400, -32700, `Parse error: ${describeCause(error)}`)
      }
    }
    const sessionId = req.headers["mcp-session-id"]
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId)
      if (session === undefined) return jsonRpcError(res, 404, -32001, "Session not found")
      session.seen.at = Date.now()
      const ids = requestIds(body)
      if (ids.length === 0) return await session.transport.handleRequest(req, res, body)
      // Refused before anything is registered: the request in flight under that id keeps its answer and
      // is not cancelled when this POST's connection closes.
      const conflict = idConflict(ids, session.inUse)
      if (conflict !== undefined) return jsonRpcError(res, 400, -32600, conflict)
      for (const id of ids) session.inUse.add(id)
      const post: OpenPost = { res, ids }
      session.open.add(post)
      let released = false
      const release = () => {
        if (released) return
        released = true
        session.open.delete(post)
        for (const id of ids) void session.callSettled(id).then(() => session.inUse.delete(id))
      }
      // A POST whose connection closes before its answer cancels the calls it carried, as the client would
      // (no other request holds their ids).
      res.once("close", () => {
        if (!res.writableFinished) {
          for (const requestId of ids) {
            const cancel: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId, reason: "the HTTP connection closed" } }
            session.transport.onmessage?.(cancel)
          }
        }
        release()
      })
      try {
        return await session.transport.handleRequest(req, res, body)
      } finally {
        release()
      }
    }
    if (req.method !== "POST") return jsonRpcError(res, 400, -32000, "Bad Request: no Mcp-Session-Id header; start a session with initialize")
    if (sessions.size >= maxSessions) return jsonRpcError(res, 503, -32000, `Too many sessions (${maxSessions} open): close one, or wait for idle ones to end`)
    // A new session: the transport answers anything but an initialize request with an error.
    const { server, busy, callSettled } = protocolServer(definition)
    const open = new Set<OpenPost>()
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => void sessions.set(id, { transport, busy, callSettled, inUse: new Set(), seen: { at: Date.now() }, open })
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
      // The SDK's transport drops the POSTs still waiting for answers without ending them.
      for (const post of open) endUnanswered(post)
      open.clear()
    }
    await server.connect(transport)
    // A cancelled request is answered (see `requestCancelledCode`), after the protocol has had the
    // cancellation (it interrupts the call and then sends nothing). One already answered is not: the
    // transport knows it no more and refuses a second answer.
    const deliver = transport.onmessage
    transport.onmessage = (message, extra) => {
      deliver?.(message, extra)
      const id = cancelledId(message)
      if (id === undefined) return
      const reason = (message as { readonly params?: { readonly reason?: unknown } }).params?.reason
      const why = typeof reason === "string" && reason !== "" ? `: ${reason}` : ""
      transport.send({ jsonrpc: "2.0", id, error: { code: requestCancelledCode, message: `Request cancelled${why}` } }).catch(() => undefined)
    }
    await transport.handleRequest(req, res, body)
    if (transport.sessionId === undefined) await server.close()
  } catch (error) {
    if (!res.headersSent) jsonRpcError(res, 500, -32603, describeCause(error))
  }
}
