/**
 * Helpers of the studio API tests: real HTTP on 127.0.0.1 with the studio's token, and an SSE reader.
 */
import { Effect, Schema } from "effect"
import { agent, pipeline, skill, text, tool, toolCalls } from "../../../src/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import type { Studio } from "../../../src/studio/index.ts"

/** Calls the studio's API with its token; answers status and parsed body. */
export const call = async (studio: Studio, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${studio.origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${studio.token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  })
  const text = await response.text()
  let parsed: any
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = text
  }
  return { status: response.status, body: parsed }
}

/** Reads an SSE stream until it ends (or `limitMs`): its `data` messages and named events. */
export const readSse = async (url: string, headers: Record<string, string>, limitMs = 10_000) => {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(limitMs) })
  const messages: Array<{ event: string | undefined; id: string | undefined; data: any }> = []
  const decoder = new TextDecoder()
  let buffer = ""
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true })
      let at: number
      while ((at = buffer.indexOf("\n\n")) !== -1) {
        const block = buffer.slice(0, at)
        buffer = buffer.slice(at + 2)
        let event: string | undefined
        let id: string | undefined
        let data: string | undefined
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7)
          else if (line.startsWith("id: ")) id = line.slice(4)
          else if (line.startsWith("data: ")) data = line.slice(6)
        }
        if (data !== undefined) messages.push({ event, id, data: JSON.parse(data) })
      }
    }
  } catch (error) {
    if ((error as { name?: string }).name !== "TimeoutError" && (error as { name?: string }).name !== "AbortError") throw error
  }
  return { status: response.status, messages }
}

/** Polls `check` until it answers something other than undefined. */
export const eventually = async <A>(check: () => Promise<A | undefined> | A | undefined, limitMs = 10_000): Promise<A> => {
  const until = Date.now() + limitMs
  while (true) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > until) throw new Error("eventually: timed out")
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** Agents of the tests: a calculator, a teller whose transfers above 100 wait for a human, a slow one, a pipeline. */
export const testAgents = () => {
  const ran: Array<{ to: string; amount: number }> = []
  const add = tool("add", { description: "Add", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), effect: "readOnly", run: ({ a, b }) => a + b })
  const calculator = agent("calculator")
    .prompt("You add.")
    .model(scriptedModel((request) => {
      const last = request.messages.at(-1)
      return last?.role === "tool"
        ? { ...text(`It is ${last.content}.`), usage: { inputTokens: 30, outputTokens: 5 } }
        : { ...toolCalls([{ name: "add", arguments: { a: 2, b: 3 } }]), usage: { inputTokens: 20, outputTokens: 7 } }
    }, { chunk: 3 }))
    .budget({ maxTurns: 5 })
    .tools({ add })
    .skills(({ add }) => [skill("sum", "Adds numbers").tools(add)])
  const transfer = tool("transfer", {
    description: "Send money",
    args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
    needsApproval: ({ amount }) => amount > 100,
    run: ({ to, amount }) => {
      ran.push({ to, amount })
      return `sent ${amount} to ${to}`
    }
  })
  const teller = agent("teller")
    .model(scriptedModel((request) => {
      const last = request.messages.at(-1)
      if (last?.role === "user") {
        const [, to = "bob", amount = "500"] = /pay (\w+) (\d+)/.exec(last.content) ?? []
        return toolCalls([{ name: "transfer", arguments: { to, amount: Number(amount) } }])
      }
      return text(`Done: ${last?.content}`)
    }))
    .tools({ transfer })
  const wait = tool("wait", { description: "Waits a long time", args: Schema.Struct({}), run: () => Effect.as(Effect.sleep("30 seconds"), "waited") })
  const sleeper = agent("sleeper")
    .model(scriptedModel((request) => request.messages.at(-1)?.role === "tool" ? text("done") : toolCalls([{ name: "wait", arguments: {} }])))
    .tools({ wait })
  const first = agent("first").model(scriptedModel((r) => text(`facts about ${String(r.messages.at(-1)?.content)}`)))
  const second = agent("second").model(scriptedModel((r) => text(`essay on ${String(r.messages.at(-1)?.content)}`)))
  const research = pipeline("research", first, second)
  return { agents: { calculator, teller, sleeper, research, notAnAgent: 42 }, ran }
}
