/**
 * The SQL session store over rows edited or corrupted by hand: a message row or a waiting run's row that
 * is not JSON fails the call with `SessionStoreFailed` (never a defect), a waiting run's row that is not
 * one fails the session's turn before anything runs, and a take that fails leaves the row where it was.
 */
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, Decision, session, SessionStoreFailed, type SessionStore, text, tool, toolCalls } from "../../src/index.ts"
import { sqlSessionStore } from "../../src/postgres/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { startDatabase, type TestDatabase } from "../support/database.ts"
import { failureOf } from "../fixtures.ts"

describe("the SQL session store over edited rows (PostgreSQL, or PGlite where there is none)", () => {
  let db: TestDatabase
  let scope: Scope.Closeable
  let store: SessionStore
  let sql: SqlClient.SqlClient
  beforeAll(async () => {
    db = await startDatabase()
    scope = Effect.runSync(Scope.make())
    const client = await Effect.runPromise(Layer.buildWithScope(db.sql(), scope))
    sql = Context.get(client, SqlClient.SqlClient)
    store = await Effect.runPromise(sqlSessionStore({ table: "edited_rows" }).pipe(Effect.provide(client)))
  }, 60_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    db?.stop()
  }, 60_000)

  it("a message row that is not JSON fails load with SessionStoreFailed", async () => {
    await Effect.runPromise(sql`insert into edited_rows (session, seq, message) values ('bad-msg', 0, 'not json {')`)
    const error = failureOf(await Effect.runPromiseExit(store.load("bad-msg")))
    expect(error).toBeInstanceOf(SessionStoreFailed)
    expect(error.reason).toContain("row 0 is not JSON")
  }, 60_000)

  it("a waiting run's row that is not JSON fails waiting and takeWaiting, and stays", async () => {
    await Effect.runPromise(sql`insert into edited_rows_waiting (session, run) values ('bad-run', 'not json {')`)
    expect(failureOf(await Effect.runPromiseExit(store.waiting!("bad-run"))).reason).toContain("not JSON")
    expect(failureOf(await Effect.runPromiseExit(store.takeWaiting!("bad-run")))).toBeInstanceOf(SessionStoreFailed)
    const rows = await Effect.runPromise(sql<{ readonly run: string }>`select run from edited_rows_waiting where session = 'bad-run'`)
    expect(rows.map((row) => row.run)).toEqual(["not json {"])
  }, 60_000)

  it("a waiting run's historyLength edited in its row: the resume fails before anything runs, and the run still waits", async () => {
    const sent: Array<string> = []
    const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String }), needsApproval: true, run: ({ to }) => (sent.push(to), `sent to ${to}`) })
    const model = scriptedModel([text("hello"), toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob" } }]), text("paid")])
    const chat = session(agent("w").model(model).tools({ transfer }), "edited", { store })
    await chat.send("a")
    await chat.send("pay bob")
    await Effect.runPromise(sql`update edited_rows_waiting set run = replace(run, '"historyLength":2', '"historyLength":0') where session = 'edited'`)
    const error = failureOf(await Effect.runPromiseExit(chat.resumeEffect({ t1: Decision.approve })))
    expect(error).toBeInstanceOf(SessionStoreFailed)
    expect((error as SessionStoreFailed).reason).toContain("historyLength 0")
    expect(sent).toEqual([])
    expect((await Effect.runPromise(store.load("edited"))).map((m) => m.content)).toEqual(["a", "hello"])
    expect((await Effect.runPromise(store.waiting!("edited")))?.historyLength).toBe(0)
  }, 60_000)
})
