/**
 * The embedded engine's writes waiting to ride along with its next one: journal events (by run, in
 * order) and other small writes that need not commit on their own (a run's entry in the run list).
 * The store's next write of a step takes them into the same call into PGlite (the events of one run
 * into the step's very statement: the step's recorded result and its events commit together), or
 * they go on their own within `delayMs` when no step comes. A read takes them first.
 *
 * Writes take turns: each takes what waits when its turn comes, so a run's events keep their order.
 * A write that fails with others riding along is tried again without them, and each of them alone:
 * what the database refuses is dropped with a warning, never the step.
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
  readonly #turn = Semaphore.makeUnsafe(1)

  constructor(
    private readonly delayMs: number,
    /** Runs statements on their own, in one call. */
    private readonly run: (statements: ReadonlyArray<PipelinedStatement>) => Effect.Effect<unknown, unknown>,
    /** The statement writing one run's events. */
    private readonly eventsStatement: (runId: string, events: ReadonlyArray<PendingEvent>) => PipelinedStatement
  ) {}

  /** Keeps `event` for the next write (within `delayMs` at the latest). */
  add(runId: string, key: string, event: string): void {
    let events = this.#byRun.get(runId)
    if (events === undefined) this.#byRun.set(runId, (events = []))
    events.push({ key, event })
    this.#arm()
  }

  /** Keeps `statement` for the next write (within `delayMs` at the latest). */
  addStatement(statement: PipelinedStatement): void {
    this.#statements.push(statement)
    this.#arm()
  }

  /** The statements that write `riding`: the other writes, then one per run's events. */
  statementsOf(riding: Riding): Array<PipelinedStatement> {
    const statements = [...riding.statements]
    for (const [runId, events] of riding.events) statements.push(this.eventsStatement(runId, events))
    return statements
  }

  #arm(): void {
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        Effect.runFork(this.flush)
      }, this.delayMs)
      this.#timer.unref?.()
    }
  }

  /** `write` in this buffer's turn, with what waits riding along (`Riding`); see the header for failures. */
  write<A, E>(write: (riding: Riding) => Effect.Effect<A, E>): Effect.Effect<A, E> {
    return this.#turn.withPermits(1)(Effect.suspend(() => {
      const riding = this.#take()
      if (isEmpty(riding)) return write(none)
      return write(riding).pipe(Effect.catch(() => Effect.andThen(this.#alone(riding), write(none))))
    }))
  }

  /** Writes what waits now. */
  get flush(): Effect.Effect<void> {
    return this.#turn.withPermits(1)(Effect.suspend(() => this.#alone(this.#take())))
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

  /** What rode along, all in one call, else each statement on its own; those the database refuses are dropped, and said so. */
  #alone(riding: Riding): Effect.Effect<void> {
    if (isEmpty(riding)) return Effect.void
    const statements = this.statementsOf(riding)
    return this.run(statements).pipe(
      Effect.catch(() =>
        Effect.forEach(statements, (statement) =>
          this.run([statement]).pipe(
            Effect.catch((error) => Effect.logWarning(`durable engine: dropped a write the database refused (${statement.name ?? "statement"}): ${String((error as { message?: unknown })?.message ?? error)}`))
          ), { discard: true })
      ),
      Effect.asVoid
    )
  }
}
