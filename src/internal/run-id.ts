/**
 * Internal: run ids from Effect's Clock time and Random service, so tests with TestClock or a seeded
 * Random get deterministic ids. Shared by agent runs and composite runs. 60 random bits: with 30 (the
 * first version) 60,000 runs in one millisecond (a frozen clock) collided about once.
 */
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"

// 30 random bits in base 36, as `Random.nextIntBetween(0, 2 ** 30)` draws them (inclusive bound).
const part = (random: Random.Random): string => Math.floor(random.nextDoubleUnsafe() * (2 ** 30 + 1)).toString(36).padStart(6, "0")

/** A new run id for a run started at `now` (epoch milliseconds): one primitive, the fiber's Random read once. */
export const newRunId = (now: number): Effect.Effect<string> =>
  Effect.withFiber((fiber) => {
    const random = fiber.getRef(Random.Random)
    const high = part(random)
    return Effect.succeed(`run_${now.toString(36)}_${high}${part(random)}`)
  })
