/**
 * Durable runs in the studio: the runs of the given durable agents (`d.list()`), polled from the
 * engine's store (embedded or PostgreSQL, any process may run them), shown with their status, and the
 * approval inbox: the calls a waiting run waits for, decided here with `d.decide` (the same checks,
 * `DecisionsInvalid`, as anywhere else). A stop cancels the run (`d.cancel`).
 *
 * `d.list()` reads each run on its own: a run whose stored state cannot be read (a row edited or
 * damaged) comes as `unreadable` and is shown failed with the error `DurableRunUnreadable` (which row,
 * and why) and `unreadable: true`; every other run, and every other wait for approval, is shown and
 * decided as usual.
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type { DurableAgent, DurableClient, DurableRunInfo } from "../../durable/durable-agent.ts"
import type { ApprovalItem, DecisionInput } from "../server/api.ts"
import { DecisionRefused, toDecisions } from "../server/runner.ts"
import { type EventJson, toEventJson } from "../store/event-json.ts"
import type { RunStore } from "../store/run-store.ts"

/**
 * The durable agents to show, and the Layer that reaches their engine (what `start`/`decide` need).
 *
 * @example
 * ```ts
 * export const durable: DurableSource = { agents: [d], layer: d.layer.pipe(Layer.provideMerge(embeddedEngine({ dataDir: "./runs" }))) }
 * ```
 */
export interface DurableSource {
  readonly agents: ReadonlyArray<DurableAgent<any>>
  /** Provides the engine and the approval inbox: `d.layer.pipe(Layer.provideMerge(embeddedEngine({ dataDir })))` or a client's. */
  readonly layer: Layer.Layer<DurableClient, unknown>
  /** How often to poll, in ms (default 2,000). */
  readonly pollMs?: number
  /** The tool argument JSON Schemas for edit forms, by tool name (optional). */
  readonly toolSchemas?: Readonly<Record<string, unknown>>
}

interface Waiting {
  readonly agent: DurableAgent<any>
  readonly info: DurableRunInfo
  readonly since: number
}

/**
 * Polls durable agents into the store and decides their waits.
 *
 * @example
 * ```ts
 * const watcher = new DurableWatcher({ agents: [d], layer: runner }, store)
 * watcher.start()
 * ```
 */
export class DurableWatcher {
  readonly #runtime: ManagedRuntime.ManagedRuntime<DurableClient, unknown>
  readonly #known = new Map<string, string>()
  readonly #waiting = new Map<string, Waiting>()
  /** Runs a decision is being given to right now (`decide`). */
  readonly #deciding = new Set<string>()
  readonly #journalSizes = new Map<string, number>()
  #timer: ReturnType<typeof setInterval> | undefined
  #polling: Promise<void> | undefined

  constructor(readonly source: DurableSource, readonly store: RunStore) {
    this.#runtime = ManagedRuntime.make(source.layer)
  }

  /** Polls now and every `pollMs`. */
  start(): void {
    void this.poll()
    this.#timer = setInterval(() => void this.poll(), this.source.pollMs ?? 2000)
    this.#timer.unref()
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
  }

  async dispose(): Promise<void> {
    this.stop()
    await this.#polling?.catch(() => {})
    await this.#runtime.dispose()
  }

  /** Reads every agent's runs once; new and changed runs reach the store. */
  poll(): Promise<void> {
    this.#polling ??= this.#pollOnce().finally(() => {
      this.#polling = undefined
    })
    return this.#polling
  }

  async #pollOnce(): Promise<void> {
    for (const agent of this.source.agents) {
      let runs: ReadonlyArray<DurableRunInfo>
      try {
        runs = await this.#runtime.runPromise(agent.list({ limit: 1000 }))
      } catch (error) {
        process.emitWarning(`effect-agent-studio: cannot list the durable runs of ${agent.name}: ${error instanceof Error ? error.message : String(error)}`)
        continue
      }
      const name = agent.name.replace(/^agent\//, "")
      for (const info of runs) {
        const key = JSON.stringify([info.status, info.pending?.map((p) => p.id) ?? []])
        if (this.#known.get(info.runId) === key && info.status !== "running") continue
        const changed = this.#known.get(info.runId) !== key
        this.#known.set(info.runId, key)
        const now = Date.now()
        if (info.status === "waiting") this.#waiting.set(info.runId, { agent, info, since: this.#waiting.get(info.runId)?.since ?? now })
        else this.#waiting.delete(info.runId)
        const steps = await this.#journal(agent, name, info.runId)
        if (steps === undefined && !changed) continue
        if (steps !== undefined) this.#replaceSteps(info.runId, steps, now)
        this.store.append("durable", now, toEventJson({
          _tag: "DurableStatus",
          runId: info.runId,
          agent: name,
          ...statusFields(info),
          ...(info.pending === undefined ? {} : { pending: info.pending })
        }))
      }
    }
  }

  /**
   * The run's recorded steps as run events (`d.journal`, when the Layer provides the engine's journal),
   * by run id (a child's steps under its own); undefined when there is no journal or it did not change.
   */
  async #journal(agent: DurableAgent<any>, name: string, runId: string): Promise<Map<string, Array<EventJson>> | undefined> {
    const journal = (agent as { journal?: (runId: string) => Effect.Effect<{ readonly entries: ReadonlyArray<Record<string, any>> }, unknown, any> }).journal
    if (journal === undefined) return undefined
    const exit = await this.#runtime.runPromise(Effect.exit(journal.call(agent, runId) as Effect.Effect<{ readonly entries: ReadonlyArray<Record<string, any>> }, unknown, DurableClient>)).catch(() => undefined)
    if (exit === undefined || exit._tag === "Failure") return undefined
    const entries = exit.value.entries
    if (this.#journalSizes.get(runId) === entries.length) return undefined
    this.#journalSizes.set(runId, entries.length)
    const byRun = new Map<string, Array<EventJson>>()
    for (const entry of entries) {
      const event = toEventJson(eventOfJournalEntry(entry, name))
      const id = typeof event.runId === "string" ? event.runId : runId
      const list = byRun.get(id) ?? []
      list.push(event)
      byRun.set(id, list)
    }
    return byRun
  }

  /** Replaces the stored steps of each run, keeping their times and the decisions the studio recorded. */
  #replaceSteps(root: string, steps: Map<string, Array<EventJson>>, now: number): void {
    for (const [runId, events] of steps) {
      const before = this.store.get(runId)?.events ?? []
      const kept = before.filter((e) => e.event._tag !== "StudioDecision" && e.event._tag !== "DurableStatus")
      const decisions = before.filter((e) => e.event._tag === "StudioDecision")
      const timed = events.map((event, i) => ({ at: kept[i]?.at ?? now, event }))
      const status = runId === root ? before.filter((e) => e.event._tag === "DurableStatus").slice(-1) : []
      this.store.replace("durable", runId, [...timed, ...decisions, ...status].sort((a, b) => a.at - b.at))
    }
  }

  isWaiting(runId: string): boolean {
    return this.#waiting.has(runId)
  }

  /** The durable approval inbox as the studio lists it. */
  waiting(): ReadonlyArray<ApprovalItem> {
    return [...this.#waiting.entries()].map(([runId, { agent, info, since }]) => ({
      runId,
      agent: agent.name.replace(/^agent\//, ""),
      source: "durable",
      since,
      calls: (info.pending ?? []).map((p) => ({
        callId: p.id,
        tool: p.tool,
        arguments: p.args,
        reason: p.reason,
        jsonSchema: this.source.toolSchemas?.[p.tool]
      }))
    }))
  }

  /** Decides a waiting durable run (`d.decide`); refused decisions reject with `DecisionRefused` (400). */
  async decide(runId: string, inputs: ReadonlyArray<DecisionInput>, decidedBy: string): Promise<void> {
    const waiting = this.#waiting.get(runId)
    if (waiting === undefined || this.#deciding.has(runId)) throw new DecisionRefused(404, "NotWaiting", `durable run ${runId} does not wait for a decision`)
    // Taken now, so two reviewers deciding at once (two tabs, a double click) cannot both record a
    // decision (a poll meanwhile still sees it waiting); given back if the engine refused it.
    this.#deciding.add(runId)
    let exit: Exit.Exit<void, unknown>
    try {
      exit = await this.#runtime.runPromise(Effect.exit(waiting.agent.decide(runId, toDecisions(inputs))))
    } finally {
      this.#deciding.delete(runId)
    }
    if (exit._tag === "Failure") {
      const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
      const error = failure?._tag === "Fail" ? failure.error : undefined
      throw new DecisionRefused(400, "DecisionsInvalid", error instanceof Error ? error.message : "the decisions were refused", toEventJson(error ?? {}))
    }
    this.#waiting.delete(runId)
    const at = Date.now()
    for (const d of inputs) {
      this.store.append("durable", at, {
        _tag: "StudioDecision",
        runId,
        agent: waiting.agent.name.replace(/^agent\//, ""),
        record: {
          callId: d.callId,
          tool: waiting.info.pending?.find((p) => p.id === d.callId)?.tool,
          decision: d.decision,
          ...(d.reason === undefined ? {} : { reason: d.reason }),
          ...(d.decision === "edit" ? { arguments: d.arguments } : {}),
          decidedBy,
          at
        }
      })
    }
    void this.poll()
  }

  /** Cancels a durable run of one of the agents; false when the run is unknown here. */
  async cancel(runId: string): Promise<boolean> {
    const summaryAgent = this.store.get(runId)?.source === "durable" ? this.store.get(runId) : undefined
    if (summaryAgent === undefined) return false
    const agent = this.source.agents.find((a) => a.name.replace(/^agent\//, "") === this.store.facts(summaryAgent).summary.agent)
    if (agent === undefined) return false
    await this.#runtime.runPromise(agent.cancel(runId, "stopped in the studio"))
    void this.poll()
    return true
  }
}

/**
 * The status and error a `DurableStatus` event shows: the run's own, or, for a run whose stored state
 * cannot be read, `failed` with the `DurableRunUnreadable` (the studio's statuses are a run's ends).
 */
const statusFields = (info: DurableRunInfo): Record<string, unknown> => {
  if (info.status === "unreadable") {
    const e = info.unreadable
    return {
      status: "failed",
      unreadable: true,
      error: { _tag: "DurableRunUnreadable", message: e?.message ?? `The stored state of durable run "${info.runId}" cannot be read`, table: e?.table, row: e?.row, reason: e?.reason }
    }
  }
  return { status: info.status, ...(info.error === undefined ? {} : { error: info.error }) }
}

/** The run event a journal entry of `d.journal` records (its `Event` entries are events already). */
const eventOfJournalEntry = (entry: Record<string, any>, agent: string): Record<string, unknown> => {
  const base = { runId: entry.runId, agent }
  switch (entry._tag) {
    case "Started":
      return { _tag: "RunStart", ...base, input: entry.input }
    case "ModelCalled":
      return { _tag: "ModelResponse", ...base, turn: entry.turn, response: entry.response, durationMs: entry.durationMs }
    case "ModelRetried":
      return { _tag: "Retrying", ...base, turn: entry.turn, attempt: entry.attempt, waitMs: entry.waitMs, reason: entry.reason }
    case "ToolCalled":
      return entry.outcome?._tag === "Succeeded"
        ? { _tag: "ToolUse", ...base, turn: entry.turn, tool: entry.tool, toolCallId: entry.toolCallId, args: entry.args, result: entry.outcome.value, effect: entry.effect, ...(entry.claim === undefined ? {} : { claim: entry.claim }) }
        : { _tag: "ToolError", ...base, turn: entry.turn, tool: entry.tool, toolCallId: entry.toolCallId, args: entry.args, error: entry.outcome?.error, effect: entry.effect, ...(entry.claim === undefined ? {} : { claim: entry.claim }) }
    case "ApprovalRequested":
      return { _tag: "ApprovalRequested", ...base, turn: entry.turn, calls: entry.calls }
    case "ApprovalDecided":
      return { _tag: "ApprovalDecided", ...base, turn: entry.turn, toolCallId: entry.toolCallId, tool: entry.tool, decision: entry.decision, ...(entry.reason === undefined ? {} : { reason: entry.reason }) }
    case "Suspended":
      return { _tag: "RunEnd", ...base, outcome: { _tag: "Suspended", pending: entry.pending } }
    case "Ended":
      return { _tag: "RunEnd", ...base, outcome: entry.outcome }
    default:
      return entry.event ?? { _tag: String(entry._tag), ...base }
  }
}
