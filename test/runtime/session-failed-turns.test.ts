/**
 * A session turn whose run fails after some of its calls ran: the calls that ran really happened, so
 * the session records them with their results (paired, nothing dangling) and the error still reaches
 * the caller; the next send shows them to the model, which need not run them again. A resume that
 * fails before anything ran keeps its waiting run; one that fails after clears it (never twice).
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  agent,
  Decision,
  inMemorySessionStore,
  type LlmMessage,
  ModelError,
  ResumeLedger,
  ResumeLedgerFailed,
  type ResumeLedgerStore,
  session,
  type SessionStore,
  SessionStoreFailed,
  skill,
  text,
  tool,
  toolCalls
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank } from "../approvals/bank.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { unansweredCalls } from "../hardening/transcript-check.ts"

const overloaded = () => new ModelError({ provider: "scripted", reason: "overloaded", retryable: false })
const payBob = toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }])
const load = (store: SessionStore, id: string) => Effect.runPromise(store.load(id))
const transfers = (executed: ReadonlyArray<{ readonly tool: string }>) => executed.filter((e) => e.tool === "transfer").length

/** The tool results of `messages` as `[call id, content]`. */
const results = (messages: ReadonlyArray<LlmMessage>) => messages.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, m.content]] : []))

describe("a resume whose run fails after the approved call ran", () => {
  it("records the approved call and its result, clears the waiting run, and the next send shows them; the tool ran once", async () => {
    const model = scriptedModel([payBob, overloaded(), text("Yes: 500 went to bob.")])
    const { bank, executed } = makeBank(model)
    const store = inMemorySessionStore()
    const chat = session(bank, "s-model", { store })
    expect((await chat.send("pay bob 500"))._tag).toBe("Suspended")
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "ModelError", reason: "overloaded" })
    expect(transfers(executed)).toBe(1)
    const stored = await load(store, "s-model")
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool"])
    expect(stored[1]).toMatchObject({ role: "assistant", toolCalls: [{ id: "c1", name: "transfer" }] })
    expect(results(stored)).toEqual([["c1", "sent 500 to bob"]])
    expect(unansweredCalls(stored)).toEqual([])
    // The decisions were taken: nothing waits, and a second resume runs nothing.
    expect(await Effect.runPromise(chat.waiting())).toBeUndefined()
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(await chat.send("did it go through?")).toEqual({ _tag: "Completed", output: "Yes: 500 went to bob." })
    const seen = model.requests[2]!.messages
    expect(seen.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"])
    expect(results(seen)).toEqual([["c1", "sent 500 to bob"]])
    expect(transfers(executed)).toBe(1)
  })

  it("a later call of the turn that fails the run (one outside the allowlist) leaves the approved call recorded, the other left out", async () => {
    const model = scriptedModel([
      toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }, { id: "x1", name: "launder", arguments: {} }])
    ])
    const { bank, executed } = makeBank(model)
    const store = inMemorySessionStore()
    const chat = session(bank, "s-later", { store })
    expect((await chat.send("pay bob 500"))._tag).toBe("Suspended")
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "ToolNotAllowed", tool: "launder" })
    expect(transfers(executed)).toBe(1)
    const stored = await load(store, "s-later")
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool"])
    expect(stored[1]).toMatchObject({ toolCalls: [{ id: "c1" }] })
    expect(results(stored)).toEqual([["c1", "sent 500 to bob"]])
  })

  it("a budget exceeded after the approved call (its error carries the transcript) records the call, and what ran before the suspension", async () => {
    const model = scriptedModel([
      toolCalls([{ id: "b1", name: "balance", arguments: {} }, { id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }])
    ])
    const { bank, executed } = makeBank(model)
    const store = inMemorySessionStore()
    const chat = session(bank.budget({ maxTurns: 1 }), "s-budget", { store })
    expect((await chat.send("check, then pay bob 500"))._tag).toBe("Suspended")
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "BudgetExceeded", reason: "turns" })
    expect(executed.map((e) => e.tool)).toEqual(["balance", "transfer"])
    const stored = await load(store, "s-budget")
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool"])
    expect(results(stored)).toEqual([["b1", "1000"], ["c1", "sent 500 to bob"]])
    expect(unansweredCalls(stored)).toEqual([])
  })

  it("a handoff target that fails after its tool ran: the handoff and the target's call are recorded", async () => {
    const refunded: Array<string> = []
    const refund = tool("refund", { args: Schema.Struct({ order: Schema.String }), run: ({ order }) => {
      refunded.push(order)
      return `refunded ${order}`
    } })
    const billingModel = scriptedModel([toolCalls([{ id: "r1", name: "refund", arguments: { order: "A-1" } }]), overloaded()])
    const billing = agent("billing").model(billingModel).tools({ refund })
    const triageModel = scriptedModel([toolCalls([{ id: "h1", name: "handoff_to_billing", arguments: {} }]), text("It was refunded.")])
    const triage = agent("triage").model(triageModel).skills(() => [skill("triage").handoffs(billing)])
    const store = inMemorySessionStore()
    const chat = session(triage, "s-handoff", { store })
    expect(failureOf(await runExit(chat.sendEffect("refund A-1")))).toMatchObject({ _tag: "ModelError" })
    const stored = await load(store, "s-handoff")
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"])
    expect(results(stored).at(-1)).toEqual(["r1", "refunded A-1"])
    expect(unansweredCalls(stored)).toEqual([])
    expect(await chat.send("was it refunded?")).toEqual("It was refunded.")
    expect(results(triageModel.requests[1]!.messages).at(-1)).toEqual(["r1", "refunded A-1"])
    expect(refunded).toEqual(["A-1"])
  })
})

describe("a resume that fails before anything ran", () => {
  it("keeps the waiting run (the resume ledger was down): a retry runs the approved call once and records the exchange", async () => {
    const { bank, executed } = makeBank(scriptedModel([payBob, text("sent")]))
    const store = inMemorySessionStore()
    const chat = session(bank, "s-ledger", { store })
    let down = true
    const ledger: ResumeLedgerStore = {
      consume: (key) => (down ? Effect.fail(new ResumeLedgerFailed({ key, reason: "connection refused" })) : Effect.succeed(true))
    }
    const resume = () => runExit(chat.resumeEffect({ c1: Decision.approve }).pipe(Effect.provideService(ResumeLedger, ledger)))
    expect((await chat.send("pay bob 500"))._tag).toBe("Suspended")
    expect(failureOf(await resume())).toMatchObject({ _tag: "ResumeLedgerFailed" })
    expect(transfers(executed)).toBe(0)
    expect(await load(store, "s-ledger")).toEqual([])
    expect((await Effect.runPromise(chat.waiting()))?.pending.map((p) => p.id)).toEqual(["c1"])
    down = false
    expect(await resume()).toMatchObject({ _tag: "Success", value: { _tag: "Completed", output: "sent" } })
    expect(transfers(executed)).toBe(1)
    expect((await load(store, "s-ledger")).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
  })
})

describe("a send whose run fails after a call ran", () => {
  const makeShop = (model: ReturnType<typeof scriptedModel>) => {
    const orders: Array<string> = []
    const order = tool("order", { args: Schema.Struct({ item: Schema.String }), run: ({ item }) => {
      orders.push(item)
      return `ordered ${item}`
    } })
    return { shop: agent("shop").model(model).tools({ order }), orders }
  }

  it("records the call and its result, and the next send shows them: the model need not order again", async () => {
    const model = scriptedModel([toolCalls([{ id: "o1", name: "order", arguments: { item: "tea" } }]), overloaded(), text("Your tea is on its way.")])
    const { shop, orders } = makeShop(model)
    const store = inMemorySessionStore()
    const chat = session(shop, "s-send", { store })
    expect(failureOf(await runExit(chat.sendEffect("a tea please")))).toMatchObject({ _tag: "ModelError" })
    expect(results(await load(store, "s-send"))).toEqual([["o1", "ordered tea"]])
    expect(await chat.send("is my tea coming?")).toBe("Your tea is on its way.")
    expect(model.requests[2]!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"])
    expect(orders).toEqual(["tea"])
  })

  it("a store that keeps failing: SessionStoreFailed carries the run's error as the turn's result and the unsaved messages", async () => {
    const inner = inMemorySessionStore()
    const down = (id: string) => Effect.fail(new SessionStoreFailed({ session: id, operation: "append", reason: "database unavailable" }))
    const store: SessionStore = { ...inner, append: down }
    const { shop, orders } = makeShop(scriptedModel([toolCalls([{ id: "o1", name: "order", arguments: { item: "tea" } }]), overloaded()]))
    const error = failureOf(await runExit(session(shop, "s-down", { store }).sendEffect("a tea please")))
    expect(error).toMatchObject({ _tag: "SessionStoreFailed", operation: "append" })
    const turn = (error as SessionStoreFailed).turn
    expect(turn?.result).toMatchObject({ _tag: "ModelError", reason: "overloaded" })
    expect(turn?.unsaved.map((m) => m.role)).toEqual(["user", "assistant", "tool"])
    expect(orders).toEqual(["tea"])
    expect(await load(inner, "s-down")).toEqual([])
  })

  it("a send that abandons a waiting run records what of it ran before it suspended, paired, before its own turn", async () => {
    const model = scriptedModel([
      toolCalls([{ id: "b1", name: "balance", arguments: {} }, { id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]),
      text("You have 1000.")
    ])
    const { bank, executed } = makeBank(model)
    const store = inMemorySessionStore()
    const chat = session(bank, "s-abandon", { store })
    expect((await chat.send("check, then pay bob 500"))._tag).toBe("Suspended")
    expect(await chat.send("never mind the transfer")).toEqual({ _tag: "Completed", output: "You have 1000." })
    const stored = await load(store, "s-abandon")
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user", "assistant"])
    expect(stored[1]).toMatchObject({ toolCalls: [{ id: "b1" }] })
    expect(results(stored)).toEqual([["b1", "1000"]])
    expect(model.requests[1]!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"])
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  })
})
