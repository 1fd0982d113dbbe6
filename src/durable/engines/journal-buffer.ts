/**
 * The embedded engine's journal events waiting to ride along with its next write: `append` keeps
 * them here, by run and in order, and the store's next write of a step takes them into the same
 * statement (the step's recorded result and its events commit together, in one call into PGlite),
 * or they go on their own within `delayMs` when no step comes. A read of the journal takes them first.
 *
 * Writes take turns: each takes what waits when its turn comes, so a run's events keep their order.
 * A write that fails with events riding along is tried again without them, and the events of each
 * run alone: events the database refuses are dropped with a warning, never the step.
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"

/** One event waiting: its key in the run's journal and the event as JSON text. */
export interface PendingEvent {
  readonly key: string
  readonly event: string
}

/** What waits, by run (in the order the runs first appended). */
export type Riding = ReadonlyMap<string, ReadonlyArray<PendingEvent>>

const none: Riding = new Map()

/**
 * The events of one session waiting for a write.
 *
 * @example
 * ```ts
 * const buffer = new JournalBuffer(10, (runId, events) => insertEvents(runId, events))
 * buffer.add("run_1", "run_1/Turn/#1", JSON.stringify(event))
 * yield* buffer.write((riding) => writeStep(step, riding)) // the step and what waited, one call
 * ```
 */
export class JournalBuffer {
  #byRun = new Map<string, Array<PendingEvent>>()
  #timer: ReturnType<typeof setTimeout> | undefined = undefined
  readonly #turn = Semaphore.makeUnsafe(1)

  constructor(
    private readonly delayMs: number,
    /** Writes one run's events on their own. */
    private readonly writeEvents: (runId: string, events: ReadonlyArray<PendingEvent>) => Effect.Effect<unknown, unknown>
  ) {}

  /** Keeps `event` for the next write (within `delayMs` at the latest). */
  add(runId: string, key: string, event: string): void {
    let events = this.#byRun.get(runId)
    if (events === undefined) this.#byRun.set(runId, (events = []))
    events.push({ key, event })
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
      if (riding.size === 0) return write(none)
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
    if (this.#byRun.size === 0) return none
    const riding = this.#byRun
    this.#byRun = new Map()
    return riding
  }

  /** Each run's events on their own; those the database refuses are dropped, and said so. */
  #alone(riding: Riding): Effect.Effect<void> {
    return Effect.forEach(riding, ([runId, events]) =>
      this.writeEvents(runId, events).pipe(
        Effect.catch((error) => Effect.logWarning(`durable engine: dropped ${events.length} journal event(s) of run ${runId} the database refused: ${String((error as { message?: unknown })?.message ?? error)}`))
      ), { discard: true })
  }
}
