/**
 * The README's three route handlers (test/web/recipes), each served by a real HTTP server on
 * 127.0.0.1 and called over HTTP the way `useChat` calls them: the AI SDK's own `DefaultChatTransport`
 * posts the chat (`{ id, messages, trigger, messageId }`) and parses the streamed answer into chunks,
 * and `readUIMessageStream` builds the assistant message from them, as `useChat` does.
 *
 * - Next.js: the route module's `POST` is served by a plain Node HTTP server through
 *   `@hono/node-server`'s `getRequestListener` (Node request → `Request`, `Response` → Node response),
 *   not by Next itself: building a Next app in a test is too slow. A route handler is a Web-standard
 *   `(Request) => Response` function, which is all Next calls it as.
 * - Hono: the app served by `@hono/node-server`'s `serve`.
 * - Express 5: the app's own `listen`, with and without `express.json()` before the handler.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { getRequestListener, serve } from "@hono/node-server"
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai"
import express from "express"
import { afterEach, describe, expect, it } from "vitest"
import { nodeHandler, chatHandler } from "effect-agent-dsl/web"
import { makeAssistant, secondTurn } from "./chat-fixture.ts"
import { requests } from "./recipes/assistant.ts"
import { app as expressApp } from "./recipes/express-app.ts"
import { app as honoApp } from "./recipes/hono-app.ts"
import { POST } from "./recipes/next-route.ts"

type Closable = { close(callback: () => void): unknown; closeAllConnections?: () => void }
let open: Closable | undefined
afterEach(async () => {
  const server = open
  open = undefined
  if (server === undefined) return
  server.closeAllConnections?.()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const listening = async (server: Server): Promise<string> => {
  open = server
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`
}

const servers = {
  "Next.js route handler (POST, Web-standard, on a Node HTTP server)": () =>
    listening(createServer(getRequestListener(POST, { overrideGlobalObjects: false }))),
  "Hono on @hono/node-server": async () => {
    const server = serve({ fetch: honoApp.fetch, port: 0, hostname: "127.0.0.1", overrideGlobalObjects: false }) as Server
    await new Promise<void>((resolve) => (server.listening ? resolve() : server.once("listening", () => resolve())))
    return listening(server)
  },
  "Express 5": () => listening(createServer(expressApp))
} as const

/** Posts `messages` as useChat does and reads the answer with the AI SDK: the message and the chunk types. */
const chat = async (api: string, messages: Array<UIMessage>) => {
  const transport = new DefaultChatTransport<UIMessage>({ api })
  const stream = await transport.sendMessages({ chatId: "chat-1", messages, trigger: "submit-message", messageId: undefined, abortSignal: undefined })
  const types: Array<string> = []
  const recorded = stream.pipeThrough(new TransformStream<UIMessageChunk, UIMessageChunk>({
    transform(chunk, controller) {
      types.push(chunk.type)
      controller.enqueue(chunk)
    }
  }))
  let message: UIMessage | undefined
  for await (const m of readUIMessageStream({ stream: recorded, terminateOnError: true })) message = m
  return { message: message!, types }
}

const firstTurn: Array<UIMessage> = [{ id: "u1", role: "user", parts: [{ type: "text", text: "What is 2 + 3?" }] }]

const expectAnswered = ({ message, types }: Awaited<ReturnType<typeof chat>>) => {
  const texts = message.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)
  expect(texts).toEqual(["The sum is 5."])
  const tools = message.parts.filter((p) => p.type.startsWith("tool-")) as Array<{ type: string; state: string; input: unknown; output: unknown }>
  expect(tools.map((t) => [t.type, t.state, t.input, t.output])).toEqual([["tool-add", "output-available", { a: 2, b: 3 }, 5]])
  // The run ended: the stream's last chunks close the step and the message.
  expect(types.slice(-2)).toEqual(["finish-step", "finish"])
}

describe.each(Object.entries(servers))("%s", (_name, start) => {
  it("answers a useChat request over HTTP: text, a tool call with its output, a run that ends", async () => {
    const api = await start()
    const before = requests.length
    expectAnswered(await chat(api, firstTurn))
    expect(requests.length - before).toBe(2)
  })

  it("runs a later turn after the conversation the client sent, tool results included", async () => {
    const api = await start()
    const before = requests.length
    expectAnswered(await chat(api, secondTurn))
    const seen = requests[before]!.messages.slice(1)
    expect(seen).toEqual([
      { role: "user", content: "What is 1 + 1?" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "add", arguments: `{"a":1,"b":1}` }] },
      { role: "tool", toolCallId: "c1", name: "add", content: "2" },
      { role: "assistant", content: "It is 2." },
      { role: "user", content: "And 2 + 3?" }
    ])
  })

  it("answers a hostile body with 400 and a typed error, and the model is never called", async () => {
    const api = await start()
    const before = requests.length
    for (const body of ["not json", "{}", `[{"role":"user","parts":[{"type":"wat"}]}]`, `{"messages":[{"role":"system","parts":[]}]}`]) {
      const response = await fetch(api, { method: "POST", headers: { "content-type": "application/json" }, body })
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ error: { _tag: "UIMessagesInvalid" } })
    }
    expect(requests.length).toBe(before)
  })
})

describe("limits over HTTP", () => {
  it("a body over maxBodyBytes answers 413, streamed or declared", async () => {
    const { assistant, requests: seen } = makeAssistant()
    const api = await listening(createServer(nodeHandler(chatHandler(assistant, { maxBodyBytes: 1_000 }))))
    const big = JSON.stringify([{ role: "user", parts: [{ type: "text", text: "x".repeat(5_000) }] }])
    expect((await fetch(api, { method: "POST", body: big })).status).toBe(413)
    // Without a content-length: the body is streamed and cut at the limit.
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big))
        controller.close()
      }
    })
    expect((await fetch(api, { method: "POST", body: chunked, duplex: "half" } as RequestInit)).status).toBe(413)
    expect((await fetch(api)).status).toBe(405)
    expect(seen).toEqual([])
  })

  it("Express with express.json() before the handler: the parsed body is used", async () => {
    const { assistant } = makeAssistant()
    const app = express()
    app.post("/api/chat", express.json({ limit: "4mb" }), nodeHandler(chatHandler(assistant)))
    expectAnswered(await chat(await listening(createServer(app)), firstTurn))
  })

  it("the raw response is the UI message stream: its headers, and [DONE] last", async () => {
    const { assistant } = makeAssistant()
    const api = await listening(createServer(nodeHandler(chatHandler(assistant))))
    const response = await fetch(api, { method: "POST", body: JSON.stringify(firstTurn) })
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
    expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
    const frames = (await response.text()).trim().split("\n\n")
    expect(frames.at(-1)).toBe("data: [DONE]")
    expect(frames.at(-2)).toBe(`data: {"type":"finish","finishReason":"stop"}`)
  })
})

describe("the streaming guide's recipes", () => {
  it("are these files: every line of each recipe is in the guide's Web frameworks section (docs/guide/streaming.md), in order", async () => {
    const { readFileSync } = await import("node:fs")
    const guide = readFileSync(new URL("../../docs/guide/streaming.md", import.meta.url), "utf8")
    const section = guide.slice(guide.indexOf("## Web frameworks"), guide.indexOf("### `fromUIMessages`"))
    for (const recipe of ["next-route.ts", "hono-app.ts", "express-app.ts"]) {
      const lines = readFileSync(new URL(`./recipes/${recipe}`, import.meta.url), "utf8").split("\n")
        // The agent's module is the app's own (`@/lib/assistant`, `./assistant`); the file name is prose there.
        .filter((line) => line.trim() !== "" && !/from "\.\/assistant\.ts"$/.test(line) && !line.startsWith("// app/"))
      let at = 0
      for (const line of lines) {
        const found = section.indexOf(`${line}\n`, at)
        expect(found, `${recipe}: ${line}`).toBeGreaterThan(-1)
        at = found + line.length
      }
    }
  })
})
