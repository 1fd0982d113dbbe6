/**
 * Internal: our spans skip Effect's call-site stack capture. The captured frame would point into this
 * library, not at user code, and capturing it was the largest single cost of a run (14% of CPU in
 * the calculator benchmark's profile).
 */
import type * as Tracer from "effect/Tracer"

export const noStackTrace: Tracer.TraceOptions = { captureStackTrace: false }
