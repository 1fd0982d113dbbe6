import { fc, test as propTest } from "@fast-check/vitest"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, applyWindow, inMemorySessionStore, type LlmMessage, session, type SessionStore, text, tool, toolCalls } from "../../src/index.ts"
import { openPostgresSessionStore, sqlSessionStore } from "../../src/postgres/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { startDatabase, type TestDatabase } from "../support/database.ts"

const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })

const conversation = () => scriptedModel([
  toolCalls([{ id: "t1", name: "add", arguments: { a: 1, b: 2 } }]),
  text("3"),
  text("you asked for 1 + 2")
])

describe("a session", () => {
  it("carries the transcript into the next run, without the system prompt twice", async () => {
    const model = conversation()
    const chat = session(agent("calc").prompt("be exact").model(model).tools({ add }), "s1")
    expect(await chat.send("1 + 2?")).toBe("3")
    expect(await chat.send("what did I ask?")).toBe("you asked for 1 + 2")
    const seen = model.requests[2]!.messages
    expect(seen.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"])
    expect(seen.filter((m) => m.role === "system")).toHaveLength(1)
    expect((await Effect.runPromise(chat.history())).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant"])
  })

  it("keeps sessions apart in one store", async () => {
    const store = inMemorySessionStore()
    const calc = agent("calc").model(scriptedModel([text("a"), text("b")]))
    await session(calc, "x", { store }).send("first")
    await session(calc, "y", { store }).send("second")
    expect(await Effect.runPromise(store.load("x"))).toEqual([{ role: "user", content: "first" }, { role: "assistant", content: "a" }])
    expect(await Effect.runPromise(store.load("y"))).toEqual([{ role: "user", content: "second" }, { role: "assistant", content: "b" }])
  })

  it("shows a run only the turns its window allows", async () => {
    const model = scriptedModel([text("one"), text("two"), text("three")])
    const chat = session(agent("calc").model(model), "w", { window: { lastTurns: 1 } })
    await chat.send("a")
    await chat.send("b")
    await chat.send("c")
    expect(model.requests[2]!.messages.map((m) => m.content).slice(1)).toEqual(["b", "two", "c"])
  })
})

const arbMessage: fc.Arbitrary<ReadonlyArray<LlmMessage>> = fc.oneof(
  fc.string().map((content) => [{ role: "user" as const, content }]),
  fc.string().map((content) => [{ role: "assistant" as const, content }]),
  fc.tuple(fc.string(), fc.string({ minLength: 1, maxLength: 5 })).map(([content, id]) => [
    { role: "assistant" as const, content: "", toolCalls: [{ id, name: "add", arguments: "{}" }] },
    { role: "tool" as const, toolCallId: id, name: "add", content }
  ])
)

describe("the context window", () => {
  propTest.prop([
    fc.array(arbMessage, { maxLength: 30 }).map((groups) => groups.flat()),
    fc.oneof(fc.nat({ max: 12 }).map((lastTurns) => ({ lastTurns })), fc.nat({ max: 400 }).map((maxTokens) => ({ maxTokens })))
  ])("keeps a suffix of whole turns: never a tool result without its call, never a call without its result", (history, window) => {
    const kept = applyWindow(history, window)
    expect(history.slice(history.length - kept.length)).toEqual(kept)
    if (kept.length > 0 && kept.length < history.length) expect(kept[0]!.role).toBe("user")
    const calls = new Set(kept.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []).map((c) => c.id) : [])))
    const results = kept.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : []))
    for (const id of results) expect(calls.has(id)).toBe(true)
    for (const id of calls) expect(results).toContain(id)
    if ("lastTurns" in window) expect(kept.filter((m) => m.role === "user").length).toBeLessThanOrEqual(window.lastTurns)
  })
})

describe("sessions in SQL (PostgreSQL, or PGlite where there is none)", () => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await startDatabase()
  }, 60_000)
  afterAll(() => db?.stop(), 60_000)

  /** The public PostgreSQL store on PostgreSQL; `sqlSessionStore` over the embedded engine's PGlite. */
  const open = async (): Promise<{ readonly store: SessionStore; readonly close: () => Promise<void> }> => {
    if (db.url !== undefined) return openPostgresSessionStore({ url: db.url })
    const scope = Effect.runSync(Scope.make())
    // The client lives as long as the store (its scope), as `openPostgresSessionStore`'s pool does.
    const store = await Effect.runPromise(Effect.flatMap(Layer.buildWithScope(db.sql(), scope), (client) => sqlSessionStore().pipe(Effect.provide(client))))
    return { store, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
  }

  it("continue across store instances (as across processes), and concurrent appends never interleave", async () => {
    const first = await open()
    const model = conversation()
    const calc = agent("calc").model(model).tools({ add })
    expect(await session(calc, "pg-1", { store: first.store }).send("1 + 2?")).toBe("3")
    await first.close()

    const second = await open()
    expect(await session(calc, "pg-1", { store: second.store }).send("what did I ask?")).toBe("you asked for 1 + 2")
    expect(model.requests[2]!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"])
    const stored = await Effect.runPromise(second.store.load("pg-1"))
    expect(stored[2]).toEqual({ role: "tool", toolCallId: "t1", name: "add", content: "3" })

    const batches = Array.from({ length: 8 }, (_, i) => [{ role: "user" as const, content: `q${i}` }, { role: "assistant" as const, content: `a${i}` }])
    await Promise.all(batches.map((batch) => Effect.runPromise(second.store.append("pg-2", batch))))
    const all = await Effect.runPromise(second.store.load("pg-2"))
    expect(all).toHaveLength(16)
    for (let i = 0; i < 16; i += 2) expect(all[i]!.content.slice(1)).toBe(all[i + 1]!.content.slice(1))
    await second.close()
  }, 60_000)

  it("keeps a message and a waiting run exactly, NUL and backslashes included (jsonb refused them)", async () => {
    const store = await open()
    const hostile = "a\u0000b \\u0000 c"
    await Effect.runPromise(store.store.append("pg-nul", [{ role: "user", content: hostile }]))
    expect(await Effect.runPromise(store.store.load("pg-nul"))).toEqual([{ role: "user", content: hostile }])
    const run = { runId: "r1", snapshot: { args: { note: hostile } }, pending: [{ id: "c1", tool: "t", args: { note: hostile } }], historyLength: 1 }
    await Effect.runPromise(store.store.setWaiting!("pg-nul", run))
    expect(await Effect.runPromise(store.store.takeWaiting!("pg-nul"))).toEqual(run)
    await store.close()
  }, 60_000)
})
