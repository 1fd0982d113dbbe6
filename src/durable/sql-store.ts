/**
 * `ToolIntents` and `ApprovalInbox` in two tables of the database of an Effect `SqlClient` (plain SQL
 * that PostgreSQL and PGlite both run; the tables are created, or brought up to date, when the layer
 * starts, under an advisory lock). A claim is one `insert … on conflict do nothing` naming its owner
 * and lease, committed before the tool runs: two workers replaying the same call cannot both win it,
 * and a take-over is one conditional `update` (one taker wins), as is a decision taking a wait, and a
 * run id is unique in the run list (one insert that does nothing on conflict names the workflow that
 * holds it). Keys and ids are stored escaped, and
 * outcomes and snapshots as exact JSON text (`sql-text.ts`: PostgreSQL refuses a NUL character).
 * A stored outcome, snapshot or event that is not JSON (a row edited or damaged) fails its read with
 * `DurableRunUnreadable`, naming the run, the table and the row, never a parser's defect.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { jsonbColumnToText } from "../internal/jsonb-column-to-text.ts"
import type * as Statement from "effect/sql/Statement"
import { databaseMessage } from "./database-error.ts"
import { ApprovalInbox, ApprovalInboxFailed, type ApprovalWait } from "./approval-inbox.ts"
import { type Intent, type IntentState, ToolIntents, ToolIntentsFailed } from "./tool-intents.ts"
import { RunJournal, RunJournalFailed } from "./run-journal.ts"
import { fromTextKey, jsonbText, textKey as key } from "./sql-text.ts"
import { decodeStored, DurableRunUnreadable } from "./run-unreadable.ts"

/** Table names of the durable store. */
export interface SqlStoreOptions {
  /** Default `agent_tool_intents`. */
  readonly intentsTable?: string
  /** Default `agent_approval_waits`. */
  readonly approvalsTable?: string
  /** Default `agent_run_cancellations`. */
  readonly cancellationsTable?: string
  /** Default `agent_runs`. */
  readonly runsTable?: string
  /** Default `agent_run_events`: the runs' event journals (`RunJournal`). */
  readonly eventsTable?: string
}

const tablePattern = /^[a-z_][a-z0-9_]{0,62}$/

const checkTable = (name: string): string => {
  if (!tablePattern.test(name)) throw new Error(`"${name}" is not a plain lower-case table name`)
  return name
}

const reasonOf = (cause: unknown) => databaseMessage(cause)

/**
 * A JSON column as the driver hands it (parsed by pg for `jsonb`, text otherwise), or the
 * `DurableRunUnreadable` of row `where` when it is not JSON.
 */
const jsonOf = (where: { readonly runId: string; readonly table: string; readonly row: string }, value: unknown): Schema.Json | DurableRunUnreadable => {
  if (typeof value !== "string") {
    return value === undefined ? new DurableRunUnreadable({ ...where, reason: "no value" }) : (value as Schema.Json)
  }
  return decodeStored(where, () => JSON.parse(value) as Schema.Json)
}

/** `rows` each read by `read`; the first that is a `DurableRunUnreadable` fails the whole read. */
const readAll = <Row, A>(rows: ReadonlyArray<Row>, read: (row: Row) => A | DurableRunUnreadable): Effect.Effect<ReadonlyArray<A>, DurableRunUnreadable> =>
  Effect.suspend(() => {
    const out: Array<A> = []
    for (const row of rows) {
      const value = read(row)
      if (value instanceof DurableRunUnreadable) return Effect.fail(value)
      out.push(value)
    }
    return Effect.succeed(out)
  })

/**
 * Runs `statements` (creating or altering the store's tables) in one transaction holding a
 * transaction-level advisory lock: runners starting together on a new database take turns, where a
 * bare `create table if not exists` races in PostgreSQL (a unique violation on its catalogue).
 */
const migrate = <E>(sql: SqlClient.SqlClient, statements: ReadonlyArray<Statement.Statement<unknown>>, fail: (cause: unknown) => E): Effect.Effect<void, E> =>
  sql.withTransaction(Effect.gen(function*() {
    yield* sql`select pg_advisory_xact_lock(${migrationLock})`
    for (const statement of statements) yield* statement
  })).pipe(Effect.mapError(fail))

/**
 * Makes the run id unique in the run list (`runsTable`): a run id names one run per engine, whatever
 * its workflow. Stores of earlier versions may hold one id under two workflows (their runs shared the
 * id's waits, cancellation and journal): the first registered keeps it, the later rows are dropped
 * (their runs, replayed, are refused). Done once, when the index is missing.
 */
const oneRunPerId = (sql: SqlClient.SqlClient, runsTable: string) => {
  const index = `${runsTable.slice(0, 50)}_run_id_key`
  return sql.unsafe(`do $$ begin
    if to_regclass('${index}') is null then
      delete from ${runsTable} a using ${runsTable} b where a.run_id = b.run_id and a.seq > b.seq;
      create unique index ${index} on ${runsTable} (run_id);
    end if;
  end $$`)
}

/** The advisory lock key of the store's migrations (an arbitrary constant of this library). */
const migrationLock = 7_264_511_903_417

/**
 * `ToolIntents` on the `SqlClient` in context.
 *
 * @example
 * ```ts
 * const intents = ToolIntents.pipe(Effect.provide(toolIntentsSql().pipe(Layer.provide(PgClient.layer({ url })))))
 * ```
 */
export const toolIntentsSql = (options: SqlStoreOptions = {}): Layer.Layer<ToolIntents, ToolIntentsFailed, SqlClient.SqlClient> =>
  Layer.effect(ToolIntents)(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const table = yield* Effect.try({
      try: () => checkTable(options.intentsTable ?? "agent_tool_intents"),
      catch: (cause) => new ToolIntentsFailed({ operation: "open", reason: reasonOf(cause), cause })
    })
    const fail = (operation: ToolIntentsFailed["operation"]) => (cause: unknown) => new ToolIntentsFailed({ operation, reason: reasonOf(cause), cause })
    yield* migrate(sql, [
      sql`create table if not exists ${sql(table)} (
        key text primary key,
        run_id text not null,
        tool text not null,
        tool_call_id text not null,
        outcome text,
        finished boolean not null default false,
        claimed_at timestamptz not null default now()
      )`,
      sql`alter table ${sql(table)} add column if not exists owner text`,
      sql`alter table ${sql(table)} add column if not exists lease_until timestamptz`,
      jsonbColumnToText(sql, table, "outcome")
    ], fail("open"))
    type Row = {
      readonly key: string
      readonly run_id: string
      readonly tool: string
      readonly tool_call_id: string
      readonly outcome: unknown
      readonly finished: boolean
      readonly owner: string | null
      readonly lease_live: boolean | null
    }
    const stateOf = (row: Row): IntentState | DurableRunUnreadable => {
      if (!row.finished) return { _tag: "Claimed", owner: row.owner ?? undefined, leaseLive: row.lease_live === true }
      const outcome = jsonOf({ runId: fromTextKey(row.run_id), table, row: `claim ${JSON.stringify(fromTextKey(row.key))} (outcome)` }, row.outcome)
      return outcome instanceof DurableRunUnreadable ? outcome : { _tag: "Finished", outcome }
    }
    const intentOf = (row: Row): (IntentState & Intent) | DurableRunUnreadable => {
      const state = stateOf(row)
      return state instanceof DurableRunUnreadable
        ? state
        : { ...state, key: fromTextKey(row.key), runId: fromTextKey(row.run_id), tool: fromTextKey(row.tool), toolCallId: fromTextKey(row.tool_call_id) } as IntentState & Intent
    }
    // The lease is measured by the database's clock, the one every runner shares.
    const read = (intentKey: string) =>
      sql<Row>`select key, run_id, tool, tool_call_id, outcome, finished, owner, (lease_until > now()) as lease_live from ${sql(table)} where key = ${key(intentKey)}`.pipe(
        Effect.mapError(fail("read")),
        Effect.flatMap((rows) => readAll(rows.slice(0, 1), intentOf)),
        Effect.map(([intent]) => Option.fromNullishOr(intent))
      )
    const until = (ms: number) => sql`now() + ${Math.max(0, Math.round(ms))} * interval '1 millisecond'`
    return ToolIntents.of({
      claim: (intent, lease) =>
        sql<{ readonly key: string }>`insert into ${sql(table)} (key, run_id, tool, tool_call_id, owner, lease_until) values (${key(intent.key)}, ${key(intent.runId)}, ${key(intent.tool)}, ${key(intent.toolCallId)}, ${lease?.owner ?? null}, ${lease === undefined ? sql`null` : until(lease.ms)}) on conflict (key) do nothing returning key`.pipe(
          Effect.mapError(fail("claim")),
          Effect.flatMap((inserted) =>
            inserted.length > 0
              ? Effect.succeed(Option.none<IntentState>())
              : read(intent.key).pipe(Effect.map(Option.map(({ key: _, runId: __, tool: ___, toolCallId: ____, ...state }) => state as IntentState)))
          )
        ),
      finish: (intentKey, outcome) =>
        sql`update ${sql(table)} set outcome = ${JSON.stringify(outcome)}, finished = true where key = ${key(intentKey)}`.pipe(
          Effect.asVoid,
          Effect.mapError(fail("finish"))
        ),
      read,
      renew: (intentKey, lease) =>
        sql<{ readonly key: string }>`update ${sql(table)} set lease_until = ${until(lease.ms)} where key = ${key(intentKey)} and owner = ${lease.owner} and not finished returning key`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(fail("renew"))
        ),
      release: (intentKey, owner) =>
        sql`update ${sql(table)} set lease_until = now() where key = ${key(intentKey)} and owner = ${owner} and not finished`.pipe(
          Effect.asVoid,
          Effect.mapError(fail("renew"))
        ),
      takeOver: (intentKey, from, lease, ownerDead) =>
        sql<{ readonly key: string }>`update ${sql(table)} set owner = ${lease.owner}, lease_until = ${until(lease.ms)}
          where key = ${key(intentKey)} and not finished and owner is not distinct from ${from ?? null}
          and (${ownerDead} or lease_until is null or lease_until <= now()) returning key`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(fail("renew"))
        ),
      forRun: (runId) =>
        sql<Row>`select key, run_id, tool, tool_call_id, outcome, finished, owner, (lease_until > now()) as lease_live from ${sql(table)}
          where run_id = ${key(runId)} or run_id like ${`${key(runId).replace(/[\\%_]/g, (c) => `\\${c}`)}~%`} order by claimed_at, key`.pipe(
          Effect.mapError(fail("read")),
          Effect.flatMap((rows) => readAll(rows, intentOf))
        )
    })
  }))

/**
 * `ApprovalInbox` on the `SqlClient` in context.
 *
 * @example
 * ```ts
 * const layer = approvalInboxSql().pipe(Layer.provide(PgClient.layer({ url })))
 * ```
 */
export const approvalInboxSql = (options: SqlStoreOptions = {}): Layer.Layer<ApprovalInbox, ApprovalInboxFailed, SqlClient.SqlClient> =>
  Layer.effect(ApprovalInbox)(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const table = yield* Effect.try({
      try: () => checkTable(options.approvalsTable ?? "agent_approval_waits"),
      catch: (cause) => new ApprovalInboxFailed({ operation: "open", reason: reasonOf(cause), cause })
    })
    const cancellations = yield* Effect.try({
      try: () => checkTable(options.cancellationsTable ?? "agent_run_cancellations"),
      catch: (cause) => new ApprovalInboxFailed({ operation: "open", reason: reasonOf(cause), cause })
    })
    const runsTable = yield* Effect.try({
      try: () => checkTable(options.runsTable ?? "agent_runs"),
      catch: (cause) => new ApprovalInboxFailed({ operation: "open", reason: reasonOf(cause), cause })
    })
    const fail = (operation: ApprovalInboxFailed["operation"]) => (cause: unknown) => new ApprovalInboxFailed({ operation, reason: reasonOf(cause), cause })
    yield* migrate(sql, [
      sql`create table if not exists ${sql(table)} (
        run_id text not null,
        wait integer not null,
        execution_id text not null,
        snapshot text not null,
        open boolean not null default true,
        opened_at timestamptz not null default now(),
        primary key (run_id, wait)
      )`,
      sql`create table if not exists ${sql(cancellations)} (
        run_id text primary key,
        reason text not null,
        cancelled_at timestamptz not null default now()
      )`,
      sql`create table if not exists ${sql(runsTable)} (
        workflow text not null,
        run_id text not null,
        seq bigserial,
        started_at timestamptz not null default now(),
        primary key (workflow, run_id)
      )`,
      jsonbColumnToText(sql, table, "snapshot"),
      // Decisions taken (`take`) and not yet taken by the run.
      sql`alter table ${sql(table)} add column if not exists decisions text`,
      oneRunPerId(sql, runsTable)
    ], fail("open"))
    type Row = { readonly run_id: string; readonly wait: number; readonly execution_id: string; readonly snapshot: unknown }
    const writtenMeanwhile = new Error("the run id's row was written by another transaction meanwhile")
    type Closed = { readonly wait: number; readonly execution_id: string }
    return ApprovalInbox.of({
      open: (wait) =>
        sql`insert into ${sql(table)} (run_id, wait, execution_id, snapshot) values (${key(wait.runId)}, ${wait.wait}, ${key(wait.executionId)}, ${JSON.stringify(wait.snapshot)}) on conflict (run_id, wait) do nothing`.pipe(
          Effect.asVoid,
          Effect.mapError(fail("open"))
        ),
      close: (runId, wait) =>
        sql`update ${sql(table)} set open = false, decisions = null where run_id = ${key(runId)} and wait = ${wait}`.pipe(Effect.asVoid, Effect.mapError(fail("close"))),
      // One conditional update: the row's lock makes a second taker wait, then find it closed.
      take: (runId, wait, decisions) =>
        sql<{ readonly wait: number }>`update ${sql(table)} set open = false, decisions = ${JSON.stringify(decisions)}
          where run_id = ${key(runId)} and wait = ${wait} and open returning wait`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.mapError(fail("decide"))
        ),
      undelivered: (runId) =>
        sql<{ readonly wait: number; readonly execution_id: string; readonly decisions: unknown }>`select wait, execution_id, decisions from ${sql(table)}
          where run_id = ${key(runId)} and decisions is not null order by wait desc limit 1`.pipe(
          Effect.mapError(fail("read")),
          Effect.flatMap((rows) =>
            readAll(rows.slice(0, 1), (row) => {
              const decisions = jsonOf({ runId, table, row: `wait ${Number(row.wait)} (decisions)` }, row.decisions)
              return decisions instanceof DurableRunUnreadable ? decisions : { wait: Number(row.wait), executionId: fromTextKey(row.execution_id), decisions }
            })
          ),
          Effect.map(([found]) => Option.fromNullishOr(found))
        ),
      undeliveredRuns: (workflow) =>
        sql<{ readonly run_id: string }>`select distinct w.run_id from ${sql(table)} w join ${sql(runsTable)} r on r.run_id = w.run_id
          where r.workflow = ${key(workflow)} and w.decisions is not null`.pipe(
          Effect.map((rows) => rows.map((r) => fromTextKey(r.run_id))),
          Effect.mapError(fail("read"))
        ),
      closeAll: (runId) =>
        sql<Closed>`update ${sql(table)} set open = false, decisions = null
          where run_id = ${key(runId)} and (open or decisions is not null) returning wait, execution_id`.pipe(
          Effect.map((rows) => rows.map((r) => ({ wait: Number(r.wait), executionId: fromTextKey(r.execution_id) }))),
          Effect.mapError(fail("close"))
        ),
      current: (runId) =>
        sql<Row>`select run_id, wait, execution_id, snapshot from ${sql(table)} where run_id = ${key(runId)} and open order by wait desc limit 1`.pipe(
          Effect.mapError(fail("read")),
          Effect.flatMap((rows) =>
            readAll(rows.slice(0, 1), (row): ApprovalWait | DurableRunUnreadable => {
              const snapshot = jsonOf({ runId: fromTextKey(row.run_id), table, row: `wait ${Number(row.wait)} (snapshot)` }, row.snapshot)
              return snapshot instanceof DurableRunUnreadable
                ? snapshot
                : { runId: fromTextKey(row.run_id), wait: Number(row.wait), executionId: fromTextKey(row.execution_id), snapshot }
            })
          ),
          Effect.map(([wait]) => Option.fromNullishOr(wait))
        ),
      cancel: (runId, reason) =>
        sql`insert into ${sql(cancellations)} (run_id, reason) values (${key(runId)}, ${key(reason)}) on conflict (run_id) do nothing`.pipe(
          Effect.asVoid,
          Effect.mapError(fail("cancel"))
        ),
      cancelled: (runId) =>
        sql<{ readonly reason: string }>`select reason from ${sql(cancellations)} where run_id = ${key(runId)}`.pipe(
          Effect.map(([row]) => Option.map(Option.fromNullishOr(row?.reason), fromTextKey)),
          Effect.mapError(fail("read"))
        ),
      // The run id is unique in the table: the insert answers this workflow when it wrote the row, else
      // the row there names the holder. One statement (one call into PGlite); on PostgreSQL an insert
      // that met a row committed after the statement's snapshot finds nothing to read: asked again.
      register: (workflow, runId) =>
        sql<{ readonly workflow: string }>`with inserted as (
            insert into ${sql(runsTable)} (workflow, run_id) values (${key(workflow)}, ${key(runId)}) on conflict do nothing returning workflow
          )
          select workflow from inserted union all select workflow from ${sql(runsTable)} where run_id = ${key(runId)} limit 1`.pipe(
          Effect.flatMap(([row]) => (row === undefined ? Effect.fail(writtenMeanwhile) : Effect.succeed(fromTextKey(row.workflow)))),
          Effect.retry({ times: 3, while: (e) => e === writtenMeanwhile }),
          Effect.mapError(fail("open"))
        ),
      owner: (runId) =>
        sql<{ readonly workflow: string }>`select workflow from ${sql(runsTable)} where run_id = ${key(runId)}`.pipe(
          Effect.map(([row]) => Option.map(Option.fromNullishOr(row?.workflow), fromTextKey)),
          Effect.mapError(fail("read"))
        ),
      runs: (workflow, limit) =>
        sql<{ readonly run_id: string }>`select run_id from ${sql(runsTable)} where workflow = ${key(workflow)} order by seq limit ${Math.max(0, Math.floor(limit))}`.pipe(
          Effect.map((rows) => rows.map((r) => fromTextKey(r.run_id))),
          Effect.mapError(fail("read"))
        )
    })
  }))

/**
 * `RunJournal` on the `SqlClient` in context: one row per event, `(run_id, id)` its key and
 * `(run_id, key)` unique. An event's id is the run's last id plus one, given in the insert itself;
 * two writers of one run racing for an id (a hand-over) make one fail on the primary key, and it
 * tries again with the next id, so ids have no gaps and a reader never sees id n + 1 before id n.
 *
 * @example
 * ```ts
 * const layer = runJournalSql().pipe(Layer.provide(PgClient.layer({ url })))
 * ```
 */
export const runJournalSql = (options: SqlStoreOptions = {}): Layer.Layer<RunJournal, RunJournalFailed, SqlClient.SqlClient> =>
  Layer.effect(RunJournal)(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const table = yield* Effect.try({
      try: () => checkTable(options.eventsTable ?? "agent_run_events"),
      catch: (cause) => new RunJournalFailed({ operation: "open", reason: reasonOf(cause), cause })
    })
    const fail = (operation: RunJournalFailed["operation"]) => (cause: unknown) => new RunJournalFailed({ operation, reason: reasonOf(cause), cause })
    yield* migrate(sql, [
      sql`create table if not exists ${sql(table)} (
        run_id text not null,
        id bigint not null,
        key text not null,
        event jsonb not null,
        at timestamptz not null default now(),
        primary key (run_id, id),
        unique (run_id, key)
      )`
    ], fail("open"))
    return RunJournal.of({
      append: (runId, eventKey, event) =>
        sql`insert into ${sql(table)} (run_id, id, key, event)
          select ${key(runId)}, coalesce(max(id), 0) + 1, ${key(eventKey)}, ${jsonbText(JSON.stringify(event))}::jsonb from ${sql(table)} where run_id = ${key(runId)}
          on conflict (run_id, key) do nothing`.pipe(
          // Another writer took the id between our read and our insert: the next id.
          Effect.retry({ times: 8 }),
          Effect.asVoid,
          Effect.mapError(fail("append"))
        ),
      read: (runId, after, limit) =>
        sql<{ readonly id: number | string; readonly event: unknown }>`select id, event from ${sql(table)} where run_id = ${key(runId)} and id > ${after} order by id limit ${Math.max(0, Math.floor(limit))}`.pipe(
          Effect.mapError(fail("read")),
          Effect.flatMap((rows) =>
            readAll(rows, (r) => {
              const event = jsonOf({ runId, table, row: `event ${Number(r.id)}` }, r.event)
              return event instanceof DurableRunUnreadable ? event : { id: Number(r.id), event }
            })
          )
        ),
      keys: (runId) =>
        sql<{ readonly key: string }>`select key from ${sql(table)} where run_id = ${key(runId)}`.pipe(
          Effect.map((rows) => new Set(rows.map((r) => fromTextKey(r.key)))),
          Effect.mapError(fail("read"))
        )
    })
  }))

/**
 * The stores of durable runs (`ToolIntents`, `ApprovalInbox`, `RunJournal`) on the `SqlClient` in
 * context: what every runner, and every process that polls, decides or follows runs, provides beside
 * its engine.
 *
 * @example
 * ```ts
 * const store = durableStoreSql().pipe(Layer.provide(PgClient.layer({ url: Redacted.make(url) })))
 * ```
 */
export const durableStoreSql = (
  options: SqlStoreOptions = {}
): Layer.Layer<ToolIntents | ApprovalInbox | RunJournal, ToolIntentsFailed | ApprovalInboxFailed | RunJournalFailed, SqlClient.SqlClient> =>
  Layer.mergeAll(toolIntentsSql(options), approvalInboxSql(options), runJournalSql(options))
