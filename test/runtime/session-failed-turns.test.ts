/**
 * A session turn whose run fails after some of its calls ran: the calls that ran really happened, so
 * the session records them with their results (the answers the model got, a substitute's or an
 * escalation's included; paired, nothing dangling) and the error still reaches the caller; the next
 * send shows them to the model, which need not run them again. A resume that fails before anything
 * ran keeps its waiting run; one that fails after clears it (never twice).
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  agent,
  Decision,
  inMemorySessionStore,
  type LlmMessage,
  ModelError,
  Recovery,
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
const checkThenPayBob = toolCalls([{ id: "b1", name: "balance", arguments: {} }, { id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }])
const load = (store: SessionStore, id: string) => Effect.runPromise(store.load(id))
const transfers = (executed: ReadonlyArray<{ readonly tool: string }>) => executed.filter((e) => e.tool === "transfer").length

/** The tool results of `messages` as `[call id, content]`. */
const results = (messages: ReadonlyArray<LlmMessage>) => messages.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, m.content]] : []))

/**
 * The bank over `script` in session `id` of a store of its own (with `budget`, if given), after a send
 * of `prompt` that suspended on the transfer's approval.
 */
const waitingBank = async (
  script: Parameters<typeof scriptedModel>[0],
  id: string,
  options: { readonly prompt?: string; readonly budget?: { readonly maxTurns: number } } = {}
) => {
  const model = scriptedModel(script)
  const { bank, executed } = makeBank(model)
  const store = inMemorySessionStore()
  const chat = session(options.budget === undefined ? bank : bank.budget(options.budget), id, { store })
  expect((await chat.send(options.prompt ?? "pay bob 500"))._tag).toBe("Suspended")
  return { model, executed, chat, saved: () => load(store, id) }
}

describe("a resume whose run fails after the approved call ran", () => {
  it("records the approved call and its result, clears the waiting run, and the next send shows them; the tool ran once", async () => {
    const { model, executed, chat, saved } = await waitingBank([payBob, overloaded(), text("Yes: 500 went to bob.")], "s-model")
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "ModelError", reason: "overloaded" })
    expect(transfers(executed)).toBe(1)
    const stored = await saved()
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
    const { executed, chat, saved } = await waitingBank(
      [toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }, { id: "x1", name: "launder", arguments: {} }])],
      "s-later"
    )
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "ToolNotAllowed", tool: "launder" })
    expect(transfers(executed)).toBe(1)
    const stored = await saved()
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool"])
    expect(stored[1]).toMatchObject({ toolCalls: [{ id: "c1" }] })
    expect(results(stored)).toEqual([["c1", "sent 500 to bob"]])
  })

  it("a budget exceeded after the approved call (its error carries the transcript) records the call, and what ran before the suspension", async () => {
    const { executed, chat, saved } = await waitingBank([checkThenPayBob], "s-budget", { prompt: "check, then pay bob 500", budget: { maxTurns: 1 } })
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "BudgetExceeded", reason: "turns" })
    expect(executed.map((e) => e.tool)).toEqual(["balance", "transfer"])
    const stored = await saved()
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
    const { executed, chat, saved } = await waitingBank([payBob, text("sent")], "s-ledger")
    let down = true
    const ledger: ResumeLedgerStore = {
      consume: (key) => (down ? Effect.fail(new ResumeLedgerFailed({ key, reason: "connection refused" })) : Effect.succeed(true))
    }
    const resume = () => runExit(chat.resumeEffect({ c1: Decision.approve }).pipe(Effect.provideService(ResumeLedger, ledger)))
    expect(failureOf(await resume())).toMatchObject({ _tag: "ResumeLedgerFailed" })
    expect(transfers(executed)).toBe(0)
    expect(await saved()).toEqual([])
    expect((await Effect.runPromise(chat.waiting()))?.pending.map((p) => p.id)).toEqual(["c1"])
    down = false
    expect(await resume()).toMatchObject({ _tag: "Success", value: { _tag: "Completed", output: "sent" } })
    expect(transfers(executed)).toBe(1)
    expect((await saved()).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
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
    const { model, executed, chat, saved } = await waitingBank([checkThenPayBob, text("You have 1000.")], "s-abandon", { prompt: "check, then pay bob 500" })
    expect(await chat.send("never mind the transfer")).toEqual({ _tag: "Completed", output: "You have 1000." })
    const stored = await saved()
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "user", "assistant"])
    expect(stored[1]).toMatchObject({ toolCalls: [{ id: "b1" }] })
    expect(results(stored)).toEqual([["b1", "1000"]])
    expect(model.requests[1]!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"])
    expect(failureOf(await runExit(chat.resumeEffect({ c1: Decision.approve })))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  })
})

describe("a send whose run a later call fails, after calls a substitute or an escalation answered", () => {
  /** A desk whose rates service is down (a substitute answers), whose card is declined (escalated) and whose shipping fails the run. */
  const makeDesk = (model: ReturnType<typeof scriptedModel>, toolConcurrency = 1) => {
    const ran: Array<string> = []
    const rate = tool("rate", { args: Schema.Struct({}), run: () => {
      ran.push("rate")
      throw new Error("rates service down")
    } })
    const charge = tool("charge", { args: Schema.Struct({ amount: Schema.Finite }), run: () => {
      ran.push("charge")
      throw new Error("card declined")
    } })
    const ship = tool("ship", { args: Schema.Struct({}), run: async () => {
      ran.push("ship")
      // After its siblings (run at the same time when the batch is concurrent) got their answers.
      await new Promise((resolve) => setTimeout(resolve, 10))
      throw new Error("no courier")
    } })
    const desk = agent("desk").model(model).tools({ rate, charge, ship }).budget({ toolConcurrency })
      .recoverTool("rate", { executionError: () => Recovery.substitute({ eurUsd: 1.1 }) })
      .recoverTool("charge", { executionError: () => Recovery.escalate("card declined", "HIGH") })
      .recoverTool("ship", { executionError: () => Recovery.fail })
    return { desk, ran }
  }
  const order = toolCalls([
    { id: "r1", name: "rate", arguments: {} },
    { id: "k1", name: "charge", arguments: { amount: 20 } },
    { id: "s1", name: "ship", arguments: {} }
  ])

  it("records those calls with the answers the model got (the substitute, the escalation), and the next send shows them", async () => {
    const model = scriptedModel([order, text("The card was declined; nothing shipped.")])
    const { desk, ran } = makeDesk(model)
    const store = inMemorySessionStore()
    const chat = session(desk, "s-substitute", { store })
    expect(failureOf(await runExit(chat.sendEffect("order it")))).toMatchObject({ _tag: "ToolFailed", tool: "ship" })
    const stored = await load(store, "s-substitute")
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool"])
    expect(stored[1]).toMatchObject({ toolCalls: [{ id: "r1" }, { id: "k1" }] })
    expect(results(stored)).toEqual([
      ["r1", JSON.stringify({ eurUsd: 1.1 })],
      ["k1", JSON.stringify({ escalated: true, tool: "charge", severity: "HIGH", reason: "card declined" })]
    ])
    expect(await chat.send("did it go through?")).toBe("The card was declined; nothing shipped.")
    expect(results(model.requests[1]!.messages)).toEqual(results(stored))
    expect(ran).toEqual(["rate", "charge", "ship"])
  })

  it("in a concurrent batch (whose results are appended when all are done), records them with the failure they answered", async () => {
    const { desk, ran } = makeDesk(scriptedModel([order]), 3)
    const store = inMemorySessionStore()
    expect(failureOf(await runExit(session(desk, "s-concurrent", { store }).sendEffect("order it")))).toMatchObject({ _tag: "ToolFailed", tool: "ship" })
    const stored = await load(store, "s-concurrent")
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool"])
    expect(unansweredCalls(stored)).toEqual([])
    expect(results(stored)).toEqual([
      ["r1", expect.stringMatching(/"rate" failed: .*rates service down/)],
      ["k1", expect.stringMatching(/"charge" failed: .*card declined/)]
    ])
    expect(ran).toEqual(["rate", "charge", "ship"])
  })
})
