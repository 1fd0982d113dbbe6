/**
 * A SQL database for the tests of the SQL stores (sessions, durable stores, the cluster engine on
 * SQL): PostgreSQL when one is at hand (CI's, or a throwaway cluster; test/support/postgres.ts), else
 * the embedded engine's PGlite, so that `npm test` passes on a machine without PostgreSQL and runs the
 * same tests. `TEST_DATABASE=pglite` chooses PGlite even where PostgreSQL is installed (to try the
 * fallback); `TEST_DATABASE=postgres` refuses to fall back.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Layer, Redacted } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { pgliteClient } from "../../src/durable/engines/pglite-client.ts"
import { postgresAvailable, startPostgres } from "./postgres.ts"

export interface TestDatabase {
  readonly engine: "postgres" | "pglite"
  /** The connection URL (PostgreSQL only: PGlite is opened in-process from its directory). */
  readonly url: string | undefined
  /** A new client on this caller's database: each call is a new connection, as another process opens. */
  readonly sql: () => Layer.Layer<SqlClient.SqlClient>
  readonly stop: () => void
}

const wanted = (): "postgres" | "pglite" =>
  process.env.TEST_DATABASE === "postgres" || postgresAvailable() ? "postgres" : "pglite"

/** A fresh database for this caller on PostgreSQL, or on PGlite where there is none. */
export const startDatabase = async (): Promise<TestDatabase> => {
  if (wanted() === "postgres") {
    const pg = await startPostgres()
    return {
      engine: "postgres",
      url: pg.url,
      sql: () => PgClient.layer({ url: Redacted.make(pg.url), onnotice: () => {} } as never) as unknown as Layer.Layer<SqlClient.SqlClient>,
      stop: pg.stop
    }
  }
  const dataDir = mkdtempSync(join(tmpdir(), "test-pglite-"))
  return {
    engine: "pglite",
    url: undefined,
    sql: () => Layer.orDie(pgliteClient({ dataDir })),
    stop: () => rmSync(dataDir, { recursive: true, force: true })
  }
}
