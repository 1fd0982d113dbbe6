/**
 * The SQL stores (`ToolIntents`, `ApprovalInbox`) on SQL, and a durable run on Effect Cluster's
 * workflow engine over the same database: a runner stopped in a mutating tool, a fresh runner on the
 * database, the intent found (counted in the database), the run ending with `OutcomeUnknown`; and a
 * wait for a decision across the restart. The database is PostgreSQL (CI's DATABASE_URL, or a
 * throwaway cluster) and, on a machine without PostgreSQL, the embedded engine's PGlite: the same
 * tests either way (`test/support/database.ts`).
 */
import { Context, Deferred, Duration, Effect, Exit, Layer, Option, Schema } from "effect"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import * as SingleRunner from "effect/cluster/SingleRunner"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, Decision, text, tool, toolCalls } from "../../src/index.ts"
import { ApprovalInbox, approvalInboxSql, durable, durableStoreSql, RunJournal, ToolIntents, ToolIntentsFailed, toolIntentsSql } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { clusterCrypto } from "../../src/durable/engines/cluster-crypto.ts"
import { startDatabase, type TestDatabase } from "../support/database.ts"
import { startRunner } from "./harness.ts"

const stateOf = (found: Option.Option<unknown>) => {
  const { key: _, runId: __, tool: ___, toolCallId: ____, ...state } = Option.getOrThrow(found) as Record<string, unknown>
  return state
}

/** What a store answers through one claim's life (keys made unique per store run). */
const leaseLaws = Effect.gen(function*() {
  const intents = yield* ToolIntents
  const key = `lease-${Math.random()}`
  const intent = { key, runId: "r", tool: "pay", toolCallId: "c1" }
  const lease = (owner: string, ms = 60_000) => ({ owner, ms })
  yield* intents.claim(intent, lease("A"))
  const claimed = stateOf(yield* intents.read(key))
  const takeOverLive = yield* intents.takeOver(key, "A", lease("B"), false)
  const takeOverDead = yield* intents.takeOver(key, "A", lease("B"), true)
  const renewByLoser = yield* intents.renew(key, lease("A"))
  const renewByOwner = yield* intents.renew(key, lease("B"))
  yield* intents.release(key, "A") // not A's any more: no effect
  yield* intents.release(key, "B")
  const afterRelease = stateOf(yield* intents.read(key))
  const takeOverStale = yield* intents.takeOver(key, "A", lease("C"), false)
  const takers = (yield* Effect.all(["C", "D", "E"].map((o) => intents.takeOver(key, "B", lease(o), false)), { concurrency: 3 })).filter((x) => x).length
  const short = `${key}-short`
  yield* intents.claim({ ...intent, key: short }, lease("S", 100))
  yield* Effect.sleep("400 millis")
  const expired = stateOf(yield* intents.read(short))
  yield* intents.finish(short, { _tag: "Succeeded", value: 1 })
  const afterFinish = { takeOver: yield* intents.takeOver(short, "S", lease("T"), true), renew: yield* intents.renew(short, lease("S")) }
  return { claimed, takeOverLive, takeOverDead, renewByLoser, renewByOwner, afterRelease, takeOverStale, takers, expired, afterFinish }
})

describe("durable runs on SQL (PostgreSQL, or PGlite where there is none)", () => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await startDatabase()
  }, 60_000)
  afterAll(() => db?.stop(), 60_000)

  const sql = () => db.sql()

  it("a store made by an earlier version (outcome and snapshot as jsonb) is brought up to date: the columns become text, what they held reads back", async () => {
    const suffix = Math.random().toString(36).slice(2, 8)
    const tables = { intentsTable: `old_intents_${suffix}`, approvalsTable: `old_waits_${suffix}`, cancellationsTable: `old_cancel_${suffix}`, runsTable: `old_runs_${suffix}`, eventsTable: `old_events_${suffix}` }
    const found = await Effect.runPromise(Effect.gen(function*() {
      const client = yield* SqlClient.SqlClient
      yield* client.unsafe(`create table ${tables.intentsTable} (key text primary key, run_id text not null, tool text not null, tool_call_id text not null, outcome jsonb, finished boolean not null default false, claimed_at timestamptz not null default now())`)
      yield* client.unsafe(`insert into ${tables.intentsTable} (key, run_id, tool, tool_call_id, outcome, finished) values ('k1', 'r1', 'pay', 'c1', '{"_tag":"Succeeded","value":"paid"}', true)`)
      yield* client.unsafe(`create table ${tables.approvalsTable} (run_id text not null, wait integer not null, execution_id text not null, snapshot jsonb not null, open boolean not null default true, opened_at timestamptz not null default now(), primary key (run_id, wait))`)
      yield* client.unsafe(`insert into ${tables.approvalsTable} (run_id, wait, execution_id, snapshot) values ('r1', 1, 'e1', '{"a":[1,2]}')`)
      const stores = Layer.mergeAll(toolIntentsSql(tables), approvalInboxSql(tables))
      const read = yield* Effect.gen(function*() {
        return { intent: yield* (yield* ToolIntents).read("k1"), wait: yield* (yield* ApprovalInbox).current("r1") }
      }).pipe(Effect.provide(stores))
      const types = yield* client<{ readonly column_name: string; readonly data_type: string }>`select column_name, data_type from information_schema.columns where table_name in (${tables.intentsTable}, ${tables.approvalsTable}) and column_name in ('outcome', 'snapshot') order by column_name`
      return { read, types }
    }).pipe(Effect.provide(sql())))
    expect(Option.getOrThrow(found.read.intent)).toMatchObject({ _tag: "Finished", outcome: { _tag: "Succeeded", value: "paid" } })
    expect(Option.getOrThrow(found.read.wait).snapshot).toEqual({ a: [1, 2] })
    expect(found.types.map((t) => [t.column_name, t.data_type])).toEqual([["outcome", "text"], ["snapshot", "text"]])
  })

  it("hostile text: a NUL or a backslash in keys, ids, outcomes, snapshots, reasons and events is stored, and read back exactly (events: NUL as U+FFFD)", async () => {
    const odd = (s: string) => `${s}\u0000\\0\\\u0000"'%_`
    const exit = await Effect.runPromise(Effect.exit(Effect.gen(function*() {
      const intents = yield* ToolIntents
      const inbox = yield* ApprovalInbox
      const journal = yield* RunJournal
      const runId = odd("run")
      const intent = { key: odd("tool/run/1/call"), runId, tool: "pay", toolCallId: odd("call") }
      yield* intents.claim(intent, { owner: "A", ms: 60_000 })
      yield* intents.finish(intent.key, { _tag: "Succeeded", value: odd("paid") })
      const read = yield* intents.read(intent.key)
      const forRun = yield* intents.forRun(runId)
      yield* inbox.open({ runId, wait: 1, executionId: odd("e"), snapshot: { args: odd("x") } })
      const waiting = yield* inbox.current(runId)
      yield* inbox.cancel(runId, odd("because"))
      const cancelled = yield* inbox.cancelled(runId)
      yield* inbox.register("wf", runId)
      const runs = yield* inbox.runs("wf", 10)
      yield* journal.append(runId, odd("k"), { _tag: "ToolUse", result: odd("r") })
      const events = yield* journal.read(runId, 0, 10)
      const keys = yield* journal.keys(runId)
      return { read, forRun, waiting, cancelled, runs, events, keys, runId }
    }).pipe(Effect.provide(durableStoreSql().pipe(Layer.provide(sql()))))))
    expect(Exit.isSuccess(exit)).toBe(true)
    const found = Exit.isSuccess(exit) ? exit.value : undefined
    expect(Option.getOrThrow(found!.read)).toMatchObject({ _tag: "Finished", outcome: { _tag: "Succeeded", value: odd("paid") }, key: odd("tool/run/1/call"), runId: odd("run"), toolCallId: odd("call") })
    expect(found!.forRun.map((i) => i.key)).toEqual([odd("tool/run/1/call")])
    expect(Option.getOrThrow(found!.waiting)).toEqual({ runId: odd("run"), wait: 1, executionId: odd("e"), snapshot: { args: odd("x") } })
    expect(found!.cancelled).toEqual(Option.some(odd("because")))
    expect(found!.runs).toEqual([odd("run")])
    expect(found!.events).toEqual([{ id: 1, event: { _tag: "ToolUse", result: odd("r").replaceAll("\u0000", "\ufffd") } }])
    expect(found!.keys).toEqual(new Set([odd("k")]))
  })

  it("ToolIntents: one claim wins, the outcome is written beside it; ApprovalInbox: the latest open wait", async () => {
    const exit = await Effect.runPromise(Effect.exit(Effect.gen(function*() {
      const intents = yield* ToolIntents
      const inbox = yield* ApprovalInbox
      const intent = { key: "r/1/c1", runId: "r", tool: "pay", toolCallId: "c1" }
      const claims = yield* Effect.all([intents.claim(intent), intents.claim(intent), intents.claim(intent)], { concurrency: 3 })
      yield* intents.finish("r/1/c1", { _tag: "Succeeded", value: "paid" })
      const after = yield* intents.claim(intent)
      const read = yield* intents.read("r/1/c1")
      yield* inbox.open({ runId: "r", wait: 1, executionId: "e", snapshot: { a: 1 } })
      yield* inbox.open({ runId: "r", wait: 1, executionId: "e", snapshot: { a: 2 } })
      yield* inbox.open({ runId: "r", wait: 2, executionId: "e", snapshot: { b: 1 } })
      const latest = yield* inbox.current("r")
      yield* inbox.close("r", 2)
      const earlier = yield* inbox.current("r")
      yield* inbox.close("r", 1)
      const none = yield* inbox.current("r")
      return { claims, after, read, latest, earlier, none }
    }).pipe(Effect.provide(durableStoreSql().pipe(Layer.provide(sql()))))))
    expect(Exit.isSuccess(exit)).toBe(true)
    if (!Exit.isSuccess(exit)) return
    const { claims, after, read, latest, earlier, none } = exit.value
    expect(claims.filter(Option.isNone)).toHaveLength(1)
    // A claim without a lease names no owner and counts as abandoned (what earlier versions wrote).
    expect(claims.filter(Option.isSome).map((c) => c.value)).toEqual([{ _tag: "Claimed", owner: undefined, leaseLive: false }, { _tag: "Claimed", owner: undefined, leaseLive: false }])
    expect(after).toEqual(Option.some({ _tag: "Finished", outcome: { _tag: "Succeeded", value: "paid" } }))
    expect(Option.getOrUndefined(read)).toMatchObject({ _tag: "Finished", runId: "r", tool: "pay", toolCallId: "c1" })
    expect(Option.getOrUndefined(latest)).toEqual({ runId: "r", wait: 2, executionId: "e", snapshot: { b: 1 } })
    expect(Option.getOrUndefined(earlier)).toEqual({ runId: "r", wait: 1, executionId: "e", snapshot: { a: 1 } })
    expect(none).toEqual(Option.none())
  }, 60_000)

  it("ToolIntents leases (SQL and memory): an owner and its lease; no take-over while it lives unless the owner is dead; one taker wins", async () => {
    for (const store of [durableStoreSql().pipe(Layer.provide(sql())), ToolIntents.memory]) {
      const laws = await Effect.runPromise(leaseLaws.pipe(Effect.provide(store as Layer.Layer<ToolIntents>)))
      expect(laws).toEqual({
        claimed: { _tag: "Claimed", owner: "A", leaseLive: true },
        takeOverLive: false,
        takeOverDead: true,
        renewByLoser: false,
        renewByOwner: true,
        afterRelease: { _tag: "Claimed", owner: "B", leaseLive: false },
        takeOverStale: false,
        takers: 1,
        expired: { _tag: "Claimed", owner: "S", leaseLive: false },
        afterFinish: { takeOver: false, renew: false }
      })
    }
  }, 60_000)

  it("RunJournal (SQL and memory): ids 1, 2, … per run, a key appended again kept once, reads after an id; concurrent appends get distinct ids without a gap", async () => {
    for (const store of [durableStoreSql().pipe(Layer.provide(sql())), RunJournal.memory]) {
      const out = await Effect.runPromise(Effect.gen(function*() {
        const journal = yield* RunJournal
        const run = `run-${Math.random()}`
        yield* journal.append(run, "a#1", { n: 1 })
        yield* journal.append(run, "a#1", { n: 99 })
        yield* journal.append(run, "b#1", { n: 2 })
        yield* journal.append(`${run}-other`, "a#1", { n: 3 })
        yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => i), (i) => journal.append(run, `live/${i}`, { i }), { concurrency: "unbounded" })
        return {
          first: yield* journal.read(run, 0, 2),
          after: (yield* journal.read(run, 2, 100)).map((r) => r.id),
          keys: (yield* journal.keys(run)).size
        }
      }).pipe(Effect.provide(store as Layer.Layer<RunJournal>)))
      expect(out).toEqual({ first: [{ id: 1, event: { n: 1 } }, { id: 2, event: { n: 2 } }], after: Array.from({ length: 12 }, (_, i) => i + 3), keys: 14 })
    }
  }, 60_000)

  it("ToolIntents.forRun (SQL and memory): the run's claims and its handed-off runs', not another run's", async () => {
    for (const store of [durableStoreSql().pipe(Layer.provide(sql())), ToolIntents.memory]) {
      const out = await Effect.runPromise(Effect.gen(function*() {
        const intents = yield* ToolIntents
        const run = `r_${Math.random()}`
        yield* intents.claim({ key: `${run}/1`, runId: run, tool: "pay", toolCallId: "c1" }, { owner: "A", ms: 60_000 })
        yield* intents.claim({ key: `${run}/2`, runId: `${run}~2`, tool: "pay", toolCallId: "c2" }, { owner: "A", ms: 60_000 })
        yield* intents.claim({ key: `${run}x/1`, runId: `${run}x`, tool: "pay", toolCallId: "c3" }, { owner: "A", ms: 60_000 })
        yield* intents.finish(`${run}/1`, { _tag: "Succeeded", value: "paid" })
        return (yield* intents.forRun(run)).map((c) => [c.toolCallId, c._tag])
      }).pipe(Effect.provide(store as Layer.Layer<ToolIntents>)))
      expect(out).toEqual([["c1", "Finished"], ["c2", "Claimed"]])
    }
  }, 60_000)

  it("ApprovalInbox runs and cancellations (SQL and memory): registered once, oldest first, per workflow, limited; the first reason stays", async () => {
    for (const store of [durableStoreSql().pipe(Layer.provide(sql())), ApprovalInbox.memory]) {
      const out = await Effect.runPromise(Effect.gen(function*() {
        const inbox = yield* ApprovalInbox
        const w = `wf-${Math.random()}`
        for (const id of ["a", "b", "a", "c"]) yield* inbox.register(w, `${w}/${id}`)
        yield* inbox.register(`${w}-other`, `${w}/z`)
        yield* inbox.cancel(`${w}/a`, "first")
        yield* inbox.cancel(`${w}/a`, "second")
        return {
          all: yield* inbox.runs(w, 10),
          two: yield* inbox.runs(w, 2),
          reason: yield* inbox.cancelled(`${w}/a`),
          none: yield* inbox.cancelled(`${w}/b`),
          w
        }
      }).pipe(Effect.provide(store as Layer.Layer<ApprovalInbox>)))
      expect(out).toEqual({ all: ["a", "b", "c"].map((id) => `${out.w}/${id}`), two: ["a", "b"].map((id) => `${out.w}/${id}`), reason: Option.some("first"), none: Option.none(), w: out.w })
    }
  }, 60_000)

  it("ApprovalInbox (SQL and memory): a run id is held by the first workflow that registers it, at once too; a wait is taken once; closeAll closes what is open or undelivered", async () => {
    for (const store of [durableStoreSql().pipe(Layer.provide(sql())), ApprovalInbox.memory]) {
      const out = await Effect.runPromise(Effect.gen(function*() {
        const inbox = yield* ApprovalInbox
        const r = `hold-${Math.random()}`
        const holders = yield* Effect.all(["wf-a", "wf-b", "wf-c", "wf-d"].map((w) => inbox.register(w, r)), { concurrency: 4 })
        const again = yield* inbox.register("wf-b", r)
        const owner = yield* inbox.owner(r)
        const unknown = yield* inbox.owner(`${r}-never`)
        const listed = [(yield* inbox.runs(holders[0]!, 1000)).includes(r), ...(yield* Effect.forEach(["wf-a", "wf-b", "wf-c", "wf-d"].filter((w) => w !== holders[0]), (w) => inbox.runs(w, 1000))).map((ids) => ids.includes(r))]
        yield* inbox.open({ runId: r, wait: 1, executionId: "e", snapshot: { a: 1 } })
        const takes = yield* Effect.all([1, 2, 3].map((n) => inbox.take(r, 1, { n })), { concurrency: 3 })
        const open = yield* inbox.current(r)
        const undelivered = yield* inbox.undelivered(r)
        yield* inbox.open({ runId: r, wait: 2, executionId: "e", snapshot: { a: 2 } })
        const closed = yield* inbox.closeAll(r)
        const afterClose = { open: yield* inbox.current(r), undelivered: yield* inbox.undelivered(r), takeClosed: yield* inbox.take(r, 2, {}), closeAgain: yield* inbox.closeAll(r) }
        return { holders, again, owner, unknown, listed, takes, open, undelivered, closed, afterClose }
      }).pipe(Effect.provide(store as Layer.Layer<ApprovalInbox>)))
      expect(new Set(out.holders).size).toBe(1)
      expect(out.again).toBe(out.holders[0])
      expect(out.owner).toEqual(Option.some(out.holders[0]))
      expect(out.unknown).toEqual(Option.none())
      expect(out.listed).toEqual([true, false, false, false])
      expect(out.takes.filter((t) => t)).toHaveLength(1)
      expect(out.open).toEqual(Option.none())
      const winner = out.takes.indexOf(true) + 1
      expect(out.undelivered).toEqual(Option.some({ wait: 1, executionId: "e", decisions: { n: winner } }))
      expect([...out.closed].sort((a, b) => a.wait - b.wait)).toEqual([{ wait: 1, executionId: "e" }, { wait: 2, executionId: "e" }])
      expect(out.afterClose).toEqual({ open: Option.none(), undelivered: Option.none(), takeClosed: false, closeAgain: [] })
    }
  }, 60_000)

  it("a store that cannot migrate fails with the database's own message (not \"Query failed\")", async () => {
    const failure = await Effect.runPromise(Effect.gen(function*() {
      const client = yield* SqlClient.SqlClient
      yield* client`create or replace view not_a_table as select 1 as key`
      return yield* Effect.flip(Layer.build(toolIntentsSql({ intentsTable: "not_a_table" }).pipe(Layer.provide(Layer.succeed(SqlClient.SqlClient, client)))))
    }).pipe(Effect.scoped, Effect.provide(sql()), Effect.orDie))
    expect(failure).toBeInstanceOf(ToolIntentsFailed)
    expect(failure.operation).toBe("open")
    expect(failure.message).toMatch(/relation "not_a_table" \(SQLSTATE 42809/)
  }, 60_000)

  it("the cluster engine on SQL: a mutating tool interrupted with its runner never runs again (counted in the database)", async () => {
    const entered = Deferred.makeUnsafe<void>()
    let runs = 0
    const pay = tool("pay", {
      args: Schema.Struct({ to: Schema.String }),
      run: ({ to }) =>
        Effect.gen(function*() {
          runs++
          const sql = yield* SqlClient.SqlClient
          yield* sql`insert into payments (recipient) values (${to})`
          yield* Deferred.succeed(entered, undefined)
          return yield* Effect.never
        }).pipe(Effect.orDie)
    })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "pay", arguments: { to: "bob" } }]), text("paid")])
    const d = durable(agent("payer").model(model).tools({ pay }), { name: "payer-pg" })
    const exit = await Effect.runPromise(Effect.gen(function*() {
      const db = yield* Layer.build(sql())
      const client = Context.get(db, SqlClient.SqlClient)
      yield* client`create table if not exists payments (recipient text not null)`
      const runner = () =>
        d.layer.pipe(
          Layer.provideMerge(ClusterWorkflowEngine.layer),
          Layer.provideMerge(SingleRunner.layer({ runnerStorage: "memory", shardingConfig: { entityTerminationTimeout: Duration.millis(10), entityMessagePollInterval: Duration.millis(100) } })),
          Layer.provideMerge(durableStoreSql()),
          Layer.provide(clusterCrypto),
          Layer.provideMerge(Layer.succeedContext(db))
        )
      const first = yield* startRunner(runner())
      yield* d.start("pay bob", { runId: "pg-crash" }).pipe(Effect.provide(first.context))
      yield* Deferred.await(entered)
      yield* first.stop
      const second = yield* startRunner(runner())
      const result = yield* Effect.exit(d.join("pg-crash").pipe(Effect.provide(second.context)))
      yield* second.stop
      const payments = yield* client<{ readonly n: string }>`select count(*) as n from payments`
      const intents = yield* client<{ readonly n: string }>`select count(*) as n from agent_tool_intents where run_id = 'pg-crash'`
      return { result, payments: Number(payments[0]!.n), intents: Number(intents[0]!.n) }
    }).pipe(Effect.scoped, Effect.timeout("40 seconds")))
    expect(Exit.isFailure(exit.result) && Option.getOrUndefined(Exit.findErrorOption(exit.result))).toMatchObject({ _tag: "OutcomeUnknown", tool: "pay", toolCallId: "c1" })
    expect(exit.payments).toBe(1)
    expect(exit.intents).toBe(1)
    expect(runs).toBe(1)
  }, 60_000)

  it("the cluster engine on SQL: a wait for a decision survives a restart", async () => {
    let sent = 0
    const transfer = tool("transfer", { args: Schema.Struct({ amount: Schema.Finite }), needsApproval: true, run: ({ amount }) => {
      sent++
      return `sent ${amount}`
    } })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { amount: 5 } }]), text("done")])
    const d = durable(agent("bank").model(model).tools({ transfer }), { name: "bank-pg" })
    const exit = await Effect.runPromise(Effect.gen(function*() {
      const db = yield* Layer.build(sql())
      const runner = () =>
        d.layer.pipe(
          Layer.provideMerge(ClusterWorkflowEngine.layer),
          Layer.provideMerge(SingleRunner.layer({ runnerStorage: "memory", shardingConfig: { entityTerminationTimeout: Duration.millis(10), entityMessagePollInterval: Duration.millis(100) } })),
          Layer.provideMerge(durableStoreSql()),
          Layer.provide(clusterCrypto),
          Layer.provideMerge(Layer.succeedContext(db))
        )
      const first = yield* startRunner(runner())
      const waiting = yield* d.run("pay", { runId: "pg-wait" }).pipe(Effect.provide(first.context))
      yield* first.stop
      const second = yield* startRunner(runner())
      yield* d.decide("pg-wait", { c1: Decision.approve }).pipe(Effect.provide(second.context))
      const output = yield* d.join("pg-wait").pipe(Effect.provide(second.context))
      yield* second.stop
      return { waiting: waiting._tag, output }
    }).pipe(Effect.scoped, Effect.timeout("40 seconds")))
    expect(exit).toEqual({ waiting: "Suspended", output: "done" })
    expect(sent).toBe(1)
  }, 60_000)
})
