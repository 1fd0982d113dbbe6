/**
 * examples/stream-server.ts over real HTTP: `fetch` reads its Server-Sent Events and parses them; the
 * UI message stream format is read with the AI SDK's own parser and `readUIMessageStream` (what
 * `useChat` runs); a client that disconnects stops the run and its model stream.
 */
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, type UIMessage } from "ai"
import { Effect, Stream } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { startServer } from "../../examples/stream-server.ts"
import type { ModelClient } from "../../src/index.ts"

let server: Awaited<ReturnType<typeof startServer>> | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** Parses an SSE body into `{ event, data }` records. */
const parseSse = (body: string) =>
  body.split("\n\n").filter((block) => block.trim() !== "").map((block) => {
    const lines = block.split("\n")
    const event = lines.find((l) => l.startsWith("event: "))?.slice(7)
    const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n")
    return { event, data: data === "[DONE]" ? data : JSON.parse(data) }
  })

describe("examples/stream-server.ts", () => {
  it("serves a run as Server-Sent Events: run events with deltas, ending with RunEnd", async () => {
    server = await startServer(0)
    const response = await fetch(`${server.url}/run?q=${encodeURIComponent("What is (3 + 5) * 2?")}`)
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
    const events = parseSse(await response.text())
    expect(events[0]).toMatchObject({ event: "RunStart", data: { _tag: "RunStart", input: "What is (3 + 5) * 2?" } })
    expect(events.at(-1)).toMatchObject({ event: "RunEnd", data: { outcome: { _tag: "Success", output: "(3 + 5) * 2 = 16" } } })
    const text = events.filter((e) => e.event === "TextDelta").map((e) => e.data.delta)
    expect(text.length).toBeGreaterThan(1)
    expect(text.join("")).toBe("(3 + 5) * 2 = 16")
    expect(events.filter((e) => e.event === "ToolUse").map((e) => e.data.tool)).toEqual(["add", "multiply"])
    expect(events.some((e) => e.event === "ModelCall")).toBe(false)
  })

  it("refuses a body over 64 KB (413) and a method other than GET or POST (405), running nothing", async () => {
    server = await startServer(0)
    const big = await fetch(`${server.url}/run`, { method: "POST", body: "x".repeat(200_000) }).catch((error: unknown) => error)
    if (big instanceof Response) expect(big.status).toBe(413)
    else expect(String(big)).toMatch(/fetch failed|socket|closed/i)
    const put = await fetch(`${server.url}/run`, { method: "PUT", body: "What is 2 + 2?" })
    expect(put.status).toBe(405)
    expect(put.headers.get("allow")).toBe("GET, POST")
  })

  it("speaks the AI SDK UI message stream protocol: the SDK's parser accepts every chunk and builds the message", async () => {
    server = await startServer(0)
    const response = await fetch(`${server.url}/run?format=ui-message-stream`, { method: "POST", body: "What is (3 + 5) * 2?" })
    expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1")
    const chunks = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).pipeThrough(
      new TransformStream({
        transform(result, controller) {
          if (!result.success) throw result.error
          controller.enqueue(result.value)
        }
      })
    )
    let last: UIMessage | undefined
    for await (const message of readUIMessageStream({ stream: chunks, terminateOnError: true })) last = message
    const parts = last?.parts ?? []
    expect(parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toEqual(["(3 + 5) * 2 = 16"])
    const tools = parts.filter((p) => p.type.startsWith("tool-")) as Array<{ type: string; state: string; input: unknown; output: unknown }>
    expect(tools.map((t) => [t.type, t.state, t.input, t.output])).toEqual([
      ["tool-add", "output-available", { a: 3, b: 5 }, 8],
      ["tool-multiply", "output-available", { a: 8, b: 2 }, 16]
    ])
  })

  it("a client that disconnects stops the run and closes the model stream", async () => {
    let closed = false
    const model: ModelClient = {
      chat: () => Effect.die("unused"),
      stream: () =>
        Stream.concat(Stream.make({ _tag: "TextDelta" as const, delta: "thinking" }), Stream.never).pipe(
          Stream.ensuring(Effect.sync(() => (closed = true)))
        )
    }
    server = await startServer(0, model)
    const controller = new AbortController()
    const response = await fetch(`${server.url}/run?q=hi`, { signal: controller.signal })
    const reader = response.body!.getReader()
    let seen = ""
    while (!seen.includes("TextDelta")) seen += new TextDecoder().decode((await reader.read()).value)
    controller.abort()
    await expect.poll(() => closed, { timeout: 2000 }).toBe(true)
  })
})
