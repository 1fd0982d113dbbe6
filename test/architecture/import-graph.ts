/**
 * The layers of `src/` and a checker for its import graph. Imports go one way, down the ranks:
 *
 *   internal → model → errors → dsl → protocol wire mappings → runtime | providers | trace | node | compose | mcp → testing | durable | web | evals → protocols → agent.ts, index.ts, cli
 *
 * A file may import its own layer and any lower one; the siblings at rank 4 may not import each
 * other (providers never see the loop, the loop never sees a provider, tracing is a listener), and
 * providers implement the protocol without knowing the DSL.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize, relative } from "node:path"

export interface Layer {
  readonly name: string
  readonly rank: number
  readonly matches: (file: string) => boolean
  /** Lower layers this one must not use even so. */
  readonly mayNotImport?: ReadonlyArray<string>
}

const folder = (name: string) => (file: string) => file.startsWith(`${name}/`)

/** Ordered bottom-up. `file` paths are relative to `src/`, with forward slashes. */
export const layers: ReadonlyArray<Layer> = [
  { name: "internal", rank: 0, matches: folder("internal") },
  { name: "model", rank: 1, matches: folder("model") },
  { name: "errors", rank: 2, matches: (f) => f === "errors.ts" },
  { name: "dsl", rank: 3, matches: folder("dsl") },
  // Pure mappings of run events to a protocol's wire events (AG-UI), which `eventStreamResponse` serves.
  { name: "protocol-wire", rank: 3.5, matches: (f) => /^protocols\/[^/]+\/wire\//.test(f) },
  { name: "runtime", rank: 4, matches: folder("runtime") },
  { name: "providers", rank: 4, matches: folder("providers"), mayNotImport: ["dsl"] },
  { name: "trace", rank: 4, matches: folder("trace") },
  { name: "node", rank: 4, matches: folder("node") },
  { name: "compose", rank: 4, matches: folder("compose") },
  { name: "mcp", rank: 4, matches: folder("mcp") },
  { name: "postgres", rank: 4, matches: folder("postgres") },
  { name: "testing", rank: 5, matches: folder("testing") },
  { name: "durable", rank: 5, matches: folder("durable") },
  { name: "web", rank: 5, matches: folder("web") },
  { name: "evals", rank: 5, matches: folder("evals") },
  // Above web: the AG-UI handler reads bodies and streams runs with web's chat machinery.
  { name: "protocols", rank: 5.5, matches: folder("protocols") },
  // The studio watches every other room (runs, traces, durable runs, sessions); nothing imports it.
  { name: "studio", rank: 5.8, matches: folder("studio") },
  { name: "entry", rank: 6, matches: (f) => f === "index.ts" || f === "agent.ts" || f.startsWith("cli/") }
]

export const layerOf = (file: string): Layer | undefined => layers.find((l) => l.matches(file))

/** One import from `from` to `to` (both relative to `src/`). */
export interface Edge {
  readonly from: string
  readonly to: string
}

/** Every relative import and re-export of `source` (static, dynamic, type-only), as written. */
export const importSpecifiers = (source: string): ReadonlyArray<string> => {
  const specifiers: Array<string> = []
  const patterns = [/(?:^|[\s;])(?:import|export)\s[^'"]*?\sfrom\s*["']([^"']+)["']/g, /(?:^|[\s;])import\s*["']([^"']+)["']/g, /import\(\s*["']([^"']+)["']\s*\)/g]
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) specifiers.push(match[1]!)
  return specifiers
}

/** The edges of the import graph of the `.ts` files under `root`. */
export const importGraph = (root: string): ReadonlyArray<Edge> => {
  const files = (readdirSync(root, { recursive: true }) as Array<string>).filter((f) => f.endsWith(".ts")).map((f) => f.split("\\").join("/"))
  return files.flatMap((file) =>
    importSpecifiers(readFileSync(join(root, file), "utf8"))
      .filter((spec) => spec.startsWith("."))
      .map((spec) => ({ from: file, to: relative(root, normalize(join(root, dirname(file), spec))).split("\\").join("/") }))
  )
}

/** The edges that break the layering, each with the reason. Empty when the graph is clean. */
export const violations = (edges: ReadonlyArray<Edge>): ReadonlyArray<string> =>
  edges.flatMap(({ from, to }) => {
    const source = layerOf(from)
    const target = layerOf(to)
    if (source === undefined) return [`${from} is in no layer`]
    if (target === undefined) return [`${from} imports ${to}, which is in no layer`]
    if (target.rank > source.rank) return [`${from} (${source.name}) imports ${to} (${target.name}), a higher layer`]
    if (source.mayNotImport?.includes(target.name) === true) return [`${from} (${source.name}) imports ${to} (${target.name}), which it must not use`]
    if (target.rank === source.rank && target.name !== source.name) {
      return [`${from} (${source.name}) imports ${to} (${target.name}), a sibling layer`]
    }
    return []
  })
