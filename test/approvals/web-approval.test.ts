/**
 * Approvals from the AI SDK UI protocol (issue 29 item 6): a run that suspends streams a
 * `tool-approval-request` that the AI SDK's own reader turns into an `approval-requested` part; the
 * client's answer (the part set to `approval-responded`, as `addToolApprovalResponse` does) resumes the
 * stored run through `chatHandler`, over real HTTP, once.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai"
import { Effect, Stream } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { inMemoryResumeLedger, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { approvalDecisions, chatHandler, type ChatSuspension, eventStreamResponse, nodeHandler, UIMessagesInvalid } from "../../src/web/index.ts"
import { makeBank } from "./bank.ts"

let server: Server | undefined
afterEach(async () => {
  const open = server
  server = undefined
  open?.closeAllConnections()
  if (open !== undefined) await new Promise<void>((resolve) => open.close(() => resolve()))
})

const serve = async () => {
  const model = scriptedModel([
    toolCalls([{ id: "c1", name: "balance", arguments: {} }, { id: "c2", name: "transfer", arguments: { to: "bob", amount: 500 } }]),
    text("Sent 500 to Bob."),
    text("unused")
  ])
  const { bank, executed } = makeBank(model)
  const stored = new Map<string, ChatSuspension>()
  // The suspension is stored by the chat it answers (`onSuspended` is given the chat: its id, as useChat sent it).
  const handle = chatHandler(bank, {
    onSuspended: (suspension, chat) => void stored.set(chat.chatId ?? "", suspension),
    loadSuspended: (chat) => stored.get(chat.chatId ?? ""),
    resumeLedger: inMemoryResumeLedger()
  })
  server = createServer(nodeHandler(handle))
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve))
  return { api: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`, executed, stored }
}

/** What useChat does: post the messages, read the answer with the AI SDK, continuing `last` when given. */
const send = async (api: string, messages: Array<UIMessage>, last?: UIMessage) => {
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
  for await (const m of readUIMessageStream({ stream: recorded, terminateOnError: false, ...(last === undefined ? {} : { message: last }) })) message = m
  return { message: message!, types }
}

type ToolPart = { type: string; toolCallId: string; state: string; input?: unknown; output?: unknown; approval?: { id: string; approved?: boolean; reason?: string } }

const user: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "pay bob 500" }] }

describe("approvals over the AI SDK UI message stream", () => {
  it("a suspension reaches useChat as approval-requested; the approved answer resumes the stored run once", async () => {
    const { api, executed, stored } = await serve()
    const first = await send(api, [user])
    expect(first.types).toContain("tool-approval-request")
    expect(first.types.slice(-2)).toEqual(["finish-step", "finish"])
    const transfer = first.message.parts.find((p) => p.type === "tool-transfer") as ToolPart
    expect(transfer).toMatchObject({ toolCallId: "c2", state: "approval-requested", input: { to: "bob", amount: 500 } })
    const runId = stored.get("chat-1")!.snapshot as { state: { runId: string } }
    expect(transfer.approval!.id).toBe(`${runId.state.runId}:c2`)
    expect(executed.map((e) => e.tool)).toEqual(["balance"])

    // addToolApprovalResponse({ id, approved: true }), then useChat sends the conversation again.
    const answered: UIMessage = {
      ...first.message,
      parts: first.message.parts.map((p) => ((p as ToolPart).toolCallId === "c2" ? { ...p, state: "approval-responded", approval: { id: transfer.approval!.id, approved: true } } : p)) as UIMessage["parts"]
    }
    // The AI SDK's reader continues (and changes) the message it is given: keep the answer as sent for the replay below.
    const replay = structuredClone(answered)
    const second = await send(api, [user, answered], answered)
    expect(second.types.slice(-2)).toEqual(["finish-step", "finish"])
    const done = second.message.parts.find((p) => p.type === "tool-transfer") as ToolPart
    expect(done).toMatchObject({ state: "output-available", output: "sent 500 to bob" })
    expect(second.message.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toContain("Sent 500 to Bob.")
    expect(executed.map((e) => e.tool)).toEqual(["balance", "transfer"])

    // The same answer again: the ledger refuses it, nothing runs twice.
    const again = await send(api, [user, replay], structuredClone(replay))
    expect(again.types).toContain("error")
    expect(executed.map((e) => e.tool)).toEqual(["balance", "transfer"])
  }, 30_000)

  it("a refusal becomes a denied part and the transfer never runs", async () => {
    const { api, executed } = await serve()
    const first = await send(api, [user])
    const transfer = first.message.parts.find((p) => p.type === "tool-transfer") as ToolPart
    const answered: UIMessage = {
      ...first.message,
      parts: first.message.parts.map((p) => ((p as ToolPart).toolCallId === "c2" ? { ...p, state: "approval-responded", approval: { id: transfer.approval!.id, approved: false, reason: "not today" } } : p)) as UIMessage["parts"]
    }
    const second = await send(api, [user, answered], answered)
    expect((second.message.parts.find((p) => p.type === "tool-transfer") as ToolPart).state).toBe("output-denied")
    expect(executed.map((e) => e.tool)).toEqual(["balance"])
  }, 30_000)

  it("refuses answers that name another run or leave a waiting call unanswered (UIMessagesInvalid)", () => {
    const suspension = { snapshot: { state: { runId: "r1" } }, pending: [{ id: "c2" }, { id: "p1/k1" }] }
    const answer = (approvalId: string, toolCallId: string) => ({ toolCallId, approvalId, tool: "transfer", approved: true, input: {} })
    expect(approvalDecisions([answer("r1:c2", "c2"), answer("r1:p1/k1", "k1")], suspension)).toMatchObject({ c2: { _tag: "Approve" }, "p1/k1": { _tag: "Approve" } })
    expect(() => approvalDecisions([answer("r0:c2", "c2"), answer("r1:p1/k1", "k1")], suspension)).toThrow(UIMessagesInvalid)
    expect(() => approvalDecisions([answer("r1:c2", "c2")], suspension)).toThrow(/waits for an answer on "p1\/k1"/)
    expect(() => approvalDecisions([answer("r1:c2", "c2"), answer("r1:c2", "c2"), answer("r1:p1/k1", "k1")], suspension)).toThrow(/twice/)
  })

  it("the events format carries the suspended RunEnd, the UI stream its approval requests, for a streamed run too", async () => {
    const { bank } = makeBank(scriptedModel([toolCalls([{ id: "c2", name: "transfer", arguments: { to: "bob", amount: 500 } }])]))
    const body = await eventStreamResponse(bank.runStream("pay"), { format: "ui-message-stream" }).text()
    const chunks = body.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)) as { type: string; toolCallId?: string })
    expect(chunks.filter((c) => c.type === "tool-approval-request")).toMatchObject([{ toolCallId: "c2" }])
    expect(chunks.at(-1)?.type).toBe("finish")
    void Stream
    void Effect
  })
})
