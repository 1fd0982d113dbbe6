import canonicalize from "canonicalize"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalJson } from "../../src/internal/canonical-json.ts"
import { reorderKeys } from "./reorder-keys.ts"

// Hostile keys and numbers: lone surrogates, non-BMP characters, -0, tiny and huge exponents.
const key = fc.oneof(fc.string({ unit: "binary" }), fc.constantFrom("", "__proto__", "\u20ac", "\ud83d\ude00", "\ud800", "a\u0000b", "10", "1"))
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(-0, 1e21, 1e-7, 5e-324, 333333333.33333329, 2 ** 53),
    fc.string({ unit: "binary" }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 })
  )
})).value

describe("canonicalJson (RFC 8785)", () => {
  it("is the text of the RFC co-author's canonicalize on arbitrary JSON, and ignores key order", () => {
    fc.assert(fc.property(json, (value) => {
      const text = canonicalJson(value)
      expect(text).toBe(canonicalize(value))
      expect(canonicalJson(reorderKeys(value))).toBe(text)
      expect(canonicalJson(JSON.parse(text))).toBe(text)
    }), { numRuns: 300 })
  })

  it("matches the RFC's own example and refuses what JSON has no text for", () => {
    expect(canonicalJson({ numbers: [333333333.33333329, 1e30, 4.5, 2e-3, 0.000000000000000000000000001], literals: [null, true, false] }))
      .toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27]}')
    expect(canonicalJson({ "\u20ac": 1, "\r": 2, "\ufb33": 3, "1": 4, "\ud83d\ude00": 5, "\u0080": 6, "\u00f6": 7 }))
      .toBe('{"\\r":2,"1":4,"\u0080":6,"\u00f6":7,"\u20ac":1,"\ud83d\ude00":5,"\ufb33":3}')
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError)
    expect(() => canonicalJson(1n)).toThrow(TypeError)
  })
})
