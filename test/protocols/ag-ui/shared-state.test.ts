/**
 * AG-UI shared state (`agUiState`) across the wire: `@ag-ui/client`'s `HttpAgent` sends its state, the
 * run's tools read and change it as typed values, and the client's own state (built from our
 * `STATE_SNAPSHOT` and `STATE_DELTA` events by its own patch applier) ends equal to the run's. Also:
 * a state that does not decode is refused before anything runs, an invalid new value leaves the state
 * as it was, a change a patch cannot carry safely goes as a snapshot, the closing `MESSAGES_SNAPSHOT`
 * keeps the client's history, and the client's tools reach agents with skills.
 */
import { HttpAgent, type Message } from "@ag-ui/client"
import { Effect, Exit, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type ModelRequest, skill, text, tool, toolCalls } from "effect-agent-dsl"
import { AgUiStateInvalid, AgUiStateUnavailable, agUiState, chatStream, toAgUiEvents, type AgUiEvent } from "effect-agent-dsl/ag-ui"
import { scriptedModel } from "effect-agent-dsl/testing"
import { agUiHandler, threadStore } from "./fixture.ts"
import { runChecked as run, useLoopbackServers, user } from "./http-agent-client.ts"
import { wellFormedProblems } from "./well-formed.ts"

const start = useLoopbackServers()

const Recipe = Schema.Struct({
  title: Schema.String,
  servings: Schema.Int.check(Schema.isGreaterThan(0)),
  ingredients: Schema.Array(Schema.Struct({ name: Schema.String, grams: Schema.Finite }))
})
type Recipe = typeof Recipe.Type
const recipe = agUiState("recipe", Recipe, { initial: { title: "", servings: 1, ingredients: [] } })

const makeChef = () => {
  const requests: Array<ModelRequest> = []
  const seen: Array<Recipe> = []
  const addIngredient = tool("addIngredient", {
    description: "Add an ingredient to the recipe",
    args: Schema.Struct({ name: Schema.String, grams: Schema.Finite }),
    run: ({ name, grams }) =>
      Effect.gen(function*() {
        seen.push(yield* recipe.get)
        const next = yield* recipe.update((r) => ({ ...r, ingredients: [...r.ingredients, { name, grams }] }))
        return `${next.ingredients.length} ingredients`
      })
  })
  const scale = tool("scale", {
    description: "Set the servings",
    args: Schema.Struct({ servings: Schema.Finite }),
    run: ({ servings }) => recipe.update((r) => ({ ...r, servings })).pipe(Effect.as("scaled"), Effect.catchTag("AgUiStateInvalid", (e) => Effect.succeed(`refused: ${e.issues}`)))
  })
  const chef = agent("chef").prompt("You cook.").model(scriptedModel((request: ModelRequest) => {
    requests.push(request)
    const turn = requests.length
    if (turn === 1) {
      return toolCalls([
        { id: "c1", name: "addIngredient", arguments: { name: "flour", grams: 500 } },
        { id: "c2", name: "scale", arguments: { servings: 0 } }
      ], "Adding flour.")
    }
    if (turn === 2) return toolCalls([{ id: "c3", name: "addIngredient", arguments: { name: "eggs", grams: 120 } }, { id: "c4", name: "scale", arguments: { servings: 4 } }])
    return text("Your dough is ready.")
  }, { chunk: 4 })).tools({ addIngredient, scale })
  return { chef, requests, seen }
}

/** Applies the stream's state events the way a client does (`@ag-ui/client` uses fast-json-patch too). */
const applyState = async (events: ReadonlyArray<{ readonly type: string; readonly [k: string]: unknown }>, initial: unknown) => {
  const { default: jsonPatch } = await import("fast-json-patch")
  let state = initial
  for (const event of events) {
    if (event.type === "STATE_SNAPSHOT") state = structuredClone(event.snapshot)
    if (event.type === "STATE_DELTA") state = jsonPatch.applyPatch(state, structuredClone(event.delta) as never, true, false).newDocument
  }
  return state
}

describe("agUiState over @ag-ui/client's HttpAgent", () => {
  it("decodes the client's state, lets tools change it, and the client ends with the run's state", async () => {
    const { chef, seen } = makeChef()
    const initialState = { title: "Bread", servings: 2, ingredients: [{ name: "salt", grams: 10 }], extra: "dropped by the Schema" }
    const client = new HttpAgent({ url: await start(agUiHandler(chef, { state: recipe })), threadId: "t-bread", initialMessages: [user("u1", "Bread please")], initialState })
    const { events, types } = await run(client)
    expect(types.slice(0, 2)).toEqual(["RUN_STARTED", "STATE_SNAPSHOT"])
    expect(events[1]).toMatchObject({ snapshot: { title: "Bread", servings: 2, ingredients: [{ name: "salt", grams: 10 }] } })
    expect(events[1]).not.toHaveProperty("snapshot.extra")
    // The tool saw the typed state the client sent.
    expect(seen[0]).toEqual({ title: "Bread", servings: 2, ingredients: [{ name: "salt", grams: 10 }] })
    // Each tool's changes reach the client before its result.
    const deltas = events.flatMap((e, i) => (e.type === "STATE_DELTA" ? [i] : []))
    expect(deltas.length).toBeGreaterThanOrEqual(2)
    const firstResult = (types as Array<string>).indexOf("TOOL_CALL_RESULT")
    expect(deltas[0]).toBeLessThan(firstResult)
    expect(client.state).toEqual({ title: "Bread", servings: 4, ingredients: [{ name: "salt", grams: 10 }, { name: "flour", grams: 500 }, { name: "eggs", grams: 120 }] })
    // servings 0 did not encode (Int > 0): the tool got AgUiStateInvalid and the state stayed.
    const refused = events.find((e) => (e.type as string) === "TOOL_CALL_RESULT" && String((e as { content?: unknown }).content).startsWith("refused"))
    expect(refused).toBeDefined()
    expect(wellFormedProblems(events as never)).toEqual([])
  })

  it("starts from the initial state when the client sends none ({}), and refuses a state that does not decode (400, nothing runs)", async () => {
    const { chef, requests } = makeChef()
    const url = await start(agUiHandler(chef, { state: recipe }))
    const fresh = new HttpAgent({ url, threadId: "t-new", initialMessages: [user("u1", "Cook")] })
    const { events } = await run(fresh)
    expect(events[1]).toMatchObject({ type: "STATE_SNAPSHOT", snapshot: { title: "", servings: 1, ingredients: [] } })
    expect(fresh.state).toMatchObject({ servings: 4, ingredients: [{ name: "flour" }, { name: "eggs" }] })
    const before = requests.length
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ threadId: "t", runId: "r", messages: [{ id: "u", role: "user", content: "hi" }], state: { title: 3, servings: "many" } })
    })
    expect(response.status).toBe(400)
    const body = await response.json() as { error: { _tag: string; message: string } }
    expect(body.error._tag).toBe("AgUiInputInvalid")
    expect(body.error.message).toContain('the state does not decode as "recipe"')
    expect(requests.length).toBe(before)
  })

  it("ends the run with a MESSAGES_SNAPSHOT that keeps the client's messages and adds the run's", async () => {
    const { chef } = makeChef()
    const history: Array<Message> = [user("u0", "Hello"), { id: "a0", role: "assistant", content: "Hi! What shall we cook?" }, user("u1", "Bread")]
    const client = new HttpAgent({ url: await start(agUiHandler(chef, { state: recipe })), threadId: "t-msg", initialMessages: history })
    const { events, types } = await run(client)
    expect(types.at(-2)).toBe("MESSAGES_SNAPSHOT")
    const snapshot = (events.at(-2) as unknown as { messages: Array<{ id: string; role: string }> }).messages
    expect(snapshot.slice(0, 3).map((m) => m.id)).toEqual(["u0", "a0", "u1"])
    expect(snapshot.filter((m) => m.role === "tool")).toHaveLength(4)
    // The client's history after the snapshot is what it built from the stream.
    expect(client.messages.map((m) => m.id)).toEqual(snapshot.map((m) => m.id))
    expect(client.messages.at(-1)).toMatchObject({ role: "assistant", content: "Your dough is ready." })
  })

  it("lets the model write the state with setTool, validated by the Schema", async () => {
    const setRecipe = recipe.setTool("set_recipe")
    let turn = 0
    const writer = agent("writer").prompt("p").model(scriptedModel(() => {
      turn++
      if (turn === 1) return toolCalls([{ id: "w1", name: "set_recipe", arguments: { state: { title: "Soup", servings: -1, ingredients: [] } } }])
      if (turn === 2) return toolCalls([{ id: "w2", name: "set_recipe", arguments: { state: { title: "Soup", servings: 3, ingredients: [{ name: "leek", grams: 200 }] } } }])
      return text("Done.")
    })).tools({ set_recipe: setRecipe })
    const client = new HttpAgent({ url: await start(agUiHandler(writer, { state: recipe })), threadId: "t-set", initialMessages: [user("u1", "Soup")] })
    const { events } = await run(client)
    const results = events.filter((e) => e.type === "TOOL_CALL_RESULT").map((e) => String((e as { content?: unknown }).content))
    expect(results[0]).toMatch(/^Invalid arguments/)
    expect(results[1]).toBe("State updated.")
    expect(client.state).toEqual({ title: "Soup", servings: 3, ingredients: [{ name: "leek", grams: 200 }] })
  })
})

describe("agUiState in a run streamed by hand", () => {
  const Doc = Schema.Record(Schema.String, Schema.Unknown)
  const doc = agUiState("doc", Doc)

  const stateRun = (values: ReadonlyArray<Record<string, unknown>>) => {
    let turn = 0
    const put = tool("put", { args: Schema.Struct({ i: Schema.Int }), run: ({ i }) => Effect.as(doc.set(values[i]!), "ok") })
    return agent("doc").prompt("p").model(scriptedModel(() => (turn < values.length ? toolCalls([{ id: `p${turn}`, name: "put", arguments: { i: turn++ } }]) : text("done")))).tools({ put })
  }

  it("sends a change a patch applier would refuse (a __proto__ key) as a STATE_SNAPSHOT", async () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "a/b": 1, "~": 2}') as Record<string, unknown>
    const cell = doc.cell({ ok: 1 })
    const events = [...await Effect.runPromise(Stream.runCollect(toAgUiEvents(cell.provideStream(chatStream(stateRun([{ ok: 2, "a/b": 0 }, hostile]), [], "go")), { state: cell })))] as Array<AgUiEvent>
    const kinds = events.filter((e) => e.type === "STATE_SNAPSHOT" || e.type === "STATE_DELTA").map((e) => e.type)
    expect(kinds).toEqual(["STATE_SNAPSHOT", "STATE_DELTA", "STATE_SNAPSHOT"])
    expect(events.find((e) => e.type === "STATE_DELTA")).toMatchObject({ delta: expect.arrayContaining([{ op: "add", path: "/a~1b", value: 0 }]) })
    expect(await applyState(events, undefined)).toEqual(hostile)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(wellFormedProblems(events as never)).toEqual([])
  })

  it("under agent.runStream (no stream sink in tools) still ends with the run's last state", async () => {
    const cell = doc.cell({})
    const values = [{ a: 1 }, { a: 2, b: [1, 2] }, { b: [2] }]
    const events = [...await Effect.runPromise(Stream.runCollect(toAgUiEvents(cell.provideStream(stateRun(values).runStream("go")), { state: cell })))] as Array<AgUiEvent>
    expect(await applyState(events, undefined)).toEqual({ b: [2] })
    const finished = events.findIndex((e) => e.type === "RUN_FINISHED")
    const lastState = events.map((e) => e.type).lastIndexOf("STATE_DELTA")
    expect(Math.max(lastState, events.map((e) => e.type).lastIndexOf("STATE_SNAPSHOT"))).toBeLessThan(finished)
  })

  it("fails typed outside a run with the state, and for a state of another handle", async () => {
    const exit = await Effect.runPromiseExit(doc.get)
    expect(Exit.isFailure(exit) && Exit.findErrorOption(exit)).toMatchObject({ _tag: "Some", value: expect.any(AgUiStateUnavailable) })
    const other = agUiState("other", Doc).cell({})
    const viaOther = await Effect.runPromiseExit(other.provide(doc.set({ a: 1 })))
    expect(Exit.isFailure(viaOther)).toBe(true)
    expect(await Effect.runPromise(doc.cell({ a: 1 }).provide(doc.update((d) => ({ ...d, b: 2 }))))).toEqual({ a: 1, b: 2 })
    expect(() => agUiState("n", Schema.Finite).cell(Number.NaN)).toThrow(AgUiStateInvalid)
  })
})

describe("the client's tools on an agent with skills", () => {
  const makeDesk = (offered?: (skill: string) => boolean) => {
    const requests: Array<ModelRequest> = []
    const lookup = tool("lookup", { description: "Look up an order", args: Schema.Struct({ id: Schema.String }), run: ({ id }) => `order ${id}: shipped` })
    const desk = agent("desk").prompt("p").model(scriptedModel((request: ModelRequest) => {
      requests.push(request)
      const last = request.messages.at(-1)
      if (last?.role === "user") return toolCalls([{ id: `n${requests.length}`, name: "notify", arguments: { text: "hello" } }])
      return text(`Done: ${last?.content ?? "?"}`)
    })).tools({ lookup }).skills(({ lookup }) => [skill("orders", "Orders").tools(lookup), skill("echo", "Echo").implementedBy((input: string) => input).when(() => false)])
    return { desk, requests, offered }
  }
  const notify = { name: "notify", description: "Show a toast", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }

  it("offers them to every skill that calls tools; the call ends the turn for the client, whose result resumes it", async () => {
    const { desk, requests } = makeDesk()
    const store = threadStore()
    const client = new HttpAgent({ url: await start(agUiHandler(desk, store)), threadId: "t-desk", initialMessages: [user("u1", "Notify me")] })
    const first = await run(client, { tools: [notify] })
    expect(requests[0]!.tools.map((t) => t.name).sort()).toEqual(["lookup", "notify"])
    const finished = first.events.at(-1) as unknown as { outcome: { type: string; pendingToolCallIds?: Array<string> } }
    expect(finished.outcome).toMatchObject({ type: "success", pendingToolCallIds: [expect.any(String)] })
    client.addMessage({ id: "r1", role: "tool", toolCallId: finished.outcome.pendingToolCallIds![0]!, content: "shown" })
    const second = await run(client, { tools: [notify] })
    expect(second.events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" }, result: "Done: shown" })
  })

  it("keeps them from skills clientToolsFor refuses", async () => {
    const { desk, requests } = makeDesk()
    const client = new HttpAgent({ url: await start(agUiHandler(desk, { clientToolsFor: (name) => name !== "orders" })), threadId: "t-no", initialMessages: [user("u1", "Notify me")] })
    await run(client, { tools: [notify] }).catch(() => undefined)
    expect(requests[0]!.tools.map((t) => t.name)).toEqual(["lookup"])
  })
})
