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
 *
 * And two for speed (a durable step is a handful of statements, so each statement's fixed cost counts):
 * - One call into PGlite per statement: `PGlite.query` makes six (parse, describe the statement, bind,
 *   describe the portal, execute, sync, each awaited, under two mutexes); here parse, bind, describe,
 *   execute and sync go in one protocol message (`execProtocol`). The parameter types PostgreSQL
 *   infers for a statement text are asked once and kept (a bounded cache), so parameters are
 *   serialised exactly as `PGlite.query` does, by type. A text with parameters is prepared under a
 *   name at its first call (at most 1,000 texts a session) and only bound and executed after, as
 *   node-postgres and postgres.js do; a table altered under it is prepared again (and, outside a
 *   transaction, the call runs again; inside one it fails with PostgreSQL's "cached plan must not
 *   change result type", as with those drivers).
 * - `relaxedDurability`, and no sync asked after a statement: with files on Node, PGlite writes through
 *   to them at every statement and its "sync to the file system" is a no-op (behind a mutex and a
 *   promise: 2% of a durable step). What a commit has written is in the operating system's files when
 *   the statement returns, as before. Elsewhere (`idb://`, `memory://`) PGlite syncs as it always does.
 */
import type { messages as Messages, PGlite as PGliteInstance, Results } from "@electric-sql/pglite"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
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
import { describeCause } from "../../internal/describe-cause.ts"

/** Options of {@link pgliteClient}. */
export interface PgliteClientOptions {
  /** The directory PGlite keeps its files in; created when missing. */
  readonly dataDir: string
}

const classify = (cause: unknown, operation: string): SqlErrorReason => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined
  // PGlite's file system throws plain objects too (`ErrnoError { errno }`): never "[object Object]".
  const props = { cause, message: describeCause(cause), operation }
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

type PgliteModule = typeof import("@electric-sql/pglite")

/** How many statement texts keep their parameter types (texts with literals that change each time, as Effect Cluster's storage polls, come and go). */
const parameterTypesKept = 512
/**
 * How many statement texts of the `SqlClient` are prepared under a name in one session, at most; the
 * texts met after that are parsed at every call, as before. Names are never reused (a failed call may
 * or may not have left its name prepared), so this bounds what a session ever holds.
 */
const statementNamesKept = 1_000

const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  let length = 0
  for (const part of parts) length += part.length
  const out = new Uint8Array(length)
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

/**
 * The rows of one statement's replies, as `PGlite.query` returns them. Written here because PGlite's
 * `parseResults` copies its whole table of type parsers (a few hundred entries) for every result: a
 * twentieth of a durable step's CPU time.
 */
const rowsOf = (
  messages: ReadonlyArray<Messages.BackendMessage>,
  rowMode: "object" | "array",
  parse: (value: string | null, type: number) => unknown
): Results<unknown> => {
  let fields: Array<{ name: string; dataTypeID: number }> = []
  const rows: Array<unknown> = []
  let affectedRows = 0
  for (const message of messages) {
    if (message.name === "rowDescription") {
      fields = (message as Messages.RowDescriptionMessage).fields.map((field) => ({ name: field.name, dataTypeID: field.dataTypeID }))
    } else if (message.name === "dataRow") {
      const values = (message as Messages.DataRowMessage).fields
      if (rowMode === "array") {
        rows.push(values.map((value, i) => parse(value, fields[i]!.dataTypeID)))
      } else {
        const row: Record<string, unknown> = {}
        for (let i = 0; i < values.length; i++) row[fields[i]!.name] = parse(values[i]!, fields[i]!.dataTypeID)
        rows.push(row)
      }
    } else if (message.name === "commandComplete") {
      const [verb, second, third] = (message as Messages.CommandCompleteMessage).text.split(" ")
      affectedRows = verb === "INSERT" ? Number(third) : verb === "UPDATE" || verb === "DELETE" || verb === "COPY" || verb === "MERGE" ? Number(second) : 0
      break
    }
  }
  return { rows, fields, affectedRows }
}

/**
 * PostgreSQL settings beside PGlite's own. `full_page_writes=off`: PGlite runs PostgreSQL with fsync
 * off (`-F`), so its files are only as safe as the operating system's cache already, and a full page
 * image in the WAL after each checkpoint (against a page torn by a power loss) buys nothing there;
 * left on, it made a step's write about 1.5× dearer (measured: 1,631 → 1,091 µs a call of three
 * inserts). A process that dies loses nothing it committed either way: its writes are in the OS's
 * files when the statement returns.
 */
const startParams = ["-c", "full_page_writes=off"]

/** One statement of a pipeline (`preparedStatements(…).pipeline`): its text, its parameters as text, and a name to prepare it once under. */
export interface PipelinedStatement {
  readonly text: string
  readonly params: ReadonlyArray<string | null>
  /** Prepared once in the session under this name (parsed and planned once), then only bound and executed. */
  readonly name?: string
  /** Called with the statement's rows once its pipeline has committed (not when it failed). */
  readonly onCommit?: (rows: ReadonlyArray<Record<string, unknown>>) => void
}

/** The rows of each statement of a pipeline's replies (one `commandComplete` ends each). */
const splitResults = (
  messages: ReadonlyArray<Messages.BackendMessage>,
  parse: (value: string | null, type: number) => unknown
): ReadonlyArray<ReadonlyArray<Record<string, unknown>>> => {
  const results: Array<ReadonlyArray<Record<string, unknown>>> = []
  let fields: ReadonlyArray<{ readonly name: string; readonly dataTypeID: number }> = []
  let rows: Array<Record<string, unknown>> = []
  for (const message of messages) {
    if (message.name === "rowDescription") {
      fields = (message as Messages.RowDescriptionMessage).fields
    } else if (message.name === "noData") {
      fields = []
    } else if (message.name === "dataRow") {
      const values = (message as Messages.DataRowMessage).fields
      const row: Record<string, unknown> = {}
      for (let i = 0; i < values.length; i++) row[fields[i]!.name] = parse(values[i]!, fields[i]!.dataTypeID)
      rows.push(row)
    } else if (message.name === "commandComplete") {
      results.push(rows)
      rows = []
      fields = []
    }
  }
  return results
}

/**
 * Statements on `pglite` in one protocol round trip each: the parameter types of a text are described
 * once (then kept, least recently used dropped first), and parse + bind + describe + execute + sync
 * are sent together. Same results, errors and serialisation as `PGlite.query`. Internal (exported for
 * its test; `effect-agent-dsl/durable/embedded` exports `pgliteClient` only).
 */
export const preparedStatements = (pglite: PGliteInstance, module: PgliteModule, { syncToFs = true }: { readonly syncToFs?: boolean } = {}) => {
  const { serialize } = module.protocol
  const { parseDescribeStatementResults } = module.parse
  const { parseType } = module.types
  const parameterTypes = new Map<string, ReadonlyArray<number>>()
  const describe = async (sql: string): Promise<ReadonlyArray<number>> => {
    const known = parameterTypes.get(sql)
    if (known !== undefined) {
      parameterTypes.delete(sql)
      parameterTypes.set(sql, known)
      return known
    }
    const described = await pglite.execProtocol(
      concat([serialize.parse({ text: sql }), serialize.describe({ type: "S" }), serialize.sync()]),
      { syncToFs: false }
    )
    const types = parseDescribeStatementResults(described.messages)
    if (parameterTypes.size >= parameterTypesKept) parameterTypes.delete(parameterTypes.keys().next().value!)
    parameterTypes.set(sql, types)
    return types
  }
  // One statement at a time on the instance, whatever happens to its caller: `execProtocol` keeps the
  // replies in the instance until its promise settles, so a statement whose fiber was interrupted (its
  // session permit released) must still finish before the next one starts (PGlite.query's mutexes did this).
  let previous: Promise<unknown> = Promise.resolve()
  const queued = <A>(run: () => Promise<A>): Promise<A> => {
    const next = previous.then(run)
    previous = next.catch(() => {})
    return next
  }
  /** Names of the statements prepared in the session (`PipelinedStatement.name`). */
  const prepared = new Set<string>()
  /**
   * The `SqlClient`'s statement texts with parameters, prepared in the session under a name of their
   * own at first use and only bound and executed after (parsed and planned once: a durable run's
   * registration and cancellation check cost half as much). Texts without parameters (DDL among
   * them) are parsed at every call.
   */
  const statementNames = new Map<string, string>()
  let statementNamesGiven = 0
  const query = <T>(sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array"): Promise<Results<T>> =>
    queued(() => statement<T>(sql, params, rowMode))
  /**
   * `statements` in one call into PGlite: their parse (once per name), bind and execute messages, then
   * one sync, so PostgreSQL runs them in one implicit transaction (all or none). Parameters are text
   * (or null), typed by the statement (`$1::jsonb`). The rows of each statement, in order.
   */
  const pipeline = (statements: ReadonlyArray<PipelinedStatement>): Promise<ReadonlyArray<ReadonlyArray<Record<string, unknown>>>> =>
    queued(async () => {
      const parts: Array<Uint8Array> = []
      const named: Array<string> = []
      for (const { text, params, name } of statements) {
        if (name === undefined || !prepared.has(name)) {
          parts.push(serialize.parse({ text, ...(name === undefined ? {} : { name }) }))
          if (name !== undefined) named.push(name)
        }
        parts.push(serialize.bind({ values: params as Array<string | null>, ...(name === undefined ? {} : { statement: name }) }))
        parts.push(serialize.describe({ type: "P" }), serialize.execute({}))
      }
      parts.push(serialize.sync())
      try {
        const result = await pglite.execProtocol(concat(parts), { syncToFs })
        for (const name of named) prepared.add(name)
        const rows = splitResults(result.messages, (value, type) => parseType(value, type, pglite.parsers))
        statements.forEach((statement, i) => statement.onCommit?.(rows[i] ?? []))
        return rows
      } catch (error) {
        // A failed statement skips the rest up to the sync: a name parsed in this call may or may not
        // exist now. Forget them all, on both sides, and prepare again on next use.
        prepared.clear()
        statementNames.clear()
        await pglite.exec("deallocate all").catch(() => {})
        throw error
      }
    })
  return Object.assign(query, { pipeline })

  async function statement<T>(sql: string, params: ReadonlyArray<unknown>, rowMode: "object" | "array"): Promise<Results<T>> {
    const types = params.length === 0 ? [] : await describe(sql)
    const values = params.map((param, i) => {
      if (param === null || param === undefined) return null
      const serializer = pglite.serializers[types[i] ?? 0]
      return serializer !== undefined ? serializer(param) : String(param)
    })
    let name = statementNames.get(sql)
    const parse = name === undefined
    if (name === undefined && params.length > 0 && statementNamesGiven < statementNamesKept) {
      name = `sql_${++statementNamesGiven}`
      statementNames.set(sql, name)
    }
    let result: Awaited<ReturnType<PGliteInstance["execProtocol"]>>
    try {
      result = await pglite.execProtocol(concat([
        ...(parse ? [serialize.parse({ text: sql, ...(name === undefined ? {} : { name }) })] : []),
        serialize.bind({ values, ...(name === undefined ? {} : { statement: name }) }),
        serialize.describe({ type: "P" }),
        serialize.execute({}),
        serialize.sync()
      ]), { syncToFs })
    } catch (error) {
      if (name === undefined) throw error
      // A table changed under a prepared statement ("cached plan must not change result type"): the
      // statement did not run; it is prepared afresh, and outside a transaction it runs again now.
      const replanned = typeof error === "object" && error !== null && "code" in error && error.code === "0A000"
      // A name parsed in this call may or may not be prepared now: it is not used again.
      if (parse || replanned) statementNames.delete(sql)
      if (!parse && replanned && !pglite.isInTransaction()) return statement<T>(sql, params, rowMode)
      throw error
    }
    return rowsOf(result.messages, rowMode, (value, type) => parseType(value, type, pglite.parsers)) as Results<T>
  }
}

/** The statements running on `pglite`, so closing can wait for them. */
const tracked = (pglite: PGliteInstance, module: PgliteModule, syncToFs: boolean) => {
  const running = new Set<Promise<unknown>>()
  const query = preparedStatements(pglite, module, { syncToFs })
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
  const rows = (operation: string, sql: string, params: ReadonlyArray<unknown>, transformRows: ((rows: ReadonlyArray<any>) => ReadonlyArray<any>) | undefined) =>
    run(operation, () => query<object>(sql, params, "object")).pipe(
      Effect.map((r) => (transformRows ? transformRows(r.rows) : r.rows))
    )
  const values = (operation: string, sql: string, params: ReadonlyArray<unknown>) =>
    run(operation, () => query<Array<unknown>>(sql, params, "array")).pipe(Effect.map((r) => r.rows))
  const connection: Connection = {
    execute: (sql, params, transformRows) => rows("execute", sql, params, transformRows),
    executeRaw: (sql, params) => run("executeRaw", () => query(sql, params, "object")),
    executeUnprepared: (sql, params, transformRows) => rows("executeUnprepared", sql, params, transformRows),
    executeValues: (sql, params) => values("executeValues", sql, params),
    executeValuesUnprepared: (sql, params) => values("executeValuesUnprepared", sql, params),
    executeStream: (sql, params, transformRows) => Stream.fromArrayEffect(rows("executeStream", sql, params, transformRows))
  }
  const pipeline = (statements: ReadonlyArray<PipelinedStatement>) => run("pipeline", () => query.pipeline(statements))
  return { connection, drain, pipeline }
}

/**
 * Internal: the embedded engine's own line to the PGlite session behind its `SqlClient`: a pipeline of
 * statements in one call into PGlite and one implicit transaction, holding the same session permit as
 * the `SqlClient`'s statements and transactions (so it never lands inside someone else's transaction).
 */
export class PgliteSession extends Context.Service<PgliteSession, {
  readonly pipeline: (statements: ReadonlyArray<PipelinedStatement>) => Effect.Effect<ReadonlyArray<ReadonlyArray<Record<string, unknown>>>, SqlError>
}>()("effect-agent-dsl/durable/PgliteSession") {}

/**
 * The file beside a database directory that says its database was initialised once (written when
 * PGlite is first ready on it). It tells a database that lost its `PG_VERSION` (a partial copy or
 * restore: refused) from a first initialisation that did not finish (a process killed in the second
 * or so PGlite writes its files before `PG_VERSION`: initialised again, as PGlite does).
 */
const initialisedMark = (dataDir: string): string => `${dataDir.replace(/[\\/]+$/, "")}.initialized`

/**
 * Internal: refuses a directory that holds files but no `PG_VERSION` once its database was initialised
 * (see {@link initialisedMark}): PGlite would take it for an empty one and create a new database over
 * it, losing every run it held. An empty or missing directory is a new database (a mark left of one
 * moved away is removed); a whole one opens as it is.
 *
 * @example
 * ```ts
 * await refuseIncompleteDatabase("./data/pg") // throws when ./data/pg.initialized says it was a database
 * ```
 */
export const refuseIncompleteDatabase = async (dataDir: string): Promise<void> => {
  const { existsSync, readdirSync, rmSync, statSync } = await import("node:fs")
  const mark = initialisedMark(dataDir)
  // No database at all (moved away to start afresh): a mark left of it marks nothing now.
  if (!existsSync(dataDir) || (statSync(dataDir).isDirectory() && readdirSync(dataDir).length === 0)) return rmSync(mark, { force: true })
  if (!statSync(dataDir).isDirectory() || existsSync(`${dataDir}/PG_VERSION`) || !existsSync(mark)) return
  throw new Error(
    `${dataDir} holds files but no PG_VERSION: it is not a whole PGlite database (a partial copy or restore?), and opening it would create a new, empty one over it; restore the whole directory, or move it away (and ${initialisedMark(dataDir)} with it) to start afresh`
  )
}

/** Marks the database in `dataDir` initialised (see {@link initialisedMark}), once. */
const markInitialised = async (dataDir: string): Promise<void> => {
  const { existsSync, writeFileSync } = await import("node:fs")
  const mark = initialisedMark(dataDir)
  if (!existsSync(mark)) writeFileSync(mark, "The PGlite database in the directory beside this file was initialised: without its PG_VERSION it is refused, not created again over its files.\n")
}

/** Internal: a PGlite database in `dataDir` as an Effect `SqlClient` and a `PgliteSession` on the same session. */
export const pgliteSession = (options: PgliteClientOptions): Layer.Layer<SqlClient.SqlClient | PgliteSession, SqlError> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const module = yield* Effect.promise(() => import("@electric-sql/pglite"))
      const { connection, pipeline } = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: async () => {
            // Only for files on Node (see the header): in a browser's IndexedDB the sync is real.
            const files = !options.dataDir.includes("://")
            if (files) await refuseIncompleteDatabase(options.dataDir)
            const pglite = new module.PGlite(options.dataDir, {
              relaxedDurability: files,
              startParams: [...module.PGlite.defaultStartParams, ...startParams]
            })
            await pglite.waitReady
            if (files) await markInitialised(options.dataDir)
            return { pglite, ...tracked(pglite, module, !files) }
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
      const client = yield* SqlClient.make({
        acquirer,
        transactionAcquirer: acquirer,
        compiler,
        driver: "pglite",
        spanAttributes: [["db.system.name", "postgresql"]]
      })
      // The engine's own statements inside a transaction of this SqlClient would wait for the session
      // that transaction holds, for ever: they are refused, saying why.
      const insideTransaction = new SqlError({
        reason: new UnknownError({
          cause: undefined,
          message: "the embedded engine cannot run inside a transaction of its own SqlClient (one PGlite session, held by the transaction): start, decide or read runs outside `sql.withTransaction`",
          operation: "pipeline"
        })
      })
      const session = PgliteSession.of({
        pipeline: (statements) =>
          Effect.flatMap(Effect.serviceOption(client.transactionService), (transaction) =>
            Option.isSome(transaction) ? Effect.fail(insideTransaction) : permit.withPermits(1)(pipeline(statements)))
      })
      return Context.make(SqlClient.SqlClient, client).pipe(Context.add(PgliteSession, session))
    })
  ).pipe(Layer.provide(Reactivity.layer))

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
  Layer.effect(SqlClient.SqlClient)(Effect.service(SqlClient.SqlClient)).pipe(Layer.provide(pgliteSession(options)))
