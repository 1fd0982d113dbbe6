/**
 * Slots → SPARQL, by code. The query is a UNION with one branch per domain; a filter or range applies
 * directly when the domain has the property, or through the domain's cross-domain reference when the
 * referenced domain has it (scenario + roadTypes: the scenario's HD map is a motorway map); a domain
 * that can express neither skips its branch rather than drop a constraint. Properties and classes are
 * IRIs from the vocabulary, values are escaped literals of vocabulary terms and finite numbers: what
 * the model wrote never reaches the query text.
 */
import type { Store } from "oxigraph"
import type { CorrectedSlots } from "./corrections.ts"
import { DATA_GRAPH } from "./store.ts"
import { carrierOf, type Vocabulary } from "./vocabulary.ts"

/** A compiled search: the SPARQL text and the domains that have a branch in it. */
export interface CompiledQuery {
  readonly sparql: string
  readonly branches: ReadonlyArray<string>
}

/** A string literal, escaped for SPARQL (quotes, backslashes, line breaks; other controls refused). */
export const sparqlString = (value: string): string => {
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) throw new Error(`control character in literal ${JSON.stringify(value)}`)
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t")}"`
}

const iri = (value: string): string => {
  if (!/^[a-z][a-z0-9+.-]*:[^\s<>"{}|^`\\]*$/i.test(value)) throw new Error(`not an IRI: ${value}`)
  return `<${value}>`
}

const number = (n: number): string => {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`)
  return `"${n}"^^<http://www.w3.org/2001/XMLSchema#double>`
}

/**
 * Compiles corrected slots into a SELECT over the data graph returning `?asset` and `?domain`.
 *
 * @example
 * ```ts
 * compileQuery(vocabulary, corrected).sparql // SELECT DISTINCT ?asset ?domain WHERE { GRAPH <urn:graph:data> { ... } }
 * ```
 */
export const compileQuery = (vocabulary: Vocabulary, slots: CorrectedSlots): CompiledQuery => {
  const branches: Array<{ domain: string; body: string }> = []
  for (const domain of slots.domains) {
    const info = vocabulary.domains.get(domain)
    if (info === undefined) continue
    const lines = [`?asset a ${iri(info.classIri)} .`, `BIND(${sparqlString(domain)} AS ?domain)`]
    const joins = new Map<string, string>()
    let ok = true
    let n = 0
    // The subject carrying `property` for this domain: the asset itself, or the asset it references.
    const subjectFor = (property: string): { s: string; iri: string } | undefined => {
      const carrier = carrierOf(vocabulary, domain, property)
      if (carrier === undefined) return undefined
      const c = carrier.via
      if (c === undefined) return { s: "?asset", iri: carrier.property.iri }
      let v = joins.get(c.via)
      if (v === undefined) {
        v = `?join${joins.size}`
        joins.set(c.via, v)
        lines.push(`?asset ${iri(c.viaIri)} ${v} .`)
      }
      return { s: v, iri: carrier.property.iri }
    }
    for (const [property, values] of Object.entries(slots.filters)) {
      const at = subjectFor(property)
      if (at === undefined || values.length === 0) { ok = false; break }
      const v = `?v${n++}`
      lines.push(`${at.s} ${iri(at.iri)} ${v} .`, `FILTER(${v} IN (${values.map(sparqlString).join(", ")}))`)
    }
    for (const [property, range] of Object.entries(slots.ranges)) {
      if (!ok) break
      const at = subjectFor(property)
      if (at === undefined) { ok = false; break }
      const v = `?v${n++}`
      const tests = [...(range.min === undefined ? [] : [`${v} >= ${number(range.min)}`]), ...(range.max === undefined ? [] : [`${v} <= ${number(range.max)}`])]
      lines.push(`${at.s} ${iri(at.iri)} ${v} .`, ...(tests.length === 0 ? [] : [`FILTER(${tests.join(" && ")})`]))
    }
    if (ok && slots.reference !== undefined) {
      const c = vocabulary.connections.find((c) => c.from === domain && c.to === slots.reference)
      const target = vocabulary.domains.get(slots.reference)
      if (c === undefined || target === undefined) ok = false
      else lines.push(`?asset ${iri(c.viaIri)} ?ref .`, `?ref a ${iri(target.classIri)} .`)
    }
    if (ok) branches.push({ domain, body: lines.map((l) => `      ${l}`).join("\n") })
  }
  const union = branches.length === 0 ? "      FILTER(false)" : branches.map((b) => `    {\n${b.body}\n    }`).join("\n    UNION\n")
  const sparql = `SELECT DISTINCT ?asset ?domain WHERE {\n  GRAPH ${iri(DATA_GRAPH.value)} {\n${union}\n  }\n}\nORDER BY ?domain ?asset`
  return { sparql, branches: branches.map((b) => b.domain) }
}

/** One found asset. */
export interface Hit {
  readonly asset: string
  readonly domain: string
}

/**
 * Runs a compiled query on the store.
 *
 * @example
 * ```ts
 * const hits = runQuery(store, compileQuery(vocabulary, corrected))
 * ```
 */
export const runQuery = (store: Store, query: CompiledQuery): ReadonlyArray<Hit> => {
  const result = store.query(query.sparql) as Array<Map<string, { value: string }>>
  return result.map((b) => ({ asset: b.get("asset")!.value, domain: b.get("domain")!.value }))
}
