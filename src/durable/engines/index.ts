/**
 * Engines for durable runs. Each layer provides `WorkflowEngine | ToolIntents | ApprovalInbox` (and
 * the `SqlClient` of its database): `embeddedEngine` (one process, PGlite files, no server) and
 * `postgresRunner` (one runner of a multi-process Effect Cluster on PostgreSQL). `memoryEngine`
 * (`../durable-agent.ts`) is the in-memory one.
 */
export { embeddedEngine, type EmbeddedEngineOptions } from "./embedded-engine.ts"
export { EngineUnavailable } from "./engine-unavailable.ts"
export { pgliteClient, type PgliteClientOptions } from "./pglite-client.ts"
export { postgresRunner, type PostgresRunnerOptions } from "./postgres-runner.ts"
