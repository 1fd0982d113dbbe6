/**
 * The generated catalogue: a deterministic set of assets (scenarios, HD maps, sensor recordings) as
 * Turtle, drawn from the vocabulary the shapes declare with a seeded generator, so every run, test and
 * evaluation searches the same 6,000 assets without a data file in the repository.
 */
import type { Vocabulary } from "./vocabulary.ts"

/** How many assets of each domain; 6,000 in all by default. */
export const defaultCounts: Readonly<Record<string, number>> = { hdmap: 1500, scenario: 2500, recording: 2000 }

// mulberry32: a tiny seeded PRNG, enough for test data.
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const literal = (value: string) => JSON.stringify(value)

/**
 * Generates the catalogue as Turtle; the same `seed` gives the same text.
 *
 * @example
 * ```ts
 * const turtle = generateCatalogue(vocabulary, { seed: 42 })
 * ```
 */
export const generateCatalogue = (
  vocabulary: Vocabulary,
  options: { readonly seed?: number; readonly counts?: Readonly<Record<string, number>> } = {}
): string => {
  const random = prng(options.seed ?? 42)
  const counts = options.counts ?? defaultCounts
  const pick = <T>(xs: ReadonlyArray<T>): T => xs[Math.floor(random() * xs.length)]!
  const lines: Array<string> = ["@prefix ex: <https://example.org/assets#> .", "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .", ""]
  const ids = new Map<string, Array<string>>()
  // Referenced domains first, so a reference always points at an existing asset.
  const order = [...vocabulary.domains.keys()].sort((a, b) => referenceDepth(vocabulary, a) - referenceDepth(vocabulary, b))
  for (const domain of order) {
    const info = vocabulary.domains.get(domain)!
    const mine: Array<string> = []
    ids.set(domain, mine)
    for (let i = 0; i < (counts[domain] ?? 0); i++) {
      const id = `https://example.org/catalogue/${domain}/${i}`
      mine.push(id)
      const triples = [`<${id}> a <${info.classIri}>`]
      for (const p of info.properties.values()) {
        if (p.values.length > 0) {
          // Multi-valued enumerations (roadTypes) get one to three values.
          const n = p.localName === "roadTypes" ? 1 + Math.floor(random() * 3) : 1
          const chosen = new Set(Array.from({ length: n }, () => pick(p.values)))
          for (const v of chosen) triples.push(`<${p.iri}> ${literal(v)}`)
        } else if (p.datatype === "integer" || p.datatype === "decimal") {
          const lo = p.min ?? 0
          const hi = p.max ?? 500
          const x = lo + random() * (hi - lo)
          triples.push(p.datatype === "integer" ? `<${p.iri}> "${Math.round(x)}"^^xsd:integer` : `<${p.iri}> "${x.toFixed(1)}"^^xsd:decimal`)
        }
      }
      for (const c of vocabulary.connections.filter((c) => c.from === domain)) {
        const targets = ids.get(c.to) ?? []
        if (targets.length > 0 && random() < 0.8) triples.push(`<${c.viaIri}> <${pick(targets)}>`)
      }
      lines.push(`${triples[0]} ;\n  ${triples.slice(1).join(" ;\n  ")} .`)
    }
  }
  return lines.join("\n")
}

const referenceDepth = (vocabulary: Vocabulary, domain: string, seen: ReadonlySet<string> = new Set()): number => {
  if (seen.has(domain)) return 0
  const out = vocabulary.connections.filter((c) => c.from === domain)
  return out.length === 0 ? 0 : 1 + Math.max(...out.map((c) => referenceDepth(vocabulary, c.to, new Set([...seen, domain]))))
}
