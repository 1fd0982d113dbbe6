/**
 * Internal: our spans and span annotations are made only when someone can see them, that is when the
 * fiber's tracer is not Effect's `nativeTracer` (which keeps spans in memory and exports nothing) and
 * tracing is enabled. Under the native tracer a run made 12 spans and 13 annotations nobody read
 * (about a tenth of a short run); with any real tracer (OpenTelemetry, a test's capturing tracer)
 * every span and attribute is there as before. Annotations are skipped too, so that they never land
 * on a span of the caller's when ours was skipped.
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as References from "effect/References"
import * as Tracer from "effect/Tracer"

/** Whether spans made on `fiber` reach a tracer other than Effect's native one. */
export const isTraced = (fiber: Fiber.Fiber<unknown, unknown>): boolean =>
  fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer && fiber.getRef(References.TracerEnabled)

/** `make(traced, fiber)` with `traced` read from the running fiber (see `isTraced`). */
export const withTracing = <A, E, R>(
  make: (traced: boolean, fiber: Fiber.Fiber<unknown, unknown>) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => Effect.withFiber((fiber) => make(isTraced(fiber), fiber))
