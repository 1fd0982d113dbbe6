/**
 * A resume ledger on PostgreSQL (any `SqlClient` speaking it): one row per consumed snapshot key, in a
 * table created when missing. `insert … on conflict do nothing returning` is atomic, so of two
 * processes resuming the same snapshot at the same time exactly one continues.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { ResumeLedgerFailed } from "../errors.ts"
import type { ResumeLedgerStore } from "../dsl/resume-ledger-store.ts"

const tablePattern = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * A resume ledger over the `SqlClient` in context (table `agent_resumed_snapshots` unless named).
 *
 * @example
 * ```ts
 * const ledger = yield* sqlResumeLedger().pipe(Effect.provide(PgClient.layer({ url })))
 * yield* bank.resume(snapshot, decisions).pipe(Effect.provideService(ResumeLedger, ledger))
 * ```
 */
export const sqlResumeLedger = (options: { readonly table?: string } = {}): Effect.Effect<ResumeLedgerStore, ResumeLedgerFailed, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const table = options.table ?? "agent_resumed_snapshots"
    if (!tablePattern.test(table)) return yield* new ResumeLedgerFailed({ key: "*", reason: `"${table}" is not a plain lower-case table name` })
    const sql = yield* SqlClient.SqlClient
    const fail = (key: string) => (cause: unknown) =>
      new ResumeLedgerFailed({ key, reason: cause instanceof Error ? cause.message : String(cause), cause })
    yield* sql`create table if not exists ${sql(table)} (key text primary key, consumed_at timestamptz not null default now())`.pipe(
      Effect.mapError(fail("*"))
    )
    return {
      consume: (key) =>
        sql<{ readonly key: string }>`insert into ${sql(table)} (key) values (${key}) on conflict (key) do nothing returning key`.pipe(
          Effect.map((rows) => rows.length === 1),
          Effect.mapError(fail(key))
        )
    }
  })
