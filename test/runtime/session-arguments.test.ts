/**
 * `session(agent, id, options)` from plain JavaScript: what it is handed is checked when the session is
 * made, as every builder's options are (`AgentConfigError`, with "did you mean" for a near miss).
 * Unchecked, a misspelt `stor` kept the conversation in memory, `{ lastTurns: 0 }` dropped all of it,
 * and `store: {}` or `window: "all"` died on the first send (found by the outside red team).
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { agent, AgentConfigError, inMemorySessionStore, session, text } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const chatAgent = () => agent("c").model(scriptedModel((request) => text(`seen ${request.messages.length} messages`)))

/** `session(...)` with untyped arguments, as plain JavaScript calls it. */
const make = (id: unknown, options?: unknown) => () => session(chatAgent(), id as string, options as never)

const refusal = (f: () => unknown): string => {
  try {
    f()
  } catch (error) {
    expect(error).toBeInstanceOf(AgentConfigError)
    return (error as AgentConfigError).message
  }
  throw new Error("expected an AgentConfigError")
}

describe("session(agent, id, options)", () => {
  it("refuses an unknown option, with the one meant", () => {
    expect(refusal(make("x", { stor: inMemorySessionStore() }))).toContain("unknown option `stor` of session(agent, id, options) (did you mean `store`?)")
    expect(refusal(make("x", { windw: { lastTurns: 2 } }))).toContain("did you mean `window`?")
    expect(refusal(make("x", "store"))).toContain("takes an object of options, got a string")
  })

  it("refuses a window that is not one, or that would keep nothing", () => {
    expect(refusal(make("x", { window: { lastTurn: 1 } }))).toContain("unknown key `lastTurn` (did you mean `lastTurns`?)")
    for (const lastTurns of [0, -1, 1.5, Number.NaN, "3"]) expect(refusal(make("x", { window: { lastTurns } }))).toContain("`lastTurns` must be a whole number of turns, at least 1")
    for (const maxTokens of [0, -5, Number.NaN, "100"]) expect(refusal(make("x", { window: { maxTokens } }))).toContain("`maxTokens` must be a number above 0")
    expect(refusal(make("x", { window: "all" }))).toContain("`window`: a window is { lastTurns: n }")
    expect(refusal(make("x", { window: {} }))).toContain("no key")
    expect(refusal(make("x", { window: { lastTurns: 2, maxTokens: 100 } }))).toContain("both keys")
  })

  it("refuses a store without the methods of a SessionStore", () => {
    expect(refusal(make("x", { store: {} }))).toContain("load and append are not a function")
    expect(refusal(make("x", { store: null }))).toContain("takes a SessionStore")
    const { load, append, setWaiting } = inMemorySessionStore()
    expect(refusal(make("x", { store: { load } }))).toContain("append is not a function")
    expect(refusal(make("x", { store: { load, append, setWaiting } }))).toContain("has setWaiting but not waiting, takeWaiting")
    expect(refusal(make("x", { store: { load, append, waiting: 1, setWaiting, takeWaiting: setWaiting } }))).toContain("waiting that is not a function")
  })

  it("refuses an id that is not a non-empty string", () => {
    expect(refusal(make(undefined))).toContain("takes the session's id as a non-empty string, got an undefined")
    expect(refusal(make({ user: 1 }))).toContain("got an object")
    expect(refusal(make(""))).toContain("got an empty string")
  })

  it("takes what is right, and the window it was given is the one a run sees", async () => {
    const { load, append } = inMemorySessionStore()
    const chat = session(chatAgent(), "x", { store: { load, append }, window: { lastTurns: 1 } })
    expect(await chat.send("one")).toBe("seen 2 messages")
    expect(await chat.send("two")).toBe("seen 4 messages")
    expect(await chat.send("three")).toBe("seen 4 messages")
    expect(await Effect.runPromise(session(chatAgent(), "y", { window: { maxTokens: 1_000 } }).sendEffect("hi"))).toBe("seen 2 messages")
    expect(await session(chatAgent(), "z").send("hi")).toBe("seen 2 messages")
  })
})
