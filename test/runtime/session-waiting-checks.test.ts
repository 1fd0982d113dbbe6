/**
 * A session's waiting run as its store gives it back is checked before it is continued (`resume`) or
 * abandoned (`send`): an edited or corrupted one (its `historyLength` above all) fails the turn with
 * `SessionStoreFailed` naming what is wrong, nothing runs, and the store is left as it was. Unchecked,
 * an edited length recorded the conversation twice, or lost the user's message and left a result
 * without its call (found by the outside red team).
 */
import { fc, test as propTest } from "@fast-check/vitest"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, type LlmMessage, session, SessionStoreFailed, type SessionStore, text, tool, toolCalls, type WaitingRun } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf } from "../fixtures.ts"

/** A store keeping the waiting run, which `edit` changes as it is written (an edited row). */
const editingStore = (edit: (run: Record<string, unknown>) => unknown) => {
  const messages = new Map<string, ReadonlyArray<LlmMessage>>()
  let waiting: unknown
  const store: SessionStore = {
    load: (id) => Effect.sync(() => structuredClone(messages.get(id) ?? [])),
    append: (id, added) => Effect.sync(() => void messages.set(id, [...(messages.get(id) ?? []), ...structuredClone(added)])),
    waiting: () => Effect.sync(() => waiting as WaitingRun | undefined),
    setWaiting: (_, run) => Effect.sync(() => void (waiting = run === undefined ? undefined : edit(JSON.parse(JSON.stringify(run))))),
    takeWaiting: () =>
      Effect.sync(() => {
        const run = waiting
        waiting = undefined
        return run as WaitingRun | undefined
      })
  }
  return { store, stored: (id: string) => messages.get(id) ?? [], waiting: () => waiting }
}

/** Two exchanges, then a transfer waiting for approval, in a session on `store`. */
const waitingTransfer = async (store: SessionStore) => {
  const sent: Array<string> = []
  const transfer = tool("transfer", {
    args: Schema.Struct({ to: Schema.String }),
    needsApproval: true,
    run: ({ to }) => {
      sent.push(to)
      return `sent to ${to}`
    }
  })
  const model = scriptedModel([text("hello"), text("hi again"), toolCalls([{ id: "t1", name: "transfer", arguments: { to: "bob" } }]), text("paid"), text("next")])
  const chat = session(agent("w").model(model).tools({ transfer }), "s", { store })
  await chat.send("a")
  await chat.send("b")
  await chat.send("pay bob")
  return { chat, sent, model }
}

const roles = (messages: ReadonlyArray<LlmMessage>) => messages.map((m) => `${m.role}:${m.content}`)
const before = ["user:a", "assistant:hello", "user:b", "assistant:hi again"]

describe("a session's stored waiting run", () => {
  it("honest, resumes and records the turn once", async () => {
    const { store, stored } = editingStore((run) => run)
    const { chat, sent } = await waitingTransfer(store)
    expect(await chat.resume({ t1: Decision.approve })).toEqual({ _tag: "Completed", output: "paid" })
    expect(sent).toEqual(["bob"])
    expect(roles(stored("s"))).toEqual([...before, "user:pay bob", "assistant:", "tool:sent to bob", "assistant:paid"])
  })

  const edits: ReadonlyArray<readonly [string, (run: Record<string, unknown>) => unknown, string]> = [
    ["historyLength 0 (the history stored twice)", (run) => ({ ...run, historyLength: 0 }), "historyLength"],
    ["historyLength -3 (an orphan result, the user's message lost)", (run) => ({ ...run, historyLength: -3 }), "historyLength"],
    ["historyLength 1e9 (nothing recorded)", (run) => ({ ...run, historyLength: 1e9 }), "historyLength"],
    ["historyLength \"2\"", (run) => ({ ...run, historyLength: "2" }), "historyLength"],
    ["historyLength 1.5", (run) => ({ ...run, historyLength: 1.5 }), "historyLength"],
    ["runId of another run", (run) => ({ ...run, runId: "other" }), "runId"],
    ["pending not a list", (run) => ({ ...run, pending: "t1" }), "pending"],
    ["not an object", () => "a row", "Expected"]
  ]

  for (const [name, edit, field] of edits) {
    it(`edited (${name}): resume fails with SessionStoreFailed naming it; nothing runs, the store is as it was`, async () => {
      const { store, stored, waiting } = editingStore(edit)
      const { chat, sent } = await waitingTransfer(store)
      const kept = waiting()
      const error = failureOf(await Effect.runPromiseExit(chat.resumeEffect({ t1: Decision.approve })))
      expect(error).toBeInstanceOf(SessionStoreFailed)
      expect((error as SessionStoreFailed).operation).toBe("load")
      expect((error as SessionStoreFailed).reason).toContain(field)
      expect(sent).toEqual([])
      expect(roles(stored("s"))).toEqual(before)
      expect(waiting()).toEqual(kept)
    })

    it(`edited (${name}): a send that would abandon it fails the same way; the model is not called`, async () => {
      const { store, stored, waiting } = editingStore(edit)
      const { chat, model } = await waitingTransfer(store)
      const kept = waiting()
      const calls = model.requests.length
      const error = failureOf(await Effect.runPromiseExit(chat.sendEffect("never mind")))
      expect(error).toBeInstanceOf(SessionStoreFailed)
      expect(model.requests.length).toBe(calls)
      expect(roles(stored("s"))).toEqual(before)
      expect(waiting()).toEqual(kept)
      expect(failureOf(await Effect.runPromiseExit(chat.waiting()))).toBeInstanceOf(SessionStoreFailed)
    })
  }

  propTest.prop([fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null), fc.anything())], { numRuns: 40 })(
    "any historyLength but the run's own is refused: nothing runs, nothing is recorded",
    async (historyLength) => {
      fc.pre(historyLength !== 4)
      const { store, stored } = editingStore((run) => ({ ...run, historyLength }))
      const { chat, sent } = await waitingTransfer(store)
      expect(failureOf(await Effect.runPromiseExit(chat.resumeEffect({ t1: Decision.approve })))).toBeInstanceOf(SessionStoreFailed)
      expect(sent).toEqual([])
      expect(roles(stored("s"))).toEqual(before)
    }
  )
})
