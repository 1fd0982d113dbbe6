/**
 * The three post-LLM corrections of seed 000, applied to what the model submitted before anything
 * reaches SPARQL:
 * - filter values: exact → case-insensitive → substring → edit distance ≤ 4 (and at most a third of the
 *   term's length, so "DE" never becomes "US") → a gap with suggestions from a tokenised match against
 *   the real vocabulary ("motoway" → "motorway");
 * - domains: each filtered property's domains come from the property → domain map; missing ones are
 *   added, valid ones kept, unknown ones corrected like values or reported;
 * - confidence: recomputed from how the terms matched, domains and property keys as well as values
 *   (exact or case-insensitive high, substring or fuzzy medium, any gap low), never the model's own say.
 * Ranges are held to what the shapes declare for the domains searched (`fitRange`): a bound outside the
 * declared range is clamped to it, a fractional bound of an `xsd:integer` property rounded inwards, a
 * reversed range swapped, a bound that is not a number dropped; each change is a correction, and a
 * bound that excludes every value the shapes allow is also a gap (confidence low), never 0 hits at "high".
 * Several cross-domain references: the first valid one is kept, the others are gaps explaining the
 * single-slot rule. The model's own gaps keep only suggestions that are vocabulary terms, joined by a
 * tokenised match against the vocabulary; a term reported twice is one gap.
 */
import type { Gap, Submission } from "./slots.ts"
import { type DeclaredRange, declaredRange, type Vocabulary } from "./vocabulary.ts"

/** How a term matched the vocabulary. */
export type MatchKind = "exact" | "case-insensitive" | "substring" | "fuzzy"

/**
 * How a range bound was changed to fit the declared range: `clamped` into it, `rounded` inwards to an
 * integer, `swapped` (min and max given the wrong way round), `dropped` (not a number, or an infinite
 * bound on a side the shapes leave open).
 */
export type RangeFix = "clamped" | "rounded" | "swapped" | "dropped"

/** One change the corrections made, for the user to see. */
export interface Correction {
  readonly slot: string
  readonly from: string
  readonly to: string
  readonly match: MatchKind | "added" | RangeFix
}

/** Slots that only hold vocabulary terms: what the query compiler accepts. */
export interface CorrectedSlots {
  readonly domains: ReadonlyArray<string>
  readonly filters: Readonly<Record<string, ReadonlyArray<string>>>
  readonly ranges: Readonly<Record<string, { readonly min?: number; readonly max?: number }>>
  readonly reference?: string
  readonly interpretation: string
  readonly corrections: ReadonlyArray<Correction>
  readonly gaps: ReadonlyArray<Gap>
  readonly confidence: "high" | "medium" | "low"
}

/** Levenshtein distance. */
export const editDistance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = row[j]!
      row[j] = next
    }
  }
  return row[b.length]!
}

const tokens = (s: string) => s.toLowerCase().split(/[^a-z0-9]+/).filter((t) => t.length > 0)

/**
 * The one vocabulary value `term` stands for, and how it matched; undefined when none or several do.
 *
 * @example
 * ```ts
 * matchTerm("motoway", ["motorway", "rural"]) // { value: "motorway", match: "fuzzy" }
 * ```
 */
export const matchTerm = (term: string, vocabulary: ReadonlyArray<string>): { readonly value: string; readonly match: MatchKind } | undefined => {
  if (vocabulary.includes(term)) return { value: term, match: "exact" }
  const t = term.trim().toLowerCase()
  if (t.length === 0) return undefined
  const one = (xs: ReadonlyArray<string>) => (xs.length === 1 ? xs[0] : undefined)
  const ci = one(vocabulary.filter((v) => v.toLowerCase() === t))
  if (ci !== undefined) return { value: ci, match: "case-insensitive" }
  const sub = one(vocabulary.filter((v) => { const l = v.toLowerCase(); return l.includes(t) || (t.includes(l) && l.length >= 3) }))
  if (sub !== undefined) return { value: sub, match: "substring" }
  const limit = Math.min(4, Math.floor(t.length / 3))
  const scored = vocabulary.map((v) => ({ v, d: editDistance(t, v.toLowerCase()) })).filter((x) => x.d <= limit)
  const best = Math.min(...scored.map((x) => x.d))
  const fuzzy = one(scored.filter((x) => x.d === best).map((x) => x.v))
  return fuzzy === undefined ? undefined : { value: fuzzy, match: "fuzzy" }
}

/**
 * Suggestions for a term no value matched: vocabulary values sharing a token with it (or a token
 * within edit distance 2), else the three nearest by edit distance.
 *
 * @example
 * ```ts
 * suggest("fast road", ["motorway", "highway-ramp"]) // ["motorway", "highway-ramp"] (nearest)
 * ```
 */
export const suggest = (term: string, vocabulary: ReadonlyArray<string>): ReadonlyArray<string> => {
  const byToken = tokenMatches(term, vocabulary)
  if (byToken.length > 0) return byToken
  return [...vocabulary].sort((a, b) => editDistance(term.toLowerCase(), a.toLowerCase()) - editDistance(term.toLowerCase(), b.toLowerCase())).slice(0, 3)
}

/**
 * The tokenised match alone: vocabulary values sharing a token with `term` (or a token within edit
 * distance 2), at most five; none when nothing is alike.
 *
 * @example
 * ```ts
 * tokenMatches("lidar scans", ["lidar", "camera"]) // ["lidar"]
 * ```
 */
export const tokenMatches = (term: string, vocabulary: ReadonlyArray<string>): ReadonlyArray<string> => {
  const mine = tokens(term)
  return vocabulary.filter((v) => tokens(v).some((vt) => mine.some((t) => t === vt || (t.length > 3 && editDistance(t, vt) <= 2)))).slice(0, 5)
}

const single = "only one cross-domain reference is supported per search (a single JOIN slot)"

/**
 * Applies the corrections to a submission.
 *
 * @example
 * ```ts
 * correctSlots(vocabulary, { slots: { domains: ["scenario"], filters: { roadTypes: "motoway" }, ranges: {} }, interpretation: "", gaps: [] })
 * // domains ["scenario", "hdmap"], filters { roadTypes: ["motorway"] }, confidence "medium"
 * ```
 */
export const correctSlots = (vocabulary: Vocabulary, submission: Submission): CorrectedSlots => {
  const corrections: Array<Correction> = []
  // How every term the answer used matched (domains, property keys, values): the confidence.
  const kinds: Array<MatchKind> = []
  const domainNames = [...vocabulary.domains.keys()]
  const propertyNames = [...vocabulary.propertyDomains.keys()]
  const allTerms = [...new Set([...domainNames, ...propertyNames, ...[...vocabulary.enumValues.values()].flat()])]

  // One gap per term: a term the model and the corrections both report is merged, suggestions joined.
  const gaps: Array<Gap> = []
  const addGap = (gap: Gap) => {
    const same = gaps.findIndex((g) => g.term.trim().toLowerCase() === gap.term.trim().toLowerCase())
    if (same === -1) {
      gaps.push(gap)
      return
    }
    const joined = [...new Set([...(gaps[same]!.suggestions ?? []), ...(gap.suggestions ?? [])])]
    gaps[same] = { ...gaps[same]!, ...(joined.length === 0 ? {} : { suggestions: joined }) }
  }
  // The model's own gaps: suggestions come from the real vocabulary only (seed 000): its own where
  // they name a vocabulary term, then a tokenised match of the term; none when nothing is alike.
  for (const g of submission.gaps) {
    const own = (g.suggestions ?? []).flatMap((s) => { const m = matchTerm(s, allTerms); return m === undefined ? [] : [m.value] })
    const suggestions = [...new Set([...own, ...tokenMatches(g.term, allTerms)])].slice(0, 5)
    addGap({ term: g.term, reason: g.reason, ...(suggestions.length === 0 ? {} : { suggestions }) })
  }

  // Domains the model named: kept when valid, corrected like values, else a gap.
  const domains: Array<string> = []
  for (const d of submission.slots.domains) {
    const m = matchTerm(d, domainNames)
    if (m === undefined) addGap({ term: d, reason: "not a searchable asset type", suggestions: suggest(d, domainNames) })
    else {
      kinds.push(m.match)
      if (m.match !== "exact") corrections.push({ slot: "domains", from: d, to: m.value, match: m.match })
      if (!domains.includes(m.value)) domains.push(m.value)
    }
  }

  const addDomainsFor = (property: string) => {
    const owners = vocabulary.propertyDomains.get(property) ?? []
    if (owners.some((o) => domains.includes(o))) return
    for (const o of owners) {
      domains.push(o)
      corrections.push({ slot: "domains", from: property, to: o, match: "added" })
    }
  }

  // Property keys: corrected like values (against the property names), else a gap.
  const resolveKey = (key: string, slot: string, numeric: boolean): string | undefined => {
    const candidates = propertyNames.filter((p) => isNumeric(vocabulary, p) === numeric)
    const m = matchTerm(key, candidates)
    if (m === undefined) {
      addGap({ term: key, reason: numeric ? "no numeric property of that name" : "no enumerated property of that name", suggestions: suggest(key, candidates) })
      return undefined
    }
    kinds.push(m.match)
    if (m.match !== "exact") corrections.push({ slot, from: key, to: m.value, match: m.match })
    return m.value
  }

  const filters: Record<string, Array<string>> = {}
  for (const [key, raw] of Object.entries(submission.slots.filters)) {
    const property = resolveKey(key, "filters", false)
    if (property === undefined) continue
    const allowed = vocabulary.enumValues.get(property) ?? []
    for (const value of typeof raw === "string" ? [raw] : raw) {
      const m = matchTerm(value, allowed)
      if (m === undefined) {
        addGap({ term: value, reason: `not a value of ${property}`, suggestions: suggest(value, allowed) })
        continue
      }
      kinds.push(m.match)
      if (m.match !== "exact") corrections.push({ slot: `filters.${property}`, from: value, to: m.value, match: m.match })
      const list = (filters[property] ??= [])
      if (!list.includes(m.value)) list.push(m.value)
    }
    if (filters[property] !== undefined) addDomainsFor(property)
  }

  // Range keys first: they may add domains, and the range a property may take depends on the domains.
  const requested = new Map<string, { readonly key: string; readonly range: Submission["slots"]["ranges"][string] }>()
  for (const [key, range] of Object.entries(submission.slots.ranges)) {
    const property = resolveKey(key, "ranges", true)
    if (property === undefined) continue
    if (range.min === undefined && range.max === undefined) continue
    const earlier = requested.get(property)
    if (earlier !== undefined) {
      addGap({ term: key, reason: `${property} already has a range (given as ${earlier.key}); one range per property is used` })
      continue
    }
    requested.set(property, { key, range })
    addDomainsFor(property)
  }

  if (domains.length === 0) domains.push(...domainNames)

  const ranges: Record<string, { min?: number; max?: number }> = {}
  let reversed = false
  for (const [property, { range }] of requested) {
    const declared = declaredRange(vocabulary, property, domains) ?? declaredRange(vocabulary, property, domainNames) ?? { integer: false }
    const fitted = fitRange(property, range, declared)
    corrections.push(...fitted.corrections)
    for (const gap of fitted.gaps) addGap(gap)
    reversed ||= fitted.corrections.some((c) => c.match === "swapped")
    if (fitted.range.min !== undefined || fitted.range.max !== undefined) ranges[property] = fitted.range
  }

  // References: one kept (the first whose target some chosen domain connects to), the others are gaps.
  const raw = submission.slots.references
  const nominated = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw as { domain: string }]
  let reference: string | undefined
  for (const r of nominated) {
    const m = matchTerm(r.domain, domainNames)
    if (m === undefined) {
      addGap({ term: r.domain, reason: "not a searchable asset type to reference", suggestions: suggest(r.domain, domainNames) })
    } else if (reference !== undefined) {
      addGap({ term: r.domain, reason: `${single}; kept the reference to ${reference}` })
    } else if (!vocabulary.connections.some((c) => c.to === m.value && domains.includes(c.from))) {
      addGap({ term: r.domain, reason: `none of ${domains.join(", ")} references ${m.value}`, suggestions: vocabulary.connections.filter((c) => domains.includes(c.from)).map((c) => c.to) })
    } else reference = m.value
  }

  // A swapped range is a guess at what was meant, like a fuzzy match; a clamp or rounding inside the
  // declared range finds the same assets as asked (an unsatisfiable bound is a gap, counted above).
  const confidence = gaps.length > 0 ? "low" : reversed || kinds.some((k) => k === "substring" || k === "fuzzy") ? "medium" : "high"
  return { domains, filters, ranges, ...(reference === undefined ? {} : { reference }), interpretation: submission.interpretation, corrections, gaps, confidence }
}

const isNumeric = (vocabulary: Vocabulary, property: string) =>
  [...vocabulary.domains.values()].some((d) => { const p = d.properties.get(property); return p !== undefined && (p.datatype === "integer" || p.datatype === "decimal") })

/** A range held to the declared one: the bounds kept, and every change as a correction (and a gap when nothing the shapes allow is left). */
export interface FittedRange {
  readonly range: { readonly min?: number; readonly max?: number }
  readonly corrections: ReadonlyArray<Correction>
  readonly gaps: ReadonlyArray<Gap>
}

const between = (declared: DeclaredRange) =>
  declared.min === undefined ? (declared.max === undefined ? "any number" : `at most ${declared.max}`)
    : declared.max === undefined ? `at least ${declared.min}` : `from ${declared.min} to ${declared.max}`

/**
 * Holds a requested range to the declared one, in this order: a bound that is not a number is dropped
 * (a gap); a reversed range is swapped; a bound beyond the declared range is clamped to it (a bound
 * reaching past the far end excludes everything the shapes allow: a gap, and the search keeps the
 * nearest value allowed; an infinite one on an open side is dropped); an `xsd:integer` bound is
 * rounded inwards, and a range holding no integer becomes the integer nearest its middle (a gap).
 * What comes out has finite bounds inside `declared`, integers for an integer property, min ≤ max.
 *
 * @example
 * ```ts
 * fitRange("laneCount", { min: 20 }, { min: 1, max: 8, integer: true })
 * // range { min: 8 }, corrections [{ slot: "ranges.laneCount.min", from: "20", to: "8", match: "clamped" }],
 * // gaps [{ term: "laneCount min 20", reason: "the shapes allow laneCount from 1 to 8; searched from 8, the largest value allowed" }]
 * ```
 */
export const fitRange = (property: string, requested: { readonly min?: number | undefined; readonly max?: number | undefined }, declared: DeclaredRange): FittedRange => {
  const corrections: Array<Correction> = []
  const gaps: Array<Gap> = []
  const slot = `ranges.${property}`
  const change = (bound: "min" | "max", from: number, to: number | undefined, match: RangeFix) =>
    corrections.push({ slot: `${slot}.${bound}`, from: String(from), to: to === undefined ? "(no bound)" : String(to), match })
  const unsatisfiable = (bound: "min" | "max", value: number, instead: string) =>
    gaps.push({ term: `${property} ${bound} ${value}`, reason: `the shapes allow ${property} ${between(declared)}; ${instead}` })
  // Each side in the same words: `toward` is +1 for min (its far end is the declared max), -1 for max.
  const side = (bound: "min" | "max") => {
    const toward = bound === "min" ? 1 : -1
    const near = bound === "min" ? declared.min : declared.max
    const far = bound === "min" ? declared.max : declared.min
    const dropNaN = (value: number | undefined) => {
      if (value === undefined || !Number.isNaN(value)) return value
      gaps.push({ term: `${property} ${bound}`, reason: `the ${bound === "min" ? "lower" : "upper"} bound is not a number; it was dropped` })
      change(bound, value, undefined, "dropped")
      return undefined
    }
    // Clamping keeps min ≤ max: both move towards the declared range, and a bound past its far end
    // takes that end, which the other bound (no nearer) also takes.
    const clamp = (value: number | undefined) => {
      if (value === undefined) return value
      if (far !== undefined && toward * value > toward * far) {
        unsatisfiable(bound, value, `searched ${bound === "min" ? "from" : "up to"} ${far}, the ${bound === "min" ? "largest" : "smallest"} value allowed`)
        change(bound, value, far, "clamped")
        return far
      }
      if (value === toward * Number.POSITIVE_INFINITY) {
        unsatisfiable(bound, value, "the bound was dropped")
        change(bound, value, undefined, "dropped")
        return undefined
      }
      if (near !== undefined && toward * value < toward * near) {
        change(bound, value, near, "clamped")
        return near
      }
      if (value === -toward * Number.POSITIVE_INFINITY) {
        change(bound, value, undefined, "dropped")
        return undefined
      }
      return value
    }
    return { dropNaN, clamp }
  }
  const lower = side("min")
  const upper = side("max")
  let min = lower.dropNaN(requested.min)
  let max = upper.dropNaN(requested.max)

  if (min !== undefined && max !== undefined && min > max) {
    corrections.push({ slot, from: `min ${min}, max ${max}`, to: `min ${max}, max ${min}`, match: "swapped" })
    ;[min, max] = [max, min]
  }

  min = lower.clamp(min)
  max = upper.clamp(max)

  if (declared.integer) {
    if (min !== undefined && max !== undefined && Math.ceil(min) > Math.floor(max)) {
      // No integer between them (clamped bounds of an integer property are integers, so both are the
      // model's own): the nearest integer, which lies inside the declared range as min and max do.
      const nearest = Math.round((min + max) / 2)
      gaps.push({ term: `${property} min ${min} max ${max}`, reason: `${property} is an integer and none lies between ${min} and ${max}; searched ${nearest}` })
      change("min", min, nearest, "rounded")
      change("max", max, nearest, "rounded")
      min = max = nearest
    }
    if (min !== undefined && !Number.isInteger(min)) {
      change("min", min, Math.ceil(min), "rounded")
      min = Math.ceil(min)
    }
    if (max !== undefined && !Number.isInteger(max)) {
      change("max", max, Math.floor(max), "rounded")
      max = Math.floor(max)
    }
  }
  return { range: { ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) }, corrections, gaps }
}
