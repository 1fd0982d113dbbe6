/**
 * A live connection to one MCP server, as a scoped resource: `connectMcp` starts the transport (spawns
 * the process or opens the HTTP session), initialises the protocol and lists the tools; closing the
 * scope closes the client, which stops the child process or ends the HTTP session. The tool list is
 * kept current: a `notifications/tools/list_changed` from the server triggers a new listing and the
 * registered listeners.
 *
 * Over HTTP, a server may end the session (idle, restarted) and answer 404 to its id. The connection
 * then starts a new session (initialize, and a new listing), and sends the request that got the 404
 * once more: a 404 to the session means the server did not run it, after checking the arguments again
 * (`recheck`) against the schema the new session lists. Any other failure is reported as it is, never
 * retried, so a tool with side effects never runs twice; a call whose event stream breaks before its
 * answer (the server died) fails at once rather than at its timeout.
 *
 * A tool's structured output is checked against its `outputSchema` here, in linear time
 * (`output-schema.ts`), not by the SDK's client. Connecting can be interrupted: what was started half-way
 * (a child process, a session) is closed.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type CallToolResult, ListRootsRequestSchema, ResultSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import { McpError } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { isRecord } from "../internal/is-record.ts"
import { outputCheck, uncheckedOutput } from "./output-schema.ts"
import type { McpServerSpec } from "./server-spec.ts"

/** A tool as a server lists it. */
export interface McpToolInfo {
  readonly name: string
  readonly description: string | undefined
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly outputSchema: Readonly<Record<string, unknown>> | undefined
  /** The server's hint that the tool has no side effects. */
  readonly readOnly: boolean
  /** The server runs it only as a task (`execution.taskSupport: "required"`): a call is refused, as the SDK refuses it. */
  readonly taskOnly?: boolean | undefined
  /** Why the entry cannot be used as listed (its input schema is not an object, say): such a tool is refused or skipped. */
  readonly invalid?: string | undefined
}

/** Options of one call. */
export interface McpCallOptions {
  readonly signal?: AbortSignal
  /** Milliseconds before the call fails with a timeout (the SDK's default is 60 s). */
  readonly timeoutMs?: number
  /**
   * Checks the arguments again before a call is sent once more on a new session (over HTTP, after a
   * 404: the server restarted and the tools were listed again, maybe with other schemas). Returns the
   * arguments to send, or throws to send nothing (the call fails with what it threw).
   */
  readonly recheck?: (args: unknown) => unknown
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
  /**
   * Calls a tool. Over HTTP, a 404 to an ended session starts a new one and sends the call once more
   * (the server did not run it, see `recheck`); no other failure is retried. A tool listed with an
   * `outputSchema` must answer `structuredContent` that keeps it (checked in linear time,
   * `output-schema.ts`), or the call fails; an `isError` result is not checked.
   */
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
      try: async (signal) => {
        const opened = await open(spec, options, signal)
        // Interrupted as it opened: nobody will release it, so it is closed here.
        if (signal.aborted) {
          await opened.close().catch(() => undefined)
          throw new Error("interrupted while connecting")
        }
        return opened
      },
      catch: (cause) => new McpError({ server: spec.name, operation: "connect", reason: describeCause(cause), cause })
    }),
    (opened) => Effect.promise(() => opened.close().catch(() => undefined)),
    // Connecting can be interrupted (a timeout around it, the run ending): the abort signal stops the
    // connection half-way, and `open` closes what it had started (the child process, the session).
    { interruptible: true }
  ).pipe(Effect.map((opened) => opened.connection))

const open = async (spec: McpServerSpec, options: McpConnectOptions, signal: AbortSignal) => {
  const timeout = options.connectTimeoutMs ?? 30_000
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
  /** The session in use: replaced when an HTTP server has forgotten it (see `withSession`). */
  let current: Session
  /** A new session under way, shared by the calls that found the old one gone. */
  let renewing: Promise<Session> | undefined
  let closed = false
  const relist = (client: Client) => {
    // A change announced by a session no longer (or not yet) in use is not this connection's: a new
    // session lists its tools once it is in place.
    if (client !== current?.client) return
    listAll(client, { signal: AbortSignal.timeout(timeout), timeout }).then(publish, () => {
      // A failed re-listing keeps the tools as they were listed; the next change lists again.
    })
  }
  current = await startSession(spec, timeout, relist, options, signal)
  try {
    tools = await listAll(current.client, { signal, timeout })
  } catch (error) {
    await current.client.close().catch(() => undefined)
    throw error
  }
  // Starts a new session in place of `stale` (once, however many calls found it gone) and lists the
  // tools again, since a restarted server may offer others; a failed listing keeps the tools as listed.
  const renew = (stale: Session): Promise<Session> => {
    if (current !== stale) return Promise.resolve(current)
    if (closed) return Promise.reject(new Error("the connection is closed"))
    renewing ??= (async () => {
      const next = await startSession(spec, timeout, relist, options, AbortSignal.timeout(timeout))
      current = next
      void stale.client.close().catch(() => undefined)
      await listAll(next.client, { signal: AbortSignal.timeout(timeout), timeout }).then(publish, () => undefined)
      return next
    })().finally(() => (renewing = undefined))
    return renewing
  }
  // Runs `operation` on the session in use. When an HTTP server answers 404 to the session's id, it has
  // ended the session (idle, restarted) without running the request: a new session is started and the
  // request is sent once more. Never on any other failure, where the server may have run it.
  const withSession = async <A>(operation: (client: Client, resent: boolean) => Promise<A>): Promise<A> => {
    const used = current
    try {
      return await operation(used.client, false)
    } catch (error) {
      if (!sessionGone(used, error)) throw error
      return await operation((await renew(used)).client, true)
    }
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
        const next = await withSession((client) => listAll(client, { signal, timeout }))
        publish(next)
        return next
      },
      catch: (cause) => new McpError({ server: spec.name, operation: "list", reason: describeCause(cause), cause })
    }),
    callTool: (name, args, callOptions = {}) => {
      // A call sent again after a new session gets what is left of its time, not the whole of it again.
      const deadline = callOptions.timeoutMs === undefined ? undefined : Date.now() + callOptions.timeoutMs
      return withSession(async (client, resent) => {
        // As the SDK's `callTool` refuses a tool listed as task-only (`client.listTools` told it; ours lists it).
        if (tools.find((t) => t.name === name)?.taskOnly === true) {
          throw new Error(`tool "${name}" runs only as a task (execution.taskSupport: required), which this client does not use`)
        }
        // A restarted server may have changed the tool's schema: what is sent again is checked again.
        const sent = resent && callOptions.recheck !== undefined ? callOptions.recheck(args) : args
        const result = (await client.callTool({ name, arguments: sent as Record<string, unknown> }, undefined, {
          ...(callOptions.signal === undefined ? {} : { signal: callOptions.signal }),
          ...(deadline === undefined ? {} : { timeout: Math.max(1, deadline - Date.now()) })
        })) as CallToolResult
        return checkOutput(tools.find((t) => t.name === name), result)
      })
    }
  }
  const close = async () => {
    closed = true
    await renewing?.catch(() => undefined)
    const { client, transport } = current
    // Ends the HTTP session on the server (DELETE); a stdio child is stopped by `client.close()`.
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined)
    await client.close()
  }
  return { connection: Object.freeze(connection), close }
}

/**
 * `result` when it keeps the `outputSchema` its tool was listed with; otherwise throws saying how it
 * does not (as the SDK's own check would, but in linear time and for tools on every page of the list).
 */
const checkOutput = (info: McpToolInfo | undefined, result: CallToolResult): CallToolResult => {
  if (info?.outputSchema === undefined || result.isError === true) return result
  if (result.structuredContent === undefined) throw new Error("the tool declares an outputSchema but its result has no structuredContent")
  const check = outputCheck(info.outputSchema)
  if (Result.isFailure(check)) throw new Error(check.failure)
  const checked = check.success(result.structuredContent)
  if (Result.isFailure(checked)) throw new Error(`its structuredContent does not match its outputSchema:\n${checked.failure}`)
  return result
}

/** One protocol session: a client on its own transport (a child process, or an HTTP session). */
interface Session {
  readonly client: Client
  readonly transport: StdioClientTransport | StreamableHTTPClientTransport
}

/** Whether `error` is an HTTP server's 404 to the session id `session` sent: the server ended it. */
const sessionGone = (session: Session, error: unknown): boolean =>
  session.transport instanceof StreamableHTTPClientTransport && session.transport.sessionId !== undefined &&
  error instanceof StreamableHTTPError && error.code === 404

/** Starts the transport and initialises the protocol (over HTTP, a new session). */
const startSession = async (
  spec: McpServerSpec,
  timeout: number,
  relist: (client: Client) => void,
  options: McpConnectOptions,
  signal: AbortSignal
): Promise<Session> => {
  const client: Client = new Client(clientInfo, {
    // The SDK's own check of structured output (ajv: backtracking patterns, and a listing that fails for
    // one schema it cannot compile) is replaced by `checkOutput`, in linear time (`output-schema.ts`).
    jsonSchemaValidator: uncheckedOutput,
    capabilities: spec.roots === undefined ? {} : { roots: { listChanged: false } },
    listChanged: {
      tools: {
        // Not the SDK's refresh (its first page only: tools on later pages would be dropped): every page.
        autoRefresh: false,
        debounceMs: options.listChangedDebounceMs ?? 50,
        onChanged: () => relist(client)
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
      fetch: answeringLostStreams,
      ...(spec.transport.headers === undefined ? {} : { requestInit: { headers: { ...spec.transport.headers } } })
    })
  try {
    await client.connect(transport, { signal, timeout })
  } catch (error) {
    await client.close().catch(() => undefined)
    throw error
  }
  return { client, transport }
}

/** The id of the JSON-RPC request a POST body carries (one message, as the SDK sends them), if any. */
const requestIdOf = (body: unknown): string | number | undefined => {
  if (typeof body !== "string") return undefined
  try {
    const message: unknown = JSON.parse(body)
    if (!isRecord(message) || typeof message.method !== "string") return undefined
    return typeof message.id === "string" || typeof message.id === "number" ? message.id : undefined
  } catch {
    return undefined
  }
}

const sseEncoder = new TextEncoder()

/**
 * `fetch`, where the event stream answering a request ends with an error response to that request
 * when it breaks or ends before the answer (the server died mid-call). The SDK only reports such a
 * break (`onerror`) and would hold the call until its timeout (typescript-sdk #2739); now it fails at
 * once, as over stdio. It is not sent again: the server may have run it. A stream that gave event ids
 * can be resumed, which the SDK does itself: it is left as it is.
 */
const answeringLostStreams = async (input: string | URL, init?: RequestInit): Promise<Response> => {
  const response = await fetch(input, init)
  const id = init?.method === "POST" ? requestIdOf(init.body) : undefined
  const body = response.body
  if (id === undefined || body === null || !(response.headers.get("content-type") ?? "").includes("text/event-stream")) return response
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let line = ""
  let resumable = false
  let answered = false
  // Reads the stream's lines as they pass: an event id makes it resumable; a message for `id` answers it.
  const watch = (text: string) => {
    const lines = (line + text).split(/\r\n|\r|\n/)
    line = lines.pop() ?? ""
    for (const l of lines) {
      if (l.startsWith("id:")) resumable = true
      else if (l.startsWith("data:") && !answered) {
        try {
          const message: unknown = JSON.parse(l.slice(5))
          if (isRecord(message) && message.id === id && ("result" in message || "error" in message)) answered = true
        } catch {
          // Not JSON, or a part of a message spread over several data lines: the SDK reads it.
        }
      }
    }
  }
  const lost = (why: string) =>
    sseEncoder.encode(`\n\nevent: message\ndata: ${JSON.stringify({
      jsonrpc: "2.0",
      id,
      error: { code: -32000, message: `the connection to the server was lost during the call (${why}): the call may have run, so it is not sent again` }
    })}\n\n`)
  const guarded = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read()
        if (!done) {
          watch(decoder.decode(value, { stream: true }))
          return controller.enqueue(value)
        }
        if (!answered && !resumable) controller.enqueue(lost("the server ended the stream without an answer"))
        controller.close()
      } catch (error) {
        if (answered || resumable) return controller.error(error)
        controller.enqueue(lost(describeCause(error)))
        controller.close()
      }
    },
    cancel: (reason) => reader.cancel(reason)
  })
  return new Response(guarded, { status: response.status, statusText: response.statusText, headers: response.headers })
}

/** Pages of a tool list read at most: a server whose list goes on (or loops) is refused, not followed for ever. */
const maxListPages = 1000

/**
 * Every page of the server's tool list, within `timeout` in all (not per page). Each entry is read on
 * its own (`infoOf`), not by the SDK's schema of the whole list (`client.listTools`): one entry that
 * schema refuses (a valid JSON Schema it does not model, such as a `false` subschema) would refuse the
 * whole list, and a server's other tools must load either way.
 */
const listAll = async (client: Client, options: { readonly signal: AbortSignal; readonly timeout: number }) => {
  const out: Array<McpToolInfo> = []
  const seen = new Set<string>()
  const deadline = Date.now() + options.timeout
  let cursor: string | undefined
  for (let pages = 0; ; pages++) {
    if (pages === maxListPages) throw new Error(`the server's tool list goes on past ${maxListPages} pages`)
    const left = deadline - Date.now()
    if (left <= 0) throw new Error(`listing the server's tools took over ${options.timeout} ms`)
    const page: Record<string, unknown> = await client.request(
      { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
      ResultSchema,
      { signal: options.signal, timeout: left }
    )
    if (!Array.isArray(page.tools)) throw new Error("the server's tools/list result has no `tools` array")
    for (const entry of page.tools) {
      const info = infoOf(entry)
      if (info !== undefined) out.push(info)
    }
    const next = page.nextCursor
    if (next !== undefined && typeof next !== "string") throw new Error("the server's tools/list result has a `nextCursor` that is not a string")
    cursor = next
    if (cursor === undefined) return Object.freeze(out)
    if (seen.has(cursor)) throw new Error(`the server's tool list comes back to a page it gave (cursor ${JSON.stringify(cursor)})`)
    seen.add(cursor)
  }
}

/**
 * One entry of a tool list: undefined without a name (nothing could call it), else the tool, marked
 * `invalid` when something it needs is not there in the form MCP gives it (an input schema that is not
 * an object, a description that is not a string). Its input schema is
 * judged where it is compiled (`mcpTools`), as JSON Schema: what the SDK's list schema would refuse
 * there (a `false` subschema, a property named `constructor` under zod 3) is valid JSON Schema.
 */
const infoOf = (entry: unknown): McpToolInfo | undefined => {
  if (!isRecord(entry) || typeof entry.name !== "string" || entry.name === "") return undefined
  const { name, description, inputSchema, outputSchema, annotations, execution } = entry
  const invalid = !isRecord(inputSchema)
    ? "its inputSchema is not a JSON Schema object"
    : description != null && typeof description !== "string"
    ? "its description is not a string"
    : outputSchema != null && !isRecord(outputSchema)
    ? "its outputSchema is not a JSON Schema object"
    : undefined
  return Object.freeze({
    name,
    description: typeof description === "string" ? description : undefined,
    inputSchema: isRecord(inputSchema) ? inputSchema : {},
    outputSchema: isRecord(outputSchema) ? outputSchema : undefined,
    readOnly: isRecord(annotations) && annotations.readOnlyHint === true,
    ...(isRecord(execution) && execution.taskSupport === "required" ? { taskOnly: true } : {}),
    ...(invalid === undefined ? {} : { invalid })
  })
}
