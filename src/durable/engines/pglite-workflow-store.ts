/**
 * The embedded engine's store in its PGlite files: the `WorkflowStore` of the local workflow engine
 * (three tables: executions, their recorded steps, their clocks) and the run journal (`RunJournal`,
 * the `agent_run_events` table every engine shares), written so that a step of a durable run is one
 * statement in one call into PGlite: the journal's events of the step (`PendingWrites`) ride along
 * with the step's recorded result, in one insert, numbered by this process when it knows the run's last
 * id (`JournalLastIds`), by the database otherwise. Statements are prepared once per session.
 *
 * Results and payloads are stored as JSON text (not `jsonb`: PostgreSQL would parse every one of them,
 * and refuses the `\u0000` escape that a tool's result may hold). Journal events are `jsonb`, as on
 * every engine: a `\u0000` in one is stored as U+FFFD. Names and ids are stored as `textKey`s.
 *
 * Rows are read back as written or not at all: a row that is not JSON (edited, damaged), an unknown
 * status or a step of neither kind fails the read with `StoredRowUnreadable`, naming the table and
 * the row, instead of a parser's exception escaping as a defect.
 */
import * as Effect from "effect/Effect"
import type { SqlError } from "effect/sql/SqlError"
import { databaseMessage } from "../database-error.ts"
import { RunJournal, RunJournalFailed } from "../run-journal.ts"
import { PgliteSession, type PipelinedStatement } from "./pglite-client.ts"
import { fromTextKey, jsonbText, textKey } from "../sql-text.ts"
import { JournalLastIds } from "./journal-last-ids.ts"
import { type PendingEvent, PendingWrites, type Riding } from "./pending-writes.ts"
import { unreadableReason } from "../run-unreadable.ts"
import {
  executionsTable,
  type StoredClock,
  type StoredExecution,
  type StoredStep,
  StoredRowUnreadable,
  stepsTable,
  type WorkflowStore,
  WorkflowStoreFailed
} from "./workflow-store.ts"

/** How long a journal event waits for a step to ride along with, at most (ms). */
const journalDelayMs = 10
/** How many runs' last journal ids are kept (`JournalLastIds`). */
const lastIdsKept = 1_000

const schema = [
  `create table if not exists agent_workflow_executions (
    execution_id text primary key,
    workflow text not null,
    payload text not null,
    parent text,
    status text not null default 'running',
    wake integer not null default 0,
    interrupted boolean not null default false,
    result text,
    created_at timestamptz not null default now()
  )`,
  "create index if not exists agent_workflow_executions_running on agent_workflow_executions (workflow) where status = 'running'",
  `create table if not exists agent_workflow_steps (
    execution_id text not null,
    name text not null,
    value text not null,
    primary key (execution_id, name)
  )`,
  `create table if not exists agent_workflow_clocks (
    execution_id text not null,
    name text not null,
    workflow text not null,
    wake_at bigint not null,
    primary key (execution_id, name)
  )`,
  "create index if not exists agent_workflow_clocks_due on agent_workflow_clocks (wake_at)"
]

/** A statement prepared once per session under `name`, run with text parameters. */
const prepared = (name: string, text: string) => (...params: ReadonlyArray<string | number | null>): PipelinedStatement => ({
  name,
  text,
  params: params.map((p) => (p === null ? null : String(p)))
})

const insertExecution = prepared(
  "awe_insert",
  "insert into agent_workflow_executions (execution_id, workflow, payload, parent) values ($1, $2, $3, $4) on conflict (execution_id) do nothing returning execution_id"
)
const selectExecution = prepared(
  "awe_select",
  "select execution_id, workflow, payload, parent, status, wake, interrupted, result from agent_workflow_executions where execution_id = $1"
)
const selectSteps = prepared("aws_select", "select name, value from agent_workflow_steps where execution_id = $1")
// A step is recorded for an execution that exists, once.
const stepInsert = (execution: string, name: string, value: string) =>
  `insert into agent_workflow_steps (execution_id, name, value)
    select ${execution}, ${name}, ${value} where exists (select 1 from agent_workflow_executions where execution_id = ${execution})
    on conflict (execution_id, name) do nothing`
const insertActivity = prepared("aws_activity", stepInsert("$1", "$2", "$3"))
const suspendExecution = prepared(
  "awe_suspend",
  "update agent_workflow_executions set status = 'suspended' where execution_id = $1 and wake = $2 and status <> 'complete'"
)
// Complete, and wake its parent (a child's result is what a parent suspended on it waits for).
const completeExecution = prepared(
  "awe_complete_wake",
  `with done as (update agent_workflow_executions set status = 'complete', result = $2 where execution_id = $1 returning parent)
  update agent_workflow_executions set wake = wake + 1, status = 'running'
  where execution_id = (select parent from done) and status <> 'complete'`
)
const dropClocks = prepared("awc_drop", "delete from agent_workflow_clocks where execution_id = $1")
const interruptExecution = prepared(
  "awe_interrupt",
  "update agent_workflow_executions set interrupted = true, status = 'running' where execution_id = $1 and status <> 'complete'"
)
// The result is recorded only for an execution that exists, and once; then the execution wakes.
const insertDeferred = prepared(
  "aws_deferred",
  `with recorded as (
    insert into agent_workflow_steps (execution_id, name, value)
    select $1, $2, $3 where exists (select 1 from agent_workflow_executions where execution_id = $1)
    on conflict (execution_id, name) do nothing returning 1
  )
  update agent_workflow_executions set wake = wake + 1, status = case when status = 'complete' then status else 'running' end
  where execution_id = $1 and exists (select 1 from recorded) returning wake`
)
const insertClock = prepared(
  "awc_insert",
  "insert into agent_workflow_clocks (execution_id, name, workflow, wake_at) values ($1, $2, $3, $4) on conflict (execution_id, name) do nothing"
)
const deleteClock = prepared("awc_delete", "delete from agent_workflow_clocks where execution_id = $1 and name = $2")
const selectRunning = prepared("awe_running", "select execution_id from agent_workflow_executions where workflow = $1 and status = 'running'")
const selectDueClocks = prepared(
  "awc_due",
  "select execution_id, name, workflow, wake_at from agent_workflow_clocks where wake_at <= $1 order by wake_at, execution_id, name limit $2"
)
const selectNextClock = prepared("awc_next", "select min(wake_at) as at from agent_workflow_clocks")
// A run's events in one insert, in order, numbered on from the run's last id (ids 1, 2, 3, … with
// no gap). `are_insert` reads that id (`max(id)`), leaves out the keys the journal holds already, and
// answers the ids it wrote. `are_insert_after` is given the id by this process (`JournalLastIds`) and
// checks nothing (a quarter of the step's statement inside PGlite): a key the journal holds already, or
// an id taken, fails the statement, and the write is tried again numbered by `are_insert` (see
// `PendingWrites`). Its events are keys the journal does not hold (`journalSink` leaves those out).
const eventRows = `rows from (jsonb_to_recordset($2::jsonb) as (key text, event jsonb)) with ordinality as x(key, event, ord)`
const numberedEvents = `insert into agent_run_events (run_id, id, key, event)
    select $1, m.last + row_number() over (order by x.ord), x.key, x.event
    from (select coalesce(max(id), 0) as last from agent_run_events where run_id = $1) m, ${eventRows}
    where not exists (select 1 from agent_run_events e where e.run_id = $1 and e.key = x.key)
    on conflict (run_id, key) do nothing returning id`
const eventsAfter = (last: string) => `insert into agent_run_events (run_id, id, key, event)
    select $1::text, ${last}::bigint + x.ord, x.key, x.event from ${eventRows}`
const insertEvents = prepared("are_insert", numberedEvents)
const insertEventsAfter = prepared("are_insert_after", eventsAfter("$3"))
// An activity's result with one run's events, one statement (cheaper in PGlite than two).
const insertActivityWithEvents = prepared("aws_activity_events", `with step as (${stepInsert("$3", "$4", "$5")}) ${numberedEvents}`)
const insertActivityWithEventsAfter = prepared("aws_activity_events_after", `with step as (${stepInsert("$3", "$4", "$5")}) ${eventsAfter("$6")}`)
const readEvents = prepared("are_read", "select id, event from agent_run_events where run_id = $1 and id > $2 order by id limit $3")
const readKeys = prepared("are_keys_ids", "select key, id from agent_run_events where run_id = $1")

// Steps are stored under one name: `a:<activity>/<attempt>` or `d:<deferred>`.
const stepName = (kind: StoredStep["kind"], name: string) => textKey(`${kind === "activity" ? "a" : "d"}:${name}`)

const statuses: ReadonlySet<string> = new Set<StoredExecution["status"]>(["running", "suspended", "complete"])

/**
 * The JSON text of `column` of a row of execution `executionId`, parsed; a `StoredRowUnreadable`
 * naming the table and the row otherwise (thrown here, caught into the read's failure by `readRows`).
 */
const parsed = (executionId: string, table: string, row: string, text: unknown): unknown => {
  if (typeof text !== "string") throw new StoredRowUnreadable({ executionId, table, row, reason: `not JSON text (${text === null ? "null" : typeof text})` })
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new StoredRowUnreadable({ executionId, table, row, reason: unreadableReason(error) })
  }
}

const stepOf = (executionId: string) => (row: Record<string, unknown>): StoredStep => {
  const name = fromTextKey(String(row["name"]))
  const where = `step ${JSON.stringify(name)}`
  const kind = name.startsWith("a:") ? "activity" : name.startsWith("d:") ? "deferred" : undefined
  if (kind === undefined) throw new StoredRowUnreadable({ executionId, table: stepsTable, row: where, reason: "a step name starts with a: or d:" })
  return { kind, name: name.slice(2), value: parsed(executionId, stepsTable, where, row["value"]) }
}

const executionOf = (row: Record<string, unknown>, steps: ReadonlyArray<Record<string, unknown>>): StoredExecution => {
  const executionId = fromTextKey(String(row["execution_id"]))
  const status = String(row["status"])
  const wake = Number(row["wake"])
  if (!statuses.has(status)) throw new StoredRowUnreadable({ executionId, table: executionsTable, row: "status", reason: `unknown status ${JSON.stringify(status.slice(0, 40))}` })
  if (!Number.isSafeInteger(wake) || wake < 0) throw new StoredRowUnreadable({ executionId, table: executionsTable, row: "wake", reason: `not a count: ${String(row["wake"]).slice(0, 40)}` })
  return {
    executionId,
    workflow: fromTextKey(String(row["workflow"])),
    payload: parsed(executionId, executionsTable, "payload", row["payload"]),
    parent: row["parent"] === null || row["parent"] === undefined ? undefined : fromTextKey(String(row["parent"])),
    status: status as StoredExecution["status"],
    wake,
    interrupted: row["interrupted"] === true,
    result: row["result"] === null || row["result"] === undefined ? undefined : parsed(executionId, executionsTable, "result", row["result"]),
    steps: steps.map(stepOf(executionId))
  }
}

/** `read()` of rows just fetched for `executionId`: what it throws becomes the typed `StoredRowUnreadable`. */
const readRows = <A>(executionId: string, read: () => A): Effect.Effect<A, StoredRowUnreadable> =>
  Effect.try({
    try: read,
    catch: (error) =>
      error instanceof StoredRowUnreadable ? error : new StoredRowUnreadable({ executionId, table: executionsTable, row: "execution", reason: unreadableReason(error) })
  })

/** The highest journal id among `rows` (0 when there is none). */
const highestId = (rows: ReadonlyArray<Record<string, unknown>>): number => rows.reduce((highest, row) => Math.max(highest, Number(row["id"])), 0)

/** `events` without those whose key came before (an `append` of a known key keeps the first). */
const firstOfEachKey = (events: ReadonlyArray<PendingEvent>): ReadonlyArray<PendingEvent> => {
  const keys = new Set<string>()
  for (const event of events) keys.add(event.key)
  if (keys.size === events.length) return events
  keys.clear()
  return events.filter((event) => !keys.has(event.key) && keys.add(event.key) !== undefined)
}

/** Events as the JSON array `insertEvents` reads (each event is JSON text already). */
const eventsJson = (events: ReadonlyArray<PendingEvent>): string =>
  `[${events.map((e) => `{"key":${JSON.stringify(e.key)},"event":${e.event}}`).join(",")}]`


/**
 * Whether the database refused the statements themselves (a constraint, a syntax error, a data error
 * such as a value PostgreSQL cannot store): they would fail again. Anything else (the database
 * unavailable, the disk full) may pass later.
 */
const refusedByDatabase = (error: unknown): boolean => {
  const reason = (error as { readonly reason?: { readonly _tag?: unknown; readonly cause?: unknown } } | null)?.reason
  if (reason === undefined) return false
  if (reason._tag === "ConstraintError" || reason._tag === "UniqueViolation" || reason._tag === "SqlSyntaxError") return true
  const code = (reason.cause as { readonly code?: unknown } | null | undefined)?.code
  return typeof code === "string" && code.startsWith("22")
}

const failed = (operation: string) => (cause: SqlError) => new WorkflowStoreFailed({ operation, reason: databaseMessage(cause), cause })

/**
 * The store's tables, created when missing, and the journal whose events ride along with its writes.
 *
 * @example
 * ```ts
 * const { store, journal } = yield* makePgliteStores
 * ```
 */
export const makePgliteStores = Effect.gen(function*() {
  const session = yield* PgliteSession
  yield* session.pipeline(schema.map((text) => ({ text, params: [] })))
  const lastIds = new JournalLastIds(lastIdsKept)
  /**
   * `statement` writing `count` events of run `runId`, numbered after `last` when this process knows
   * it: once it commits, the run's journal ends at `last + count` (or at the highest id it answers).
   */
  const numbered = (runId: string, last: number | undefined, count: number, statement: PipelinedStatement): PipelinedStatement => ({
    ...statement,
    onCommit: (rows) => {
      if (last !== undefined) return lastIds.learn(runId, last + count)
      if (rows.length > 0) lastIds.learn(runId, highestId(rows))
    }
  })
  /** The statement writing run `runId`'s events (its key stored), with a step's recorded result when given. */
  const eventsStatement = (runId: string, pending: ReadonlyArray<PendingEvent>, step?: readonly [string, string, string]): PipelinedStatement => {
    const events = firstOfEachKey(pending)
    const json = eventsJson(events)
    const last = lastIds.take(runId)
    const statement = step === undefined
      ? last === undefined ? insertEvents(runId, json) : insertEventsAfter(runId, json, last)
      : last === undefined ? insertActivityWithEvents(runId, json, ...step) : insertActivityWithEventsAfter(runId, json, ...step, last)
    return numbered(runId, last, events.length, statement)
  }
  const pending = new PendingWrites(journalDelayMs, (statements) => session.pipeline(statements), (runId, events) => eventsStatement(textKey(runId), events), refusedByDatabase)
  yield* Effect.addFinalizer(() => pending.close)
  /** `statements` after what rides along, in one call; the rows of `statements`. */
  const run = (statements: ReadonlyArray<PipelinedStatement>) =>
    pending.write((riding) => {
      const before = pending.statementsOf(riding)
      return before.length === 0
        ? session.pipeline(statements)
        : Effect.map(session.pipeline([...before, ...statements]), (rows) => rows.slice(before.length))
    })
  const key = textKey
  const write = (operation: string, statements: ReadonlyArray<PipelinedStatement>) => run(statements).pipe(Effect.mapError(failed(operation)))
  const load = (executionId: string) =>
    write("load an execution", [selectExecution(key(executionId)), selectSteps(key(executionId))]).pipe(
      Effect.flatMap(([rows, steps]) => readRows(executionId, () => (rows![0] === undefined ? undefined : executionOf(rows![0], steps!))))
    )

  const store: WorkflowStore = {
    create: (execution) =>
      write("record an execution", [
        insertExecution(key(execution.executionId), key(execution.workflow), JSON.stringify(execution.payload), execution.parent === undefined ? null : key(execution.parent)),
        selectExecution(key(execution.executionId)),
        selectSteps(key(execution.executionId))
      ]).pipe(Effect.flatMap(([inserted, rows, steps]) =>
        readRows(execution.executionId, () => ({ created: inserted!.length > 0, execution: executionOf(rows![0]!, steps!) }))
      )),
    load,
    // The step's result and the events that wait, one statement (the first run's events; others on their own).
    recordActivity: (executionId, name, value) =>
      pending.write((riding) => {
        const step = [key(executionId), stepName("activity", name), JSON.stringify(value)] as const
        const runs = [...riding.events]
        if (runs.length === 0) return session.pipeline([...riding.statements, insertActivity(...step)])
        // The first run's events go into the step's own statement; anything else before it.
        const [[runId, events], ...others] = runs as [[string, ReadonlyArray<PendingEvent>], ...Array<[string, ReadonlyArray<PendingEvent>]>]
        const before = pending.statementsOf({ statements: riding.statements, events: new Map(others) })
        return session.pipeline([...before, eventsStatement(key(runId), events, step)])
      }).pipe(Effect.asVoid, Effect.mapError(failed("record an activity"))),
    suspend: (executionId, wake) => Effect.asVoid(write("record a suspension", [suspendExecution(key(executionId), wake)])),
    complete: (executionId, result) =>
      Effect.asVoid(write("record a result", [completeExecution(key(executionId), JSON.stringify(result)), dropClocks(key(executionId))])),
    interrupt: (executionId) => Effect.asVoid(write("record an interruption", [interruptExecution(key(executionId))])),
    deferredDone: (executionId, name, value) =>
      write("record a deferred result", [insertDeferred(key(executionId), stepName("deferred", name), JSON.stringify(value))]).pipe(
        Effect.map(([rows]) => rows!.length > 0)
      ),
    scheduleClock: (clock) =>
      Effect.asVoid(write("record a clock", [insertClock(key(clock.executionId), key(clock.name), key(clock.workflow), clock.wakeAt)])),
    clearClock: (executionId, name) => Effect.asVoid(write("clear a clock", [deleteClock(key(executionId), key(name))])),
    running: (workflow) =>
      write("list running executions", [selectRunning(key(workflow))]).pipe(Effect.map(([rows]) => rows!.map((r) => fromTextKey(String(r["execution_id"]))))),
    dueClocks: (now, limit) =>
      write("list due clocks", [selectDueClocks(now, Math.max(0, Math.floor(limit)))]).pipe(Effect.map(([rows]) =>
        rows!.map((r): StoredClock => ({
          executionId: fromTextKey(String(r["execution_id"])),
          name: fromTextKey(String(r["name"])),
          workflow: fromTextKey(String(r["workflow"])),
          wakeAt: Number(r["wake_at"])
        }))
      )),
    nextClockAt: write("read the next clock", [selectNextClock()]).pipe(Effect.map(([rows]) => {
      const at = rows![0]?.["at"]
      return at === null || at === undefined ? undefined : Number(at)
    }))
  }

  const journalFailed = (operation: RunJournalFailed["operation"]) => (cause: SqlError) =>
    new RunJournalFailed({ operation, reason: databaseMessage(cause), cause })
  const journal = RunJournal.of({
    // Rides along with the run's next step (see `PendingWrites`): the step's events and its result commit together.
    append: (runId, eventKey, event) => Effect.sync(() => pending.add(runId, textKey(eventKey), jsonbText(JSON.stringify(event)))),
    appendText: (runId, eventKey, json) => Effect.sync(() => pending.add(runId, textKey(eventKey), jsonbText(json))),
    read: (runId, after, limit) =>
      run([readEvents(key(runId), after, Math.max(0, Math.floor(limit)))]).pipe(
        Effect.map(([rows]) => rows!.map((r) => ({ id: Number(r["id"]), event: r["event"] as never }))),
        Effect.mapError(journalFailed("read"))
      ),
    // Read before a run's first event of each execution: where its ids go on from is learnt here.
    keys: (runId) =>
      run([{ ...readKeys(key(runId)), onCommit: (rows) => lastIds.learn(key(runId), highestId(rows)) }]).pipe(
        Effect.map(([rows]) => new Set(rows!.map((r) => fromTextKey(String(r["key"]))))),
        Effect.mapError(journalFailed("read"))
      )
  })
  return { store, journal, flush: pending.flush }
})
