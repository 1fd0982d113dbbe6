/** A call's arguments as JSON text, whatever the wire gave: no arguments (absent, null, empty or blank text) is "{}". */
import { describe, expect, it } from "vitest"
import { argumentsText } from "../../src/providers/normalise-calls.ts"

describe("argumentsText", () => {
  it("reads no arguments as {} (blank text too), keeps text, serialises an object once", () => {
    expect([undefined, null, "", "  \n"].map(argumentsText)).toEqual(["{}", "{}", "{}", "{}"])
    expect(argumentsText('{"a":1}')).toBe('{"a":1}')
    expect(argumentsText({ a: 1 })).toBe('{"a":1}')
  })
})
