/**
 * `effect-agent-dsl/durable/embedded`: the embedded engine for durable runs — a workflow engine for one
 * process (a step is one write), on PGlite files (WASM PostgreSQL: no server, no native build). Needs the
 * optional peer `@electric-sql/pglite`; kept off `effect-agent-dsl/durable` so that users of the other
 * engines never load it. See "Deploying durable runners" in docs/guide/durable.md.
 *
 * @example
 * import { durable } from "effect-agent-dsl/durable"
 * import { embeddedEngine } from "effect-agent-dsl/durable/embedded"
 * const runner = durable(myAgent).layer.pipe(Layer.provideMerge(embeddedEngine({ dataDir: "./runs" })))
 *
 * @module effect-agent-dsl/durable/embedded
 */
export { embeddedEngine, type EmbeddedEngineOptions } from "./engines/embedded-engine.ts"
export { pgliteClient, type PgliteClientOptions } from "./engines/pglite-client.ts"
export { EngineUnavailable } from "./engines/engine-unavailable.ts"
