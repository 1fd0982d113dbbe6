/**
 * Internal: run ids from Effect's Clock time and Random service, so tests with TestClock or a seeded
 * Random get deterministic ids. Shared by agent runs and composite runs. 60 random bits: with 30 (the
 * first version) 60,000 runs in one millisecond (a frozen clock) collided about once.
 */
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"

const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
const digitPairs = Array.from({ length: 36 * 36 }, (_, i) => digits[Math.floor(i / 36)]! + digits[i % 36]!)

/**
 * `n.toString(36)` for a non-negative safe integer, two digits at a time: a millisecond timestamp is
 * past 2^31, where V8's `toString(36)` takes ~230 ns against ~90 ns here.
 */
const base36 = (n: number): string => {
  if (!Number.isSafeInteger(n) || n < 0) return n.toString(36)
  if (n < 1296) return n < 36 ? digits[n]! : digitPairs[n]!
  return base36(Math.floor(n / 1296)) + digitPairs[n % 1296]!
}

// 36^4: a 30-bit part's first two digits are its quotient by this (below 36^2, since 2^30 < 36^6).
const fourDigits = 36 ** 4

/**
 * 30 random bits as `Random.nextIntBetween(0, 2 ** 30)` draws them (inclusive bound), as exactly six
 * base-36 digits (zero-padded: each pair is two digits), three table reads and no `padStart`.
 */
const part = (random: Random.Random): string => {
  const n = Math.floor(random.nextDoubleUnsafe() * (2 ** 30 + 1))
  return digitPairs[Math.floor(n / fourDigits)]! + digitPairs[Math.floor(n / 1296) % 1296]! + digitPairs[n % 1296]!
}

// Runs started in one millisecond share their id's prefix: it is made once for that millisecond.
let prefixTime = Number.NaN
let prefix = ""

/**
 * A new run id for a run started at `now` (epoch milliseconds), drawn from `random` (the fiber's).
 *
 * @example
 * ```ts
 * runIdOf(now, fiber.getRef(Random.Random)) // "run_mi3k2x1c_0k3j2a9x1b2c"
 * ```
 */
export const runIdOf = (now: number, random: Random.Random): string => {
  if (now !== prefixTime) {
    prefix = `run_${base36(now)}_`
    prefixTime = now
  }
  const high = part(random)
  return prefix + high + part(random)
}

/** A new run id for a run started at `now` (epoch milliseconds): one primitive, the fiber's Random read once. */
export const newRunId = (now: number): Effect.Effect<string> => Effect.withFiber((fiber) => Effect.succeed(runIdOf(now, fiber.getRef(Random.Random))))
