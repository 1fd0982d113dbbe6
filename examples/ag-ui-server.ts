/**
 * An agent behind an AG-UI endpoint, for CopilotKit or any `@ag-ui/client` front end:
 *   npm run example:ag-ui              # POST http://127.0.0.1:8789/ag-ui (RunAgentInput in, AG-UI events out)
 *   npm run example:ag-ui -- --demo    # the same, driven once by @ag-ui/client's HttpAgent, then exits
 * The agent has a server tool (`weather`), a tool that needs approval (`transfer`, above 100) and uses
 * the client's own tools when the front end offers them (the demo offers `pick_color`):
 * - "weather in Paris": the tool runs on the server; text and the call stream as AG-UI events;
 * - "pay bob 500": the run ends with an interrupt; the front end answers it with a resume entry
 *   (`{ approved: true }`) and the run goes on, the transfer running once;
 * - "paint the sky": the model calls the client's `pick_color`; the run finishes with it pending, the
 *   front end runs it and sends the result as a tool message, and the run goes on;
 * - "add milk to the cart": the shared state (`agUiState`, a cart typed by a Schema) comes from the
 *   front end, the `add_to_cart` tool changes it, and the front end's state follows (STATE_SNAPSHOT,
 *   then STATE_DELTA).
 * Stopped runs are kept in memory by thread id (keep them in a database to resume in another process).
 * Without AI_PROVIDER the model is scripted (no network, no key); with it, the provider from the environment.
 */
import { realpathSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { HttpAgent } from "@ag-ui/client"
import { Effect, Schema } from "effect"
import { agent, fromEnv, type ModelClient, text, tool, toolCalls } from "effect-agent-dsl"
import { agUiHandler, agUiState, type ChatSuspension, nodeHandler } from "effect-agent-dsl/ag-ui"
import { scriptedModel } from "effect-agent-dsl/testing"

const weather = tool("weather", {
  description: "Today's weather in a city",
  args: Schema.Struct({ city: Schema.String }),
  run: ({ city }) => `sunny, 21°C in ${city}`
})
const transfer = tool("transfer", {
  description: "Send money to someone",
  args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
  needsApproval: ({ amount }) => amount > 100,
  run: ({ to, amount }) => `sent ${amount} to ${to}`
})

/** The state the front end shares with the agent: a cart. */
const cart = agUiState("cart", Schema.Struct({ items: Schema.Array(Schema.String) }), { initial: { items: [] } })
const addToCart = tool("add_to_cart", {
  description: "Put an item in the user's cart",
  args: Schema.Struct({ item: Schema.String }),
  run: ({ item }) => cart.update((c) => ({ items: [...c.items, item] })).pipe(Effect.map((c) => `${c.items.length} items in the cart`))
})

/** Scripted answers: a tool call for the latest request, then a sentence about its result. */
const scripted = (): ModelClient =>
  scriptedModel((request) => {
    const last = request.messages.at(-1)
    if (last?.role === "tool") return text(`Done: ${last.content}.`)
    const said = last?.role === "user" ? last.content : ""
    const pay = /pay (\w+) (\d+)/.exec(said)
    if (pay !== null) return toolCalls([{ id: "pay-1", name: "transfer", arguments: { to: pay[1], amount: Number(pay[2]) } }])
    const item = /add (\w+) to the cart/.exec(said)
    if (item !== null) return toolCalls([{ id: "cart-1", name: "add_to_cart", arguments: { item: item[1] } }])
    const city = /weather in (\w+)/.exec(said)
    if (city !== null) return toolCalls([{ id: "weather-1", name: "weather", arguments: { city: city[1] } }], "Let me look.")
    if (/paint/.test(said) && request.tools.some((t) => t.name === "pick_color")) {
      return toolCalls([{ id: "color-1", name: "pick_color", arguments: { hint: "sky" } }])
    }
    return text("Ask me about the weather, to pay someone, or to paint.")
  }, { chunk: 4 })

/** Starts the AG-UI endpoint; `port` 0 picks a free one. */
export const startAgUiServer = async (options: { readonly port?: number; readonly model?: ModelClient } = {}) => {
  const model = options.model ?? ((process.env.AI_PROVIDER ?? "").trim() === "" ? scripted() : fromEnv().client)
  const assistant = agent("assistant").prompt("You help with the weather, payments and painting.").model(model).tools({ weather, transfer, add_to_cart: addToCart })
  const waiting = new Map<string, ChatSuspension>()
  const handle = agUiHandler(assistant, {
    state: cart,
    onSuspended: (suspension, input) => void waiting.set(input.threadId, suspension),
    // Taken once: a second answer to the same interrupt finds nothing waiting (409).
    loadSuspended: (input) => {
      const suspension = waiting.get(input.threadId)
      waiting.delete(input.threadId)
      return suspension
    }
  })
  const server = createServer(nodeHandler((request) => (new URL(request.url).pathname === "/ag-ui" ? handle(request) : new Response("POST /ag-ui", { status: 404 }))))
  await new Promise<void>((resolve) => server.listen(options.port ?? 8789, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ag-ui`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** What a front end does, with @ag-ui/client: three conversations, printing what arrives. */
export const demo = async (url: string, log: (line: string) => void = console.log) => {
  const pickColor = { name: "pick_color", description: "Ask the user to pick a colour", parameters: { type: "object", properties: { hint: { type: "string" } }, required: ["hint"] } }
  const say = async (client: HttpAgent, parameters: Parameters<HttpAgent["runAgent"]>[0] = {}) => {
    const types: Array<string> = []
    const { result } = await client.runAgent({ tools: [pickColor], ...parameters }, { onEvent: ({ event }) => void types.push(event.type) })
    log(`  events: ${types.join(" ")}`)
    return result
  }
  for (const [thread, question] of [["t-weather", "weather in Paris"], ["t-pay", "pay bob 500"], ["t-paint", "paint the sky"], ["t-cart", "add milk to the cart"]] as const) {
    const client = new HttpAgent({ url, threadId: thread, initialMessages: [{ id: `${thread}-u1`, role: "user", content: question }], initialState: { items: ["bread"] } })
    log(`> ${question}`)
    let result = await say(client)
    for (const interrupt of client.pendingInterrupts) {
      log(`  interrupt: ${interrupt.message} ${JSON.stringify(interrupt.metadata)} -> approve`)
      result = await say(client, { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] })
    }
    const pending = client.messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls ?? [] : [])).filter((call) => call.function.name === "pick_color" && !client.messages.some((m) => m.role === "tool" && m.toolCallId === call.id))
    for (const call of pending) {
      log(`  client tool: ${call.function.name}(${call.function.arguments}) -> "cerulean"`)
      client.addMessage({ id: `${thread}-r-${call.id}`, role: "tool", toolCallId: call.id, content: "cerulean" })
      result = await say(client)
    }
    log(`  answer: ${JSON.stringify(result)}`)
    log(`  state: ${JSON.stringify(client.state)}`)
  }
}

// Run as a command, not imported: compared as real paths, so a path with a space, a symlinked checkout or
// Windows still matches (a `file://${process.argv[1]}` string does not, and the command would do nothing).
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  const server = await startAgUiServer({ port: process.argv.includes("--demo") ? 0 : Number(process.env.PORT ?? 8789) })
  console.log(`AG-UI endpoint on ${server.url}`)
  if (process.argv.includes("--demo")) {
    await demo(server.url)
    await server.close()
  }
}
