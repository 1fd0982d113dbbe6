/**
 * A run as a Stream of its events: the run's `StreamSink` offers every event and delta to the stream's
 * queue, and the stream ends when the run does (or fails with its error). What `runStream` of a
 * composite and `resumeStream` of an agent or composite are; stopping the stream interrupts the run.
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Queue from "effect/Queue"
import type * as Stream from "effect/Stream"
import { effectQueue, effectStream } from "../internal/lazy-effect.ts"
import type { RunStreamEvent } from "./events.ts"
import { StreamSink } from "./lineage.ts"

/**
 * The events `run` sends to its `StreamSink`, as a Stream of `Ev`.
 *
 * @example
 * ```ts
 * const events = sinkStream<RunStreamEvent, AgentError, never>(bank.resume(snapshot, { k1: Decision.approve }))
 * ```
 */
export const sinkStream = <Ev, E, R>(run: Effect.Effect<unknown, E, R>): Stream.Stream<Ev, E, R> =>
  effectStream().callback<Ev, E, R>((queue: Queue.Queue<Ev, E | Cause.Done>) =>
    run.pipe(
      Effect.provideService(StreamSink, (event: RunStreamEvent) => Effect.asVoid(effectQueue().offer(queue, event as unknown as Ev))),
      Effect.andThen(effectQueue().end(queue))
    ), { bufferSize: 256, strategy: "suspend" })
