/**
 * examples/approval-chat.ts across processes: a first server process streams the approval request to
 * the AI SDK's client and stores the suspended run; it is stopped; a second process on the same store
 * takes the user's approval (as `useChat` sends it), resumes the stored run and finishes it; the same
 * answer posted again runs nothing.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai"
import { afterEach, describe, expect, it } from "vitest"

const example = fileURLToPath(new URL("../../examples/approval-chat.ts", import.meta.url))
const running: Array<ChildProcess> = []
afterEach(() => {
  for (const child of running.splice(0)) child.kill("SIGKILL")
})

/** Starts the example in its own process on a free port; resolves with its URL. */
const start = (dir: string) =>
  new Promise<{ readonly url: string; readonly child: ChildProcess }>((resolve, reject) => {
    const { AI_PROVIDER: _, ...env } = process.env
    const child = spawn(process.execPath, ["--import", "tsx", example], { env: { ...env, PORT: "0", STORE_DIR: dir }, stdio: ["ignore", "pipe", "pipe"] })
    running.push(child)
    let out = ""
    child.stdout!.on("data", (chunk) => {
      out += String(chunk)
      const found = /on (http:\/\/\S+)/.exec(out)
      if (found !== null) resolve({ url: found[1]!, child })
    })
    let err = ""
    child.stderr!.on("data", (chunk) => void (err += String(chunk)))
    child.on("exit", (code) => reject(new Error(`the example exited (${code}): ${err}`)))
  })

const send = async (api: string, messages: Array<UIMessage>, last?: UIMessage) => {
  const stream = await new DefaultChatTransport<UIMessage>({ api }).sendMessages({ chatId: "chat-7", messages, trigger: "submit-message", messageId: undefined, abortSignal: undefined })
  const types: Array<string> = []
  const recorded = stream.pipeThrough(new TransformStream<UIMessageChunk, UIMessageChunk>({
    transform(chunk, controller) {
      types.push(chunk.type)
      controller.enqueue(chunk)
    }
  }))
  let message: UIMessage | undefined
  for await (const m of readUIMessageStream({ stream: recorded, ...(last === undefined ? {} : { message: last }) })) message = m
  return { message: message!, types }
}

type ToolPart = { type: string; toolCallId: string; state: string; output?: unknown; approval?: { id: string } }

describe("examples/approval-chat.ts", () => {
  it("an approval answered in the UI protocol resumes the stored run in another process, once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "approval-chat-"))
    try {
      const user: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "pay bob 500" }] }
      const first = await start(dir)
      const asked = await send(first.url, [user])
      const part = asked.message.parts.find((p) => p.type === "tool-transfer") as ToolPart
      expect(part.state).toBe("approval-requested")
      first.child.kill("SIGTERM")
      await new Promise((resolve) => first.child.once("exit", resolve))

      const second = await start(dir)
      const answered: UIMessage = {
        ...asked.message,
        parts: asked.message.parts.map((p) => ((p as ToolPart).toolCallId === part.toolCallId ? { ...p, state: "approval-responded", approval: { id: part.approval!.id, approved: true } } : p)) as UIMessage["parts"]
      }
      const replay = structuredClone(answered)
      const done = await send(second.url, [user, answered], answered)
      expect((done.message.parts.find((p) => p.type === "tool-transfer") as ToolPart)).toMatchObject({ state: "output-available", output: "sent 500 to bob" })
      expect(done.message.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toContain("Done: sent 500 to bob.")
      expect(readdirSync(dir).filter((f) => f.startsWith("resumed-"))).toHaveLength(1)

      const again = await send(second.url, [user, replay], structuredClone(replay))
      expect(again.types).toContain("error")
      expect(again.types).not.toContain("tool-output-available")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
