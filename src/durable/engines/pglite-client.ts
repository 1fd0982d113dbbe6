/**
 * An Effect `SqlClient` on PGlite (PostgreSQL compiled to WASM, file-backed, no server, no native
 * build), for the embedded engine.
 *
 * Why our own: `@effect/sql-pglite` (4.0.0-beta.93, the only release) imports `effect/unstable/sql/*`,
 * which effect 4.0.6 no longer exports (the modules moved to `effect/sql/*`), so it fails to load with
 * ERR_MODULE_NOT_FOUND. This is the same shape on the released module paths, plus two fixes found
 * while testing it under Effect Cluster:
 * - PGlite is one PostgreSQL session. Every statement holds the client's single permit for its whole
 *   duration (not only while acquiring), so a statement of another fiber never lands inside someone
 *   else's open transaction.
 * - `PGlite.close()` called while a query is still running spins forever in WASM (the event loop is
 *   blocked, no timeout can fire). Closing first waits for the running statements to finish.
 */
import type { PGlite as PGliteInstance } from "@electric-sql/pglite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import {
  ConstraintError,
  DeadlockError,
  SerializationError,
  SqlError,
  type SqlErrorReason,
  SqlSyntaxError,
  UniqueViolation,
  UnknownError
} from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"

/** Options of {@link pgliteClient}. */
export interface PgliteClientOptions {
  /** The directory PGlite keeps its files in; created when missing. */
  readonly dataDir: string
}

const classify = (cause: unknown, operation: string): SqlErrorReason => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined
  const props = { cause, message: cause instanceof Error ? cause.message : String(cause), operation }
  if (code === "23505") {
    const constraint = typeof cause === "object" && cause !== null && "constraint" in cause ? String(cause.constraint) : "unknown"
    return new UniqueViolation({ ...props, constraint })
  }
  if (code?.startsWith("23") === true) return new ConstraintError(props)
  if (code?.startsWith("42") === true) return new SqlSyntaxError(props)
  if (code === "40P01") return new DeadlockError(props)
  if (code === "40001") return new SerializationError(props)
  return new UnknownError(props)
}

const escape = Statement.defaultEscape("\"")

const compiler = Statement.makeCompiler({
  dialect: "pg",
  placeholder: (index) => `$${index}`,
  onIdentifier: (value) => escape(value),
  onRecordUpdate: (placeholders, alias, columns, values, returning) => [
    `(values ${placeholders}) AS ${alias}${columns}${returning ? ` RETURNING ${returning[0]}` : ""}`,
    returning ? values.flat().concat(returning[1]) : values.flat()
  ],
  onCustom: () => ["", []]
})

/** The statements running on `pglite`, so closing can wait for them. */
const tracked = (pglite: PGliteInstance) => {
  const running = new Set<Promise<unknown>>()
  const run = <A>(operation: string, f: () => Promise<A>): Effect.Effect<A, SqlError> =>
    Effect.tryPromise({
      try: () => {
        const p = f()
        running.add(p)
        const forget = () => running.delete(p)
        p.then(forget, forget)
        return p
      },
      catch: (cause) => new SqlError({ reason: classify(cause, operation) })
    })
  const drain = async (timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs
    while (running.size > 0 && Date.now() < deadline) await Promise.race([...running, new Promise((r) => setTimeout(r, 10))]).catch(() => {})
  }
  const connection: Connection = {
    execute: (sql, params, transformRows) =>
      run("execute", () => pglite.query<object>(sql, params as Array<unknown>)).pipe(
        Effect.map((r) => (transformRows ? transformRows(r.rows) : r.rows))
      ),
    executeRaw: (sql, params) => run("executeRaw", () => pglite.query(sql, params as Array<unknown>)),
    executeUnprepared: (sql, params, transformRows) =>
      run("executeUnprepared", () => pglite.query<object>(sql, params as Array<unknown>)).pipe(
        Effect.map((r) => (transformRows ? transformRows(r.rows) : r.rows))
      ),
    executeValues: (sql, params) =>
      run("executeValues", () => pglite.query<Array<unknown>>(sql, params as Array<unknown>, { rowMode: "array" })).pipe(Effect.map((r) => r.rows)),
    executeValuesUnprepared: (sql, params) =>
      run("executeValuesUnprepared", () => pglite.query<Array<unknown>>(sql, params as Array<unknown>, { rowMode: "array" })).pipe(
        Effect.map((r) => r.rows)
      ),
    executeStream: (sql, params, transformRows) =>
      Stream.fromArrayEffect(
        run("executeStream", () => pglite.query<object>(sql, params as Array<unknown>)).pipe(
          Effect.map((r) => (transformRows ? transformRows(r.rows) : r.rows))
        )
      )
  }
  return { connection, drain }
}

/**
 * A PGlite database in `dataDir` as an Effect `SqlClient` (PostgreSQL dialect), open while the layer is.
 *
 * @example
 * ```ts
 * const program = Effect.gen(function*() {
 *   const sql = yield* SqlClient.SqlClient
 *   return yield* sql`select 1 as one`
 * }).pipe(Effect.provide(pgliteClient({ dataDir: "./data/db" })))
 * ```
 */
export const pgliteClient = (options: PgliteClientOptions): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.effect(SqlClient.SqlClient)(
    Effect.gen(function*() {
      const { PGlite } = yield* Effect.promise(() => import("@electric-sql/pglite"))
      const { connection } = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            const pglite = new PGlite(options.dataDir)
            await pglite.waitReady
            return { pglite, ...tracked(pglite) }
          },
          catch: (cause) => new SqlError({ reason: classify(cause, "connect") })
        }),
        ({ pglite, drain }) => Effect.promise(async () => {
          await drain(5_000)
          await pglite.close()
        })
      )
      const permit = yield* Semaphore.make(1)
      // Held until the statement's (or the transaction's) scope closes: one session, one user at a time.
      const acquirer = Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const scope = yield* Scope.Scope
          yield* restore(permit.take(1))
          yield* Scope.addFinalizer(scope, permit.release(1))
          return connection
        })
      )
      return yield* SqlClient.make({
        acquirer,
        transactionAcquirer: acquirer,
        compiler,
        driver: "pglite",
        spanAttributes: [["db.system.name", "postgresql"]]
      })
    })
  ).pipe(Layer.provide(Reactivity.layer))
