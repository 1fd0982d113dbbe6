/**
 * The studio's bounded store of runs: events by run, the runs heard from most recently kept, the one
 * whose last event is the oldest evicted first once there are more than `maxRuns` runs or their events
 * take more than `maxBytes` (JSON size): a long run still under way outlives the short ones that
 * started after it and ended. A run waiting for a decision (`isWaiting`) is never evicted while it
 * waits, nor is the run heard from last: with only those left, the store stays over its bounds, with a
 * warning, until a decision or a stop frees them. Every change is
 * appended to a JSON Lines file (when `file` is given) and the file is read back at start, so runs
 * survive a restart; the file is rewritten without evicted runs when it grows past twice what is kept.
 * Listeners hear each new event (the run's live stream) and each change of the lists.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"
import type { ListChange, RunSource, StoredEvent } from "../server/api.ts"
import { type EventJson, isEventJson } from "./event-json.ts"
import { type RunFacts, summarizeRun } from "./summarize.ts"

/**
 * Options of {@link RunStore}.
 *
 * @example
 * ```ts
 * const options: RunStoreOptions = { file: "runs.jsonl", maxRuns: 500, maxBytes: 32 * 1024 * 1024 }
 * ```
 */
export interface RunStoreOptions {
  /** The JSON Lines file runs persist to; none: memory only. */
  readonly file?: string | undefined
  /** Runs kept (default 1,000). */
  readonly maxRuns?: number
  /** JSON bytes of events kept, all runs together (default 64 MiB). */
  readonly maxBytes?: number
  /**
   * Whether a run waits for a decision: such a run is never evicted while it waits, whatever the
   * bounds (its approval, and the snapshot it resumes from, would be lost). Asked when the store is
   * over its bounds, the file read back at start included. Default: no run waits.
   */
  readonly isWaiting?: ((run: StoredRun, facts: RunFacts) => boolean) | undefined
}

/** One stored run. */
export interface StoredRun {
  readonly runId: string
  readonly source: RunSource
  readonly events: Array<StoredEvent>
  bytes: number
  facts: RunFacts | undefined
}

/** One line of the store's file. */
type FileLine =
  | { readonly run: string; readonly source: RunSource; readonly id: number; readonly at: number; readonly event: EventJson }
  | { readonly drop: string }

/**
 * The default bounds: 1,000 runs, 64 MiB of event JSON.
 *
 * @example
 * ```ts
 * defaultStoreLimits.maxRuns // 1000
 * ```
 */
export const defaultStoreLimits = { maxRuns: 1000, maxBytes: 64 * 1024 * 1024 } as const

/**
 * The store.
 *
 * @example
 * ```ts
 * const store = new RunStore({ file: ".effect-agent-studio/runs.jsonl" })
 * store.append("studio", Date.now(), { _tag: "RunStart", runId: "run_1", agent: "calc", input: "2+2" })
 * ```
 */
export class RunStore {
  readonly maxRuns: number
  readonly maxBytes: number
  readonly #file: string | undefined
  readonly #isWaiting: (run: StoredRun, facts: RunFacts) => boolean
  readonly #runs = new Map<string, StoredRun>()
  /** The runs' ids by their last event, least recent first (what eviction takes). */
  readonly #recency = new Map<string, true>()
  readonly #children = new Map<string, Set<string>>()
  readonly #eventListeners = new Map<string, Set<(event: StoredEvent) => void>>()
  readonly #listListeners = new Set<(change: ListChange) => void>()
  #bytes = 0
  #fileBytes = 0
  /** After a failed rewrite, the file size at which to try again. */
  #retryCompactAt = 0
  #pending: Array<string> = []
  #flushTimer: ReturnType<typeof setTimeout> | undefined
  /** Whether the store said it is over its bounds with only waiting runs left (said once each time). */
  #toldOverBounds = false

  constructor(options: RunStoreOptions = {}) {
    this.maxRuns = positive(options.maxRuns, defaultStoreLimits.maxRuns, "maxRuns")
    this.maxBytes = positive(options.maxBytes, defaultStoreLimits.maxBytes, "maxBytes")
    this.#file = options.file
    this.#isWaiting = options.isWaiting ?? (() => false)
    if (this.#file !== undefined) this.#load(this.#file)
  }

  /** Total JSON bytes of the events kept. */
  get bytes(): number {
    return this.#bytes
  }

  /** How many runs are kept. */
  get size(): number {
    return this.#runs.size
  }

  /** The run, if kept. */
  get(runId: string): StoredRun | undefined {
    return this.#runs.get(runId)
  }

  /** Every run kept, oldest first. */
  runs(): ReadonlyArray<StoredRun> {
    return [...this.#runs.values()]
  }

  /** The facts of a run, computed once per change. */
  facts(run: StoredRun): RunFacts {
    run.facts ??= summarizeRun(run.runId, run.source, run.events)
    return run.facts
  }

  /** The ids of the runs whose parent is `runId`. */
  children(runId: string): ReadonlyArray<string> {
    return [...(this.#children.get(runId) ?? [])].filter((id) => this.#runs.has(id))
  }

  /** Adds one event to its run (created on its first event); events without a run id are ignored. */
  append(source: RunSource, at: number, given: EventJson): StoredEvent | undefined {
    if (typeof given.runId !== "string" || given.runId === "") return undefined
    const event = wellFormedIds(given)
    const runId = event.runId as string
    const stored = this.#add(source, runId, at, ...measured(event, runId))
    this.#write({ run: runId, source, id: stored.id, at, event: stored.event })
    this.#evict()
    return stored
  }

  /** Replaces a run's events (a trace file imported again). */
  replace(source: RunSource, runId: string, events: ReadonlyArray<{ readonly at: number; readonly event: EventJson }>): void {
    // Its children stay linked: they may have been stored before it.
    this.#drop(runId, false)
    for (const { at, event } of events) this.append(source, at, { ...event, runId })
  }

  /** Forgets a run. */
  drop(runId: string): void {
    this.#drop(runId, true)
  }

  #drop(runId: string, forgetChildren: boolean): void {
    const run = this.#runs.get(runId)
    if (run === undefined) return
    this.#runs.delete(runId)
    this.#recency.delete(runId)
    if (forgetChildren) this.#children.delete(runId)
    this.#bytes -= run.bytes
    this.#write({ drop: runId })
    this.#notify({ type: "run", runId })
  }

  /** Listens to the events of one run; returns the function that stops listening. */
  onEvent(runId: string, listener: (event: StoredEvent) => void): () => void {
    const set = this.#eventListeners.get(runId) ?? new Set()
    set.add(listener)
    this.#eventListeners.set(runId, set)
    return () => {
      set.delete(listener)
      if (set.size === 0) this.#eventListeners.delete(runId)
    }
  }

  /** Listens to list changes; returns the function that stops listening. */
  onChange(listener: (change: ListChange) => void): () => void {
    this.#listListeners.add(listener)
    return () => void this.#listListeners.delete(listener)
  }

  /** Tells list listeners about a change the store did not make itself (an approval taken). */
  announce(change: ListChange): void {
    this.#notify(change)
  }

  /** Writes what is buffered to the file now. */
  flush(): void {
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer)
    this.#flushTimer = undefined
    if (this.#file === undefined || this.#pending.length === 0) return
    const text = this.#pending.join("")
    this.#pending = []
    try {
      mkdirSync(dirname(this.#file), { recursive: true, mode: 0o700 })
      appendFileSync(this.#file, text, { mode: 0o600 })
      this.#fileBytes += Buffer.byteLength(text)
    } catch (error) {
      process.emitWarning(`effect-agent-studio: cannot write ${this.#file}: ${error instanceof Error ? error.message : String(error)}`)
    }
    if (this.#fileBytes > 2 * this.#bytes + 1024 * 1024 && this.#fileBytes >= this.#retryCompactAt) this.compact()
  }

  /**
   * Rewrites the file with the runs kept only. A rewrite that fails (disk full, no permission) leaves
   * the file as it was and costs a warning, never the studio (it runs from a flush timer); it is tried
   * again once the file grew by as much again.
   */
  compact(): void {
    if (this.#file === undefined) return
    const lines: Array<string> = []
    for (const run of this.#runs.values()) {
      for (const stored of run.events) lines.push(`${JSON.stringify({ run: run.runId, source: run.source, ...stored })}\n`)
    }
    const text = lines.join("")
    const temporary = `${this.#file}.${process.pid}.tmp`
    try {
      mkdirSync(dirname(this.#file), { recursive: true, mode: 0o700 })
      writeFileSync(temporary, text, { mode: 0o600 })
      renameSync(temporary, this.#file)
    } catch (error) {
      try {
        rmSync(temporary, { force: true })
      } catch {
        // a folder in the way, or the disk refuses even that: the next rewrite tries again
      }
      this.#retryCompactAt = 2 * this.#fileBytes + 1024 * 1024
      process.emitWarning(`effect-agent-studio: cannot rewrite ${this.#file}: ${error instanceof Error ? error.message : String(error)}`)
      return
    }
    this.#fileBytes = Buffer.byteLength(text)
    this.#retryCompactAt = 0
  }

  #add(source: RunSource, runId: string, at: number, event: EventJson, size: number): StoredEvent {
    let run = this.#runs.get(runId)
    if (run === undefined) {
      run = { runId, source, events: [], bytes: 0, facts: undefined }
      this.#runs.set(runId, run)
    }
    this.#recency.delete(runId)
    this.#recency.set(runId, true)
    const stored: StoredEvent = { id: (run.events[run.events.length - 1]?.id ?? 0) + 1, at, event }
    run.events.push(stored)
    run.bytes += size
    run.facts = undefined
    this.#bytes += size
    const parent = event.parentRunId ?? event.parentRun
    if (typeof parent === "string") {
      const set = this.#children.get(parent) ?? new Set()
      set.add(runId)
      this.#children.set(parent, set)
    }
    for (const listener of this.#eventListeners.get(runId) ?? []) listener(stored)
    // Deltas change no list; every other event may change a status, a count or the approvals.
    if (!event._tag.endsWith("Delta") && event._tag !== "ToolCallStart") {
      this.#notify({ type: event._tag === "ApprovalRequested" || event._tag === "StudioDecision" || isSuspension(event) ? "approval" : "run", runId })
    }
    return stored
  }

  #evict(): void {
    for (let runId = this.#nextEvicted(); runId !== undefined; runId = this.#nextEvicted()) this.drop(runId)
  }

  /** More runs than `maxRuns`, or more bytes than `maxBytes` in more than one run. */
  #overBounds(): boolean {
    return this.#runs.size > this.maxRuns || (this.#bytes > this.maxBytes && this.#runs.size > 1)
  }

  /**
   * The run to evict while over the bounds: the one whose last event is the oldest, passing over the
   * runs that wait for a decision and never the run heard from last (it is being written). Undefined
   * when within the bounds, or when only those are left (said once, as a warning).
   */
  #nextEvicted(): string | undefined {
    if (!this.#overBounds()) {
      this.#toldOverBounds = false
      return undefined
    }
    let left = this.#recency.size
    for (const runId of this.#recency.keys()) {
      left -= 1
      if (left === 0) break
      const run = this.#runs.get(runId)!
      if (!this.#isWaiting(run, this.facts(run))) return runId
    }
    if (!this.#toldOverBounds) {
      this.#toldOverBounds = true
      process.emitWarning(
        `effect-agent-studio: the store keeps ${this.#runs.size} runs (${this.#bytes} bytes), over its bounds of ${this.maxRuns} runs and ${this.maxBytes} bytes: ` +
          "the runs waiting for a decision are never evicted; decide or stop them to free the room"
      )
    }
    return undefined
  }

  #notify(change: ListChange): void {
    for (const listener of this.#listListeners) listener(change)
  }

  #write(line: FileLine): void {
    if (this.#file === undefined) return
    this.#pending.push(`${JSON.stringify(line)}\n`)
    if (this.#flushTimer === undefined) {
      this.#flushTimer = setTimeout(() => this.flush(), 100)
      this.#flushTimer.unref?.()
    }
  }

  #load(file: string): void {
    if (!existsSync(file)) return
    let text: string
    try {
      text = readFileSync(file, "utf8")
    } catch (error) {
      process.emitWarning(`effect-agent-studio: cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`)
      return
    }
    this.#fileBytes = Buffer.byteLength(text)
    for (const raw of text.split("\n")) {
      if (raw.trim() === "") continue
      let parsed: unknown
      try {
        parsed = JSON.parse(raw)
      } catch {
        continue // a line cut by a crash mid-write
      }
      // A hand-edited file may hold any JSON: what is not a line the store wrote is skipped.
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) continue
      const line = parsed as Partial<Record<string, unknown>>
      if ("drop" in line) {
        const run = typeof line.drop === "string" ? this.#runs.get(line.drop) : undefined
        if (run !== undefined) {
          this.#runs.delete(run.runId)
          this.#recency.delete(run.runId)
          this.#bytes -= run.bytes
        }
      } else if (
        typeof line.run === "string" && line.run !== "" && isEventJson(line.event) &&
        typeof line.at === "number" && Number.isFinite(line.at) && sources.has(line.source as RunSource)
      ) {
        const event = wellFormedIds({ ...line.event, runId: line.run })
        this.#add(line.source as RunSource, event.runId as string, line.at, ...measured(event, event.runId as string))
      }
    }
    for (let oldest = this.#nextEvicted(); oldest !== undefined; oldest = this.#nextEvicted()) {
      const run = this.#runs.get(oldest)!
      this.#runs.delete(oldest)
      this.#recency.delete(oldest)
      this.#bytes -= run.bytes
    }
    this.compact()
  }
}

/**
 * The event and the bytes it counts for (its JSON and a fixed overhead); an event nested deeper than
 * `JSON.stringify` goes (or with a cycle) is kept as its tag, run and agent, flagged `unserialisable`.
 */
const measured = (event: EventJson, runId: string): [EventJson, number] => {
  try {
    return [event, JSON.stringify(event).length + 40]
  } catch {
    const reduced = { _tag: event._tag, runId, ...(typeof event.agent === "string" ? { agent: event.agent } : {}), unserialisable: true } as EventJson
    return [reduced, JSON.stringify(reduced).length + 40]
  }
}

/** A lone surrogate: half of a UTF-16 pair without its other half. */
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * The event with its run ids (`runId`, `parentRunId`, `parentRun`) well-formed: a lone surrogate (an
 * application may send one) becomes U+FFFD. Such an id could not be put in a URL (`encodeURIComponent`
 * throws, and a `%ED%A0%80` path is not UTF-8), so its run could be listed but never opened.
 */
const wellFormedIds = (event: EventJson): EventJson => {
  let fixed: Record<string, unknown> | undefined
  for (const key of ["runId", "parentRunId", "parentRun"] as const) {
    const value = event[key]
    if (typeof value !== "string") continue
    const replaced = value.replace(loneSurrogate, "\ufffd")
    if (replaced !== value) (fixed ??= { ...event })[key] = replaced
  }
  return (fixed ?? event) as EventJson
}

const sources: ReadonlySet<RunSource> = new Set<RunSource>(["studio", "ingest", "trace", "durable"])

const isSuspension = (event: EventJson): boolean => {
  const outcome = event.outcome as { _tag?: unknown; output?: { _tag?: unknown } } | undefined
  return outcome?._tag === "Suspended" || outcome?.output?._tag === "Suspended"
}

const positive = (value: number | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback
  if (!(value > 0)) throw new RangeError(`RunStore: ${name} must be a positive number, got ${String(value)}`)
  return value
}
