/**
 * A session store on PostgreSQL, through Effect's SQL modules (`@effect/sql-pg`, an optional peer
 * dependency). One row per message (`session`, `seq`, `message` as JSON text); `append` takes a
 * transaction-scoped advisory lock on the session, so concurrent writers (other processes too) never
 * interleave or collide on a sequence number. The table is created when missing, and beside it
 * `<table>_waiting` (one row per session whose run waits for decisions; taking it is atomic).
 */
import { PgClient } from "@effect/sql-pg"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import type { SessionStore, WaitingRun } from "../dsl/session-store.ts"
import { jsonbColumnToText } from "../internal/jsonb-column-to-text.ts"
import { SessionStoreFailed } from "../errors.ts"
import type { LlmMessage } from "../model/messages.ts"

const tablePattern = /^[a-z_][a-z0-9_]{0,62}$/

const roles = new Set(["system", "user", "assistant", "tool"])

const isMessage = (u: unknown): u is LlmMessage =>
  typeof u === "object" && u !== null && "role" in u && roles.has(String(u.role)) && "content" in u && typeof u.content === "string"

/** A stored column's value as JSON (text, or what a driver already parsed), or the error of text that is not JSON. */
const parsedColumn = (value: unknown): { readonly value: unknown } | { readonly error: string } => {
  if (typeof value !== "string") return { value }
  try {
    return { value: JSON.parse(value) as unknown }
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) }
  }
}

/**
 * A session store over the `SqlClient` in context (any Effect SQL driver that speaks PostgreSQL).
 *
 * @example
 * ```ts
 * const store = yield* sqlSessionStore({ table: "chat_messages" }).pipe(Effect.provide(PgClient.layer({ url })))
 * ```
 */
export const sqlSessionStore = (options: { readonly table?: string } = {}): Effect.Effect<SessionStore, SessionStoreFailed, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const table = options.table ?? "agent_session_messages"
    if (!tablePattern.test(table)) {
      return yield* new SessionStoreFailed({ session: "*", operation: "load", reason: `"${table}" is not a plain lower-case table name` })
    }
    const sql = yield* SqlClient.SqlClient
    const fail = (session: string, operation: "load" | "append") => (cause: unknown) =>
      new SessionStoreFailed({ session, operation, reason: cause instanceof Error ? cause.message : String(cause), cause })
    // Messages and waiting runs are JSON text, not `jsonb`: PostgreSQL's `jsonb` refuses the `\u0000`
    // escape a message (anything a user typed) or a waiting call's arguments may hold, and a waiting
    // run's snapshot must come back exactly (a signed one is checked). Tables of earlier versions are
    // brought up to date.
    yield* sql`create table if not exists ${sql(table)} (session text not null, seq integer not null, message text not null, primary key (session, seq))`.pipe(
      Effect.andThen(jsonbColumnToText(sql, table, "message")),
      Effect.mapError(fail("*", "load"))
    )
    const load = (session: string) =>
      sql<{ readonly message: unknown }>`select message from ${sql(table)} where session = ${session} order by seq`.pipe(
        Effect.mapError(fail(session, "load")),
        Effect.flatMap((rows) => {
          const messages: Array<LlmMessage> = []
          for (const [i, row] of rows.entries()) {
            const parsed = parsedColumn(row.message)
            if ("error" in parsed) return Effect.fail(new SessionStoreFailed({ session, operation: "load", reason: `row ${i} is not JSON (${parsed.error})` }))
            if (!isMessage(parsed.value)) return Effect.fail(new SessionStoreFailed({ session, operation: "load", reason: `row ${i} is not a message` }))
            messages.push(parsed.value)
          }
          return Effect.succeed(messages)
        })
      )
    const append = (session: string, messages: ReadonlyArray<LlmMessage>) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`select pg_advisory_xact_lock(hashtext(${session}))`
        const [last] = yield* sql<{ readonly next: number }>`select coalesce(max(seq) + 1, 0) as next from ${sql(table)} where session = ${session}`
        const start = Number(last?.next ?? 0)
        for (const [i, message] of messages.entries()) {
          yield* sql`insert into ${sql(table)} (session, seq, message) values (${session}, ${start + i}, ${JSON.stringify(message)})`
        }
      })).pipe(Effect.mapError(fail(session, "append")))
    // The session's run waiting for decisions: one row per session; `take` is a delete … returning,
    // so of two processes resuming the same waiting run, one gets it.
    const waitingTable = `${table}_waiting`
    yield* sql`create table if not exists ${sql(waitingTable)} (session text primary key, run text not null)`.pipe(
      Effect.andThen(jsonbColumnToText(sql, waitingTable, "run")),
      Effect.mapError(fail("*", "load"))
    )
    // The row as JSON; the session checks that it is a waiting run (a corrupted row fails its turn with
    // `SessionStoreFailed`, never a defect).
    const asWaiting = (session: string) => (rows: ReadonlyArray<{ readonly run: unknown }>): Effect.Effect<WaitingRun | undefined, SessionStoreFailed> => {
      if (rows.length === 0) return Effect.succeed(undefined)
      const parsed = parsedColumn(rows[0]!.run)
      return "error" in parsed
        ? Effect.fail(new SessionStoreFailed({ session, operation: "load", reason: `the waiting run's row is not JSON (${parsed.error})` }))
        : Effect.succeed(parsed.value as WaitingRun)
    }
    const waiting = (session: string) =>
      sql<{ readonly run: unknown }>`select run from ${sql(waitingTable)} where session = ${session}`.pipe(
        Effect.mapError(fail(session, "load")),
        Effect.flatMap(asWaiting(session))
      )
    const setWaiting = (session: string, run: WaitingRun | undefined) =>
      (run === undefined
        ? sql`delete from ${sql(waitingTable)} where session = ${session}`
        : sql`insert into ${sql(waitingTable)} (session, run) values (${session}, ${JSON.stringify(run)}) on conflict (session) do update set run = excluded.run`
      ).pipe(Effect.asVoid, Effect.mapError(fail(session, "append")))
    // In a transaction: a row that is not JSON fails the take and stays, as it was.
    const takeWaiting = (session: string) =>
      sql.withTransaction(
        sql<{ readonly run: unknown }>`delete from ${sql(waitingTable)} where session = ${session} returning run`.pipe(
          Effect.mapError(fail(session, "load")),
          Effect.flatMap(asWaiting(session))
        )
      ).pipe(Effect.catchTag("SqlError", (cause) => Effect.fail(fail(session, "load")(cause))))
    return { load, append, waiting, setWaiting, takeWaiting }
  })

/**
 * A session store on the PostgreSQL at `url`, with its own connection pool, open while `scope` is.
 *
 * @example
 * ```ts
 * const store = yield* postgresSessionStore({ url: process.env.DATABASE_URL! }) // inside Effect.scoped
 * ```
 */
export const postgresSessionStore = (
  options: { readonly url: string; readonly table?: string }
): Effect.Effect<SessionStore, SessionStoreFailed, Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Layer.build(PgClient.layer({ url: Redacted.make(options.url) })).pipe(
      Effect.mapError((cause) => new SessionStoreFailed({ session: "*", operation: "load", reason: cause.message, cause }))
    )
    return yield* sqlSessionStore(options.table === undefined ? {} : { table: options.table }).pipe(Effect.provide(context))
  })

/**
 * `postgresSessionStore` for Promise users: the store and `close()`, which ends its connection pool.
 *
 * @example
 * ```ts
 * const { store, close } = await openPostgresSessionStore({ url: process.env.DATABASE_URL! })
 * const chat = session(assistant, "user-42", { store })
 * ```
 */
export const openPostgresSessionStore = async (
  options: { readonly url: string; readonly table?: string }
): Promise<{ readonly store: SessionStore; readonly close: () => Promise<void> }> => {
  const scope = Effect.runSync(Scope.make())
  try {
    const store = await Effect.runPromise(postgresSessionStore(options).pipe(Scope.provide(scope)))
    return { store, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
  } catch (error) {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw error
  }
}
