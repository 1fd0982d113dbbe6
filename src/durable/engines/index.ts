/**
 * Engines for durable runs (embedded, PostgreSQL runners). An engine layer provides
 * `WorkflowEngine | ToolIntents | ApprovalInbox`: the stores on the engine's database come from
 * `durableStoreSql()` (`../sql-store.ts`) over the same `SqlClient`; `memoryEngine` is the in-memory one.
 */
export {}
