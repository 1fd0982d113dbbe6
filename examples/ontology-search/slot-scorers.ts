/**
 * Scorers for the search evaluation (effect-agent-dsl/evals): slot precision and recall over the
 * corrected slots, counted as items (`domain:hdmap`, `filter:roadTypes=motorway`, `range:laneCount.min=4`,
 * `reference:scenario`), and gap accuracy (the expected unresolvable terms reported, and no others).
 */
import { scorer } from "effect-agent-dsl/evals"
import type { CorrectedSlots } from "./corrections.ts"

/** What a case expects: the corrected slots, and the terms that must be reported as gaps. */
export interface ExpectedSlots {
  readonly domains: ReadonlyArray<string>
  readonly filters: Readonly<Record<string, ReadonlyArray<string>>>
  readonly ranges: Readonly<Record<string, { readonly min?: number; readonly max?: number }>>
  readonly reference?: string
  readonly gaps: ReadonlyArray<string>
}

/**
 * Slots as a set of items.
 *
 * @example
 * ```ts
 * slotItems({ domains: ["hdmap"], filters: { roadTypes: ["motorway"] }, ranges: {} }) // ["domain:hdmap", "filter:roadTypes=motorway"]
 * ```
 */
export const slotItems = (s: Pick<ExpectedSlots, "domains" | "filters" | "ranges" | "reference">): ReadonlyArray<string> => [
  ...s.domains.map((d) => `domain:${d}`),
  ...Object.entries(s.filters).flatMap(([k, vs]) => vs.map((v) => `filter:${k}=${v}`)),
  ...Object.entries(s.ranges).flatMap(([k, r]) => [...(r.min === undefined ? [] : [`range:${k}.min=${r.min}`]), ...(r.max === undefined ? [] : [`range:${k}.max=${r.max}`])]),
  ...(s.reference === undefined ? [] : [`reference:${s.reference}`])
]

const overlap = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => a.filter((x) => b.includes(x)).length

/** Share of the predicted slot items that were expected (1 when nothing was predicted and nothing expected). */
export const slotPrecision = scorer<string, CorrectedSlots, ExpectedSlots>("slotPrecision", ({ case: c, output }) => {
  if (output === undefined || c.expected === undefined) return 0
  const got = slotItems(output)
  const want = slotItems(c.expected)
  return got.length === 0 ? (want.length === 0 ? 1 : 0) : overlap(got, want) / got.length
}, { threshold: 1 })

/** Share of the expected slot items that were predicted. */
export const slotRecall = scorer<string, CorrectedSlots, ExpectedSlots>("slotRecall", ({ case: c, output }) => {
  if (output === undefined || c.expected === undefined) return 0
  const want = slotItems(c.expected)
  return want.length === 0 ? 1 : overlap(want, slotItems(output)) / want.length
}, { threshold: 1 })

/** Expected gap terms reported (a reported term containing the expected one counts), over the larger of both counts. */
export const gapAccuracy = scorer<string, CorrectedSlots, ExpectedSlots>("gapAccuracy", ({ case: c, output }) => {
  if (output === undefined || c.expected === undefined) return 0
  const got = output.gaps.map((g) => g.term.toLowerCase())
  const want = c.expected.gaps.map((g) => g.toLowerCase())
  if (got.length === 0 && want.length === 0) return 1
  const found = want.filter((w) => got.some((g) => g.includes(w))).length
  return found / Math.max(got.length, want.length)
}, { threshold: 1 })
