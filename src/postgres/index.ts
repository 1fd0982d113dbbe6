/**
 * effect-agent-dsl/postgres: what needs PostgreSQL (through `@effect/sql-pg`, an optional peer
 * dependency): a session store.
 *
 * @module effect-agent-dsl/postgres
 */
export { openPostgresSessionStore, postgresSessionStore, sqlSessionStore } from "./session-store.ts"
export { sqlResumeLedger } from "./resume-ledger.ts"
