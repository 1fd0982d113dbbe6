/**
 * A stand-in for the studio's server, for the front end's browser tests and for working on the UI
 * without the real backend: it serves `src/studio/ui/public/` and implements the HTTP API contract
 * (`src/studio/ui/api-types.ts`) over canned data, with scripted live runs that stream their events
 * over SSE, approvals that resume a run, a token on every API call, and a switch to load a huge run.
 *
 *   npx tsx test/studio/ui/fixture-server.ts     # prints a URL to open
 */
import { readFile } from "node:fs/promises"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { extname, join, normalize, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import type { AgentInfo, DecisionRecord, PendingApproval, RunDetail, RunSummary, SessionDetail, StoredEvent } from "../../../src/studio/ui/api-types.ts"

export const publicDir = resolve(fileURLToPath(import.meta.url), "../../../../src/studio/ui/public")

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png"
}

const transferSchema = {
  type: "object",
  properties: {
    to: { type: "string", minLength: 1, description: "Account to credit" },
    amount: { type: "number", exclusiveMinimum: 0, maximum: 10000 },
    currency: { type: "string", enum: ["EUR", "USD"] },
    note: { type: "string" }
  },
  required: ["to", "amount", "currency"],
  additionalProperties: false
}
const addSchema = {
  type: "object",
  properties: { a: { type: "number", description: "left" }, b: { type: "number" } },
  required: ["a", "b"],
  additionalProperties: false
}

export const agents: ReadonlyArray<AgentInfo> = [
  {
    id: "calculator",
    name: "calculator",
    kind: "agent",
    description: "Adds numbers and moves money when a human agrees.",
    model: "scripted",
    budgets: { maxTurns: 5, maxToolCalls: 10 },
    skills: [
      { name: "compute", description: "Perform calculations", tools: ["add"] },
      { name: "pay", description: "Transfer money", tools: ["transfer"] }
    ],
    tools: [
      { name: "add", description: "Add two numbers", jsonSchema: addSchema, effect: "readOnly", approval: "never" },
      { name: "transfer", description: "Send money to an account", jsonSchema: transferSchema, effect: "mutating", approval: "always" }
    ],
    inputJsonSchema: { type: "string" }
  },
  {
    id: "research",
    name: "research",
    kind: "composite",
    description: "A pipeline: a planner then a writer.",
    model: "scripted",
    budgets: { maxTurns: 12 },
    skills: [],
    tools: [],
    inputJsonSchema: {
      type: "object",
      properties: { topic: { type: "string", minLength: 3 }, depth: { type: "integer", minimum: 1, maximum: 5 }, draft: { type: "boolean" } },
      required: ["topic", "depth"],
      additionalProperties: false
    }
  }
]

interface Run {
  summary: RunSummary
  events: Array<StoredEvent>
  children: Array<string>
  budgets: RunDetail["budgets"]
  requests: RunDetail["requests"]
  pending?: PendingApproval | undefined
  decisions: Array<DecisionRecord>
  listeners: Set<(event: StoredEvent | "end") => void>
  timers: Array<ReturnType<typeof setTimeout>>
}

const usage = (input: number, output: number) => ({ inputTokens: input, outputTokens: output })

/** The events of a calculator run that adds 3 and 5 then answers; `texts` are its streamed deltas. */
export const calculatorScript = (runId: string, input: string): Array<Record<string, unknown>> => {
  const base = { agent: "calculator", runId }
  const system = { role: "system", content: "You are a calculator. Use the tools." }
  const user = { role: "user", content: input }
  const call = { id: "call-add-1", name: "add", arguments: "{\"a\":3,\"b\":5}" }
  const tools = [{ type: "function", name: "add", description: "Add two numbers", parameters: addSchema }]
  return [
    { _tag: "RunStart", ...base, input },
    { _tag: "SkillChosen", ...base, skill: "compute", how: "model" },
    { _tag: "Turn", ...base, skill: "compute", turn: 1 },
    { _tag: "ModelCall", ...base, skill: "compute", turn: 1, request: { messages: [system, user], tools } },
    { _tag: "ReasoningDelta", ...base, skill: "compute", turn: 1, delta: "I should add " },
    { _tag: "ReasoningDelta", ...base, skill: "compute", turn: 1, delta: "the numbers." },
    { _tag: "ToolCallStart", ...base, skill: "compute", turn: 1, index: 0, tool: "add" },
    { _tag: "ToolCallDelta", ...base, skill: "compute", turn: 1, index: 0, delta: "{\"a\":3," },
    { _tag: "ToolCallDelta", ...base, skill: "compute", turn: 1, index: 0, delta: "\"b\":5}" },
    { _tag: "ModelResponse", ...base, skill: "compute", turn: 1, durationMs: 420, response: { _tag: "ToolCalls", calls: [call], usage: usage(120, 18), finishReason: "tool-calls" } },
    { _tag: "ToolUse", ...base, skill: "compute", turn: 1, tool: "add", toolCallId: "call-add-1", args: { a: 3, b: 5 }, result: 8, durationMs: 3, validated: true, mode: undefined },
    { _tag: "Turn", ...base, skill: "compute", turn: 2 },
    { _tag: "ModelCall", ...base, skill: "compute", turn: 2, request: { messages: [system, user, { role: "assistant", content: "", toolCalls: [call] }, { role: "tool", toolCallId: "call-add-1", name: "add", content: "8" }], tools } },
    { _tag: "TextDelta", ...base, skill: "compute", turn: 2, delta: "The answer " },
    { _tag: "TextDelta", ...base, skill: "compute", turn: 2, delta: "is " },
    { _tag: "TextDelta", ...base, skill: "compute", turn: 2, delta: "16." },
    { _tag: "ModelResponse", ...base, skill: "compute", turn: 2, durationMs: 310, response: { _tag: "Text", content: "The answer is 16.", usage: usage(160, 9), finishReason: "stop" } },
    { _tag: "RunEnd", ...base, outcome: { _tag: "Success", output: "The answer is 16." }, turns: 2, toolCalls: 1, durationMs: 900 }
  ]
}

/** Options of the fixture server. */
export interface FixtureOptions {
  /** The token every API call must carry. */
  readonly token?: string
  /** Milliseconds between two streamed events of a scripted run. */
  readonly stepMs?: number
}

/** A running fixture server. */
export interface FixtureServer {
  readonly url: string
  readonly token: string
  /** The URL a user opens (with the token). */
  readonly openUrl: string
  readonly runs: Map<string, Run>
  /** Tools that ran after an approval, in order: a denied call never appears here. */
  readonly executed: Array<{ runId: string; tool: string; args: unknown }>
  readonly decisions: Array<{ runId: string; body: unknown }>
  /** Adds a stored run (and announces it on /api/events). */
  readonly addRun: (summary: RunSummary, events: ReadonlyArray<Record<string, unknown>>, extra?: Partial<Pick<Run, "children" | "budgets" | "requests">>) => void
  /** Starts a scripted calculator run, as `POST /api/agents/calculator/runs` does. */
  readonly startRun: (agentId: string, input: unknown, stepMs?: number) => string
  /** Adds a run suspended on a `transfer` call waiting for approval. */
  readonly addSuspendedRun: (args?: unknown) => string
  readonly close: () => Promise<void>
}

/**
 * Starts the fixture server on 127.0.0.1 and a free port.
 *
 * @example
 * const server = await startFixtureServer({ token: "t" })
 * await page.goto(server.openUrl)
 */
export const startFixtureServer = async (options: FixtureOptions = {}): Promise<FixtureServer> => {
  const token = options.token ?? "fixture-token"
  const stepMs = options.stepMs ?? 40
  const runs = new Map<string, Run>()
  const executed: FixtureServer["executed"] = []
  const decisions: FixtureServer["decisions"] = []
  const changeListeners = new Set<(change: { type: "run" | "approval"; runId: string }) => void>()
  let counter = 0
  const announce = (type: "run" | "approval", runId: string) => {
    for (const listener of changeListeners) listener({ type, runId })
  }

  const push = (run: Run, event: Record<string, unknown>) => {
    const stored: StoredEvent = { id: run.events.length + 1, at: Date.now(), event: event as StoredEvent["event"] }
    run.events.push(stored)
    for (const listener of run.listeners) listener(stored)
    if (event._tag === "RunEnd") {
      const outcome = (event.outcome as { _tag: string })._tag
      run.summary = {
        ...run.summary,
        status: outcome === "Success" ? "completed" : outcome === "Suspended" ? "suspended" : outcome === "Interrupted" ? "cancelled" : "failed",
        endedAt: stored.at,
        durationMs: Date.now() - run.summary.startedAt,
        turns: Number(event.turns ?? run.summary.turns)
      }
      for (const listener of run.listeners) listener("end")
      announce("run", run.summary.runId)
    }
    if (event._tag === "ModelResponse") {
      const response = event.response as { usage?: { inputTokens: number; outputTokens: number } }
      const tokens = run.summary.tokens
      if (response.usage !== undefined) {
        const input = tokens.input + response.usage.inputTokens
        const output = tokens.output + response.usage.outputTokens
        run.summary = { ...run.summary, tokens: { input, output, total: input + output } }
      }
      const turns = Number(event.turn ?? 0)
      run.summary = { ...run.summary, turns: Math.max(run.summary.turns, turns) }
      run.budgets = { ...run.budgets, turns: { limit: 5, used: run.summary.turns }, tokens: { limit: 2000, used: run.summary.tokens.total } }
    }
  }

  const newRun = (agent: string, status: RunSummary["status"], source: RunSummary["source"] = "studio"): Run => {
    counter += 1
    const runId = `run-${String(counter).padStart(4, "0")}-${Math.random().toString(36).slice(2, 8)}`
    const run: Run = {
      summary: { runId, agent, status, source, startedAt: Date.now(), turns: 0, tokens: { input: 0, output: 0, total: 0 } },
      events: [],
      decisions: [],
      children: [],
      budgets: { turns: { limit: 5, used: 0 } },
      requests: [],
      listeners: new Set(),
      timers: []
    }
    runs.set(runId, run)
    return run
  }

  const startRun = (agentId: string, input: unknown, runStepMs = stepMs): string => {
    const run = newRun(agentId, "running")
    const script = calculatorScript(run.summary.runId, typeof input === "string" ? input : JSON.stringify(input))
    if (agentId !== "calculator") {
      for (const event of script) event.agent = agentId
    }
    announce("run", run.summary.runId)
    script.forEach((event, index) => {
      run.timers.push(setTimeout(() => {
        if (run.summary.status !== "running") return
        push(run, event)
      }, runStepMs * (index + 1)))
    })
    return run.summary.runId
  }

  const addSuspendedRun = (args: unknown = { to: "ACME-42", amount: 120, currency: "EUR" }): string => {
    const run = newRun("calculator", "suspended")
    const base = { agent: "calculator", runId: run.summary.runId }
    const call = { id: `call-transfer-${counter}`, name: "transfer", arguments: args }
    const events: Array<Record<string, unknown>> = [
      { _tag: "RunStart", ...base, input: "pay ACME 120 EUR" },
      { _tag: "SkillChosen", ...base, skill: "pay", how: "predicate" },
      { _tag: "Turn", ...base, skill: "pay", turn: 1 },
      { _tag: "ModelCall", ...base, skill: "pay", turn: 1, request: { messages: [{ role: "system", content: "You move money." }, { role: "user", content: "pay ACME 120 EUR" }], tools: [{ name: "transfer" }] } },
      { _tag: "ModelResponse", ...base, skill: "pay", turn: 1, durationMs: 250, response: { _tag: "ToolCalls", calls: [call], usage: usage(80, 20) } },
      { _tag: "ApprovalRequested", ...base, skill: "pay", turn: 1, calls: [{ id: call.id, tool: "transfer", args }] },
      { _tag: "RunEnd", ...base, outcome: { _tag: "Suspended", pending: [{ id: call.id, tool: "transfer", args }], snapshot: {} }, turns: 1, toolCalls: 0, durationMs: 260 }
    ]
    for (const event of events) push(run, event)
    run.pending = {
      runId: run.summary.runId,
      agent: "calculator",
      source: "studio",
      since: Date.now(),
      calls: [{ callId: call.id, tool: "transfer", arguments: args, reason: undefined, jsonSchema: transferSchema }]
    }
    announce("approval", run.summary.runId)
    return run.summary.runId
  }

  const addRun: FixtureServer["addRun"] = (summary, events, extra = {}) => {
    const run: Run = {
      summary,
      events: events.map((event, index) => ({ id: index + 1, at: summary.startedAt + index * 5, event: event as StoredEvent["event"] })),
      decisions: [],
      children: extra.children ?? [],
      budgets: extra.budgets ?? {},
      requests: extra.requests ?? [],
      listeners: new Set(),
      timers: []
    }
    runs.set(summary.runId, run)
    announce("run", summary.runId)
  }

  // Canned history: a completed run, a failed one, a composite with two children.
  const seeded = newRun("calculator", "completed")
  for (const event of calculatorScript(seeded.summary.runId, "What is (3 + 5) * 2?")) push(seeded, event)
  const failed = newRun("calculator", "failed", "ingest")
  {
    const base = { agent: "calculator", runId: failed.summary.runId }
    push(failed, { _tag: "RunStart", ...base, input: "divide by zero" })
    push(failed, { _tag: "Turn", ...base, skill: "compute", turn: 1 })
    push(failed, { _tag: "ModelCall", ...base, skill: "compute", turn: 1, request: { messages: [{ role: "user", content: "divide by zero" }], tools: [{ name: "add" }] } })
    push(failed, { _tag: "ModelResponse", ...base, skill: "compute", turn: 1, durationMs: 200, response: { _tag: "ToolCalls", calls: [{ id: "c1", name: "divide", arguments: "{}" }] } })
    push(failed, { _tag: "ToolHallucinated", ...base, skill: "compute", turn: 1, tool: "divide", toolCallId: "c1", allowed: ["add"], policy: "fail", args: {} })
    push(failed, { _tag: "RunEnd", ...base, outcome: { _tag: "Failure", error: { _tag: "ToolNotAllowed", message: "Tool \"divide\" is not allowed in skill \"compute\" (allowed: add)" } }, turns: 1, toolCalls: 0, durationMs: 210 })
    failed.summary = { ...failed.summary, error: "Tool \"divide\" is not allowed in skill \"compute\" (allowed: add)" }
  }
  const parent = newRun("research", "completed", "trace")
  const children = ["planner", "writer"].map((name) => {
    const child = newRun(name, "completed", "trace")
    const base = { agent: name, runId: child.summary.runId, parentRunId: parent.summary.runId }
    push(child, { _tag: "RunStart", ...base, input: "topic" })
    push(child, { _tag: "Turn", ...base, skill: "main", turn: 1 })
    push(child, { _tag: "ModelResponse", ...base, skill: "main", turn: 1, durationMs: 150, response: { _tag: "Text", content: `${name} done`, usage: usage(50, 10) } })
    push(child, { _tag: "RunEnd", ...base, outcome: { _tag: "Success", output: `${name} done` }, turns: 1, toolCalls: 0, durationMs: 160 })
    child.summary = { ...child.summary, parentRunId: parent.summary.runId }
    return child.summary.runId
  })
  parent.children = children
  push(parent, { _tag: "RunStart", agent: "research", runId: parent.summary.runId, input: { topic: "tides", depth: 2 } })
  push(parent, { _tag: "RunEnd", agent: "research", runId: parent.summary.runId, outcome: { _tag: "Success", output: "writer done" }, turns: 2, toolCalls: 0, durationMs: 340 })

  const sessions: Array<SessionDetail & { updatedAt: number }> = [
    { id: "session-alice", updatedAt: Date.now(), messages: [{ role: "user", content: "Hi, what is 2 + 2?" }, { role: "assistant", content: "4." }] },
    { id: "session-bob", updatedAt: Date.now(), messages: [{ role: "user", content: "Pay ACME 120 EUR" }], waiting: { calls: [{ id: "x", tool: "transfer" }] } }
  ]

  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { "Content-Type": "application/json" })
    response.end(body === undefined ? "" : JSON.stringify(body))
  }
  const readJson = async (request: IncomingMessage): Promise<unknown> => {
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString("utf8")
    return text === "" ? {} : JSON.parse(text)
  }
  // As the studio does: a keep-alive comment, its interval named in a header (the page drops a stream silent for 2.5 of them).
  const sse = (response: ServerResponse) => {
    response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store", Connection: "keep-alive", "x-studio-keep-alive-ms": "15000" })
    response.write(": open\n\n")
    const ping = setInterval(() => response.write(": ping\n\n"), 15_000)
    ping.unref()
    response.on("close", () => clearInterval(ping))
  }

  const resume = (run: Run, body: { decisions?: ReadonlyArray<{ callId: string; decision: string; reason?: string; arguments?: unknown }>; decidedBy?: string }) => {
    const pending = run.pending!
    run.pending = undefined
    run.summary = { ...run.summary, status: "running" }
    announce("approval", run.summary.runId)
    announce("run", run.summary.runId)
    const base = { agent: run.summary.agent, runId: run.summary.runId }
    const steps: Array<Record<string, unknown>> = [{ _tag: "RunStart", ...base, input: "resume" }]
    for (const decision of body.decisions ?? []) {
      const call = pending.calls.find((candidate) => candidate.callId === decision.callId)!
      const record: DecisionRecord = { callId: call.callId, tool: call.tool, decision: decision.decision as DecisionRecord["decision"], ...(decision.reason === undefined ? {} : { reason: decision.reason }), ...(decision.arguments === undefined ? {} : { arguments: decision.arguments }), decidedBy: body.decidedBy ?? "studio", at: Date.now() }
      run.decisions.push(record)
      push(run, { _tag: "StudioDecision", ...base, record })
      const args = decision.decision === "edit" ? decision.arguments : call.arguments
      steps.push({ _tag: "ApprovalDecided", ...base, skill: "pay", turn: 1, toolCallId: call.callId, tool: call.tool, decision: decision.decision, ...(decision.decision === "deny" ? { reason: decision.reason } : { args }), decidedBy: body.decidedBy })
      if (decision.decision !== "deny") {
        steps.push({ _tag: "ToolUse", ...base, skill: "pay", turn: 1, tool: call.tool, toolCallId: call.callId, args, result: { ok: true }, durationMs: 12, validated: true, mode: undefined })
      }
    }
    const denied = (body.decisions ?? []).some((decision) => decision.decision === "deny")
    steps.push({ _tag: "RunEnd", ...base, outcome: { _tag: "Success", output: denied ? "The transfer was not made." : "Transferred." }, turns: 2, toolCalls: 1, durationMs: 40 })
    steps.forEach((event, index) =>
      run.timers.push(setTimeout(() => {
        if (event._tag === "ToolUse") executed.push({ runId: run.summary.runId, tool: String(event.tool), args: event.args })
        push(run, event)
      }, stepMs * (index + 1))))
  }

  const handleApi = async (request: IncomingMessage, response: ServerResponse, url: URL) => {
    if (request.headers.authorization !== `Bearer ${token}`) return send(response, 401, { error: "missing or wrong token" })
    const parts = url.pathname.split("/").filter((part) => part !== "").slice(1).map(decodeURIComponent)
    const method = request.method ?? "GET"
    if (parts[0] === "agents" && parts.length === 1) return send(response, 200, agents)
    if (parts[0] === "agents" && parts[2] === "runs" && method === "POST") {
      const agent = agents.find((candidate) => candidate.id === parts[1])
      if (agent === undefined) return send(response, 404, { error: "no such agent" })
      const body = (await readJson(request)) as { input?: unknown }
      return send(response, 200, { runId: startRun(agent.id, body.input) })
    }
    if (parts[0] === "runs" && parts.length === 1) {
      const status = url.searchParams.get("status")
      const agent = url.searchParams.get("agent")
      const source = url.searchParams.get("source")
      const limit = Number(url.searchParams.get("limit") ?? "100")
      const list = [...runs.values()].map((run) => run.summary)
        .filter((summary) => (status === null || status === "" || summary.status === status) && (agent === null || agent === "" || summary.agent.includes(agent)) && (source === null || source === "" || summary.source === source))
        .reverse()
        .slice(0, limit)
      return send(response, 200, list)
    }
    const run = parts[0] === "runs" && parts[1] !== undefined ? runs.get(parts[1]) : undefined
    if (parts[0] === "runs" && run === undefined) return send(response, 404, { error: "no such run" })
    if (run !== undefined && parts.length === 2) {
      const detail: RunDetail = { summary: run.summary, events: run.events, children: run.children, budgets: run.budgets, requests: run.requests, decisions: run.decisions }
      return send(response, 200, detail)
    }
    if (run !== undefined && parts[2] === "stop" && method === "POST") {
      if (run.summary.status === "running") {
        for (const timer of run.timers) clearTimeout(timer)
        push(run, { _tag: "RunEnd", agent: run.summary.agent, runId: run.summary.runId, outcome: { _tag: "Interrupted" }, turns: run.summary.turns, toolCalls: 0, durationMs: 1 })
      }
      return send(response, 202, undefined)
    }
    if (run !== undefined && parts[2] === "stream") {
      const last = Number(request.headers["last-event-id"] ?? "0")
      sse(response)
      const write = (stored: StoredEvent | "end") => {
        if (stored === "end") {
          run.listeners.delete(write)
          response.end("event: end\ndata: {}\n\n")
          return
        }
        response.write(`id: ${stored.id}\ndata: ${JSON.stringify(stored)}\n\n`)
      }
      for (const stored of run.events) if (Number(stored.id) > last) write(stored)
      if (run.summary.status !== "running") return response.end("event: end\ndata: {}\n\n")
      run.listeners.add(write)
      request.on("close", () => run.listeners.delete(write))
      return
    }
    if (parts[0] === "approvals" && parts.length === 1) return send(response, 200, [...runs.values()].flatMap((candidate) => (candidate.pending === undefined ? [] : [candidate.pending])))
    if (parts[0] === "approvals" && parts[1] !== undefined && method === "POST") {
      const target = runs.get(parts[1])
      if (target?.pending === undefined) return send(response, 404, { error: "no pending approval for this run" })
      const body = (await readJson(request)) as Parameters<typeof resume>[1]
      decisions.push({ runId: parts[1], body })
      for (const decision of body.decisions ?? []) {
        if (decision.decision === "edit" && (decision.arguments as { to?: unknown })?.to === "blocked") {
          return send(response, 400, { error: "DecisionsInvalid", message: "the edited arguments were refused", details: [{ callId: decision.callId, issues: "to: this account is blocked" }] })
        }
        if (decision.decision === "edit") {
          const args = decision.arguments as { amount?: unknown }
          if (typeof args?.amount !== "number" || args.amount <= 0) return send(response, 400, { error: "arguments do not match the tool's schema", details: [{ path: ["amount"], message: "Expected a positive number" }] })
        }
      }
      resume(target, body)
      return send(response, 200, { runId: parts[1] })
    }
    if (parts[0] === "sessions" && parts.length === 1) return send(response, 200, sessions.map((session) => ({ id: session.id, updatedAt: session.updatedAt, messages: session.messages.length, waiting: session.waiting !== undefined })))
    if (parts[0] === "sessions" && parts[1] !== undefined) {
      const session = sessions.find((candidate) => candidate.id === parts[1])
      return session === undefined ? send(response, 404, { error: "no such session" }) : send(response, 200, session)
    }
    if (parts[0] === "events") {
      sse(response)
      let id = 0
      const listener = (change: { type: string; runId: string }) => {
        id += 1
        response.write(`id: ${id}\ndata: ${JSON.stringify(change)}\n\n`)
      }
      changeListeners.add(listener)
      request.on("close", () => changeListeners.delete(listener))
      return
    }
    return send(response, 404, { error: "not found" })
  }

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1")
    if (url.pathname.startsWith("/api/")) {
      handleApi(request, response, url).catch((error: unknown) => send(response, 500, { error: String(error) }))
      return
    }
    const path = url.pathname === "/" ? "/index.html" : url.pathname
    const file = normalize(join(publicDir, path))
    if (!file.startsWith(publicDir)) return send(response, 403, { error: "forbidden" })
    readFile(file).then(
      (content) => {
        response.writeHead(200, { "Content-Type": types[extname(file)] ?? "application/octet-stream" })
        response.end(content)
      },
      () => send(response, 404, { error: "not found" })
    )
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  const port = (server.address() as AddressInfo).port
  const url = `http://127.0.0.1:${port}`
  return {
    url,
    token,
    openUrl: `${url}/?token=${token}`,
    runs,
    executed,
    decisions,
    addRun,
    startRun,
    addSuspendedRun,
    close: async () => {
      for (const run of runs.values()) for (const timer of run.timers) clearTimeout(timer)
      server.closeAllConnections()
      await new Promise<void>((done) => server.close(() => done()))
    }
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const server = await startFixtureServer({ stepMs: 400 })
  server.addSuspendedRun()
  console.log(`studio UI fixture: ${server.openUrl}`)
}
