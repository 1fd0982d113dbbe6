/**
 * Internal: run ids from Effect's Clock time and Random service, so tests with TestClock or a seeded
 * Random get deterministic ids. Shared by agent runs and composite runs.
 */
import { Effect, Random } from "effect"

/** A new run id for a run started at `now` (epoch milliseconds). */
export const newRunId = (now: number): Effect.Effect<string> =>
  Random.nextIntBetween(0, 2 ** 30).pipe(Effect.map((n) => `run_${now.toString(36)}_${n.toString(36).padStart(6, "0")}`))
