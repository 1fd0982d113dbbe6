/**
 * Run ids: the timestamp part is what `toString(36)` gives, written two base-36 digits at a time
 * (faster for a millisecond timestamp on Node 20, issue #37); the random part draws from the Random given.
 */
import { fc, test } from "@fast-check/vitest"
import { expect } from "vitest"
import { runIdOf } from "../../src/internal/run-id.ts"

const fixed = (value: number) => ({ nextDoubleUnsafe: () => value }) as unknown as Parameters<typeof runIdOf>[1]

test.prop([fc.oneof(fc.nat(), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.double({ min: 0, max: 1e15, noNaN: true }))])(
  "the timestamp part is the timestamp in base 36",
  (now) => {
    expect(runIdOf(now, fixed(0)).split("_")[1]).toBe(now.toString(36))
  }
)

test("the random part: two 30-bit draws in base 36, six digits each", () => {
  expect(runIdOf(0, fixed(0))).toBe("run_0_000000000000")
  // floor(0.5 * (2^30 + 1)) = 536870912 = "8vn08w" in base 36
  expect(runIdOf(1296, fixed(0.5))).toBe("run_100_8vn08w8vn08w")
})

test.prop([fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })])(
  "each random part is the 30-bit draw in base 36, zero-padded to six digits",
  (high, low) => {
    const draws = [high, low]
    const random = { nextDoubleUnsafe: () => draws.shift()! } as unknown as Parameters<typeof runIdOf>[1]
    const sixDigits = (value: number) => Math.floor(value * (2 ** 30 + 1)).toString(36).padStart(6, "0")
    expect(runIdOf(1, random)).toBe(`run_1_${sixDigits(high)}${sixDigits(low)}`)
  }
)

test.prop([fc.array(fc.nat({ max: 5 }), { minLength: 1, maxLength: 20 })])(
  "runs started in the same millisecond share a prefix, and a new millisecond gets its own",
  (times) => {
    // floor(0.999999 * (2^30 + 1)) = "hr9znz" in base 36
    for (const now of times) expect(runIdOf(now, fixed(0.999999))).toBe(`run_${now.toString(36)}_hr9znzhr9znz`)
  }
)
