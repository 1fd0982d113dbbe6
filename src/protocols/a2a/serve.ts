/**
 * An agent (or any runnable: a composite) served as an A2A agent on a loopback (or any) HTTP address, with the official SDK's
 * request handler and Express handlers: the Agent Card at `/.well-known/agent-card.json`, JSON-RPC at
 * `/a2a/jsonrpc` speaking A2A 1.0 (`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`)
 * and, through the SDK's compatibility layer, v0.3 (`message/send`, `message/stream`, `tasks/get`,
 * `tasks/cancel`). A `bearer` check guards the JSON-RPC endpoint (the card stays public and declares
 * the scheme): a request without an accepted `Authorization: Bearer <token>` gets HTTP 401. A task
 * takes one message at a time (another one while its run is in flight is refused with -32004), and a
 * streaming client that disconnects before its task settles cancels it.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { AgentCard, SendMessageRequest, StreamResponse } from "@a2a-js/sdk"
import { RequestMalformedError } from "@a2a-js/sdk/errors"
import { DefaultRequestHandler, InMemoryTaskStore, type ServerCallContext, STATE_HEADERS_KEY, type TaskStore } from "@a2a-js/sdk/server"
import type * as ExpressHandlers from "@a2a-js/sdk/server/express"
import type express from "express"
import { type AgentDefinition, AgentDefinitionKey, definitionOf } from "../../dsl/agent-definition.ts"
import { AgentConfigError } from "../../errors.ts"
import { type AnyRunnable, isRunnable } from "../../compose/runnable.ts"
import { agentCardOf, type AgentCardOptions, type CardSource } from "./agent-card.ts"
import { agentExecutor, runnableDriver, type TaskExecutor, taskExecutor, type TaskExecutorOptions, taskIsRunning } from "./task-executor.ts"
import { isSettledState } from "./task-state.ts"
import { isRecord } from "../../internal/is-record.ts"

/** An agent that can be served: anything built by `agent(...)` with a model. */
export interface A2aServableAgent {
  readonly name: string
  readonly [AgentDefinitionKey]: AgentDefinition
}

/** What `serveA2a` serves: an agent, or any runnable (a composite such as `pipeline(...)`). */
export type A2aServable = A2aServableAgent | AnyRunnable

/** Options of {@link serveA2a}. */
export interface ServeA2aOptions extends Omit<AgentCardOptions, "url" | "bearer">, TaskExecutorOptions {
  /** Default "127.0.0.1". */
  readonly host?: string
  /** Default 0: any free port (read it from `url`). */
  readonly port?: number
  /**
   * The base URL clients reach the server at, for the card (default: the bound address). Set it when
   * the server is behind a proxy or bound to all interfaces (`host: "0.0.0.0"`).
   */
  readonly publicUrl?: string
  /**
   * Accepts or refuses a bearer token (the card then declares the `bearer` scheme). Without it the
   * endpoint is open: bind it to loopback, or put your own authentication in front.
   */
  readonly bearer?: (token: string) => boolean | Promise<boolean>
  /**
   * Where tasks are kept (default: in memory, forgotten when the server stops). `sqlTaskStore()` keeps
   * them in PostgreSQL or PGlite; with sessions on SQL too (`sessions`), a task waiting for input is
   * answered, and resumed, after a restart.
   */
  readonly taskStore?: TaskStore
}

/** A running A2A server. */
export interface A2aServer {
  /** The base URL (`http://127.0.0.1:<port>`, or `publicUrl`): clients read the card from it. */
  readonly url: string
  /** The JSON-RPC endpoint. */
  readonly endpoint: string
  readonly card: AgentCard
  /** Runs in flight. */
  readonly running: () => number
  /**
   * Stops accepting requests, interrupts every run in flight (streamed or blocking: their tasks end
   * canceled) and closes open connections; resolves once those runs have ended, so nothing of them runs after.
   */
  readonly close: () => Promise<void>
}

/** The id of the task a streamed event is about. */
const taskIdOf = (event: StreamResponse): string | undefined => {
  const payload = event.payload
  if (payload === undefined) return undefined
  return payload.$case === "task" ? payload.value.id : payload.value.taskId || undefined
}

/** True for an event after which a stream has nothing more to wait for (a settled task, or a direct message). */
const settles = (event: StreamResponse): boolean => {
  const payload = event.payload
  if (payload?.$case === "message") return true
  const state = payload?.$case === "task" ? payload.value.status?.state : payload?.$case === "statusUpdate" ? payload.value.status?.state : undefined
  return isSettledState(state)
}

/**
 * The SDK's request handler, with the borders it leaves open closed before anything starts:
 * - a message whose parts or decisions do not fit is refused with the invalid-params error (-32602),
 *   as is a `taskId` that is not a string, instead of a failed task;
 * - a message on a task whose run is in flight (or that another message is resuming at this moment)
 *   is refused with the unsupported-operation error (-32004) before the SDK records it in the task's
 *   history: the handler takes the executor's claim on the task (`execute` refuses the same messages,
 *   under any handler) for as long as the call lasts;
 * - a streaming client whose connection drops before its task settles cancels the task: the run is
 *   interrupted (`dropped` says when the HTTP response of a call closed before it ended).
 */
class CheckingRequestHandler extends DefaultRequestHandler {
  readonly #executor: TaskExecutor
  readonly #store: TaskStore
  readonly #dropped: (context: ServerCallContext) => AbortSignal | undefined
  constructor(card: AgentCard, store: TaskStore, executor: TaskExecutor, dropped: (context: ServerCallContext) => AbortSignal | undefined) {
    super(card, store, executor)
    this.#executor = executor
    this.#store = store
    this.#dropped = dropped
  }
  /** Checks `params` and claims its task, if it names one; gives what releases the claim. */
  async #admit(params: SendMessageRequest, context: ServerCallContext): Promise<() => void> {
    const message = params.message
    if (message === undefined || message === null) return () => undefined
    const taskId: unknown = message.taskId
    if (taskId !== undefined && taskId !== null && typeof taskId !== "string") throw new RequestMalformedError("message.taskId must be a string")
    if (typeof taskId !== "string" || taskId === "") {
      const reason = await this.#executor.check(message)
      if (reason !== undefined) throw new RequestMalformedError(reason)
      return () => undefined
    }
    // The claim is this call's: `execute` runs the message under it, as the SDK hands it this `context`.
    const release = this.#executor.claim(taskId, context)
    if (release === undefined) throw taskIsRunning(taskId)
    try {
      const task = await this.#store.load(taskId, context)
      const state = task?.status?.state
      // Only a task waiting for input takes a message; the SDK refuses one on a settled task itself.
      if (task !== undefined && !isSettledState(state)) throw taskIsRunning(taskId)
      const reason = await this.#executor.check(message, task)
      if (reason !== undefined) throw new RequestMalformedError(reason)
      return release
    } catch (error) {
      release()
      throw error
    }
  }
  override async sendMessage(params: SendMessageRequest, context: ServerCallContext) {
    const release = await this.#admit(params, context)
    try {
      return await super.sendMessage(params, context)
    } finally {
      release()
    }
  }
  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext) {
    const release = await this.#admit(params, context)
    const dropped = this.#dropped(context)
    let taskId: string | undefined = params.message?.taskId || undefined
    let settled = false
    let canceled = false
    const cancel = () => {
      if (settled || canceled || taskId === undefined) return
      canceled = true
      this.cancelTask({ tenant: params.tenant ?? "", id: taskId, metadata: undefined }, context).catch(() => undefined)
    }
    dropped?.addEventListener("abort", cancel)
    try {
      for await (const event of super.sendMessageStream(params, context)) {
        taskId ??= taskIdOf(event)
        if (settles(event)) settled = true
        else if (dropped?.aborted === true) cancel()
        yield event
      }
    } finally {
      dropped?.removeEventListener("abort", cancel)
      release()
    }
  }
}

/**
 * The SDK's Express handlers and Express itself, imported when a server starts: a client of this entry
 * (`a2aAgent`, `a2aRemoteAgent`) needs neither, and `express` is an optional peer for the server only.
 */
const expressParts = async (): Promise<typeof ExpressHandlers & { readonly express: typeof express }> => {
  try {
    const [handlers, imported] = await Promise.all([import("@a2a-js/sdk/server/express"), import("express")])
    return { ...handlers, express: imported.default }
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code
    if (code === "ERR_MODULE_NOT_FOUND" && /['"]express['"]/.test(String((error as { message?: unknown }).message))) {
      throw new AgentConfigError({
        subject: "serveA2a",
        reason: `it needs the package "express", an optional peer dependency of effect-agent-dsl for the A2A server only: npm install express`
      })
    }
    throw error
  }
}

/** The JSON-RPC methods that carry a message, in A2A 1.0 and v0.3. */
const messageMethods = new Set(["SendMessage", "SendStreamingMessage", "message/send", "message/stream"])

/**
 * A message's `taskId` or `contextId` that is not a string, refused with the invalid-params error
 * (-32602) before the SDK reads the request: its 1.0 binding makes a string of any value (an object
 * becomes the task id "[object Object]") and its v0.3 binding keeps an object as a context id.
 */
const malformedIds = (body: unknown): string | undefined => {
  if (!isRecord(body) || !messageMethods.has(body.method as string) || !isRecord(body.params) || !isRecord(body.params.message)) return undefined
  const message = body.params.message
  for (const key of ["taskId", "contextId"]) {
    const value = message[key]
    if (value !== undefined && value !== null && typeof value !== "string") return `message.${key} must be a string`
  }
  return undefined
}

/** Path of the JSON-RPC endpoint under the base URL. */
export const jsonRpcPath = "/a2a/jsonrpc"

/**
 * Serves `agent` over A2A until `close()`.
 *
 * @example
 * ```ts
 * const server = await serveA2a(helper, { port: 4100, bearer: (token) => token === process.env.A2A_TOKEN })
 * console.log(`card at ${server.url}/.well-known/agent-card.json`)
 * ```
 */
export const serveA2a = async (agent: A2aServable, options: ServeA2aOptions = {}): Promise<A2aServer> => {
  const isAgent = typeof agent === "object" && agent !== null && AgentDefinitionKey in agent
  if (!isAgent && !isRunnable(agent)) {
    throw new AgentConfigError({ subject: "serveA2a", reason: "it serves an agent built with agent(...) or a runnable such as a composite" })
  }
  const definition: CardSource = isAgent
    ? definitionOf(agent as A2aServableAgent)
    : { name: agent.name, prompt: undefined, input: undefined, output: undefined, skills: [], tools: [] }
  const server: Server = createServer()
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve())
  })
  const address = server.address() as AddressInfo
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address
  const url = (options.publicUrl ?? `http://${host}:${address.port}`).replace(/\/+$/, "")
  const card = agentCardOf(definition, {
    url: `${url}${jsonRpcPath}`,
    ...(options.description === undefined ? {} : { description: options.description }),
    ...(options.version === undefined ? {} : { version: options.version }),
    ...(options.provider === undefined ? {} : { provider: options.provider }),
    bearer: options.bearer !== undefined
  })
  const store = options.taskStore ?? new InMemoryTaskStore()
  // The handler refuses before the SDK records a message; the executor, given the store, takes back one it refuses later.
  const executor = isAgent
    ? agentExecutor(definitionOf(agent as A2aServableAgent), { ...options, taskStore: store })
    : taskExecutor(runnableDriver(agent as AnyRunnable), { taskStore: store })
  // Each JSON-RPC call's HTTP response, by its request's headers (the SDK keeps them in the call's
  // context): aborted when the response closes before it ended, so a dropped stream cancels its task.
  const responses = new WeakMap<object, AbortSignal>()
  const dropped = (context: ServerCallContext): AbortSignal | undefined => {
    const headers: unknown = context.state.get(STATE_HEADERS_KEY)
    return typeof headers === "object" && headers !== null ? responses.get(headers) : undefined
  }
  const handler = new CheckingRequestHandler(card, store, executor, dropped)
  const { agentCardHandler, express, jsonRpcHandler, UserBuilder } = await expressParts()
  const app = express()
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: true } }))
  const check = options.bearer
  if (check !== undefined) {
    app.use(jsonRpcPath, (req, res, next) => {
      const header = req.headers.authorization
      const token = typeof header === "string" && /^bearer /i.test(header) ? header.slice(7).trim() : undefined
      Promise.resolve(token === undefined ? false : check(token)).then(
        (ok) => (ok === true ? next() : void res.status(401).set("WWW-Authenticate", "Bearer").json({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "unauthorized: a bearer token is required" } })),
        (error) => next(error)
      )
    })
  }
  app.use(jsonRpcPath, (req, res, next) => {
    const closed = new AbortController()
    res.once("close", () => {
      if (!res.writableFinished) closed.abort()
    })
    responses.set(req.headers, closed.signal)
    next()
  })
  // The body read as the SDK reads it (`express.json()`, whose parse the SDK's own then skips), to
  // check what its bindings would change before it reads them; a body that is not JSON is answered
  // as the SDK answers it (-32700).
  app.use(jsonRpcPath, express.json(), (error: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (error instanceof SyntaxError && "body" in error) return void res.status(200).json({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Invalid JSON payload." } })
    next(error)
  }, (req: express.Request, res: express.Response, next: express.NextFunction) => {
    const refusal = malformedIds(req.body)
    if (refusal === undefined) return next()
    const id: unknown = isRecord(req.body) ? req.body.id : undefined
    res.status(200).json({ jsonrpc: "2.0", id: typeof id === "string" || typeof id === "number" ? id : null, error: { code: -32602, message: refusal } })
  })
  app.use(jsonRpcPath, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }))
  // Anything that fails outside the SDK's own JSON-RPC answers (a bearer check that throws, a body
  // over the body parser's limit) answers a JSON-RPC error, never Express's page with a stack trace.
  app.use((error: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
    if (res.headersSent) return next(error)
    const status = typeof (error as { status?: unknown })?.status === "number" ? (error as { status: number }).status : 500
    const message = status === 413
      ? "the request body is too large for this server"
      : status >= 500 ? "internal error" : "the request could not be read"
    res.status(status).json({ jsonrpc: "2.0", id: null, error: { code: status >= 500 ? -32603 : -32600, message } })
  })
  server.on("request", app)
  return {
    url,
    endpoint: `${url}${jsonRpcPath}`,
    card,
    running: executor.running,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      // The runs in flight end (their tasks canceled) before their connections close and `close` resolves.
      await executor.interrupt()
      server.closeAllConnections()
      await closed
    }
  }
}
