/**
 * Internal: run ids from Effect's Clock time and Random service, so tests with TestClock or a seeded
 * Random get deterministic ids. Shared by agent runs and composite runs. 60 random bits: with 30 (the
 * first version) 60,000 runs in one millisecond (a frozen clock) collided about once.
 */
import { Effect, Random } from "effect"

const part = Random.nextIntBetween(0, 2 ** 30).pipe(Effect.map((n) => n.toString(36).padStart(6, "0")))

/** A new run id for a run started at `now` (epoch milliseconds). */
export const newRunId = (now: number): Effect.Effect<string> =>
  Effect.zipWith(part, part, (high, low) => `run_${now.toString(36)}_${high}${low}`)
