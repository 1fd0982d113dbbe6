/**
 * A web chat where a transfer needs approval, on the AI SDK's `useChat` protocol, resumable in another
 * process:
 *   npm run example:approval      # POST /api/chat on http://127.0.0.1:8788 (useChat's default transport)
 * A message like "pay bob 500" makes the model call `transfer`, which needs approval above 100: the
 * stream ends with a `tool-approval-request` (useChat shows the part as `approval-requested`) and the
 * suspended run is written to `STORE_DIR` (default `.approval-chat/`) as JSON. When the user answers
 * (`addToolApprovalResponse`), useChat posts the conversation again: whichever process serves it (this
 * one, or a new one started on the same directory after a restart) reads the stored snapshot, checks
 * the answers against it and resumes the run. A file-backed resume ledger makes the resume happen once,
 * across processes: the same answers posted again run nothing. Without AI_PROVIDER the model is
 * scripted (no network, no key); with it, the provider from the environment.
 */
import { createHash } from "node:crypto"
import { mkdirSync, realpathSync } from "node:fs"
import { readFile, writeFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Schema } from "effect"
import { agent, fromEnv, type ModelClient, ResumeLedgerFailed, type ResumeLedgerStore, text, tool, toolCalls } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"
import { chatHandler, type ChatSuspension, nodeHandler } from "effect-agent-dsl/web"

const transfer = tool("transfer", {
  description: "Send money to someone",
  args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
  needsApproval: ({ amount }) => amount > 100,
  run: ({ to, amount }) => `sent ${amount} to ${to}`
})

/** The same answers in every process: a transfer for "pay <name> <amount>", then a sentence about its result. */
const scripted = (): ModelClient =>
  scriptedModel((request) => {
    const last = request.messages.at(-1)
    if (last?.role === "user") {
      const [, to = "bob", amount = "500"] = /pay (\w+) (\d+)/.exec(last.content) ?? []
      return toolCalls([{ id: "t1", name: "transfer", arguments: { to, amount: Number(amount) } }])
    }
    return text(last?.role === "tool" ? `Done: ${last.content}.` : "How can I help?")
  })

/** A file name for a chat id the client chose: never a path. */
const fileOf = (dir: string, chatId: string) => join(dir, `${createHash("sha256").update(chatId).digest("hex").slice(0, 32)}.json`)

/** A resume ledger on the file system: creating a file exclusively is atomic, so one process wins. */
const fileLedger = (dir: string): ResumeLedgerStore => ({
  consume: (key) =>
    Effect.tryPromise({
      try: () => writeFile(join(dir, `resumed-${createHash("sha256").update(key).digest("hex").slice(0, 32)}`), key, { flag: "wx" }).then(() => true),
      catch: (error) => error
    }).pipe(
      Effect.catch((error) =>
        (error as { code?: string }).code === "EEXIST" ? Effect.succeed(false) : Effect.fail(new ResumeLedgerFailed({ key, reason: String(error), cause: error }))
      )
    )
})

/** Starts the chat endpoint; `port` 0 picks a free one. */
export const startApprovalChat = async (options: { readonly port?: number; readonly dir?: string; readonly model?: ModelClient } = {}) => {
  const dir = options.dir ?? process.env.STORE_DIR ?? ".approval-chat"
  mkdirSync(dir, { recursive: true })
  const model = options.model ?? ((process.env.AI_PROVIDER ?? "").trim() === "" ? scripted() : fromEnv().client)
  const teller = agent("teller").prompt("You move money for the user. Use the transfer tool.").model(model).tools({ transfer })
  const ledger = fileLedger(dir)
  // The suspension is stored under the chat's id (the `id` useChat sends), and found again by it.
  const chatFile = (chatId: string | undefined) => fileOf(dir, chatId ?? "default")
  const handler = chatHandler(teller, {
    onSuspended: (suspension, chat) => writeFile(chatFile(chat.chatId), JSON.stringify(suspension)),
    loadSuspended: async (chat) => {
      try {
        return JSON.parse(await readFile(chatFile(chat.chatId), "utf8")) as ChatSuspension
      } catch {
        return undefined
      }
    },
    resumeLedger: ledger
  })
  const server: Server = createServer(nodeHandler(async (request) => {
    if (new URL(request.url).pathname !== "/api/chat") return new Response("POST /api/chat", { status: 404 })
    return handler(request)
  }))
  await new Promise<void>((resolve) => server.listen(options.port ?? 8788, "127.0.0.1", resolve))
  const address = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${address.port}/api/chat`,
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
  const { url } = await startApprovalChat({ port: Number(process.env.PORT ?? 8788) })
  console.log(`approval chat on ${url}`)
}
