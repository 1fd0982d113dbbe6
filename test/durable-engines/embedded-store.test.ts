/**
 * The embedded engine's store on PGlite (`pglite-workflow-store.ts`), against the in-memory store as
 * the model: the same operations in any order give the same executions, steps, wakes and clocks. Its
 * journal: events wait for the next step and ride along with it (one statement, one call into PGlite),
 * come back with ids 1, 2, … in order with no gap, each key once, a NUL stored as U+FFFD; and a run of
 * the embedded engine makes about one call into PGlite per step. An earlier version's Effect Cluster
 * runs in flight are refused with what to do (the check the engine makes when it opens a directory).
 */
import { fc, it as fcIt } from "@fast-check/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, text, tool, toolCalls } from "../../src/index.ts"
import type { ModelRequest } from "../../src/index.ts"
import { durable, RunJournal } from "../../src/durable/index.ts"
import { embeddedEngine } from "../../src/durable/embedded.ts"
import { refuseClusterRuns } from "../../src/durable/engines/embedded-engine.ts"
import { pgliteSession } from "../../src/durable/engines/pglite-client.ts"
import { makePgliteStores } from "../../src/durable/engines/pglite-workflow-store.ts"
import { memoryWorkflowStore, type WorkflowStore } from "../../src/durable/engines/workflow-store.ts"
import { scriptedModel } from "../../src/testing/index.ts"

type Stores = Effect.Success<typeof makePgliteStores>

let dir: string
let stores: Stores
let engine: Context.Context<never>
let scope: Scope.Closeable

// One embedded engine for the file (PGlite takes seconds to open): the store tests use its session.
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "embedded-store-"))
  scope = Effect.runSync(Scope.make())
  engine = await Effect.runPromise(Layer.buildWithScope(embeddedEngine({ dataDir: dir }), scope)) as Context.Context<never>
  stores = await Effect.runPromise(makePgliteStores.pipe(Effect.provide(engine), Effect.provideService(Scope.Scope, scope)) as Effect.Effect<Stores>)
}, 120_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dir, { recursive: true, force: true })
})

/** `d`'s workflow registered on the file's engine: the services to run it with. */
const onEngine = (d: { readonly layer: Layer.Layer<never, never, any> }) =>
  Effect.runPromise(Layer.buildWithScope(d.layer.pipe(Layer.provideMerge(Layer.succeedContext(engine))), scope) as Effect.Effect<Context.Context<any>>)

/** One operation on a store. */
type Op =
  | { readonly _tag: "create"; readonly id: number; readonly payload: string; readonly parent: number | undefined }
  | { readonly _tag: "activity"; readonly id: number; readonly name: string; readonly value: number }
  | { readonly _tag: "deferred"; readonly id: number; readonly name: string; readonly value: number }
  | { readonly _tag: "suspend"; readonly id: number; readonly wake: number }
  | { readonly _tag: "complete"; readonly id: number; readonly value: number }
  | { readonly _tag: "interrupt"; readonly id: number }
  | { readonly _tag: "clock"; readonly id: number; readonly name: string; readonly at: number }
  | { readonly _tag: "clear"; readonly id: number; readonly name: string }

const name = fc.constantFrom("a/1", "b/1", "a/2", "go", "\u0000odd\"name")
const id = fc.integer({ min: 0, max: 2 })
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ _tag: fc.constant("create" as const), id, payload: fc.string(), parent: fc.option(id, { nil: undefined }) }),
  fc.record({ _tag: fc.constant("activity" as const), id, name, value: fc.integer() }),
  fc.record({ _tag: fc.constant("deferred" as const), id, name, value: fc.integer() }),
  fc.record({ _tag: fc.constant("suspend" as const), id, wake: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ _tag: fc.constant("complete" as const), id, value: fc.integer() }),
  fc.record({ _tag: fc.constant("interrupt" as const), id }),
  fc.record({ _tag: fc.constant("clock" as const), id, name, at: fc.integer({ min: 0, max: 10 ** 13 }) }),
  fc.record({ _tag: fc.constant("clear" as const), id, name })
)

let round = 0
/** Runs `ops` on `store` (execution ids scoped to `prefix`) and answers what it holds then. */
const apply = (store: WorkflowStore, prefix: string, ops: ReadonlyArray<Op>) =>
  Effect.gen(function*() {
    const answers: Array<unknown> = []
    const eid = (n: number) => `${prefix}-${n}`
    for (const o of ops) {
      switch (o._tag) {
        case "create": {
          const { created, execution } = yield* store.create({ executionId: eid(o.id), workflow: prefix, payload: { p: o.payload }, parent: o.parent === undefined ? undefined : eid(o.parent) })
          answers.push({ created, status: execution.status, wake: execution.wake })
          break
        }
        case "activity":
          yield* store.recordActivity(eid(o.id), o.name, { v: o.value })
          break
        case "deferred":
          answers.push(yield* store.deferredDone(eid(o.id), o.name, { v: o.value }))
          break
        case "suspend":
          yield* store.suspend(eid(o.id), o.wake)
          break
        case "complete":
          yield* store.complete(eid(o.id), { r: o.value })
          break
        case "interrupt":
          yield* store.interrupt(eid(o.id))
          break
        case "clock":
          yield* store.scheduleClock({ executionId: eid(o.id), workflow: prefix, name: o.name, wakeAt: o.at })
          break
        case "clear":
          yield* store.clearClock(eid(o.id), o.name)
          break
      }
    }
    const executions = []
    for (const n of [0, 1, 2]) {
      const e = yield* store.load(eid(n))
      executions.push(e === undefined ? undefined : { ...e, executionId: undefined, workflow: undefined, steps: [...e.steps].sort((a, b) => `${a.kind}${a.name}`.localeCompare(`${b.kind}${b.name}`)) })
    }
    const running = [...(yield* store.running(prefix))].sort()
    const order = (a: { executionId: string; name: string }, b: { executionId: string; name: string }) =>
      a.executionId < b.executionId ? -1 : a.executionId > b.executionId ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    const clocks = (yield* store.dueClocks(Number.MAX_SAFE_INTEGER, 10_000)).filter((c) => c.workflow === prefix).sort(order)
    const next = clocks.length === 0 ? undefined : Math.min(...clocks.map((c) => c.wakeAt))
    return { answers, executions, running, clocks, next }
  })

describe("the embedded engine's store on PGlite", () => {
  fcIt.prop([fc.array(op, { maxLength: 25 })], { numRuns: 60 })("answers as the in-memory store does, for any sequence of operations", async (ops) => {
    const prefix = `p${round++}`
    const model = await Effect.runPromise(apply(memoryWorkflowStore(), prefix, ops))
    const pglite = await Effect.runPromise(apply(stores.store, prefix, ops))
    expect(pglite).toEqual(model)
  })

  it("a child's completion wakes its suspended parent in the same write, on both stores (a process stopped before it resumed the parent leaves it running)", async () => {
    for (const [store, prefix] of [[memoryWorkflowStore(), "wake-m"], [stores.store, "wake-p"]] as const) {
      const parent = await Effect.runPromise(Effect.gen(function*() {
        yield* store.create({ executionId: `${prefix}-parent`, workflow: prefix, payload: {}, parent: undefined })
        yield* store.create({ executionId: `${prefix}-child`, workflow: prefix, payload: {}, parent: `${prefix}-parent` })
        yield* store.suspend(`${prefix}-parent`, 0)
        yield* store.suspend(`${prefix}-child`, 0)
        yield* store.complete(`${prefix}-child`, { r: 1 })
        // The parent's own stale suspension (the run that saw its child suspended) no longer lands.
        yield* store.suspend(`${prefix}-parent`, 0)
        return yield* store.load(`${prefix}-parent`)
      }))
      expect(parent, prefix).toMatchObject({ status: "running", wake: 1 })
      expect(await Effect.runPromise(store.running(prefix)), prefix).toEqual([`${prefix}-parent`])
    }
  })

  it("journal: events wait for the next step and ride along with it; ids 1, 2, … in order, each key once; a NUL becomes U+FFFD", async () => {
    const { store, journal } = stores
    const events = await Effect.runPromise(Effect.gen(function*() {
      yield* store.create({ executionId: "j-1", workflow: "j", payload: {}, parent: undefined })
      yield* journal.append("run-j", "k1", { _tag: "Turn", n: 1 })
      yield* journal.append("run-j", "k2", { _tag: "ToolUse", result: "a\u0000b" })
      yield* store.recordActivity("j-1", "a/1", { done: true })
      yield* journal.append("run-j", "k2", { _tag: "ToolUse", result: "again" })
      yield* journal.append("run-j", "k3", { _tag: "RunEnd" })
      return yield* journal.read("run-j", 0, 100)
    }))
    expect(events).toEqual([
      { id: 1, event: { _tag: "Turn", n: 1 } },
      { id: 2, event: { _tag: "ToolUse", result: "a\ufffdb" } },
      { id: 3, event: { _tag: "RunEnd" } }
    ])
    expect(await Effect.runPromise(journal.keys("run-j"))).toEqual(new Set(["k1", "k2", "k3"]))
    expect((await Effect.runPromise(store.load("j-1")))!.steps).toEqual([{ kind: "activity", name: "a/1", value: { done: true } }])
  })
})

/** One operation on a journal: an event appended, a step it rides along with, its keys or events read. */
type JournalOp =
  | { readonly _tag: "append"; readonly run: number; readonly key: string; readonly n: number }
  | { readonly _tag: "step"; readonly run: number }
  | { readonly _tag: "keys"; readonly run: number }
  | { readonly _tag: "read"; readonly run: number; readonly after: number }

// Keys met again on purpose (`append` of a known key keeps the first), and text PostgreSQL refuses raw.
const journalKey = fc.constantFrom("k1", "k2", "k3", "k4", "x\\0y", "nul\u0000", "'; drop table agent_run_events; --")
const journalOp: fc.Arbitrary<JournalOp> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ _tag: fc.constant("append" as const), run: fc.integer({ min: 0, max: 1 }), key: journalKey, n: fc.integer() }) },
  fc.record({ _tag: fc.constant("step" as const), run: fc.integer({ min: 0, max: 1 }) }),
  fc.record({ _tag: fc.constant("keys" as const), run: fc.integer({ min: 0, max: 1 }) }),
  fc.record({ _tag: fc.constant("read" as const), run: fc.integer({ min: 0, max: 1 }), after: fc.integer({ min: 0, max: 4 }) })
)

/** Runs `ops` on `journal` (and steps on `store`, when given), answering what each read saw and each run's journal then. */
const applyJournal = (journal: RunJournal["Service"], store: WorkflowStore | undefined, prefix: string, ops: ReadonlyArray<JournalOp>) =>
  Effect.gen(function*() {
    const runOf = (n: number) => `${prefix}-r${n}`
    const seen: Array<unknown> = []
    let steps = 0
    if (store !== undefined) for (const n of [0, 1]) yield* store.create({ executionId: `${runOf(n)}-e`, workflow: prefix, payload: {}, parent: undefined })
    for (const o of ops) {
      if (o._tag === "append") yield* journal.append(runOf(o.run), o.key, { _tag: "Turn", n: o.n })
      else if (o._tag === "step") yield* store === undefined ? Effect.void : store.recordActivity(`${runOf(o.run)}-e`, `s${steps++}`, { ok: true })
      else if (o._tag === "keys") seen.push([...(yield* journal.keys(runOf(o.run)))].sort())
      else seen.push(yield* journal.read(runOf(o.run), o.after, 100))
    }
    return { seen, journals: [yield* journal.read(runOf(0), 0, 1_000), yield* journal.read(runOf(1), 0, 1_000)] }
  })

describe("the embedded engine's journal", () => {
  fcIt.prop([fc.array(journalOp, { maxLength: 30 })], { numRuns: 100 })(
    "answers as the in-memory journal does, for any sequence of appends (keys met again, hostile text), steps and reads: ids 1, 2, … with no gap, each key once",
    async (ops) => {
      const prefix = `j${round++}`
      const model = await Effect.runPromise(Effect.gen(function*() {
        return yield* applyJournal(yield* RunJournal, undefined, prefix, ops)
      }).pipe(Effect.provide(RunJournal.memory)))
      const pglite = await Effect.runPromise(applyJournal(stores.journal, stores.store, prefix, ops))
      expect(pglite).toEqual(model)
    }
  )

  it("a row written beside this process (another writer of the table) is never overwritten nor lost: the step's events are numbered after it", async () => {
    const { store, journal } = stores
    const sql = Context.get(engine as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)
    const events = await Effect.runPromise(Effect.gen(function*() {
      yield* store.create({ executionId: "beside-e", workflow: "beside", payload: {}, parent: undefined })
      // The run's last id is learnt (0), then another writer adds id 1.
      expect(yield* journal.keys("beside")).toEqual(new Set())
      yield* sql`insert into agent_run_events (run_id, id, key, event) values ('beside', 1, 'other', '{"_tag":"Turn","n":0}'::jsonb)`
      yield* journal.append("beside", "k1", { _tag: "Turn", n: 1 })
      yield* store.recordActivity("beside-e", "a/1", { ok: true })
      yield* journal.append("beside", "other", { _tag: "Turn", n: 9 })
      yield* journal.append("beside", "k2", { _tag: "Turn", n: 2 })
      yield* store.recordActivity("beside-e", "a/2", { ok: true })
      return yield* journal.read("beside", 0, 100)
    }).pipe(Effect.provide(engine)) as Effect.Effect<ReadonlyArray<unknown>>)
    expect(events).toEqual([
      { id: 1, event: { _tag: "Turn", n: 0 } },
      { id: 2, event: { _tag: "Turn", n: 1 } },
      { id: 3, event: { _tag: "Turn", n: 2 } }
    ])
    expect((await Effect.runPromise(store.load("beside-e")))!.steps.map((s) => s.name).sort()).toEqual(["a/1", "a/2"])
  })
})

describe("the embedded engine's write path", () => {
  it("a durable run makes about one call into PGlite per step (the step's result and its events together)", async () => {
    const { PGlite } = await import("@electric-sql/pglite")
    const proto = PGlite.prototype as unknown as { execProtocolRawSync: (m: Uint8Array) => Uint8Array }
    const original = proto.execProtocolRawSync
    let calls = 0
    let counting = false
    proto.execProtocolRawSync = function(this: unknown, m: Uint8Array) {
      if (counting) calls++
      return original.call(this, m)
    }
    try {
      const turns = 5
      const look = tool("look", { args: Schema.Struct({ n: Schema.Finite }), effect: "readOnly", run: ({ n }) => n * 2 })
      const model = scriptedModel((request: ModelRequest) => {
        const seen = request.messages.filter((m) => m.role === "tool").length
        return seen < turns ? toolCalls([{ id: `c${seen}`, name: "look", arguments: { n: seen } }]) : text("done")
      })
      const d = durable(agent("counted").model(model).tools({ look }))
      const runs = 4
      const context = await onEngine(d)
      const output = await Effect.runPromise(Effect.gen(function*() {
        yield* d.run("warm", { runId: "warm" })
        counting = true
        const outputs = []
        for (let i = 0; i < runs; i++) outputs.push(yield* d.start("go", { runId: `run-${i}` }))
        for (let i = 0; i < runs; i++) outputs.push(yield* d.join(`run-${i}`))
        counting = false
        return outputs
      }).pipe(Effect.provide(context)))
      expect(output.slice(runs)).toEqual(Array.from({ length: runs }, () => "done"))
      const steps = runs * (2 * turns + 1)
      // 11 steps a run; besides them, a run holds its id in the run list (one statement, before anything
      // of it is written), is recorded, records its start, reads its journal's keys, checks it is not
      // cancelled and records its result: 17 calls for 11 steps. `join` answers with the result this
      // process just recorded, without reading it back (one call more, 1.64, before).
      expect(calls / steps).toBeLessThan(1.6)
      expect(calls / steps).toBeGreaterThanOrEqual(1)
    } finally {
      proto.execProtocolRawSync = original
    }
  }, 120_000)

  it("hostile text end to end: a model's call id and a mutating tool's result holding NUL and backslashes; the run completes, its journal reads back", async () => {
    const odd = "x\u0000y\\0z"
    const pay = tool("pay", { args: Schema.Struct({ to: Schema.String }), run: ({ to }) => `paid ${to} ${odd}` })
    const model = scriptedModel([toolCalls([{ id: `call${odd}`, name: "pay", arguments: { to: odd } }]), text(`done ${odd}`)])
    const d = durable(agent("hostile").model(model).tools({ pay }))
    const context = await onEngine(d)
    const { result, events } = await Effect.runPromise(Effect.gen(function*() {
      const result = yield* d.run("go", { runId: "hostile-1" })
      const journal = yield* d.journal("hostile-1")
      return { result, events: journal }
    }).pipe(Effect.provide(context)))
    expect(result).toEqual({ _tag: "Completed", output: `done ${odd}` })
    expect(model.requests[1]!.messages.find((m) => m.role === "tool")).toMatchObject({ toolCallId: `call${odd}`, content: `paid ${odd} ${odd}` })
    // The journal shows a NUL as U+FFFD; the claim keeps the call id exactly.
    expect(JSON.stringify(events)).toContain("paid x\ufffdy")
    expect(events.claims.map((c) => c.toolCallId)).toEqual([`call${odd}`])
  }, 120_000)

  it("refuses a directory with runs in flight written by an earlier version's Effect Cluster engine, and says what to do", async () => {
    const exit = await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`create table cluster_messages (id bigint primary key, tag text not null, processed boolean not null default false)`
      const none = yield* Effect.exit(refuseClusterRuns)
      yield* sql`insert into cluster_messages (id, tag) values (1, 'run'), (2, 'activity')`
      const some = yield* Effect.exit(refuseClusterRuns)
      yield* sql`drop table cluster_messages`
      return { none, some }
    }).pipe(Effect.provide(engine)) as Effect.Effect<{ none: Exit.Exit<void, unknown>; some: Exit.Exit<void, unknown> }>)
    expect(exit.none).toEqual(Exit.void)
    expect(Exit.isFailure(exit.some) && JSON.stringify(exit.some)).toContain("1 run(s) in flight written by the Effect Cluster engine of an earlier version")
  })

  it("refuses, saying why, a call into the engine inside a transaction of its own SqlClient (it would wait for the session for ever)", async () => {
    const exit = await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* Effect.exit(sql.withTransaction(stores.journal.read("run_in_tx", 0, 10)))
    }).pipe(Effect.provide(engine), Effect.timeout("5 seconds")) as Effect.Effect<Exit.Exit<unknown, unknown>>)
    expect(Exit.isFailure(exit) && JSON.stringify(exit)).toContain("outside `sql.withTransaction`")
  })
})
