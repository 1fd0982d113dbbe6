/**
 * The embedded engine's last journal id per run (`JournalLastIds`): what was learnt is answered once
 * (taken), then unknown until learnt again; at most `capacity` runs are kept, the least recently
 * learnt forgotten first; an id that is not a count is not kept. Checked against a plain model for any
 * sequence of learns and takes.
 */
import { fc, it as fcIt } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { JournalLastIds } from "../../src/durable/engines/journal-last-ids.ts"

type Op = { readonly _tag: "learn"; readonly run: string; readonly last: number } | { readonly _tag: "take"; readonly run: string }

const run = fc.constantFrom("a", "b", "c", "d", "", "\u0000", "__proto__")
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ _tag: fc.constant("learn" as const), run, last: fc.oneof(fc.nat(), fc.constantFrom(-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60)) }),
  fc.record({ _tag: fc.constant("take" as const), run })
)

describe("JournalLastIds", () => {
  fcIt.prop([fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 4 })])("answers as a bounded, least-recently-learnt-first map taken once", (ops, capacity) => {
    const ids = new JournalLastIds(capacity)
    let model: Array<[string, number]> = []
    for (const o of ops) {
      if (o._tag === "learn") {
        model = model.filter(([r]) => r !== o.run)
        if (Number.isSafeInteger(o.last) && o.last >= 0) model.push([o.run, o.last])
        if (model.length > capacity) model.shift()
        ids.learn(o.run, o.last)
      } else {
        const expected = model.find(([r]) => r === o.run)?.[1]
        model = model.filter(([r]) => r !== o.run)
        expect(ids.take(o.run)).toBe(expected)
      }
    }
  })

  it("a taken id is unknown until learnt again", () => {
    const ids = new JournalLastIds(10)
    ids.learn("r", 3)
    expect(ids.take("r")).toBe(3)
    expect(ids.take("r")).toBeUndefined()
    ids.learn("r", 5)
    expect(ids.take("r")).toBe(5)
  })
})
