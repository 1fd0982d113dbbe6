/**
 * The agents behind the AG-UI tests, and an AG-UI endpoint on a real loopback server.
 * - `adder`: a server tool `add`; the model calls it for the latest question, then answers with the sum
 *   (streamed 3 characters at a time);
 * - `banker`: `transfer` needs approval; the model calls it, then reports what the tool said;
 * - `painter`: no server tools; the model calls the client's `pick_color` tool, then answers with what
 *   the client returned.
 * Every request the model receives is recorded, and so is every `transfer` that ran.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as Schema from "effect/Schema"
import { agent, type ModelRequest, text, tool, toolCalls } from "effect-agent-dsl"
import { agUiHandler, type AgUiHandlerOptions, type ChatSuspension, nodeHandler } from "effect-agent-dsl/ag-ui"
import { scriptedModel } from "effect-agent-dsl/testing"

export const makeAgents = () => {
  const requests: Array<ModelRequest> = []
  const transfers: Array<{ readonly to: string; readonly amount: number }> = []
  const answer = (request: ModelRequest, call: () => ReturnType<typeof toolCalls>) => {
    requests.push(request)
    const last = request.messages.at(-1)
    return last?.role === "user" ? call() : text(`Done: ${last?.content ?? "?"}.`)
  }
  const add = tool("add", { description: "Add two numbers", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
  const adder = agent("adder").prompt("You add numbers.").model(
    scriptedModel((r) => answer(r, () => toolCalls([{ id: `call-${requests.length}`, name: "add", arguments: { a: 2, b: 3 } }], "Let me add.")), { chunk: 3 })
  ).tools({ add })
  const transfer = tool("transfer", {
    description: "Move money",
    args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
    needsApproval: true,
    run: ({ to, amount }) => {
      transfers.push({ to, amount })
      return `sent ${amount} to ${to}`
    }
  })
  const banker = agent("banker").prompt("You move money.").model(
    scriptedModel((r) => answer(r, () => toolCalls([{ id: `pay-${requests.length}`, name: "transfer", arguments: { to: "bob", amount: 40 } }])), { chunk: 4 })
  ).tools({ transfer })
  const painter = agent("painter").prompt("You paint.").model(
    scriptedModel((r) => answer(r, () => toolCalls([{ id: `color-${requests.length}`, name: "pick_color", arguments: { hint: "sky" } }])), { chunk: 5 })
  )
  return { adder, banker, painter, requests, transfers }
}

/** A thread store for `onSuspended`/`loadSuspended`: one waiting run per thread, taken once. */
export const threadStore = (): Pick<AgUiHandlerOptions, "onSuspended" | "loadSuspended"> & { readonly waiting: Map<string, ChatSuspension> } => {
  const waiting = new Map<string, ChatSuspension>()
  return {
    waiting,
    onSuspended: (suspension, input) => void waiting.set(input.threadId, suspension),
    loadSuspended: (input) => {
      const found = waiting.get(input.threadId)
      waiting.delete(input.threadId)
      return found
    }
  }
}

/** Serves `handler` on 127.0.0.1; returns its URL and a closer. */
export const serve = async (handler: (request: Request) => Promise<Response>): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  const server: Server = createServer(nodeHandler(handler))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ag-ui`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

export { agUiHandler }
