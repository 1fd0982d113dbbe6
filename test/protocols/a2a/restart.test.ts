/**
 * A2A tasks that survive a restart: `serveA2a` with `sqlTaskStore()` (tasks) and `sqlSessionStore()`
 * (each context's messages and waiting run) on one SQL database (PostgreSQL when at hand, else the
 * embedded PGlite). A task left input-required by a server that stopped is read with `GetTask` from a
 * new server on the same database, its approval resumes the same run (the tool runs once, then never
 * again), and `ListTasks` pages through the stored tasks.
 */
import { TaskState } from "@a2a-js/sdk"
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serveA2a, sqlTaskStore } from "../../../src/protocols/a2a/index.ts"
import { sqlSessionStore } from "../../../src/postgres/index.ts"
import { startDatabase, type TestDatabase } from "../../support/database.ts"
import { asTask, makeBank, outputText, request, sdkClient, text, userMessage } from "./helpers.ts"

let db: TestDatabase
beforeAll(async () => {
  db = await startDatabase()
}, 60_000)
afterAll(() => db?.stop(), 60_000)

const { bank, transferRuns } = makeBank()

/** A server of `bank` on the database, as a new process would open it; `stop` closes it and its connection. */
const start = async () => {
  const scope = Effect.runSync(Scope.make())
  const { taskStore, sessions } = await Effect.runPromise(Effect.flatMap(Layer.buildWithScope(db.sql(), scope), (client) =>
    Effect.all({ taskStore: sqlTaskStore({ table: "restart_tasks" }), sessions: sqlSessionStore({ table: "restart_sessions" }) }).pipe(Effect.provide(client))))
  const server = await serveA2a(bank, { taskStore, sessions: () => ({ store: sessions }) })
  return { server, stop: async () => (await server.close(), await Effect.runPromise(Scope.close(scope, Exit.void))) }
}

describe("serveA2a on a SQL task store", () => {
  it("answers GetTask and resumes an input-required task after a restart, once", async () => {
    const first = await start()
    const before = transferRuns()
    const client = await sdkClient(first.server.url)
    const task = asTask(await client.sendMessage(request(userMessage([text("pay bob 10")]))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    await first.stop()

    const second = await start()
    const again = await sdkClient(second.server.url)
    const stored = await again.getTask({ tenant: "", id: task.id, historyLength: undefined })
    expect(stored.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    expect(stored.contextId).toBe(task.contextId)
    // A reply that answers nothing is refused with invalid params before anything runs.
    await expect(again.sendMessage(request(userMessage([text("maybe later")], { taskId: task.id, contextId: task.contextId })))).rejects.toMatchObject({ name: "RequestMalformedError" })
    const resumed = asTask(await again.sendMessage(request(userMessage([text("approve")], { taskId: task.id, contextId: task.contextId }))))
    expect(resumed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(outputText(resumed)).toBe("done: sent 10 to bob")
    expect(transferRuns()).toBe(before + 1)
    await expect(again.sendMessage(request(userMessage([text("approve")], { taskId: task.id, contextId: task.contextId })))).rejects.toThrow()
    expect(transferRuns()).toBe(before + 1)
    await second.stop()

    const third = await start()
    const done = await (await sdkClient(third.server.url)).getTask({ tenant: "", id: task.id, historyLength: undefined })
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(outputText(done)).toBe("done: sent 10 to bob")
    await third.stop()
  }, 60_000)

  it("lists stored tasks by context and state, newest first, in pages", async () => {
    const scope = Effect.runSync(Scope.make())
    const client = await Effect.runPromise(Layer.buildWithScope(db.sql(), scope))
    const store = await Effect.runPromise(sqlTaskStore({ table: "list_tasks" }).pipe(Effect.provide(client)))
    const refused = await Effect.runPromiseExit(sqlTaskStore({ table: "Bad Name" }).pipe(Effect.provide(client)))
    expect(refused).toMatchObject({ _tag: "Failure" })
    expect(String(Exit.isFailure(refused) ? refused.cause : "")).toContain("plain lower-case")
    const context = { tenant: "", user: { userName: "ann", isAuthenticated: true } } as never
    const other = { tenant: "", user: { userName: "bob", isAuthenticated: true } } as never
    for (let i = 0; i < 5; i++) {
      await store.save({
        id: `t${i}`,
        contextId: i < 3 ? "c1" : "c2",
        status: { state: i === 4 ? TaskState.TASK_STATE_INPUT_REQUIRED : TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: `2026-01-0${i + 1}T00:00:00.000Z` },
        artifacts: [{ artifactId: "a", name: "output", description: "", parts: [text(`out ${i}`)], metadata: undefined, extensions: [] }],
        history: [],
        metadata: { n: i }
      }, context)
    }
    const page = { tenant: "", contextId: "", status: 0, pageToken: "", statusTimestampAfter: undefined }
    const first = await store.list({ ...page, pageSize: 2 }, context)
    expect(first.tasks.map((t) => t.id)).toEqual(["t4", "t3"])
    expect(first.totalSize).toBe(5)
    const second = await store.list({ ...page, pageSize: 2, pageToken: first.nextPageToken }, context)
    expect(second.tasks.map((t) => t.id)).toEqual(["t2", "t1"])
    const third = await store.list({ ...page, pageSize: 2, pageToken: second.nextPageToken }, context)
    expect([third.tasks.map((t) => t.id), third.nextPageToken]).toEqual([["t0"], ""])
    expect((await store.list({ ...page, contextId: "c1" }, context)).tasks.map((t) => t.id)).toEqual(["t2", "t1", "t0"])
    expect((await store.list({ ...page, status: TaskState.TASK_STATE_INPUT_REQUIRED, includeArtifacts: true }, context)).tasks).toMatchObject([{ id: "t4", metadata: { n: 4 }, artifacts: [{ name: "output" }] }])
    expect((await store.list(page, other)).tasks).toEqual([])
    expect(await store.load("t1", other)).toBeUndefined()
    expect(await store.load("t1", context)).toMatchObject({ id: "t1", contextId: "c1", status: { state: TaskState.TASK_STATE_COMPLETED } })
    expect((await store.list({ ...page, pageToken: "not a token" }, context)).tasks).toEqual([])
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)
})
