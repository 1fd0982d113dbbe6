/**
 * The embedded engine's writes waiting to ride along with its next one: journal events (by run, in
 * order) and other small writes that need not commit on their own (a run's entry in the run list).
 * The store's next write of a step takes them into the same call into PGlite (the events of one run
 * into the step's very statement: the step's recorded result and its events commit together), or
 * they go on their own within `delayMs` when no step comes. A read takes them first.
 *
 * Writes take turns: each takes what waits when its turn comes, so a run's events keep their order.
 * What rides along is never lost on the way:
 * - a write that fails with others riding along is tried again without them, and each of them alone;
 *   what the database refuses (a constraint, a syntax or data error: `isRefusal`) is dropped with a
 *   warning, never the step; what fails otherwise (the database unavailable, the disk full) is put back,
 *   ahead of what came since, and tried again with the next write or after `retryMs`;
 * - a caller interrupted after taking what waits (waiting for the session, say) puts it back too.
 * A run's events written again after they committed (their caller was interrupted before it knew) are
 * written as nothing: events are keyed, and a statement that numbers them itself (`JournalLastIds`)
 * fails on a key the journal holds, and is made again, numbered by the database, which leaves such keys
 * out. So is every statement tried alone after a refusal (`eventsStatement` is asked again).
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import type { PipelinedStatement } from "./pglite-client.ts"

/** One event waiting: its key in the run's journal and the event as JSON text. */
export interface PendingEvent {
  readonly key: string
  readonly event: string
}

/** What waits: the other writes in order, then the events by run (in the order the runs first appended). */
export interface Riding {
  readonly statements: ReadonlyArray<PipelinedStatement>
  readonly events: ReadonlyMap<string, ReadonlyArray<PendingEvent>>
}

const none: Riding = { statements: [], events: new Map() }
const isEmpty = (riding: Riding) => riding.statements.length === 0 && riding.events.size === 0

/**
 * The writes of one session waiting for the next.
 *
 * @example
 * ```ts
 * const pending = new PendingWrites(10, (statements) => session.pipeline(statements), insertEvents)
 * pending.add("run_1", "run_1/Turn/#1", JSON.stringify(event))
 * yield* pending.write((riding) => writeStep(step, riding)) // the step and what waited, one call
 * ```
 */
export class PendingWrites {
  #statements: Array<PipelinedStatement> = []
  #byRun = new Map<string, Array<PendingEvent>>()
  #timer: ReturnType<typeof setTimeout> | undefined = undefined
  #closed = false
  readonly #turn = Semaphore.makeUnsafe(1)

  constructor(
    private readonly delayMs: number,
    /** Runs statements on their own, in one call. */
    private readonly run: (statements: ReadonlyArray<PipelinedStatement>) => Effect.Effect<unknown, unknown>,
    /** The statement writing one run's events (asked again when it is tried alone: see the header). */
    private readonly eventsStatement: (runId: string, events: ReadonlyArray<PendingEvent>) => PipelinedStatement,
    /** Whether `run` failed because the database refused the statements themselves (they would fail again). */
    private readonly isRefusal: (error: unknown) => boolean = () => true,
    /** How long writes put back after a failure wait before they are tried again on their own (ms). */
    private readonly retryMs = 1000
  ) {}

  /** Keeps `event` for the next write (within `delayMs` at the latest). */
  add(runId: string, key: string, event: string): void {
    let events = this.#byRun.get(runId)
    if (events === undefined) this.#byRun.set(runId, (events = []))
    events.push({ key, event })
    this.#arm(this.delayMs)
  }

  /** Keeps `statement` for the next write (within `delayMs` at the latest). */
  addStatement(statement: PipelinedStatement): void {
    this.#statements.push(statement)
    this.#arm(this.delayMs)
  }

  /** The statements that write `riding`: the other writes, then one per run's events. */
  statementsOf(riding: Riding): Array<PipelinedStatement> {
    return this.#pieces(riding).map((piece) => piece.statement)
  }

  #arm(delayMs: number): void {
    if (this.#timer === undefined && !this.#closed) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        Effect.runFork(this.flush)
      }, delayMs)
      this.#timer.unref?.()
    }
  }

  /** `write` in this buffer's turn, with what waits riding along (`Riding`); see the header for failures. */
  write<A, E>(write: (riding: Riding) => Effect.Effect<A, E>): Effect.Effect<A, E> {
    return this.#turn.withPermits(1)(Effect.suspend(() => {
      const riding = this.#take()
      if (isEmpty(riding)) return write(none)
      let handled = false
      return write(riding).pipe(
        Effect.tap(() => Effect.sync(() => void (handled = true))),
        Effect.catch(() =>
          this.#alone(riding).pipe(
            Effect.tap(() => Effect.sync(() => void (handled = true))),
            Effect.andThen(write(none))
          )
        ),
        Effect.onInterrupt(() => Effect.sync(() => handled || this.#putBack(riding)))
      )
    }))
  }

  /** Writes what waits now. */
  get flush(): Effect.Effect<void> {
    return this.#turn.withPermits(1)(Effect.suspend(() => {
      const riding = this.#take()
      let handled = false
      return this.#alone(riding).pipe(
        Effect.tap(() => Effect.sync(() => void (handled = true))),
        Effect.onInterrupt(() => Effect.sync(() => handled || this.#putBack(riding)))
      )
    }))
  }

  /** Writes what waits, a last time (the store closes): what still cannot be written is reported, not kept. */
  get close(): Effect.Effect<void> {
    return Effect.andThen(this.flush, this.#turn.withPermits(1)(Effect.suspend(() => {
      this.#closed = true
      const left = this.#take()
      const count = left.statements.length + [...left.events.values()].reduce((n, events) => n + events.length, 0)
      return count === 0 ? Effect.void : Effect.logWarning(`durable engine: ${count} journal events and run-list entries could not be written before the store closed`)
    })))
  }

  #take(): Riding {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer)
      this.#timer = undefined
    }
    if (this.#byRun.size === 0 && this.#statements.length === 0) return none
    const riding = { statements: this.#statements, events: this.#byRun }
    this.#statements = []
    this.#byRun = new Map()
    return riding
  }

  /** `riding` back ahead of what came since (each run's events before its newer ones), tried again later. */
  #putBack(riding: Riding): void {
    if (isEmpty(riding)) return
    this.#statements = [...riding.statements, ...this.#statements]
    const byRun = new Map<string, Array<PendingEvent>>()
    for (const [runId, events] of riding.events) byRun.set(runId, [...events])
    for (const [runId, events] of this.#byRun) {
      const earlier = byRun.get(runId)
      if (earlier === undefined) byRun.set(runId, events)
      else earlier.push(...events)
    }
    this.#byRun = byRun
    this.#arm(this.retryMs)
  }

  /** Each statement of `riding` with the part of `riding` it writes. */
  #pieces(riding: Riding): Array<{ readonly statement: PipelinedStatement; readonly part: Riding }> {
    return [
      ...riding.statements.map((statement) => ({ statement, part: { statements: [statement], events: new Map() } })),
      ...[...riding.events].map(([runId, events]) => ({ statement: this.eventsStatement(runId, events), part: { statements: [], events: new Map([[runId, events]]) } }))
    ]
  }

  /**
   * What rode along, all in one call; when the database refused that, each statement on its own: those
   * it refuses are dropped, and said so. What fails otherwise is put back (see the header).
   */
  #alone(riding: Riding): Effect.Effect<void> {
    if (isEmpty(riding)) return Effect.void
    const pieces = this.#pieces(riding)
    return this.run(pieces.map((piece) => piece.statement)).pipe(
      Effect.asVoid,
      Effect.catch((error) => {
        if (!this.isRefusal(error)) return Effect.sync(() => this.#putBack(riding))
        const failed: Array<Riding> = []
        // Each piece's statement made again: one numbered by the process is numbered by the database now.
        return Effect.forEach(pieces, (piece) =>
          this.run(this.statementsOf(piece.part)).pipe(
            Effect.catch((error) =>
              this.isRefusal(error)
                ? Effect.logWarning(`durable engine: dropped a write the database refused (${piece.statement.name ?? "statement"}): ${messageOf(error)}`)
                : Effect.sync(() => void failed.push(piece.part))
            )
          ), { discard: true }).pipe(Effect.andThen(Effect.sync(() => this.#putBack(merged(failed)))))
      })
    )
  }
}

const messageOf = (error: unknown): string => String((error as { message?: unknown } | null)?.message ?? error)

/** Parts of what rode along, as one, in order. */
const merged = (parts: ReadonlyArray<Riding>): Riding => {
  const statements: Array<PipelinedStatement> = []
  const events = new Map<string, Array<PendingEvent>>()
  for (const part of parts) {
    statements.push(...part.statements)
    for (const [runId, list] of part.events) events.set(runId, [...(events.get(runId) ?? []), ...list])
  }
  return { statements, events }
}
