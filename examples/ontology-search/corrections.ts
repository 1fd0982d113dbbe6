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
 * Several cross-domain references: the first valid one is kept, the others are gaps explaining the
 * single-slot rule. The model's own gaps keep only suggestions that are vocabulary terms, joined by a
 * tokenised match against the vocabulary; a term reported twice is one gap.
 */
import type { Gap, Submission } from "./slots.ts"
import type { Vocabulary } from "./vocabulary.ts"

/** How a term matched the vocabulary. */
export type MatchKind = "exact" | "case-insensitive" | "substring" | "fuzzy"

/** One change the corrections made, for the user to see. */
export interface Correction {
  readonly slot: string
  readonly from: string
  readonly to: string
  readonly match: MatchKind | "added"
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

  const ranges: Record<string, { min?: number; max?: number }> = {}
  for (const [key, range] of Object.entries(submission.slots.ranges)) {
    const property = resolveKey(key, "ranges", true)
    if (property === undefined) continue
    if (range.min === undefined && range.max === undefined) continue
    const [min, max] = range.min !== undefined && range.max !== undefined && range.min > range.max ? [range.max, range.min] : [range.min, range.max]
    ranges[property] = { ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) }
    addDomainsFor(property)
  }

  if (domains.length === 0) domains.push(...domainNames)

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

  const confidence = gaps.length > 0 ? "low" : kinds.some((k) => k === "substring" || k === "fuzzy") ? "medium" : "high"
  return { domains, filters, ranges, ...(reference === undefined ? {} : { reference }), interpretation: submission.interpretation, corrections, gaps, confidence }
}

const isNumeric = (vocabulary: Vocabulary, property: string) =>
  [...vocabulary.domains.values()].some((d) => { const p = d.properties.get(property); return p !== undefined && (p.datatype === "integer" || p.datatype === "decimal") })

