/**
 * The RDF store: Oxigraph (SPARQL 1.1, in WebAssembly) with the SHACL shapes in the named graph
 * `<urn:graph:schema>` and the generated catalogue in `<urn:graph:data>`. `loadCatalogue()` is cached
 * per process: the store is built once and shared by the agent, the server, the tests and the evals.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { namedNode, Store } from "oxigraph"
import { generateCatalogue } from "./catalogue.ts"
import { readVocabulary, type Vocabulary } from "./vocabulary.ts"

/** The named graph holding the SHACL shapes. */
export const SCHEMA_GRAPH = namedNode("urn:graph:schema")
/** The named graph holding the assets. */
export const DATA_GRAPH = namedNode("urn:graph:data")

/** The shapes as written: the system prompt embeds this text verbatim. */
export const shapesTurtle: string = readFileSync(fileURLToPath(new URL("./shapes.ttl", import.meta.url)), "utf8")

/** A loaded catalogue: the store, the vocabulary its shapes declare, and the number of assets. */
export interface Catalogue {
  readonly store: Store
  readonly vocabulary: Vocabulary
  readonly assets: number
}

/**
 * Builds a store from shapes and a seed (no cache).
 *
 * @example
 * ```ts
 * const { store, vocabulary } = buildCatalogue({ seed: 7 })
 * ```
 */
export const buildCatalogue = (options: { readonly seed?: number; readonly counts?: Readonly<Record<string, number>> } = {}): Catalogue => {
  const store = new Store()
  store.load(shapesTurtle, { format: "text/turtle", to_graph_name: SCHEMA_GRAPH })
  const vocabulary = readVocabulary(store)
  store.load(generateCatalogue(vocabulary, options), { format: "text/turtle", to_graph_name: DATA_GRAPH })
  const counted = store.query(`SELECT (COUNT(?a) AS ?n) WHERE { GRAPH <urn:graph:data> { ?a a ?c } }`) as Array<Map<string, { value: string }>>
  return { store, vocabulary, assets: Number(counted[0]?.get("n")?.value ?? 0) }
}

let cached: Catalogue | undefined

/**
 * The default catalogue (seed 42, 6,000 assets), built on first use and shared afterwards.
 *
 * @example
 * ```ts
 * const { assets } = loadCatalogue() // 6000
 * ```
 */
export const loadCatalogue = (): Catalogue => (cached ??= buildCatalogue())
