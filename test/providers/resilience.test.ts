import { describe, expect, it } from "vitest"
import { retryAdvice, shouldRetryStatus } from "../../src/providers/resilience.ts"

describe("retryAdvice: what a failed reply says about retrying", () => {
  const now = Date.parse("2026-11-23T10:00:00Z")

  it("reads retry-after-ms before Retry-After", () => {
    expect(retryAdvice(new Headers({ "retry-after-ms": "250", "retry-after": "9" }), now)).toEqual({ retryAfterMs: 250 })
  })

  it("reads Retry-After in seconds (fractions too) and as an HTTP date", () => {
    expect(retryAdvice({ "Retry-After": "2" }, now)).toEqual({ retryAfterMs: 2000 })
    expect(retryAdvice({ "retry-after": "0.5" }, now)).toEqual({ retryAfterMs: 500 })
    expect(retryAdvice({ "retry-after": "Mon, 23 Nov 2026 10:00:05 GMT" }, now)).toEqual({ retryAfterMs: 5000 })
    expect(retryAdvice({ "retry-after": "Mon, 23 Nov 2026 09:00:00 GMT" }, now)).toEqual({ retryAfterMs: 0 })
  })

  it("ignores what it cannot read", () => {
    expect(retryAdvice({ "retry-after": "soon" }, now)).toEqual({})
    expect(retryAdvice(undefined, now)).toEqual({})
  })

  it("reads x-should-retry, which overrides the status", () => {
    const no = retryAdvice({ "x-should-retry": "false" }, now)
    const yes = retryAdvice({ "x-should-retry": "true" }, now)
    expect(shouldRetryStatus(503, no)).toBe(false)
    expect(shouldRetryStatus(400, yes)).toBe(true)
    expect(shouldRetryStatus(429, {})).toBe(true)
    expect(shouldRetryStatus(429, {}, "insufficient_quota")).toBe(false)
    expect(shouldRetryStatus(404, {})).toBe(false)
  })
})
