/**
 * effect-agent-dsl/postgres: what needs PostgreSQL (through `@effect/sql-pg`, an optional peer
 * dependency): a session store.
 */
export { openPostgresSessionStore, postgresSessionStore, sqlSessionStore } from "./session-store.ts"
export { sqlResumeLedger } from "./resume-ledger.ts"
