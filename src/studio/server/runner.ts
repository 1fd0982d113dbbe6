/**
 * Runs started from the studio: each is the agent's (or composite's) own `runEffect`, with the
 * `StreamSink` that streaming runs use, so every event of the run tree (deltas, child runs, composite
 * starts and ends) reaches the store as it happens. A run that suspends is held here with its snapshot
 * until a decision resumes it (`decide`), under the same run id; `stop` interrupts a running one.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { Decision, type Decisions } from "../../dsl/decision.ts"
import type { RunStreamEvent } from "../../dsl/events.ts"
import { StreamSink } from "../../dsl/lineage.ts"
import type { DecisionInput, DecisionRecord, RunSource } from "./api.ts"
import type { CatalogEntry } from "./catalog.ts"
import { toEventJson } from "../store/event-json.ts"
import type { RunStore } from "../store/run-store.ts"
import type { RunFacts } from "../store/summarize.ts"

/** A run of the studio waiting for decisions. */
export interface HeldSuspension {
  readonly runId: string
  readonly entry: CatalogEntry
  readonly pending: ReadonlyArray<{ readonly id: string; readonly tool: string; readonly args: unknown; readonly reason?: string }>
  readonly snapshot: unknown
  readonly since: number
}

/** Why a decision was refused (an HTTP 400 or 404/409). */
export class DecisionRefused extends Error {
  constructor(readonly status: 400 | 404 | 409, readonly code: string, message: string, readonly details?: unknown) {
    super(message)
  }
}

/**
 * Whether a run, by its stored events, waits for a decision this studio can take: one of the studio's
 * own top-level runs, suspended with its snapshot, of an agent of `catalog` (by name). The runs
 * `restore` holds again after a restart, and the runs the store never evicts while they wait.
 *
 * @example
 * ```ts
 * const store = new RunStore({ isWaiting: (run, facts) => waitsInStudio(run.source, facts, byName) })
 * ```
 */
export const waitsInStudio = (source: RunSource, facts: RunFacts, byName: ReadonlyMap<string, CatalogEntry>): boolean =>
  source === "studio" && facts.summary.status === "suspended" && facts.summary.parentRunId === undefined &&
  facts.snapshot !== undefined && byName.has(facts.summary.agent)

/** The decisions of the API as the runtime's `Decisions`. */
export const toDecisions = (inputs: ReadonlyArray<DecisionInput>): Decisions =>
  Object.fromEntries(inputs.map((d) => [
    d.callId,
    d.decision === "deny" ? Decision.deny(d.reason ?? "denied in the studio") : d.decision === "edit" ? Decision.edit(d.arguments) : Decision.approve
  ]))

/**
 * Starts, stops and resumes the studio's own runs.
 *
 * @example
 * ```ts
 * const runner = new StudioRunner(store)
 * const runId = await runner.start(catalog.get("calculator")!, "2 + 2")
 * ```
 */
export class StudioRunner {
  readonly #fibers = new Map<string, Fiber.Fiber<unknown, unknown>>()
  readonly #held = new Map<string, HeldSuspension>()

  constructor(readonly store: RunStore, readonly now: () => number = Date.now) {}

  /** The runs waiting for decisions, oldest first. */
  suspensions(): ReadonlyArray<HeldSuspension> {
    return [...this.#held.values()]
  }

  held(runId: string): HeldSuspension | undefined {
    return this.#held.get(runId)
  }

  /**
   * Holds again the studio's runs that were waiting when it last stopped (their snapshots are in the
   * store's events), for the entries of `catalog` with the same name; answers how many.
   */
  restore(catalog: ReadonlyMap<string, CatalogEntry>): number {
    const byName = new Map([...catalog.values()].map((entry) => [entry.info.name, entry]))
    let restored = 0
    for (const run of this.store.runs()) {
      if (run.source !== "studio" || this.#held.has(run.runId)) continue
      const facts = this.store.facts(run)
      const entry = byName.get(facts.summary.agent)
      if (entry === undefined || !waitsInStudio(run.source, facts, byName)) continue
      this.#held.set(run.runId, { runId: run.runId, entry, pending: facts.pending, snapshot: facts.snapshot, since: facts.waitingSince ?? facts.summary.startedAt })
      restored += 1
    }
    return restored
  }

  /** True when the run is one of the studio's, running now. */
  isRunning(runId: string): boolean {
    return this.#fibers.has(runId)
  }

  /** Starts a run of `entry` on `input`; resolves with its run id once its first event is out. */
  start(entry: CatalogEntry, input: unknown): Promise<string> {
    return this.#launch(entry, (runnable) => runnable.runEffect(input), undefined)
  }

  /**
   * Resumes held run `runId` with `decisions`: resolves once the run took them (its first event after
   * them), rejects with `DecisionRefused` when the runtime refused them (`DecisionsInvalid`: nothing ran,
   * the run still waits).
   */
  async decide(runId: string, inputs: ReadonlyArray<DecisionInput>, decidedBy: string): Promise<void> {
    const held = this.#held.get(runId)
    if (held === undefined) throw new DecisionRefused(404, "NotWaiting", `run ${runId} does not wait for a decision in this studio`)
    const resume = held.entry.runnable.resume
    if (resume === undefined) throw new DecisionRefused(409, "NotResumable", `${held.entry.info.name} cannot be resumed`)
    // Taken now, so two reviewers deciding at once cannot both resume it; given back if refused.
    this.#held.delete(runId)
    const at = this.now()
    const records: ReadonlyArray<DecisionRecord> = inputs.map((d) => ({
      callId: d.callId,
      tool: held.pending.find((p) => p.id === d.callId)?.tool,
      decision: d.decision,
      ...(d.reason === undefined ? {} : { reason: d.reason }),
      ...(d.decision === "edit" ? { arguments: d.arguments } : {}),
      decidedBy,
      at
    }))
    try {
      await this.#launch(held.entry, (runnable) => resume.call(runnable, held.snapshot, toDecisions(inputs)), () => {
        for (const record of records) this.store.append("studio", at, { _tag: "StudioDecision", runId, agent: held.entry.info.name, record })
      }, runId)
    } catch (error) {
      this.#held.set(runId, held)
      this.store.announce({ type: "approval", runId })
      const tagged = error as { readonly _tag?: unknown; readonly message?: unknown }
      if (isRefusal(error)) {
        throw new DecisionRefused(400, String(tagged._tag), String(tagged.message), toEventJson(error))
      }
      throw error
    }
  }

  /** Stops run `runId`: interrupts it when running, forgets its wait when suspended. False when it is not the studio's. */
  stop(runId: string): boolean {
    // A child run (a composite's member, an agent called as a tool) stops with the run it belongs to.
    let root: string | undefined = runId
    const seen = new Set<string>()
    while (root !== undefined && !this.#fibers.has(root) && !seen.has(root)) {
      seen.add(root)
      const run = this.store.get(root)
      root = run === undefined ? undefined : this.store.facts(run).summary.parentRunId
    }
    const fiber = this.#fibers.get(root ?? runId)
    if (fiber !== undefined) {
      Effect.runFork(fiberInterrupt(fiber))
      return true
    }
    const held = this.#held.get(runId)
    if (held !== undefined) {
      this.#held.delete(runId)
      this.store.append("studio", this.now(), { _tag: "StudioStopped", runId, agent: held.entry.info.name, reason: "stopped in the studio while waiting for a decision" })
      return true
    }
    return false
  }

  /** Interrupts every run (the studio closes). */
  async close(): Promise<void> {
    await Promise.all([...this.#fibers.values()].map((fiber) => Effect.runPromise(fiberInterrupt(fiber))))
  }

  #launch(
    entry: CatalogEntry,
    program: (runnable: CatalogEntry["runnable"]) => Effect.Effect<unknown, unknown, never>,
    beforeFirst: (() => void) | undefined,
    knownRunId?: string
  ): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      let runId = knownRunId
      let started = false
      // A resume refused for its decisions still emits the failed `RunEnd` before it fails: the events
      // are held until the run shows progress, and dropped if it was refused (it still waits).
      let held: Array<{ readonly at: number; readonly json: ReturnType<typeof toEventJson> }> = []
      const begin = () => {
        started = true
        beforeFirst?.()
        runId ??= held[0]?.json.runId
        if (runId !== undefined && fiber !== undefined && !ended) this.#fibers.set(runId, fiber)
        for (const { at, json } of held) this.store.append("studio", at, json)
        held = []
        resolve(runId ?? "")
      }
      // A resumed composite starts a run of a new id: its events join the run that suspended.
      let alias: string | undefined
      const onEvent = (event: RunStreamEvent) =>
        Effect.sync(() => {
          let json = toEventJson(event)
          if (knownRunId !== undefined) {
            if (alias === undefined && json._tag === "CompositeStart" && json.parentRunId == null && json.runId !== knownRunId) alias = json.runId
            if (alias !== undefined && json.runId === alias) json = { ...json, runId: knownRunId }
            if (alias !== undefined && json.parentRunId === alias) json = { ...json, parentRunId: knownRunId }
          }
          if (started) {
            this.store.append("studio", this.now(), json)
            return
          }
          held.push({ at: this.now(), json })
          if (json._tag !== "RunEnd" || knownRunId === undefined) begin()
        })
      // The fiber may emit its first events synchronously, before `runFork` returns.
      let fiber: Fiber.Fiber<unknown, unknown> | undefined
      let ended = false
      fiber = Effect.runFork(
        program(entry.runnable).pipe(Effect.provideService(StreamSink, onEvent)) as Effect.Effect<unknown, unknown>
      )
      fiber.addObserver((exit) => {
        ended = true
        if (runId !== undefined) this.#fibers.delete(runId)
        if (!started && Exit.isSuccess(exit) && held.length > 0) begin()
        if (!started) {
          const error = Exit.isFailure(exit) ? failureOf(exit.cause) : new Error("the run ended without an event")
          if (!isRefusal(error)) for (const { at, json } of held) this.store.append("studio", at, json)
          reject(error)
          return
        }
        if (Exit.isSuccess(exit)) {
          const value = exit.value as { readonly _tag?: unknown; readonly pending?: unknown; readonly snapshot?: unknown }
          if (value?._tag === "Suspended" && runId !== undefined && Array.isArray(value.pending)) {
            this.#held.set(runId, { runId, entry, pending: value.pending, snapshot: value.snapshot, since: this.now() })
            this.store.announce({ type: "approval", runId })
          }
        }
      })
      if (runId !== undefined && !ended && started) this.#fibers.set(runId, fiber)
    })
  }
}

/** Errors that mean a resume was refused before anything ran. */
const refusals = new Set(["DecisionsInvalid", "SnapshotInvalid", "SnapshotRejected", "DefinitionChanged", "SnapshotAlreadyResumed"])
const isRefusal = (error: unknown): boolean => refusals.has(String((error as { readonly _tag?: unknown })?._tag))

const fiberInterrupt = (fiber: Fiber.Fiber<unknown, unknown>) => Effect.asVoid(Fiber.interrupt(fiber))

const failureOf = (cause: Cause.Cause<unknown>): unknown => {
  for (const reason of cause.reasons) {
    if (reason._tag === "Fail") return reason.error
    if (reason._tag === "Die") return reason.defect
  }
  return new Error(Cause.pretty(cause))
}
