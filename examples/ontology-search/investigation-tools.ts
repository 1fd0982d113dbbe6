/**
 * The five investigation tools of seed 000, all `readOnly` and over the schema graph only: list the
 * domains, a domain's properties, a property's allowed values, the cross-domain references, and a
 * SPARQL SELECT of the model's own on the shapes. `investigate_schema` parses the query with a real
 * SPARQL parser (sparqljs) and refuses anything but a SELECT without SERVICE or FROM; it runs with the
 * schema graph as its whole dataset (the data graph is invisible), in a worker thread with a time limit
 * (schema-worker.ts), and returns at most 50 rows.
 */
import { Schema } from "effect"
import { tool } from "effect-agent-dsl"
import type { Store } from "oxigraph"
import sparqljs from "sparqljs"
import { runInSchemaWorker } from "./schema-worker.ts"
import type { Vocabulary } from "./vocabulary.ts"

/** The row cap of `investigate_schema`. */
export const MAX_SCHEMA_ROWS = 50
/** The time limit of one `investigate_schema` query. */
export const SCHEMA_QUERY_TIMEOUT_MS = 2_000

/** What `investigate_schema` answers: rows (at most 50, `truncated` when more matched), or why it refused. */
export type SchemaQueryResult =
  | { readonly ok: true; readonly rows: ReadonlyArray<Record<string, string>>; readonly truncated: boolean }
  | { readonly ok: false; readonly refused: string }

const refuse = (refused: string): SchemaQueryResult => ({ ok: false, refused })

// A SERVICE clause at any depth of the parsed query.
const hasService = (node: unknown): boolean =>
  Array.isArray(node) ? node.some(hasService)
    : typeof node === "object" && node !== null
      ? (node as { type?: unknown }).type === "service" || Object.values(node).some(hasService)
      : false

/**
 * Runs a read-only SELECT on the schema graph, or refuses it.
 *
 * @example
 * ```ts
 * await investigateSchema("PREFIX sh: <http://www.w3.org/ns/shacl#> SELECT ?s WHERE { ?s a sh:NodeShape }")
 * // { ok: true, rows: [{ s: "https://example.org/shapes#ScenarioShape" }, ...], truncated: false }
 * await investigateSchema("DROP ALL") // { ok: false, refused: "only SELECT queries are allowed, got an update" }
 * ```
 */
export const investigateSchema = async (query: string, options: { readonly timeoutMs?: number } = {}): Promise<SchemaQueryResult> => {
  let parsed: sparqljs.SparqlQuery
  try {
    parsed = new sparqljs.Parser().parse(query)
  } catch (error) {
    return refuse(`not a SPARQL query: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`)
  }
  if (parsed.type !== "query") return refuse("only SELECT queries are allowed, got an update")
  if (parsed.queryType !== "SELECT") return refuse(`only SELECT queries are allowed, got ${parsed.queryType}`)
  if (hasService(parsed)) return refuse("SERVICE is not allowed: the schema graph is the only source")
  if (parsed.from !== undefined && (parsed.from.default.length > 0 || parsed.from.named.length > 0)) return refuse("FROM is not allowed: the schema graph is the dataset")
  // One row more than the cap tells whether it was truncated, without ever materialising a huge result.
  parsed.limit = Math.min(parsed.limit ?? MAX_SCHEMA_ROWS + 1, MAX_SCHEMA_ROWS + 1)
  const answer = await runInSchemaWorker(new sparqljs.Generator().stringify(parsed), {
    maxRows: MAX_SCHEMA_ROWS + 1,
    timeoutMs: options.timeoutMs ?? SCHEMA_QUERY_TIMEOUT_MS
  })
  if ("error" in answer) return refuse(`query failed: ${answer.error}`)
  return { ok: true, rows: answer.rows.slice(0, MAX_SCHEMA_ROWS), truncated: answer.rows.length > MAX_SCHEMA_ROWS }
}

/**
 * The five tools, bound to a store and its vocabulary.
 *
 * @example
 * ```ts
 * const tools = investigationTools(store, vocabulary)
 * agent("search").tools(tools)
 * ```
 */
export const investigationTools = (_store: Store, vocabulary: Vocabulary) => {
  const Domain = Schema.Struct({ domain: Schema.String.annotate({ description: "A domain label from discover_domains" }) })
  return {
    discover_domains: tool("discover_domains", {
      description: "List the searchable asset types",
      args: Schema.Struct({}),
      effect: "readOnly",
      run: () => [...vocabulary.domains.values()].map((d) => ({ domain: d.domain, classIri: d.classIri }))
    }),
    discover_properties: tool("discover_properties", {
      description: "List the filterable properties of a domain",
      args: Domain,
      effect: "readOnly",
      run: ({ domain }) => {
        const d = vocabulary.domains.get(domain)
        if (d === undefined) return { error: `unknown domain ${domain}; known: ${[...vocabulary.domains.keys()].join(", ")}` }
        return [...d.properties.values()].map((p) => ({ localName: p.localName, datatype: p.datatype ?? "string", hasEnum: p.values.length > 0 }))
      }
    }),
    discover_values: tool("discover_values", {
      description: "List the allowed (sh:in) values of a property, by its leaf local name",
      args: Schema.Struct({ property: Schema.String }),
      effect: "readOnly",
      run: ({ property }) => vocabulary.enumValues.get(property) ?? []
    }),
    discover_connections: tool("discover_connections", {
      description: "List the cross-domain references (which asset type references which)",
      args: Schema.Struct({}),
      effect: "readOnly",
      run: () => vocabulary.connections.map((c) => ({ from: c.from, to: c.to, via: c.via }))
    }),
    investigate_schema: tool("investigate_schema", {
      description: `Run a SPARQL SELECT on the SHACL schema graph (read-only; at most ${MAX_SCHEMA_ROWS} rows)`,
      args: Schema.Struct({ query: Schema.String }),
      effect: "readOnly",
      run: ({ query }) => investigateSchema(query)
    })
  }
}
