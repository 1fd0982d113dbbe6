/**
 * A2A tasks on PostgreSQL (or the embedded PGlite), through Effect's `SqlClient`: the SDK's
 * `TaskStore` for `serveA2a({ taskStore })`, so `GetTask`, `ListTasks` and the answer to an
 * `input-required` task work after the server restarts (with the sessions on SQL too:
 * `sessions: () => ({ store })` from `effect-agent-dsl/postgres`, where the waiting run is kept).
 *
 * One row per task, scoped as the SDK's `InMemoryTaskStore` scopes them (tenant, then the owner its
 * `resolveUserScope` gives): the task as the protocol's JSON (`Task.toJSON`, read back with
 * `Task.fromJSON`), with its context, state and status time as columns for `list`. The table is
 * created when missing. Written here rather than with the SDK's `DatabaseTaskStore`, which needs
 * Kysely and a migration step: this one runs on the `SqlClient` the rest of the package uses.
 */
import { type ListTasksRequest, type ListTasksResponse, Task } from "@a2a-js/sdk"
import { resolveUserScope, type ServerCallContext, type TaskStore } from "@a2a-js/sdk/server"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { AgentErrorTypeId } from "../../internal/agent-error-marker.ts"

/**
 * The SQL task store could not do what was asked (`operation`): the database refused, or a row is not
 * a task. Promise-facing methods (what the SDK calls) reject with it.
 *
 * @example
 * ```ts
 * sqlTaskStore().pipe(Effect.catchTag("A2aTaskStoreFailed", (e) => Effect.logError(e.reason)))
 * ```
 */
export class A2aTaskStoreFailed extends Data.TaggedError("A2aTaskStoreFailed")<{
  readonly operation: "open" | "save" | "load" | "list"
  readonly reason: string
  readonly cause?: unknown
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The A2A task store failed to ${this.operation}: ${this.reason}`
  }
}

/** Options of {@link sqlTaskStore}. */
export interface SqlTaskStoreOptions {
  /** A plain lower-case table name. Default `a2a_tasks`. */
  readonly table?: string
  /** Who owns a task (the scope `load` and `list` see): default the SDK's `resolveUserScope` (the user's name). */
  readonly owner?: (context: ServerCallContext) => string
}

const tablePattern = /^[a-z_][a-z0-9_]{0,62}$/
const defaultPageSize = 50

interface Row {
  readonly task: unknown
  readonly id: string
  readonly status_time: string
}

const encodeCursor = (time: string, id: string) => Buffer.from(JSON.stringify([time, id])).toString("base64url")
const decodeCursor = (token: string): readonly [string, string] | undefined => {
  try {
    const value = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as unknown
    return Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && typeof value[1] === "string" ? [value[0], value[1]] : undefined
  } catch {
    return undefined
  }
}

/**
 * A task store over the `SqlClient` in context (`@effect/sql-pg`'s `PgClient.layer`, or PGlite).
 *
 * @example
 * ```ts
 * const taskStore = await Effect.runPromise(sqlTaskStore().pipe(Effect.provide(PgClient.layer({ url }))))
 * const server = await serveA2a(helper, { taskStore, sessions: () => ({ store: sessions }) })
 * ```
 */
export const sqlTaskStore = (options: SqlTaskStoreOptions = {}): Effect.Effect<TaskStore, A2aTaskStoreFailed, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const table = options.table ?? "a2a_tasks"
    if (!tablePattern.test(table)) return yield* new A2aTaskStoreFailed({ operation: "open", reason: `"${table}" is not a plain lower-case table name` })
    const sql = yield* SqlClient.SqlClient
    const fail = (operation: A2aTaskStoreFailed["operation"]) => (cause: unknown) =>
      new A2aTaskStoreFailed({ operation, reason: cause instanceof Error ? cause.message : String(cause), cause })
    yield* sql`create table if not exists ${sql(table)} (
      tenant text not null, owner text not null, id text not null, context_id text not null,
      state integer not null, status_time text not null, task jsonb not null,
      primary key (tenant, owner, id))`.pipe(Effect.mapError(fail("open")))
    const ownerOf = options.owner ?? resolveUserScope
    const run = <A>(effect: Effect.Effect<A, unknown>, operation: A2aTaskStoreFailed["operation"]) => Effect.runPromise(Effect.mapError(effect, fail(operation)))
    const taskOf = (row: Row, operation: A2aTaskStoreFailed["operation"]): Task => {
      try {
        return Task.fromJSON(typeof row.task === "string" ? JSON.parse(row.task) : row.task)
      } catch (cause) {
        throw fail(operation)(cause)
      }
    }
    const store: TaskStore = {
      save: (task, context) => {
        const json = JSON.stringify(Task.toJSON(task))
        const time = task.status?.timestamp ?? ""
        return run(sql`insert into ${sql(table)} (tenant, owner, id, context_id, state, status_time, task)
          values (${context.tenant ?? ""}, ${ownerOf(context)}, ${task.id}, ${task.contextId}, ${task.status?.state ?? 0}, ${time}, ${json}::jsonb)
          on conflict (tenant, owner, id) do update set context_id = excluded.context_id, state = excluded.state, status_time = excluded.status_time, task = excluded.task`.pipe(Effect.asVoid), "save")
      },
      load: async (taskId, context) => {
        const rows = await run(sql<Row>`select task, id, status_time from ${sql(table)} where tenant = ${context.tenant ?? ""} and owner = ${ownerOf(context)} and id = ${taskId}`, "load")
        return rows[0] === undefined ? undefined : taskOf(rows[0], "load")
      },
      list: async (params: ListTasksRequest, context): Promise<ListTasksResponse> => {
        const pageSize = Math.min(100, Math.max(1, Math.floor(params.pageSize ?? defaultPageSize)))
        const cursor = params.pageToken ? decodeCursor(params.pageToken) : undefined
        if (params.pageToken && cursor === undefined) return { tasks: [], nextPageToken: "", pageSize, totalSize: 0 }
        const scope = sql.and([
          sql`tenant = ${context.tenant ?? ""}`,
          sql`owner = ${ownerOf(context)}`,
          ...(params.contextId ? [sql`context_id = ${params.contextId}`] : []),
          ...(params.status !== undefined && params.status !== 0 ? [sql`state = ${params.status}`] : []),
          ...(params.statusTimestampAfter ? [sql`status_time > ${new Date(params.statusTimestampAfter).toISOString()}`] : [])
        ])
        const [count] = await run(sql<{ readonly total: number | string }>`select count(*) as total from ${sql(table)} where ${scope}`, "list")
        const page = cursor === undefined ? scope : sql.and([scope, sql`(status_time, id) < (${cursor[0]}, ${cursor[1]})`])
        const rows = await run(sql<Row>`select task, id, status_time from ${sql(table)} where ${page} order by status_time desc, id desc limit ${pageSize + 1}`, "list")
        const kept = rows.slice(0, pageSize)
        const last = kept.at(-1)
        return {
          tasks: kept.map((row) => {
            const task = taskOf(row, "list")
            const history = params.historyLength === undefined ? task.history : params.historyLength <= 0 ? [] : task.history.slice(-params.historyLength)
            return { ...task, history, artifacts: params.includeArtifacts === true ? task.artifacts : [] }
          }),
          nextPageToken: rows.length > pageSize && last !== undefined ? encodeCursor(last.status_time, last.id) : "",
          pageSize,
          totalSize: Number(count?.total ?? 0)
        }
      }
    }
    return store
  })
