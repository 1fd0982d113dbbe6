/**
 * The studio's HTTP server on `node:http`: the JSON API of `api.ts`, its two Server-Sent Event
 * streams, the ingest endpoint application processes post their events to, and the front end's files.
 * It listens on 127.0.0.1 unless told otherwise, and checks Host, Origin and token on every request
 * (`security.ts`). A hand-written router: eleven routes do not need a framework, and the package gains
 * no runtime dependency for its studio.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import type {
  ApiError,
  ApprovalItem,
  DecisionInput,
  IngestBatch,
  RunDetail,
  RunSource,
  RunStatus,
  RunSummary,
  SessionDetail,
  SessionSummary,
  StoredEvent
} from "./api.ts"
import { type CatalogEntry, catalogOf } from "./catalog.ts"
import { DecisionRefused, StudioRunner, waitsInStudio } from "./runner.ts"
import { allowedHosts, newToken, refuseForeign, sameToken, tokenOf } from "./security.ts"
import { findUiDirectory, serveStatic } from "./static-files.ts"
import { isEventJson } from "../store/event-json.ts"
import { RunStore } from "../store/run-store.ts"
import { budgetTable, decisionsOf } from "../store/summarize.ts"
import type { StudioSessions } from "../collect/sessions.ts"
import { importTrace } from "../collect/trace-file.ts"
import { type DurableSource, DurableWatcher } from "../collect/durable-source.ts"

/**
 * Options of {@link startStudio}.
 *
 * @example
 * ```ts
 * const options: StudioOptions = { agents: { calculator }, port: 0, storeFile: ".effect-agent-studio/runs.jsonl" }
 * ```
 */
export interface StudioOptions {
  /** The module's exports (or any record): its agents and composites are what the studio can run. */
  readonly agents?: Readonly<Record<string, unknown>>
  /** The address to listen on (default `127.0.0.1`; anything else exposes the studio to the network). */
  readonly host?: string
  /** The port (default 4111, or the next free one up to 4130; 0 for any free port). */
  readonly port?: number
  /** The token every API call needs (default: a new random one). */
  readonly token?: string
  /** The JSON Lines file runs persist to (default: none, memory only; the CLI uses `.effect-agent-studio/runs.jsonl`). */
  readonly storeFile?: string
  /** Runs kept (default 1,000). */
  readonly maxRuns?: number
  /** Bytes of events kept (default 64 MiB). */
  readonly maxBytes?: number
  /** Sessions to browse. */
  readonly sessions?: StudioSessions
  /** Durable agents whose runs (and approval inbox) to show. */
  readonly durable?: DurableSource
  /** JSON Lines trace files to import at start. */
  readonly traces?: ReadonlyArray<string>
  /** The folder of the front end (default: found next to the package's code). */
  readonly uiDirectory?: string
  /**
   * The largest request body accepted, in bytes (default 8 MiB). A larger one is answered 413
   * (`BodyTooLarge`) once it is read to its end (up to 64 MiB past the limit; beyond, the connection is
   * closed), so a client still sending gets the answer rather than a reset connection.
   */
  readonly maxBodyBytes?: number
  /**
   * How often the live streams send a keep-alive comment, in milliseconds (default 15 s). The page
   * reads it from each stream's `x-studio-keep-alive-ms` header and counts a stream silent for 2.5
   * times as long as dropped.
   */
  readonly keepAliveMs?: number
}

/**
 * A running studio.
 *
 * @example
 * ```ts
 * const studio: Studio = await startStudio({ agents: { calculator } })
 * console.log(studio.url) // http://127.0.0.1:4111/?token=…
 * ```
 */
export interface Studio {
  /** The address to open, with the token: `http://127.0.0.1:4111/?token=…`. */
  readonly url: string
  /** The address without the token. */
  readonly origin: string
  readonly port: number
  readonly token: string
  readonly store: RunStore
  readonly agents: ReadonlyMap<string, CatalogEntry>
  /** Stops listening, interrupts the studio's runs and writes the store. */
  close(): Promise<void>
}

const json = (response: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body, (_, v) => (typeof v === "number" && !Number.isFinite(v) ? null : typeof v === "bigint" ? v.toString() : v))
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" })
  response.end(text)
}

const fail = (response: ServerResponse, status: number, error: string, message: string, details?: unknown) =>
  json(response, status, { error, message, ...(details === undefined ? {} : { details }) } satisfies ApiError)

class BodyRefused extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message)
  }
}

/**
 * How much of a body past the limit is read (and let go) before the 413 is answered. Node's server
 * closes the connection after answering a request whose body it has not read to the end, and a client
 * still sending then gets a reset connection instead of the answer; past this much more, it does.
 */
const drainedPastLimit = 64 * 1024 * 1024

const readBody = async (request: IncomingMessage, limit: number): Promise<string> => {
  const declared = Number(request.headers["content-length"] ?? Number.NaN)
  if (declared > limit + drainedPastLimit) throw new BodyRefused(413, "BodyTooLarge", `the body is larger than ${limit} bytes`)
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of request) {
    size += (chunk as Buffer).length
    if (size <= limit) chunks.push(chunk as Buffer)
    else if (size > limit + drainedPastLimit) break
  }
  if (size > limit) throw new BodyRefused(413, "BodyTooLarge", `the body is larger than ${limit} bytes`)
  return Buffer.concat(chunks).toString("utf8")
}

const readJson = async (request: IncomingMessage, limit: number): Promise<unknown> => {
  const text = await readBody(request, limit)
  try {
    return text === "" ? {} : JSON.parse(text)
  } catch (error) {
    throw new BodyRefused(400, "InvalidJson", `the body is not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
}

const statuses: ReadonlyArray<RunStatus> = ["running", "suspended", "completed", "failed", "cancelled"]

/**
 * Opens an SSE response; returns `send` and `end`. A comment every `keepAliveMs` keeps proxies from
 * closing an idle stream, and its header tells the page how soon a silent stream is a dead one.
 */
const openSse = (request: IncomingMessage, response: ServerResponse, keepAliveMs: number, onClose: () => void) => {
  response.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "x-studio-keep-alive-ms": String(keepAliveMs)
  })
  response.write(": effect-agent-studio\n\n")
  const keepAlive = setInterval(() => response.write(": ping\n\n"), keepAliveMs)
  keepAlive.unref()
  let closed = false
  const close = () => {
    if (closed) return
    closed = true
    clearInterval(keepAlive)
    onClose()
  }
  request.on("close", close)
  return {
    send: (data: unknown, id?: number, event?: string) => {
      if (closed) return
      response.write(`${event === undefined ? "" : `event: ${event}\n`}${id === undefined ? "" : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`)
    },
    end: () => {
      if (closed) return
      response.end()
      close()
    }
  }
}

/**
 * Starts a studio: loads nothing itself (give it a module's exports as `agents`), listens, and
 * answers the API of `api.ts`. The CLI `effect-agent-studio` is this plus module loading.
 *
 * @example
 * ```ts
 * const studio = await startStudio({ agents: await import("./agents.ts"), port: 0 })
 * console.log(studio.url)
 * await studio.close()
 * ```
 */
export const startStudio = async (options: StudioOptions = {}): Promise<Studio> => {
  const host = options.host ?? "127.0.0.1"
  const token = options.token ?? newToken()
  const maxBodyBytes = options.maxBodyBytes ?? 8 * 1024 * 1024
  const keepAliveMs = options.keepAliveMs ?? 15_000
  const catalog = catalogOf(options.agents ?? {})
  const byName = new Map([...catalog.values()].map((entry) => [entry.info.name, entry]))
  // Declared before the store, which asks it which durable runs wait; made once the store exists (a
  // durable run waiting when the studio starts is known from the watcher's first poll, which stores it again).
  let durable: DurableWatcher | undefined
  const store = new RunStore({
    file: options.storeFile,
    ...(options.maxRuns === undefined ? {} : { maxRuns: options.maxRuns }),
    ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
    // A run waiting for a decision is never evicted while it waits: its approval (and, for the
    // studio's own, the snapshot it resumes from after a restart) would be lost.
    isWaiting: (run, facts) => waitsInStudio(run.source, facts, byName) || (run.source === "durable" && durable?.isWaiting(run.runId) === true)
  })
  const runner = new StudioRunner(store)
  // Runs that waited for a decision when the studio last stopped wait again (their snapshots persist).
  runner.restore(catalog)
  const uiDirectory = findUiDirectory(options.uiDirectory)
  durable = options.durable === undefined ? undefined : new DurableWatcher(options.durable, store)
  for (const file of options.traces ?? []) importTrace(store, file)
  let hosts: ReadonlySet<string> = new Set()

  const summaryOf = (runId: string): RunSummary | undefined => {
    const run = store.get(runId)
    return run === undefined ? undefined : store.facts(run).summary
  }

  const detailOf = (runId: string): RunDetail | undefined => {
    const run = store.get(runId)
    if (run === undefined) return undefined
    const facts = store.facts(run)
    const limits = byName.get(facts.summary.agent)?.info.budgets
    return {
      summary: facts.summary,
      events: run.events,
      children: store.children(runId),
      budgets: budgetTable(facts, limits),
      requests: facts.requests,
      decisions: decisionsOf(run.events),
      ...(facts.input === undefined ? {} : { input: facts.input }),
      ...(facts.output === undefined ? {} : { output: facts.output })
    }
  }

  const approvals = (): ReadonlyArray<ApprovalItem> => {
    const items: Array<ApprovalItem> = runner.suspensions().map((held) => ({
      runId: held.runId,
      agent: held.entry.info.name,
      source: "studio" as RunSource,
      since: store.get(held.runId) === undefined ? held.since : (store.facts(store.get(held.runId)!).waitingSince ?? held.since),
      calls: held.pending.map((p) => ({
        callId: p.id,
        tool: p.tool,
        arguments: p.args,
        reason: p.reason,
        jsonSchema: held.entry.tools.get(p.tool)?.definition.parameters
      }))
    }))
    for (const wait of durable?.waiting() ?? []) items.push(wait)
    return items.sort((a, b) => a.since - b.since)
  }

  const routes = async (request: IncomingMessage, response: ServerResponse, url: URL, route: ReadonlyArray<string>): Promise<void> => {
    const method = request.method ?? "GET"
    // The methods of the routes whose shape the path has: a path that has some but not this method is
    // answered 405 with them in `Allow`, one that has none 404.
    const allowed = new Set<string>()
    const is = (m: string, ...shape: ReadonlyArray<string | null>) => {
      if (route.length !== shape.length || !shape.every((s, i) => s === null || s === route[i])) return false
      if (method === m) return true
      allowed.add(m)
      return false
    }

    if (is("GET", "agents")) return json(response, 200, [...catalog.values()].map((e) => e.info))
    if (is("POST", "agents", null, "runs")) {
      const entry = catalog.get(route[1]!)
      if (entry === undefined) return fail(response, 404, "NotFound", `no agent or composite is exported as "${route[1]}"`)
      const body = await readJson(request, maxBodyBytes) as { readonly input?: unknown }
      if (typeof body !== "object" || body === null || !("input" in body)) return fail(response, 400, "InvalidBody", "expected { input }")
      const decoded = entry.decodeInput(body.input)
      if ("issues" in decoded) return fail(response, 400, "InputInvalid", `the input does not match the input Schema of ${entry.info.name}`, decoded.issues)
      try {
        const runId = await runner.start(entry, decoded.value)
        return json(response, 200, { runId })
      } catch (error) {
        const tagged = error as { readonly _tag?: unknown; readonly message?: unknown }
        return fail(response, 400, typeof tagged?._tag === "string" ? tagged._tag : "RunFailed", String(tagged?.message ?? error))
      }
    }
    if (is("GET", "runs")) {
      const status = url.searchParams.get("status")
      const agent = url.searchParams.get("agent")
      const source = url.searchParams.get("source")
      const parent = url.searchParams.get("parent")
      const limitText = url.searchParams.get("limit")
      const limit = limitText === null ? 200 : Number(limitText)
      if (!Number.isInteger(limit) || limit <= 0) return fail(response, 400, "InvalidQuery", "limit must be a positive integer")
      const wanted = status === null || status === "" ? undefined : status.split(",")
      if (wanted !== undefined && wanted.some((s) => !statuses.includes(s as RunStatus))) {
        return fail(response, 400, "InvalidQuery", `status must be one of ${statuses.join(", ")}`)
      }
      const out: Array<RunSummary> = []
      const runs = store.runs()
      for (let i = runs.length - 1; i >= 0 && out.length < limit; i--) {
        const summary = store.facts(runs[i]!).summary
        if (wanted !== undefined && !wanted.includes(summary.status)) continue
        if (agent !== null && agent !== "" && summary.agent !== agent) continue
        if (source !== null && source !== "" && summary.source !== source) continue
        if (parent === "none" && summary.parentRunId !== undefined) continue
        out.push(summary)
      }
      return json(response, 200, out)
    }
    if (is("GET", "runs", null)) {
      const detail = detailOf(route[1]!)
      return detail === undefined ? fail(response, 404, "NotFound", `no run ${route[1]}`) : json(response, 200, detail)
    }
    if (is("GET", "runs", null, "stream")) {
      const runId = route[1]!
      const run = store.get(runId)
      if (run === undefined && !runner.isRunning(runId)) return fail(response, 404, "NotFound", `no run ${runId}`)
      const from = Number(request.headers["last-event-id"] ?? url.searchParams.get("lastEventId") ?? 0) || 0
      let stop = () => {}
      const sse = openSse(request, response, keepAliveMs, () => stop())
      let last = from
      const ended = () => {
        const summary = summaryOf(runId)
        return summary !== undefined && summary.status !== "running"
      }
      const deliver = (stored: StoredEvent) => {
        if (stored.id <= last) return
        last = stored.id
        sse.send(stored, stored.id)
        const tag = stored.event._tag
        if ((tag === "RunEnd" || tag === "CompositeEnd" || tag === "StudioStopped" || tag === "DurableStatus") && ended()) {
          sse.send({ runId, status: summaryOf(runId)?.status }, undefined, "end")
          sse.end()
        }
      }
      stop = store.onEvent(runId, deliver)
      for (const stored of store.get(runId)?.events ?? []) deliver(stored)
      if (ended() && last === (store.get(runId)?.events.at(-1)?.id ?? 0)) {
        sse.send({ runId, status: summaryOf(runId)?.status }, undefined, "end")
        sse.end()
      }
      return
    }
    if (is("POST", "runs", null, "stop")) {
      const runId = route[1]!
      if (runner.stop(runId)) return json(response, 202, { runId })
      if (durable !== undefined && await durable.cancel(runId)) return json(response, 202, { runId })
      const summary = summaryOf(runId)
      if (summary === undefined) return fail(response, 404, "NotFound", `no run ${runId}`)
      return fail(response, 409, "NotStoppable", summary.status === "running"
        ? `run ${runId} runs in another process (${summary.source}): stop it there`
        : `run ${runId} is not running (${summary.status})`)
    }
    if (is("GET", "approvals")) return json(response, 200, approvals())
    if (is("POST", "approvals", null)) {
      const runId = route[1]!
      const body = await readJson(request, maxBodyBytes) as { readonly decisions?: unknown; readonly decidedBy?: unknown }
      const decisions = body?.decisions
      const valid = Array.isArray(decisions) && decisions.length > 0 && decisions.every((d: any) =>
        typeof d === "object" && d !== null && typeof d.callId === "string" &&
        (d.decision === "approve" || d.decision === "deny" || d.decision === "edit") &&
        (d.reason === undefined || typeof d.reason === "string") &&
        (d.decision !== "edit" || "arguments" in d)
      ) && new Set(decisions.map((d: { readonly callId: string }) => d.callId)).size === decisions.length
      if (!valid) {
        return fail(response, 400, "InvalidBody", 'expected { decisions: [{ callId, decision: "approve" | "deny" | "edit", reason?, arguments? }], decidedBy? }, one decision per call')
      }
      const decidedBy = typeof body.decidedBy === "string" && body.decidedBy.trim() !== "" ? body.decidedBy.slice(0, 200) : "studio"
      try {
        if (runner.held(runId) !== undefined) await runner.decide(runId, decisions as ReadonlyArray<DecisionInput>, decidedBy)
        else if (durable !== undefined && durable.isWaiting(runId)) await durable.decide(runId, decisions as ReadonlyArray<DecisionInput>, decidedBy)
        else return fail(response, 404, "NotWaiting", `run ${runId} does not wait for a decision this studio can give`)
      } catch (error) {
        if (error instanceof DecisionRefused) return fail(response, error.status, error.code, error.message, error.details)
        throw error
      }
      return json(response, 200, { runId })
    }
    if (is("GET", "sessions")) {
      const sessions = options.sessions
      if (sessions === undefined) return json(response, 200, [])
      const ids = await sessions.list()
      const out: Array<SessionSummary> = []
      for (const item of ids) {
        const id = typeof item === "string" ? item : item.id
        const messages = await Effect.runPromise(sessions.store.load(id))
        const waiting = sessions.store.waiting === undefined ? undefined : await Effect.runPromise(sessions.store.waiting(id))
        out.push({ id, updatedAt: typeof item === "string" ? undefined : item.updatedAt, messages: messages.length, waiting: waiting !== undefined })
      }
      return json(response, 200, out.sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0)))
    }
    if (is("GET", "sessions", null)) {
      const sessions = options.sessions
      if (sessions === undefined) return fail(response, 404, "NotFound", "no session store is configured")
      const id = route[1]!
      const messages = await Effect.runPromise(sessions.store.load(id))
      const waiting = sessions.store.waiting === undefined ? undefined : await Effect.runPromise(sessions.store.waiting(id))
      return json(response, 200, { id, messages, ...(waiting === undefined ? {} : { waiting }) } satisfies SessionDetail)
    }
    if (is("GET", "events")) {
      let stop = () => {}
      const sse = openSse(request, response, keepAliveMs, () => stop())
      stop = store.onChange((change) => sse.send(change))
      return
    }
    if (is("POST", "ingest")) {
      const body = await readJson(request, maxBodyBytes) as IngestBatch
      if (typeof body !== "object" || body === null || !Array.isArray(body.events)) return fail(response, 400, "InvalidBody", "expected { events: [{ at, event }] }")
      let accepted = 0
      for (const item of body.events) {
        if (typeof item !== "object" || item === null || !isEventJson(item.event)) continue
        const at = typeof item.at === "number" && Number.isFinite(item.at) ? item.at : Date.now()
        if (store.append("ingest", at, item.event) !== undefined) accepted += 1
      }
      return json(response, 202, { accepted })
    }
    if (is("POST", "import")) {
      const text = await readBody(request, maxBodyBytes)
      let jsonl = text
      if ((request.headers["content-type"] ?? "").includes("application/json")) {
        try {
          const parsed = JSON.parse(text) as { readonly jsonl?: unknown }
          if (typeof parsed?.jsonl !== "string") return fail(response, 400, "InvalidBody", "expected { jsonl: string } or JSON Lines text")
          jsonl = parsed.jsonl
        } catch {
          return fail(response, 400, "InvalidJson", "the body is not JSON")
        }
      }
      return json(response, 200, importTrace(store, { text: jsonl }))
    }
    if (allowed.size > 0) {
      response.setHeader("allow", [...allowed].join(", "))
      return fail(response, 405, "MethodNotAllowed", `${url.pathname} accepts ${[...allowed].join(", ")}, not ${method}`)
    }
    return fail(response, 404, "NotFound", `no route ${method} ${url.pathname}`)
  }

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const foreign = refuseForeign(request, hosts, host === "0.0.0.0" || host === "::")
    if (foreign !== undefined) return fail(response, 403, "Forbidden", foreign)
    let url: URL
    let route: ReadonlyArray<string>
    try {
      url = new URL(request.url ?? "/", "http://studio.invalid")
      route = url.pathname.split("/").filter((p) => p !== "").map((p) => decodeURIComponent(p)).slice(1)
    } catch {
      return fail(response, 400, "InvalidPath", "the request's path is not a valid URL path")
    }
    if (url.pathname.startsWith("/api/") || url.pathname === "/api") {
      if (!sameToken(tokenOf(request, url), token)) {
        return fail(response, 401, "Unauthorized", "this studio needs its token: open the URL it printed (…/?token=…) or send Authorization: Bearer <token>")
      }
      try {
        return await routes(request, response, url, route)
      } catch (error) {
        if (error instanceof BodyRefused) return fail(response, error.status, error.code, error.message)
        if (!response.headersSent) return fail(response, 500, "InternalError", error instanceof Error ? error.message : String(error))
        response.end()
        return
      }
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.setHeader("allow", "GET, HEAD")
      return fail(response, 405, "MethodNotAllowed", "only GET outside /api/")
    }
    // No token cookie: cookies are not kept apart by port, so every other server on this host would
    // receive it. The page keeps the token for its tab and sends it as `Authorization: Bearer`.
    const headers = {
      "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
      "x-frame-options": "DENY",
      "referrer-policy": "no-referrer"
    }
    if (!serveStatic(uiDirectory, url.pathname, response, headers)) fail(response, 404, "NotFound", `no file ${url.pathname}`)
  }

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      if (!response.headersSent) fail(response, 500, "InternalError", error instanceof Error ? error.message : String(error))
      else response.end()
    })
  })
  const port = await listen(server, host, options.port)
  hosts = allowedHosts(host, port)
  durable?.start()
  const shown = host.includes(":") ? `[${host}]` : host
  const origin = `http://${shown}:${port}`
  return {
    url: `${origin}/?token=${token}`,
    origin,
    port,
    token,
    store,
    agents: catalog,
    close: async () => {
      durable?.stop()
      await runner.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await durable?.dispose()
      store.flush()
    }
  }
}

/** Listens on `port`, or on the first free port from 4111 to 4130 when none is given. */
const listen = async (server: Server, host: string, port: number | undefined): Promise<number> => {
  const tries = port === undefined ? Array.from({ length: 20 }, (_, i) => 4111 + i) : [port]
  let lastError: unknown
  for (const candidate of tries) {
    try {
      await new Promise<void>((resolve, reject) => {
        const onError = (error: unknown) => {
          server.off("listening", onListening)
          reject(error)
        }
        const onListening = () => {
          server.off("error", onError)
          resolve()
        }
        server.once("error", onError)
        server.once("listening", onListening)
        server.listen(candidate, host)
      })
      return (server.address() as AddressInfo).port
    } catch (error) {
      lastError = error
      if ((error as { code?: unknown }).code !== "EADDRINUSE") throw error
    }
  }
  throw lastError
}
