/**
 * A session turn that ran but whose store write failed: a write that fails briefly is tried again (the
 * turn is recorded once); one that keeps failing ends the send with `SessionStoreFailed` carrying what
 * the turn gave and the messages it could not save, so the caller need not send it again (its tools
 * ran once).
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, inMemorySessionStore, session, SessionStoreFailed, type SessionStore, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf } from "../fixtures.ts"

/** An in-memory store whose `append` fails its first `failures` calls. */
const flakyStore = (failures: number) => {
  const inner = inMemorySessionStore()
  let appends = 0
  const store: SessionStore = {
    ...inner,
    append: (id, messages) =>
      Effect.suspend(() => ++appends <= failures ? Effect.fail(new SessionStoreFailed({ session: id, operation: "append", reason: "database unavailable" })) : inner.append(id, messages))
  }
  return { store, inner, appends: () => appends }
}

const makeShop = () => {
  const orders: Array<string> = []
  const order = tool("order", { args: Schema.Struct({ item: Schema.String }), run: ({ item }) => {
    orders.push(item)
    return `ordered ${item}`
  } })
  const model = scriptedModel((request) =>
    request.messages.at(-1)?.role === "tool" ? text("Your tea is on its way.") : toolCalls([{ id: `o${request.messages.length}`, name: "order", arguments: { item: "tea" } }])
  )
  return { shop: agent("shop").model(model).tools({ order }), orders }
}

describe("a session turn whose store write fails", () => {
  it("is recorded once when the store comes back within the retries", async () => {
    const { store, inner, appends } = flakyStore(2)
    const { shop, orders } = makeShop()
    expect(await session(shop, "s1", { store }).send("a tea please")).toBe("Your tea is on its way.")
    expect(appends()).toBe(3)
    expect(orders).toEqual(["tea"])
    const history = await Effect.runPromise(inner.load("s1"))
    expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
  })

  it("fails with SessionStoreFailed carrying the turn's result and its unsaved messages; the tool ran once", async () => {
    const { store, inner } = flakyStore(Number.POSITIVE_INFINITY)
    const { shop, orders } = makeShop()
    const error = failureOf(await Effect.runPromiseExit(session(shop, "s2", { store }).sendEffect("a tea please")))
    expect(error).toBeInstanceOf(SessionStoreFailed)
    const turn = (error as SessionStoreFailed).turn
    expect(turn?.result).toBe("Your tea is on its way.")
    expect(turn?.unsaved.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
    expect(orders).toEqual(["tea"])
    expect(await Effect.runPromise(inner.load("s2"))).toEqual([])
  })
})
