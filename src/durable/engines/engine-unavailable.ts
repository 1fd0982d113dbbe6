/**
 * The one error an engine layer fails with when it cannot start: the data directory is locked by a
 * live process, PGlite or PostgreSQL cannot be opened, the runner cannot listen on its address.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { databaseMessage } from "../database-error.ts"

/**
 * An engine could not start. `engine` says which (`"embedded"`, `"postgres"`), `reason` why.
 *
 * @example
 * ```ts
 * Effect.provide(program, embeddedEngine({ dataDir })).pipe(
 *   Effect.catchTag("EngineUnavailable", (e) => Effect.logError(e.message))
 * )
 * ```
 */
export class EngineUnavailable extends Data.TaggedError("EngineUnavailable")<{
  readonly engine: "embedded" | "postgres"
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `The ${this.engine} durable engine could not start: ${this.reason}`
  }
}

/** Wraps whatever a layer failed with into an {@link EngineUnavailable}. */
export const unavailable = (engine: "embedded" | "postgres") => (cause: unknown): EngineUnavailable =>
  cause instanceof EngineUnavailable
    ? cause
    : new EngineUnavailable({ engine, reason: databaseMessage(cause), cause })

/** `layer` with its start-up failures turned into {@link EngineUnavailable}. */
export const orUnavailable = <A, E, R>(engine: "embedded" | "postgres", layer: Layer.Layer<A, E, R>): Layer.Layer<A, EngineUnavailable, R> =>
  // A layer that fails provides nothing, so widening `never` back to `A` is sound.
  Layer.catch(layer, (e: E) => Layer.effectDiscard(Effect.fail(unavailable(engine)(e)))) as unknown as Layer.Layer<A, EngineUnavailable, R>
