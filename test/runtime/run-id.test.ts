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
