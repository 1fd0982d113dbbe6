/**
 * A streaming agent served over HTTP as Server-Sent Events, on Node's `http`:
 *   npm run example:stream            # then: curl -N "http://127.0.0.1:8787/run?q=What%20is%20(3%2B5)*2%3F"
 *   curl -N "http://127.0.0.1:8787/run?q=hi&format=ui-message-stream"   # the AI SDK's useChat protocol
 * POST /run with the question as the body works too. Without AI_PROVIDER the agent runs on a scripted
 * model that streams its answer in small chunks (no network, no key); with it, on the provider from
 * the environment (`AI_PROVIDER=ollama AI_MODEL=qwen2.5:7b npm run example:stream`).
 */
import { realpathSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { Schema } from "effect"
import { agent, eventStreamResponse, fromEnv, type ModelClient, sendResponse, text, tool, toolCalls } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"

const add = tool("add", { description: "Add two numbers", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const multiply = tool("multiply", {
  description: "Multiply two numbers",
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  run: ({ a, b }) => a * b
})

/** A scripted model for every request: add, then multiply, then the answer, streamed 4 characters at a time. */
const scripted = (): ModelClient =>
  scriptedModel((request) => {
    const last = request.messages.at(-1)
    if (last?.role === "user") return toolCalls([{ name: "add", arguments: { a: 3, b: 5 } }])
    if (last?.role === "tool" && last.name === "add") return toolCalls([{ name: "multiply", arguments: { a: Number(last.content), b: 2 } }])
    return text(`(3 + 5) * 2 = ${last?.content ?? "?"}`)
  }, { chunk: 4 })

/** Starts the server; `port` 0 picks a free one. */
export const startServer = async (port = 8787, model: ModelClient = (process.env.AI_PROVIDER ?? "").trim() === "" ? scripted() : fromEnv().client) => {
  const calculator = agent("calculator").prompt("You are a calculator. Use the tools.").model(model).tools({ add, multiply })
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost")
    if (url.pathname !== "/run") {
      res.writeHead(404).end("try /run?q=...")
      return
    }
    if (req.method !== "GET" && req.method !== "POST") {
      res.writeHead(405, { allow: "GET, POST" }).end("GET /run?q=... or POST /run with the question as the body")
      return
    }
    // A question is short: a body past 64 KB is refused, not read into memory.
    let body = ""
    for await (const chunk of req) {
      body += chunk
      if (body.length > 65_536) {
        res.writeHead(413, { connection: "close" }).end("the question is over 64 KB")
        req.destroy()
        return
      }
    }
    const question = url.searchParams.get("q") ?? (body === "" ? "What is (3 + 5) * 2?" : body)
    const format = url.searchParams.get("format") === "ui-message-stream" ? "ui-message-stream" : "events"
    await sendResponse(eventStreamResponse(calculator.runStream(question), { format }), res)
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const address = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

// Run as a command, not imported: compared as real paths, so a path with a space, a symlinked checkout or
// Windows still matches (a `file://${process.argv[1]}` string does not, and the command would do nothing).
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  const { url } = await startServer(Number(process.env.PORT ?? 8787))
  console.log(`streaming calculator on ${url}/run?q=What%20is%20(3%2B5)*2%3F  (add &format=ui-message-stream for useChat)`)
}
