/**
 * A session turn interrupted after some of its calls ran (`Fiber.interrupt`, `Effect.timeout` around the
 * send, a scope closing): the calls that completed are recorded with their results, and each call that
 * had not is recorded as interrupted (it may have had its effect), so the next turn's model knows and
 * nothing dangles. The recording runs where the interruption cannot stop it, and a slow store never
 * holds the interrupted caller: the write goes on, and the session's next turn waits for it.
 */
import { Effect, Fiber, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  agent,
  Decision,
  inMemorySessionStore,
  type LlmMessage,
  session,
  type SessionStore,
  text,
  tool,
  toolCalls
} from "../../src/index.ts"
import { interruptedContent } from "../../src/runtime/turn-trail.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank } from "../approvals/bank.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { unansweredCalls } from "../hardening/transcript-check.ts"

const load = (store: SessionStore, id: string) => Effect.runPromise(store.load(id))
const results = (messages: ReadonlyArray<LlmMessage>) => messages.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, m.content]] : []))

/** A tool that never returns; `reached` settles once a call of it started. */
const hanging = () => {
  let enter: () => void = () => {}
  const reached = new Promise<void>((resolve) => (enter = resolve))
  const wait = tool("wait", { args: Schema.Struct({}), run: () => {
    enter()
    return new Promise<string>(() => {})
  } })
  return { wait, reached }
}

/** A shop whose model orders tea and then waits on a call that never returns. */
const makeShop = (script: Parameters<typeof scriptedModel>[0], options: { readonly toolConcurrency?: number } = {}) => {
  const orders: Array<string> = []
  const order = tool("order", { args: Schema.Struct({ item: Schema.String }), run: ({ item }) => {
    orders.push(item)
    return `ordered ${item}`
  } })
  const { wait, reached } = hanging()
  const model = scriptedModel(script)
  const shop = agent("shop").model(model).tools({ order, wait }).budget({ toolConcurrency: options.toolConcurrency ?? 1 })
  return { shop, model, orders, reached }
}
const orderThenWait = toolCalls([{ id: "o1", name: "order", arguments: { item: "tea" } }, { id: "w1", name: "wait", arguments: {} }])

/** An in-memory store whose `append` waits for `open()`; `appending` settles when one is called. */
const gatedStore = () => {
  const inner = inMemorySessionStore()
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => (open = resolve))
  let started: () => void = () => {}
  const appending = new Promise<void>((resolve) => (started = resolve))
  const store: SessionStore = {
    ...inner,
    append: (id, messages) => Effect.sync(started).pipe(Effect.andThen(Effect.promise(() => gate)), Effect.andThen(inner.append(id, messages)))
  }
  return { store, inner, open, appending }
}

/** Settles with "hung" when `promise` takes longer than a second. */
const withinASecond = <A>(promise: Promise<A>) =>
  Promise.race([promise.then(() => "returned" as const), new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 1000))])

const ways: ReadonlyArray<readonly [string, (send: Effect.Effect<unknown, unknown>, reached: Promise<void>) => Promise<void>]> = [
  ["Fiber.interrupt", async (send, reached) => {
    const fiber = Effect.runFork(send)
    await reached
    await Effect.runPromise(Fiber.interrupt(fiber))
  }],
  ["Effect.timeout around the send", async (send) => {
    expect(failureOf(await runExit(Effect.timeout(send, "300 millis")))).toMatchObject({ _tag: "TimeoutError" })
  }],
  ["the scope it was forked in closing", async (send, reached) => {
    await Effect.runPromise(Effect.scoped(Effect.andThen(Effect.forkScoped(send), Effect.promise(() => reached))))
  }]
]

/** A bank whose model asks for a transfer (needs approval), then for a wait that never ends, in session `id`. */
const transferThenWait = (id: string) => {
  const { wait, reached } = hanging()
  const model = scriptedModel([
    toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]),
    toolCalls([{ id: "w1", name: "wait", arguments: {} }])
  ])
  const { tools, executed } = makeBank(model)
  const store = inMemorySessionStore()
  const chat = session(agent("bank").model(model).tools({ transfer: tools.transfer, wait }), id, { store })
  return { chat, store, executed, reached }
}

describe("a send interrupted after a call ran", () => {
  it.each(ways)("(%s) records the call with its result and the running one as interrupted; the next send shows both", async (_, interrupt) => {
    const { shop, model, orders, reached } = makeShop([orderThenWait, text("Your tea is ordered.")])
    const store = inMemorySessionStore()
    const chat = session(shop, "s-interrupted", { store })
    await interrupt(chat.sendEffect("a tea please"), reached)
    const stored = await load(store, "s-interrupted")
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool"])
    expect(stored[1]).toMatchObject({ toolCalls: [{ id: "o1" }, { id: "w1" }] })
    expect(results(stored)).toEqual([["o1", "ordered tea"], ["w1", interruptedContent("wait")]])
    expect(unansweredCalls(stored)).toEqual([])
    expect(await chat.send("is my tea coming?")).toBe("Your tea is ordered.")
    expect(results(model.requests[1]!.messages)).toEqual(results(stored))
    expect(orders).toEqual(["tea"])
  })

  it("in a concurrent batch: the call that completed (heard from its event) with its result, the one still running as interrupted", async () => {
    const { shop, orders, reached } = makeShop([orderThenWait], { toolConcurrency: 2 })
    const store = inMemorySessionStore()
    await ways[0]![1](session(shop, "s-batch", { store }).sendEffect("a tea please"), reached)
    const stored = await load(store, "s-batch")
    expect(results(stored)).toEqual([["o1", "ordered tea"], ["w1", interruptedContent("wait")]])
    expect(unansweredCalls(stored)).toEqual([])
    expect(orders).toEqual(["tea"])
  })

  it("before any of its calls completed: records nothing, and the run it would have abandoned waits again", async () => {
    const { chat, store, executed, reached } = transferThenWait("s-nothing")
    expect((await chat.send("pay bob 500"))._tag).toBe("Suspended")
    await ways[0]![1](chat.sendEffect("never mind, wait"), reached)
    expect(await load(store, "s-nothing")).toEqual([])
    expect((await Effect.runPromise(chat.waiting()))?.pending.map((p) => p.id)).toEqual(["c1"])
    expect(executed).toEqual([])
  })
})

describe("a resume interrupted after the approved call ran", () => {
  it("records the approved call with its result and the next call as interrupted, and clears the waiting run: the transfer never runs twice", async () => {
    const { chat, store, executed, reached } = transferThenWait("s-resume")
    expect((await chat.send("pay bob 500"))._tag).toBe("Suspended")
    await ways[0]![1](chat.resumeEffect({ c1: Decision.approve }), reached)
    const stored = await load(store, "s-resume")
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"])
    expect(results(stored)).toEqual([["c1", "sent 500 to bob"], ["w1", interruptedContent("wait")]])
    expect(await Effect.runPromise(chat.waiting())).toBeUndefined()
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(executed.map((e) => e.tool)).toEqual(["transfer"])
  })
})

describe("a send interrupted while the store is slow", () => {
  it("returns at once; the write goes on, and the next turn waits for it and sees the interrupted turn", async () => {
    const { store, inner, open } = gatedStore()
    const { shop, model, orders, reached } = makeShop([orderThenWait, text("Your tea is ordered.")])
    const chat = session(shop, "s-slow", { store })
    const fiber = Effect.runFork(chat.sendEffect("a tea please"))
    await reached
    expect(await withinASecond(Effect.runPromise(Fiber.interrupt(fiber)))).toBe("returned")
    expect(await load(inner, "s-slow")).toEqual([])
    const next = chat.send("is my tea coming?")
    open()
    expect(await next).toBe("Your tea is ordered.")
    expect(results(model.requests[1]!.messages)).toEqual([["o1", "ordered tea"], ["w1", interruptedContent("wait")]])
    expect((await load(inner, "s-slow")).map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "user", "assistant"])
    expect(orders).toEqual(["tea"])
  })

  it("while a completed turn is written: the write is not cut short, and history() waits for it", async () => {
    const { store, inner, open, appending } = gatedStore()
    const { shop, orders } = makeShop([toolCalls([{ id: "o1", name: "order", arguments: { item: "tea" } }]), text("Your tea is ordered.")])
    const chat = session(shop, "s-writing", { store })
    const fiber = Effect.runFork(chat.sendEffect("a tea please"))
    await appending
    expect(await withinASecond(Effect.runPromise(Fiber.interrupt(fiber)))).toBe("returned")
    const history = Effect.runPromise(chat.history())
    open()
    expect((await history).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
    expect(await load(inner, "s-writing")).toEqual(await history)
    expect(orders).toEqual(["tea"])
  })
})
