/**
 * The vocabulary of the catalogue, read from the SHACL shapes in the schema graph with SPARQL: the
 * searchable domains (one per `sh:targetClass`), each domain's properties keyed by their leaf local
 * name (datatype, `sh:in` values, bounds, pattern, description) and the cross-domain references
 * (`sh:class`). Everything the corrections and the query compiler accept comes from here, so a value
 * that reaches SPARQL is always one the shapes declare, and a numeric bound one inside the range the
 * shapes declare for the domains searched (`declaredRange`).
 */
import { namedNode, type Store } from "oxigraph"
import { SCHEMA_GRAPH } from "./store.ts"

/** One property of a domain, keyed by its leaf local name (`roadTypes`, `country`, ...). */
export interface PropertyInfo {
  readonly localName: string
  readonly iri: string
  readonly datatype: "string" | "integer" | "decimal" | undefined
  /** The `sh:in` enumeration, in declaration order; empty when the property has none. */
  readonly values: ReadonlyArray<string>
  /**
   * The smallest and largest value allowed, inclusive (`sh:minInclusive`, `sh:maxInclusive`). An
   * exclusive bound (`sh:minExclusive`, `sh:maxExclusive`) is kept as the inclusive one it implies: the
   * next integer for `xsd:integer`, the edge itself otherwise (no conforming value lies on it, so a
   * search bounded there finds the same assets). Bounds of an `xsd:integer` property are integers.
   */
  readonly min?: number
  readonly max?: number
  readonly pattern?: string
  readonly description?: string
}

/** A cross-domain reference: `from` has a property (`via`) whose value is an asset of `to`. */
export interface Connection {
  readonly from: string
  readonly to: string
  readonly via: string
  readonly viaIri: string
}

/** A searchable asset type. */
export interface DomainInfo {
  readonly domain: string
  readonly classIri: string
  readonly description?: string
  readonly properties: ReadonlyMap<string, PropertyInfo>
}

/** What the shapes declare. */
export interface Vocabulary {
  readonly domains: ReadonlyMap<string, DomainInfo>
  readonly connections: ReadonlyArray<Connection>
  /** Leaf local name → the domains having that property (the seed's property → domain map). */
  readonly propertyDomains: ReadonlyMap<string, ReadonlyArray<string>>
  /** Leaf local name → every `sh:in` value it has in any domain. */
  readonly enumValues: ReadonlyMap<string, ReadonlyArray<string>>
}

const SH = "http://www.w3.org/ns/shacl#"
const localName = (iri: string) => iri.replace(/^.*[#/]/, "")

type Term = { readonly termType: string; readonly value: string }
type Row = Record<string, Term>

const rows = (store: Store, query: string): Array<Row> => {
  const result = store.query(query, { default_graph: SCHEMA_GRAPH })
  if (!Array.isArray(result)) return []
  return (result as Array<Map<string, Term>>).map((b) => Object.fromEntries(b))
}

const propertyQuery = `
PREFIX sh: <${SH}>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?class ?label ?shapeDesc ?ps ?path ?datatype ?target ?min ?max ?minEx ?maxEx ?pattern ?desc WHERE {
  ?shape a sh:NodeShape ; sh:targetClass ?class ; sh:property ?ps .
  ?class rdfs:label ?label .
  ?ps sh:path ?path .
  OPTIONAL { ?shape sh:description ?shapeDesc }
  OPTIONAL { ?ps sh:datatype ?datatype }
  OPTIONAL { ?ps sh:class ?target }
  OPTIONAL { ?ps sh:minInclusive ?min }
  OPTIONAL { ?ps sh:maxInclusive ?max }
  OPTIONAL { ?ps sh:minExclusive ?minEx }
  OPTIONAL { ?ps sh:maxExclusive ?maxEx }
  OPTIONAL { ?ps sh:pattern ?pattern }
  OPTIONAL { ?ps sh:description ?desc }
}`

/**
 * Reads the vocabulary from the schema graph of `store`.
 *
 * @example
 * ```ts
 * const vocabulary = readVocabulary((await loadCatalogue()).store)
 * vocabulary.domains.get("hdmap")?.properties.get("roadTypes")?.values // ["motorway", "rural", ...]
 * ```
 */
export const readVocabulary = (store: Store): Vocabulary => {
  const domains = new Map<string, { domain: string; classIri: string; description?: string; properties: Map<string, PropertyInfo> }>()
  const connections: Array<Connection> = []
  const classToDomain = new Map<string, string>()
  const found = rows(store, propertyQuery)
  for (const row of found) classToDomain.set(row.class!.value, row.label!.value)
  for (const row of found) {
    const domain = row.label!.value
    let info = domains.get(domain)
    if (info === undefined) {
      info = { domain, classIri: row.class!.value, ...(row.shapeDesc?.value === undefined ? {} : { description: row.shapeDesc?.value }), properties: new Map() }
      domains.set(domain, info)
    }
    if (row.target?.value !== undefined) {
      const to = classToDomain.get(row.target?.value)
      if (to !== undefined) connections.push({ from: domain, to, via: localName(row.path!.value), viaIri: row.path!.value })
      continue
    }
    const values = listValues(store, row.ps!)
    const dt = row.datatype?.value === undefined ? undefined : localName(row.datatype?.value)
    const datatype = dt === "integer" || dt === "decimal" || dt === "string" ? dt : undefined
    const { min, max } = bounds(datatype, row)
    info.properties.set(localName(row.path!.value), {
      localName: localName(row.path!.value),
      iri: row.path!.value,
      datatype,
      values,
      ...(min === undefined ? {} : { min }),
      ...(max === undefined ? {} : { max }),
      ...(row.pattern?.value === undefined ? {} : { pattern: row.pattern?.value }),
      ...(row.desc?.value === undefined ? {} : { description: row.desc?.value })
    })
  }
  const propertyDomains = new Map<string, Array<string>>()
  const enumValues = new Map<string, Array<string>>()
  for (const d of domains.values()) {
    for (const p of d.properties.values()) {
      propertyDomains.set(p.localName, [...(propertyDomains.get(p.localName) ?? []), d.domain])
      const known = enumValues.get(p.localName) ?? []
      enumValues.set(p.localName, [...known, ...p.values.filter((v) => !known.includes(v))])
    }
  }
  return { domains, connections, propertyDomains, enumValues }
}

/** The inclusive bounds a property shape declares; a bound that is not a finite number is no bound. */
const bounds = (datatype: PropertyInfo["datatype"], row: Row): { readonly min?: number; readonly max?: number } => {
  const read = (term: Term | undefined) => {
    const n = term === undefined ? Number.NaN : Number(term.value)
    return Number.isFinite(n) ? n : undefined
  }
  const integer = datatype === "integer"
  const candidates = (inclusive: number | undefined, exclusive: number | undefined, up: boolean) => [
    ...(inclusive === undefined ? [] : [integer ? (up ? Math.ceil(inclusive) : Math.floor(inclusive)) : inclusive]),
    ...(exclusive === undefined ? [] : [integer ? (up ? Math.floor(exclusive) + 1 : Math.ceil(exclusive) - 1) : exclusive])
  ]
  // Both kinds given: the tighter one holds.
  const lows = candidates(read(row.min), read(row.minEx), true)
  const highs = candidates(read(row.max), read(row.maxEx), false)
  return { ...(lows.length === 0 ? {} : { min: Math.max(...lows) }), ...(highs.length === 0 ? {} : { max: Math.min(...highs) }) }
}

/**
 * The property shape a domain's assets carry `property` through: their own, or else the one of the
 * first domain they reference (`via`) that has it. The query compiler and the range check both use it.
 *
 * @example
 * ```ts
 * carrierOf(vocabulary, "scenario", "roadTypes") // { property: <hdmap's roadTypes>, via: { from: "scenario", to: "hdmap", via: "hdMap", ... } }
 * ```
 */
export const carrierOf = (vocabulary: Vocabulary, domain: string, property: string): { readonly property: PropertyInfo; readonly via?: Connection } | undefined => {
  const own = vocabulary.domains.get(domain)?.properties.get(property)
  if (own !== undefined) return { property: own }
  for (const via of vocabulary.connections.filter((c) => c.from === domain)) {
    const target = vocabulary.domains.get(via.to)?.properties.get(property)
    if (target !== undefined) return { property: target, via }
  }
  return undefined
}

/** What the shapes allow a numeric property to hold in one search: the bounds, and whether only integers. */
export interface DeclaredRange {
  readonly min?: number
  readonly max?: number
  readonly integer: boolean
}

/**
 * The range of `property` over the domains of a search: the smallest `min` and the largest `max` among
 * the property shapes those domains carry it through (`carrierOf`, as the compiled query does), no
 * bound on a side where one of them has none; integer when all of them are `xsd:integer`. Undefined
 * when none of the domains carries a numeric property of that name.
 *
 * @example
 * ```ts
 * declaredRange(vocabulary, "duration", ["scenario"]) // { min: 1, max: 3600, integer: true }
 * declaredRange(vocabulary, "duration", ["scenario", "recording"]) // { min: 1, max: 7200, integer: true }
 * ```
 */
export const declaredRange = (vocabulary: Vocabulary, property: string, domains: ReadonlyArray<string>): DeclaredRange | undefined => {
  const shapes = [...new Set(domains.flatMap((d) => { const c = carrierOf(vocabulary, d, property); return c === undefined ? [] : [c.property] }))]
    .filter((p) => p.datatype === "integer" || p.datatype === "decimal")
  if (shapes.length === 0) return undefined
  const mins = shapes.map((p) => p.min)
  const maxs = shapes.map((p) => p.max)
  return {
    ...(mins.some((m) => m === undefined) ? {} : { min: Math.min(...(mins as Array<number>)) }),
    ...(maxs.some((m) => m === undefined) ? {} : { max: Math.max(...(maxs as Array<number>)) }),
    integer: shapes.every((p) => p.datatype === "integer")
  }
}

const RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"

/** The `sh:in` list of a property shape, in order (walked with quad matches: SPARQL does not keep list order). */
const listValues = (store: Store, shape: Term): Array<string> => {
  const values: Array<string> = []
  const at = (subject: Term, predicate: string) => store.match(subject as never, namedNode(predicate), null, SCHEMA_GRAPH)[0]?.object
  let cursor = at(shape, `${SH}in`)
  while (cursor !== undefined && cursor.value !== `${RDF}nil`) {
    const head = at(cursor, `${RDF}first`)
    if (head !== undefined) values.push(head.value)
    cursor = at(cursor, `${RDF}rest`)
  }
  return values
}
