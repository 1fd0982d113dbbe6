/**
 * Rows of the embedded engine's store (PGlite files in a test directory) corrupted through the
 * engine's own `SqlClient`, as an operator's bad edit or a damaged disk would leave them: a recorded
 * step that is not JSON, a payload or step of another shape, a journal event that is not an event, a
 * wait's snapshot or a claim's outcome that is not JSON. Each makes that one run `DurableRunUnreadable`
 * (typed, naming the table and the row) for `list`, `poll`, `join`, `result`, `journal` and `follow`;
 * every other run is still listed, decided and completed by the same worker. A property does the same
 * over hostile values (garbage text, JSON of another shape, deep nesting, `__proto__` keys).
 */
import { fc } from "@fast-check/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Context, Effect, Exit, Layer, References, Schema, Scope, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, Decision, text, tool, toolCalls } from "../../src/index.ts"
import { durable, DurableRunUnreadable, followResponse, runJournalSql } from "../../src/durable/index.ts"
import { embeddedEngine } from "../../src/durable/embedded.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { DurableWatcher } from "../../src/studio/collect/durable-source.ts"
import { RunStore } from "../../src/studio/store/run-store.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 12)

const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String }), effect: "idempotent", needsApproval: true, run: ({ to }) => `sent to ${to}` })
const pay = tool("pay", { args: Schema.Struct({}), run: () => "paid" })
/** "wait": a transfer that waits for approval, then "done"; "pay": a mutating call, then "paid"; else "ok". */
const model = scriptedModel((request) => {
  const input = String(request.messages.find((m) => m.role === "user")?.content ?? "")
  const answered = request.messages.some((m) => m.role === "tool")
  if (input === "wait" && !answered) return toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob" } }])
  if (input === "pay" && !answered) return toolCalls([{ id: "p1", name: "pay", arguments: {} }])
  return text(answered ? (input === "pay" ? "paid" : "done") : "ok")
})
const d = durable(agent("keeper").model(model).tools({ transfer, pay }))

let dir: string
let scope: Scope.Closeable
let context: Context.Context<any>

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "unreadable-rows-"))
  scope = Effect.runSync(Scope.make())
  context = await Effect.runPromise(Layer.buildWithScope(d.layer.pipe(Layer.provideMerge(embeddedEngine({ dataDir: dir }))), scope) as Effect.Effect<Context.Context<any>>)
}, 120_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dir, { recursive: true, force: true })
})

/** `effect` on the test's worker (its warnings about unreadable runs silenced). */
const onWorker = <A, E>(effect: Effect.Effect<A, E, any>): Promise<A> =>
  Effect.runPromise(effect.pipe(Effect.provide(context), Effect.provideService(References.MinimumLogLevel, "None"), Effect.timeout("60 seconds")) as Effect.Effect<A, E>)

/** How an effect ended: its value, a typed failure (by tag) or a defect. */
type Outcome = { readonly _tag: "Ok"; readonly value: unknown } | { readonly _tag: "Fail"; readonly error: unknown } | { readonly _tag: "Die"; readonly cause: string }
const outcome = <A, E>(effect: Effect.Effect<A, E, any>): Promise<Outcome> =>
  onWorker(Effect.exit(effect)).then((exit): Outcome => {
    if (Exit.isSuccess(exit)) return { _tag: "Ok", value: exit.value }
    const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
    return failure?._tag === "Fail" && !Cause.hasDies(exit.cause) ? { _tag: "Fail", error: failure.error } : { _tag: "Die", cause: Cause.pretty(exit.cause).slice(0, 600) }
  })

const sql = (text: string, ...params: ReadonlyArray<unknown>) =>
  onWorker(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe(text, params as Array<any>)))

/** The run's status in `list`, and its marker. */
const listed = async (runId: string) => (await onWorker(d.list())).find((r) => r.runId === runId)

/** A fresh run waiting for its transfer's approval. */
const waitingRun = async (runId: string) => {
  const result = await onWorker(d.run("wait", { runId }))
  expect(result._tag).toBe("Suspended")
}

/** A healthy run goes on: decided, it completes on the same worker. */
const completes = async (runId: string) => {
  await onWorker(d.decide(runId, { t1: Decision.approve }))
  expect(await onWorker(d.join(runId))).toBe("done")
}

const expectUnreadable = (o: Outcome, table: string) => {
  expect(o._tag, o._tag === "Die" ? o.cause : "").toBe("Fail")
  const error = (o as { readonly error: unknown }).error
  expect(error).toBeInstanceOf(DurableRunUnreadable)
  expect((error as DurableRunUnreadable).table).toBe(table)
  return error as DurableRunUnreadable
}

describe("durable runs whose stored rows cannot be read (embedded engine)", () => {
  it("a recorded step that is not JSON: that run is listed unreadable, every other run is listed, approved and completes", async () => {
    await onWorker(d.run("ok", { runId: "ok-1" }))
    await waitingRun("w-good")
    await waitingRun("w-bad")
    // What the outside tester ran against the store.
    await sql("update agent_workflow_steps set value = 'garbage{' where name like 'a:model/w-bad/step/1/1%'")

    const all = await onWorker(d.list())
    expect(all.map((r) => [r.runId, r.status])).toEqual([["ok-1", "completed"], ["w-good", "waiting"], ["w-bad", "unreadable"]])
    const bad = all.find((r) => r.runId === "w-bad")!
    expect(bad.unreadable).toBeInstanceOf(DurableRunUnreadable)
    expect(bad.unreadable).toMatchObject({ runId: "w-bad", table: "agent_workflow_steps", row: 'step "a:model/w-bad/step/1/1"' })
    expect(bad.unreadable!.reason).toMatch(/JSON|token/)
    expect((await onWorker(d.list({ status: "waiting" }))).map((r) => r.runId)).toEqual(["w-good"])

    // poll, result and join of the corrupt run: the typed error, not a defect.
    expectUnreadable(await outcome(d.poll("w-bad")), "agent_workflow_steps")
    expectUnreadable(await outcome(d.result("w-bad")), "agent_workflow_steps")
    expectUnreadable(await outcome(d.join("w-bad")), "agent_workflow_steps")
    // A decision wakes it: the worker cannot replay it, says so, and goes on.
    expect((await outcome(d.decide("w-bad", { t1: Decision.approve })))._tag).not.toBe("Die")
    expectUnreadable(await outcome(d.join("w-bad")), "agent_workflow_steps")

    await completes("w-good")
    expect((await listed("w-good"))?.status).toBe("completed")
  })

  it("the studio lists every durable run and approval beside an unreadable one, and shows that one failed with the reason", async () => {
    await waitingRun("s-good")
    await waitingRun("s-bad")
    await sql("update agent_workflow_steps set value = 'garbage{' where name like 'a:model/s-bad/%'")
    const warnings: Array<string> = []
    const onWarning = (w: Error) => warnings.push(w.message)
    process.on("warning", onWarning)
    const store = new RunStore()
    const watcher = new DurableWatcher({ agents: [d], layer: Layer.succeedContext(context) as Layer.Layer<any> }, store)
    try {
      await watcher.poll()
      expect(watcher.waiting().map((w) => w.runId)).toContain("s-good")
      expect(watcher.waiting().map((w) => w.runId)).not.toContain("s-bad")
      const summary = store.facts(store.get("s-bad")!).summary
      expect(summary.status).toBe("failed")
      expect(JSON.stringify(store.get("s-bad")!.events.map((e) => e.event))).toContain("DurableRunUnreadable")
      await watcher.decide("s-good", [{ callId: "t1", decision: "approve" }], "test")
      expect(await onWorker(d.join("s-good"))).toBe("done")
    } finally {
      process.off("warning", onWarning)
      await watcher.dispose()
    }
    expect(warnings.filter((w) => w.includes("cannot list"))).toEqual([])
  })

  it("a recorded result of another shape met while a decision replays the run: the run ends unreadable, nothing is recorded, the worker goes on", async () => {
    await waitingRun("i-bad")
    await waitingRun("i-good")
    // Valid JSON, a complete step, but not the model's answer: only a replay meets it.
    await sql(
      "update agent_workflow_steps set value = $1 where name like 'a:model/i-bad/step/1/1%'",
      JSON.stringify({ _tag: "Complete", exit: { _tag: "Success", value: { nope: 1 } } })
    )
    await onWorker(d.decide("i-bad", { t1: Decision.approve }))
    const error = expectUnreadable(await outcome(d.join("i-bad")), "agent_workflow_steps")
    expect(error.row).toBe('step "a:model/i-bad/step/1/1"')
    expect((await listed("i-bad"))?.status).toBe("unreadable")
    // Nothing overwritten: the execution is not recorded complete, no end is journalled.
    const rows = await sql("select status, result from agent_workflow_executions where payload like '%\"i-bad\"%'")
    expect(rows).toHaveLength(1)
    expect((rows[0] as { status: string }).status).not.toBe("complete")
    const journal = await onWorker(d.journal("i-bad"))
    expect(journal.entries.filter((e) => e._tag === "Ended")).toEqual([])
    await completes("i-good")
  })

  it("a journal event that is not an event: follow, followResponse and journal fail with DurableRunUnreadable naming it; the run still lists", async () => {
    await onWorker(d.run("ok", { runId: "j-bad" }))
    await sql(`update agent_run_events set event = '{"_tag":"RunEnd","runId":"j-bad"}'::jsonb where run_id = 'j-bad' and id = 2`)
    const followed = await outcome(Stream.runCollect(d.follow("j-bad", { pollInterval: "20 millis" })))
    expect(expectUnreadable(followed, "agent_run_events").row).toBe("event 2")
    expectUnreadable(await outcome(d.journal("j-bad")), "agent_run_events")
    const body = await onWorker(Effect.flatMap(followResponse(d, "j-bad", { pollInterval: "20 millis" }), (response) => Effect.promise(() => response.text())))
    expect(body).toContain("event: error")
    expect(body).toContain("DurableRunUnreadable")
    expect((await listed("j-bad"))?.status).toBe("completed")
    // The SQL journal of the PostgreSQL runners (`runJournalSql`), on the same table, reads it the same way.
    const viaSql = await outcome(Effect.scoped(Effect.gen(function*() {
      const journal = yield* Layer.build(runJournalSql().pipe(Layer.provide(Layer.succeedContext(context))))
      return yield* Stream.runCollect(d.follow("j-bad")).pipe(Effect.provide(journal))
    })))
    expect(expectUnreadable(viaSql, "agent_run_events").row).toBe("event 2")
  })

  it("a wait's snapshot or a claim's outcome that is not JSON: typed for list, decide and journal", async () => {
    await waitingRun("snap-bad")
    await sql("update agent_approval_waits set snapshot = 'not json' where run_id = 'snap-bad'")
    const snap = (await listed("snap-bad"))!
    expect(snap.status).toBe("unreadable")
    expect(snap.unreadable).toMatchObject({ table: "agent_approval_waits", row: "wait 1 (snapshot)" })
    const refused = await outcome(d.decide("snap-bad", { t1: Decision.approve }))
    expect(refused._tag).toBe("Fail")
    expect((refused as { error: { _tag: string } }).error._tag).toBe("DecisionsInvalid")

    expect(await onWorker(d.run("pay", { runId: "claim-bad" }))).toMatchObject({ _tag: "Completed", output: "paid" })
    await sql("update agent_tool_intents set outcome = '{oops' where run_id = 'claim-bad'")
    expect(expectUnreadable(await outcome(d.journal("claim-bad")), "agent_tool_intents").row).toContain("claim")
  })

  // Hostile values into one column of one run's rows; the run is unreadable (a typed error, never a
  // defect), and another run waiting beside it is listed, decided and completed.
  const notJson = fc.string({ maxLength: 40 }).filter((s) => {
    try {
      JSON.parse(s)
      return false
    } catch {
      return true
    }
  })
  // JSON that is not a recorded result, payload or event: none of the keys those go by.
  const wrongShape = fc.jsonValue({ maxDepth: 3 }).filter((v) => !JSON.stringify(v ?? null).match(/_tag|runId|exit/)).map((v) => JSON.stringify(v ?? null))
  const deep = fc.tuple(fc.integer({ min: 50, max: 3000 }), fc.boolean()).map(([n, arrays]) =>
    arrays ? `${"[".repeat(n)}${"]".repeat(n)}` : `${'{"a":'.repeat(n)}1${"}".repeat(n)}`
  )
  const proto = fc.jsonValue({ maxDepth: 2 }).map((v) => `{"__proto__":${JSON.stringify(v ?? null)},"constructor":{"prototype":{"polluted":true}}}`)
  const hostile = fc.oneof(notJson, wrongShape, deep, proto)
  type Target = "step" | "payload" | "event"
  const target = fc.constantFrom<Target>("step", "payload", "event")

  it("property: any hostile value in a step, the payload or a journal event makes only that run unreadable (typed), the others go on", async () => {
    let n = 0
    await fc.assert(
      fc.asyncProperty(target, hostile, async (where, value) => {
        n += 1
        const bad = `p-bad-${n}`
        const good = `p-good-${n}`
        await waitingRun(bad)
        await waitingRun(good)
        if (where === "event") {
          // jsonb: only JSON goes in (text that is not JSON is the other columns' case).
          const json = (() => {
            try {
              JSON.parse(value)
              return value
            } catch {
              return JSON.stringify(value)
            }
          })()
          await sql("update agent_run_events set event = $1::jsonb where run_id = $2 and id = 1", json, bad)
          expect(expectUnreadable(await outcome(Stream.runCollect(d.follow(bad))), "agent_run_events").row).toBe("event 1")
          expectUnreadable(await outcome(d.journal(bad)), "agent_run_events")
        } else if (where === "step") {
          await sql(`update agent_workflow_steps set value = $1 where name like 'a:model/${bad}/step/1/1%'`, value)
          expect((await listed(bad))?.status).toBe("unreadable")
          expectUnreadable(await outcome(d.poll(bad)), "agent_workflow_steps")
          expect((await outcome(d.decide(bad, { t1: Decision.approve })))._tag).not.toBe("Die")
          expectUnreadable(await outcome(d.join(bad)), "agent_workflow_steps")
        } else {
          await sql(`update agent_workflow_executions set payload = $1 where payload like '%"${bad}"%'`, value)
          // The execution's id is its run's: the row is found by it, whatever its payload became.
          expect((await listed(bad))?.status).toBe("unreadable")
          expectUnreadable(await outcome(d.join(bad)), "agent_workflow_executions")
        }
        const all = await onWorker(d.list())
        expect(all.find((r) => r.runId === good)?.status).toBe("waiting")
        await completes(good)
      }),
      { numRuns }
    )
  }, 600_000)
})
