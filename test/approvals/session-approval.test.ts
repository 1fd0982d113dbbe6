/** A session whose run suspends (issue 29 item 8): it shows the waiting run, and records the exchange once when the resumed run ends. */
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sqlSessionStore } from "../../src/postgres/index.ts"
import { startDatabase, type TestDatabase } from "../support/database.ts"
import { Schema } from "effect"
import { agent, Decision, inMemorySessionStore, session, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank } from "./bank.ts"

const setup = () => {
  const model = scriptedModel([
    text("hello"),
    toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]),
    text("sent"),
    text("you paid bob")
  ])
  const made = makeBank(model)
  const store = inMemorySessionStore()
  return { ...made, model, store, chat: session(made.bank, "s1", { store }) }
}

describe("a session whose run waits for a decision", () => {
  it("a send while a run waits abandons that run: its call never runs, a later resume finds none, the history stays in order", async () => {
    const model = scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("hello")])
    const { bank, executed } = makeBank(model)
    const store = inMemorySessionStore()
    const chat = session(bank, "s-abandon", { store })
    expect((await chat.send("pay bob 500"))._tag).toBe("Suspended")
    expect(await chat.send("never mind, hi")).toEqual({ _tag: "Completed", output: "hello" })
    expect(await Effect.runPromise(chat.waiting())).toBeUndefined()
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(executed).toEqual([])
    expect((await Effect.runPromise(store.load("s-abandon"))).map((m) => [m.role, m.content])).toEqual([["user", "never mind, hi"], ["assistant", "hello"]])
  })

  it("a send that abandons a run whose child agent already ran a call keeps that call, with what the child did and what never ran (found by an outside tester)", async () => {
    const effects: Array<string> = []
    const reserve = tool("reserve_seat", { args: Schema.Struct({ flight: Schema.String }), run: ({ flight }) => (effects.push(`reserved ${flight}`), `seat 12A reserved on ${flight}`) })
    const pay = tool("pay", { args: Schema.Struct({ amount: Schema.Finite }), needsApproval: true, run: () => (effects.push("paid"), "paid") })
    const booker = agent("booker").model(scriptedModel([toolCalls([{ id: "k1", name: "reserve_seat", arguments: { flight: "LH400" } }, { id: "k2", name: "pay", arguments: { amount: 900 } }]), text("booked")]))
      .tools({ reserve_seat: reserve, pay })
    const model = scriptedModel([toolCalls([{ id: "p1", name: "book", arguments: { input: "LH400" } }]), text("ok, cancelled")])
    const assistant = agent("assistant").model(model).tools({ book: booker.asTool({ name: "book" }) })
    const store = inMemorySessionStore()
    const chat = session(assistant, "s-child", { store })
    expect((await chat.send("book LH400"))._tag).toBe("Suspended")
    expect(await chat.send("actually, never mind")).toEqual({ _tag: "Completed", output: "ok, cancelled" })
    expect(effects).toEqual(["reserved LH400"])
    const seen = model.requests[1]!.messages.filter((m) => m.role !== "system")
    expect(seen.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"])
    expect(seen[0]).toMatchObject({ content: "book LH400" })
    const result = seen[2] as { toolCallId: string; content: string }
    expect(result.toolCallId).toBe("p1")
    expect(result.content).toContain('reserve_seat → "seat 12A reserved on LH400"')
    expect(result.content).toContain("What waited never ran: pay")
    expect((await Effect.runPromise(store.load("s-child"))).map((m) => m.role)).toEqual(["user", "assistant", "tool", "user", "assistant"])
  })

  it("shows the waiting run, resumes it once, and records the exchange when it completes", async () => {
    const { chat, store, executed, model } = setup()
    expect(await chat.send("hi")).toEqual({ _tag: "Completed", output: "hello" })
    const first = await chat.send("pay bob 500")
    expect(first._tag).toBe("Suspended")
    const waiting = await Effect.runPromise(chat.waiting())
    expect(waiting?.pending).toEqual([{ id: "c1", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect((await Effect.runPromise(store.load("s1"))).map((m) => m.content)).toEqual(["hi", "hello"])
    // A refused decision leaves it waiting.
    expect(failureOf(await runExit(chat.resumeEffect({})))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(await Effect.runPromise(chat.waiting())).toBeDefined()
    expect(await chat.resume({ c1: Decision.approve })).toEqual({ _tag: "Completed", output: "sent" })
    expect(await Effect.runPromise(chat.waiting())).toBeUndefined()
    const history = await Effect.runPromise(store.load("s1"))
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "tool", "assistant"])
    expect(history[4]).toMatchObject({ role: "tool", toolCallId: "c1", content: "sent 500 to bob" })
    // Once: a second resume finds no waiting run, runs nothing and records nothing.
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(executed.filter((e) => e.tool === "transfer")).toHaveLength(1)
    expect(await Effect.runPromise(store.load("s1"))).toHaveLength(6)
    // The next send sees the resumed exchange.
    expect(await chat.send("what did I do?")).toEqual({ _tag: "Completed", output: "you paid bob" })
    expect(model.requests.at(-1)!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "tool", "assistant", "user"])
  })

  it("continues from the store in another session value (as another process would)", async () => {
    const { chat, store, bank } = setup()
    await chat.send("hi")
    await chat.send("pay bob 500")
    const elsewhere = session(bank, "s1", { store })
    expect((await Effect.runPromise(elsewhere.waiting()))?.runId).toBeDefined()
    expect(await elsewhere.resume({ c1: Decision.deny("no") })).toEqual({ _tag: "Completed", output: "sent" })
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect((await Effect.runPromise(store.load("s1"))).filter((m) => m.role === "tool")).toHaveLength(1)
  })
})

describe("a session on the SQL store whose run waits", () => {
  let db: TestDatabase | undefined
  beforeAll(async () => {
    db = await startDatabase()
  }, 120_000)
  afterAll(() => db?.stop(), 60_000)

  it("keeps the waiting run in the database: another store instance resumes it, and of two concurrent resumes one runs", async () => {
    const scope = Effect.runSync(Scope.make())
    const open = () => Effect.runPromise(Effect.flatMap(Layer.buildWithScope(db!.sql(), scope), (client) => sqlSessionStore({ table: "approval_sessions" }).pipe(Effect.provide(client))))
    const { bank, executed } = makeBank(scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("sent")]))
    const first = await open()
    expect((await session(bank, "q1", { store: first }).send("pay bob 500"))._tag).toBe("Suspended")
    const [a, b] = [await open(), await open()]
    expect((await Effect.runPromise(session(bank, "q1", { store: a }).waiting()))?.pending.map((p) => p.id)).toEqual(["c1"])
    const exits = await Promise.all([
      runExit(session(bank, "q1", { store: a }).resumeEffect({ c1: Decision.approve })),
      runExit(session(bank, "q1", { store: b }).resumeEffect({ c1: Decision.approve }))
    ])
    expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
    expect(executed.filter((e) => e.tool === "transfer")).toHaveLength(1)
    expect((await Effect.runPromise(a.load("q1"))).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
    expect(await Effect.runPromise(a.waiting!("q1"))).toBeUndefined()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)
})
