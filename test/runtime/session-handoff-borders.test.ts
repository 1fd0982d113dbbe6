/**
 * Sessions and handoffs at their borders: what a session records when its agent hands the conversation
 * to another (fresh, and suspended then resumed), what a failed send leaves of a waiting run, and what
 * a run sees of a stored history that is not a sound conversation.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, inMemorySessionStore, type LlmMessage, session, type SessionStore, SessionStoreFailed, skill, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank } from "../approvals/bank.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { unansweredCalls } from "../hardening/transcript-check.ts"

const refund = tool("refund", { args: Schema.Struct({ order: Schema.String }), run: ({ order }) => `refunded ${order}` })

describe("a handoff inside a session", () => {
  it("records the target's part of the turn (its calls and its answer), so the next turn sees the answer", async () => {
    const billingModel = scriptedModel([toolCalls([{ id: "r1", name: "refund", arguments: { order: "A-1" } }]), text("Order A-1 was refunded.")])
    const billing = agent("billing").model(billingModel).prompt("You handle billing.").tools({ refund })
    const triageModel = scriptedModel([toolCalls([{ id: "h1", name: "handoff_to_billing", arguments: {} }]), text("You are welcome.")])
    const triage = agent("triage").model(triageModel).skills(() => [skill("triage").handoffs(billing)])
    const store = inMemorySessionStore()
    const chat = session(triage, "s-handoff", { store })
    expect(await chat.send("refund A-1")).toBe("Order A-1 was refunded.")
    const stored = await Effect.runPromise(store.load("s-handoff"))
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"])
    expect(stored.at(-1)).toEqual({ role: "assistant", content: "Order A-1 was refunded." })
    expect(stored[4]).toMatchObject({ role: "tool", toolCallId: "r1", content: "refunded A-1" })
    expect(unansweredCalls(stored)).toEqual([])
    // The next turn starts at the session's agent again, on the whole exchange.
    expect(await chat.send("thanks")).toBe("You are welcome.")
    const seen = triageModel.requests[1]!.messages
    expect(seen.map((m) => m.content).slice(-2)).toEqual(["Order A-1 was refunded.", "thanks"])
  })

  it("a deterministic target's answer is recorded after the handoff call", async () => {
    const echo = agent("echo").skills(() => [skill("echo").implementedBy((s: string) => `echo: ${s}`)])
    const front = agent("front").model(scriptedModel([toolCalls([{ id: "h1", name: "handoff_to_echo", arguments: {} }])]))
      .skills(() => [skill("front").handoffs(echo)])
    const store = inMemorySessionStore()
    expect(await session(front, "s-echo", { store }).send("hi")).toBe("echo: hi")
    const stored = await Effect.runPromise(store.load("s-echo"))
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
    expect(stored.at(-1)).toEqual({ role: "assistant", content: "echo: hi" })
  })

  it("a target that suspends for approval: the resumed turn records the target's calls and answer", async () => {
    const { bank, executed } = makeBank(scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("sent 500 to bob")]))
    const front = agent("front").model(scriptedModel([toolCalls([{ id: "h1", name: "handoff_to_bank", arguments: {} }])]))
      .skills(() => [skill("front").handoffs(bank)])
    const store = inMemorySessionStore()
    const chat = session(front, "s-handoff-approval", { store })
    const first = await chat.send("pay bob 500")
    expect(first._tag).toBe("Suspended")
    expect(await Effect.runPromise(store.load("s-handoff-approval"))).toEqual([])
    expect(await chat.resume({ c1: Decision.approve })).toEqual({ _tag: "Completed", output: "sent 500 to bob" })
    expect(executed.filter((e) => e.tool === "transfer")).toHaveLength(1)
    const stored = await Effect.runPromise(store.load("s-handoff-approval"))
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"])
    expect(stored.at(-1)).toEqual({ role: "assistant", content: "sent 500 to bob" })
    expect(unansweredCalls(stored)).toEqual([])
  })
})

describe("a send that fails", () => {
  it("leaves the waiting run it would have abandoned: a store that fails to load loses no pending approval", async () => {
    const { bank, executed } = makeBank(scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("sent")]))
    const inner = inMemorySessionStore()
    let down = false
    const store: SessionStore = {
      ...inner,
      load: (id) => (down ? Effect.fail(new SessionStoreFailed({ session: id, operation: "load", reason: "connection refused" })) : inner.load(id))
    }
    const chat = session(bank, "s-down", { store })
    expect((await chat.send("pay bob 500"))._tag).toBe("Suspended")
    down = true
    expect(failureOf(await runExit(chat.sendEffect("never mind")))).toMatchObject({ _tag: "SessionStoreFailed", operation: "load" })
    down = false
    expect((await Effect.runPromise(chat.waiting()))?.pending.map((p) => p.id)).toEqual(["c1"])
    expect(await chat.resume({ c1: Decision.approve })).toEqual({ _tag: "Completed", output: "sent" })
    expect(executed.filter((e) => e.tool === "transfer")).toHaveLength(1)
  })

  it("a send whose model fails leaves the session as it was (nothing recorded, the waiting run kept)", async () => {
    const { bank } = makeBank(scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }])]))
    const store = inMemorySessionStore()
    const chat = session(bank, "s-model-down", { store })
    expect((await chat.send("pay bob 500"))._tag).toBe("Suspended")
    // The script is exhausted: the new turn's model call fails.
    expect((await runExit(chat.sendEffect("never mind")))._tag).toBe("Failure")
    expect(await Effect.runPromise(store.load("s-model-down"))).toEqual([])
    expect((await Effect.runPromise(chat.waiting()))?.pending.map((p) => p.id)).toEqual(["c1"])
  })
})

describe("a stored history that is not a sound conversation", () => {
  const seeded = async (messages: ReadonlyArray<unknown>) => {
    const store = inMemorySessionStore()
    await Effect.runPromise(store.append("h", messages as ReadonlyArray<LlmMessage>))
    return store
  }

  it("a stored value that is not a message fails the send with SessionStoreFailed, before any model call, under any window", async () => {
    for (const window of [undefined, { maxTokens: 1000 }, { lastTurns: 3 }]) {
      const store = await seeded([{ role: "user", content: "hi" }, { role: "developer", content: null }])
      const model = scriptedModel([text("ok")])
      const failure = failureOf(await runExit(session(agent("a").model(model), "h", { store, ...(window === undefined ? {} : { window }) }).sendEffect("again")))
      expect(failure).toMatchObject({ _tag: "SessionStoreFailed", session: "h", operation: "load" })
      expect((failure as SessionStoreFailed).reason).toMatch(/message 1/)
      expect(model.requests).toHaveLength(0)
    }
  })

  it("a run never sees a tool result without its call, nor a call without its result", async () => {
    const store = await seeded([
      { role: "tool", toolCallId: "lost", name: "add", content: "orphan" },
      { role: "user", content: "1 + 2?" },
      { role: "assistant", content: "let me add", toolCalls: [{ id: "t1", name: "add", arguments: "{}" }, { id: "t2", name: "add", arguments: "{}" }] },
      { role: "tool", toolCallId: "t1", name: "add", content: "3" },
      { role: "tool", toolCallId: "t1", name: "add", content: "3 again" },
      { role: "assistant", content: "", toolCalls: [{ id: "t3", name: "add", arguments: "{}" }] },
      { role: "assistant", content: "3" }
    ])
    const model = scriptedModel([text("ok")])
    expect(await session(agent("a").model(model), "h", { store }).send("thanks")).toBe("ok")
    const seen = model.requests[0]!.messages
    expect(unansweredCalls(seen)).toEqual([])
    expect(seen.filter((m) => m.role === "tool")).toEqual([{ role: "tool", toolCallId: "t1", name: "add", content: "3" }])
    expect(seen.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"])
    expect(seen[2]).toEqual({ role: "assistant", content: "let me add", toolCalls: [{ id: "t1", name: "add", arguments: "{}" }] })
  })
})
