/**
 * The UI message stream as the AI SDK's own client reads it (found by review): every chunk passes the
 * SDK's `uiMessageChunkSchema`, and `readUIMessageStream` and `useChat`'s state machine (`AbstractChat`)
 * build one assistant message whose parts say what happened.
 * - A child run (a handoff target, an agent called as a tool) continues the message: its start is not
 *   a new message (the SDK's reader drops what came before a `start` with another id, and `useChat`
 *   renames its message).
 * - Every call the model made ends in an outcome part: a handoff, a call outside the allowlist.
 * - A client that goes away stops the run and its model request, also where only the request's
 *   signal tells (runtimes that never cancel the response body).
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { getRequestListener } from "@hono/node-server"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type ModelClient, skill, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { chatHandler, chatStream, eventStreamResponse, nodeHandler, toDecisions } from "../../src/web/index.ts"
import { readUI, TestChat } from "./ai-sdk-client.ts"
import { abortMidStream, endlessModel, settle } from "../support/client-gone.ts"
import { makeBank } from "../approvals/bank.ts"

type Part = { type: string; state?: string; text?: string; toolCallId?: string; output?: unknown; errorText?: string }
const parts = (message: { parts: ReadonlyArray<unknown> } | undefined) => (message?.parts ?? []) as ReadonlyArray<Part>
const ui = (events: ReturnType<typeof chatStream>) => readUI(eventStreamResponse(events, { format: "ui-message-stream" }))

describe("child runs in one UI message", () => {
  it("a handoff keeps the call (with its outcome) and the target's answer in the first run's message", async () => {
    const billing = agent("billing").model(scriptedModel(text("Refunded."), { chunk: 3 }))
    const triage = agent("triage").model(scriptedModel([toolCalls([{ id: "h1", name: "handoff_to_billing", arguments: {} }])]))
      .skills(() => [skill("triage").handoffs(billing)])
    const { chunks, refused, errors, message } = await ui(chatStream(triage, [], "refund A-1"))
    expect(refused).toEqual([])
    expect(errors).toEqual([])
    expect(chunks.filter((c) => c.type === "start")).toHaveLength(1)
    expect(message?.id).toBe((chunks[0] as { messageId?: string }).messageId)
    expect(parts(message).map((p) => [p.type, p.state])).toEqual([
      ["step-start", undefined],
      ["tool-handoff_to_billing", "output-available"],
      ["step-start", undefined],
      ["text", "done"]
    ])
    expect(parts(message).find((p) => p.type === "text")?.text).toBe("Refunded.")
  })

  it("an agent called as a tool: useChat keeps one assistant message, with the call's output", async () => {
    const research = agent("researcher").model(scriptedModel(text("Effect 4 is out"), { chunk: 4 })).asTool({ name: "research" })
    const writer = agent("writer").model(scriptedModel([toolCalls([{ id: "c1", name: "research", arguments: { input: "news" } }]), text("Report: Effect 4 is out.")])).tools({ research })
    const chat = new TestChat(chatHandler(writer))
    await chat.sendMessage({ text: "write a report" })
    expect(chat.status).toBe("ready")
    expect(chat.messages.map((m) => m.role)).toEqual(["user", "assistant"])
    const answer = parts(chat.messages[1])
    expect(answer.find((p) => p.type === "tool-research")).toMatchObject({ state: "output-available", output: "Effect 4 is out" })
    expect(answer.filter((p) => p.type === "text").map((p) => p.text)).toContain("Report: Effect 4 is out.")
  })
})

describe("tool part ids across runs (found by an outside tester)", () => {
  // Call ids are unique only within a run: a scripted model names calls `call_<turn>_<i>`, so a child
  // run's first call has its parent's id. Each tool part must still be a part of its own.
  const child = (name: string) =>
    agent(name).model(scriptedModel((request) =>
      request.messages.at(-1)?.role === "user" ? toolCalls([{ name: "lookup", arguments: { q: name } }]) : text(`${name} found it`)
    )).tools({ lookup: tool("lookup", { args: Schema.Struct({ q: Schema.String }), effect: "readOnly", run: ({ q }) => Effect.as(Effect.sleep("5 millis"), `found ${q}`) }) })

  it("an agent called as a tool whose calls have its parent's call ids: every call keeps its own part and outcome", async () => {
    const lead = agent("lead").model(scriptedModel((request) =>
      request.messages.at(-1)?.role === "user" ? toolCalls([{ name: "alpha", arguments: { input: "a" } }, { name: "beta", arguments: { input: "b" } }]) : text("done")
    )).tools({ alpha: child("alpha").asTool({ name: "alpha" }), beta: child("beta").asTool({ name: "beta" }) }).budget({ toolConcurrency: 2 })
    const { refused, errors, message } = await ui(chatStream(lead, [], "go"))
    expect(refused).toEqual([])
    expect(errors).toEqual([])
    const tools = parts(message).filter((p) => p.type.startsWith("tool-"))
    expect(new Set(tools.map((p) => p.toolCallId)).size).toBe(tools.length)
    expect(tools.map((p) => [p.type, p.state, p.output]).sort()).toEqual([
      ["tool-alpha", "output-available", "alpha found it"],
      ["tool-beta", "output-available", "beta found it"],
      ["tool-lookup", "output-available", "found alpha"],
      ["tool-lookup", "output-available", "found beta"]
    ])
  })

  it("a child's call waiting for approval is asked on its own part, and approving it by toDecisions resumes the child's call", async () => {
    // Fresh models for each run (a scripted model numbers its calls across runs).
    const makeLead = () => {
      const pay = tool("pay", { args: Schema.Struct({ to: Schema.String }), needsApproval: true, run: ({ to }) => `paid ${to}` })
      const payer = agent("payer").model(scriptedModel((request) =>
        request.messages.at(-1)?.role === "user" ? toolCalls([{ name: "pay", arguments: { to: "bob" } }]) : text("payment done")
      )).tools({ pay })
      return agent("lead").model(scriptedModel((request) =>
        request.messages.at(-1)?.role === "user" ? toolCalls([{ name: "payer", arguments: { input: "pay bob" } }]) : text("all done")
      )).tools({ payer: payer.asTool({ name: "payer" }) })
    }
    const { chunks, message } = await ui(chatStream(makeLead(), [], "go"))
    const request = chunks.find((c) => c.type === "tool-approval-request") as { approvalId: string; toolCallId: string }
    const asked = parts(message).find((p) => p.toolCallId === request.toolCallId)
    expect(asked?.type).toBe("tool-pay")
    expect(parts(message).filter((p) => p.type.startsWith("tool-")).map((p) => p.toolCallId)).toHaveLength(2)
    const decisions = toDecisions([{ toolCallId: request.toolCallId, approvalId: request.approvalId, tool: "pay", approved: true, input: { to: "bob" } }])
    // The same run by hand: its waiting call is the one the stream asked about, and the decisions resume it.
    const lead = makeLead()
    const first = await lead.run("go")
    if (first._tag !== "Suspended") throw new Error("expected the child's call to wait")
    expect(Object.keys(decisions)).toEqual(first.pending.map((p) => p.id))
    const resumed = await lead.resume(first.snapshot, decisions).pipe(Effect.runPromise)
    expect(resumed).toMatchObject({ _tag: "Completed", output: "all done" })
  })
})

describe("every call ends in an outcome part", () => {
  it("a call outside the allowlist (feedback policy) becomes output-error, not a call that never ends", async () => {
    const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
    const model = scriptedModel([toolCalls([{ id: "x1", name: "delete_everything", arguments: {} }]), text("I may only add.")])
    const { refused, errors, message } = await ui(chatStream(agent("a").model(model).tools({ add }).disallowedToolPolicy("feedback"), [], "go"))
    expect(refused).toEqual([])
    expect(errors).toEqual([])
    const call = parts(message).find((p) => p.toolCallId === "x1")
    expect(call).toMatchObject({ type: "tool-delete_everything", state: "output-error" })
    expect(call?.errorText).toContain("add")
  })

  it("a tool whose result JSON cannot hold (a cycle): its part gets what the model was told, and the run goes on", async () => {
    const row = tool("row", { args: Schema.Struct({}), run: () => {
      const value: { name: string; self?: unknown } = { name: "row" }
      value.self = value
      return value
    } })
    const model = scriptedModel([toolCalls([{ id: "r1", name: "row", arguments: {} }]), text("Read the row.")])
    const { refused, errors, message } = await ui(chatStream(agent("a").model(model).tools({ row }), [], "go"))
    expect(refused).toEqual([])
    expect(errors).toEqual([])
    const call = parts(message).find((p) => p.toolCallId === "r1")
    expect(call?.state).toBe("output-available")
    expect(call?.output).toBe(model.requests[1]?.messages.at(-1)?.content)
    expect(parts(message).at(-1)).toMatchObject({ type: "text", text: "Read the row." })
  })
})

const firstTurn = JSON.stringify([{ id: "u1", role: "user", parts: [{ type: "text", text: "talk" }] }])

describe("a client that goes away", () => {
  it("stops the run and its model request when only the request's signal aborts (the body is never cancelled)", async () => {
    const { model, closed } = endlessModel()
    const abort = new AbortController()
    await abortMidStream(await chatHandler(agent("talker").model(model))(new Request("http://localhost/api/chat", { method: "POST", body: firstTurn, signal: abort.signal })), abort)
    await settle()
    expect(closed).toEqual(["model request closed"])
  })

  it("a request aborted before it is answered runs nothing", async () => {
    const { model, closed, calls } = endlessModel()
    const abort = new AbortController()
    abort.abort()
    const response = await chatHandler(agent("talker").model(model))(new Request("http://localhost/api/chat", { method: "POST", body: firstTurn, signal: abort.signal }))
    await response.body?.cancel().catch(() => {})
    await settle()
    expect(calls).toEqual([])
    expect(closed).toEqual([])
  })

  it("stops them when the response body is cancelled", async () => {
    const { model, closed } = endlessModel()
    const response = await chatHandler(agent("talker").model(model))(new Request("http://localhost/api/chat", { method: "POST", body: firstTurn }))
    const reader = response.body!.getReader()
    await reader.read()
    await reader.cancel()
    await settle()
    expect(closed).toEqual(["model request closed"])
  })
})

describe("a client that goes away, over HTTP", () => {
  const servers = {
    "Node's http (nodeHandler)": (handler: (request: Request) => Promise<Response>) => createServer(nodeHandler(handler)),
    "@hono/node-server": (handler: (request: Request) => Promise<Response>) => createServer(getRequestListener(handler, { overrideGlobalObjects: false }))
  }
  it.each(Object.entries(servers))("%s: a fetch aborted mid-stream stops the run and its model request", async (_name, make) => {
    const { model, closed } = endlessModel()
    const server = make(chatHandler(agent("talker").model(model)))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const abort = new AbortController()
      await abortMidStream(await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`, { method: "POST", body: firstTurn, signal: abort.signal }), abort)
      await settle()
      expect(closed).toEqual(["model request closed"])
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

describe("the finish chunk says why the message ended (useChat's onFinish finishReason)", () => {
  const finishOf = async (events: ReturnType<typeof chatStream>) => {
    const { chunks, refused } = await ui(events)
    expect(refused).toEqual([])
    return (chunks.find((c) => c.type === "finish") as { finishReason?: string } | undefined)?.finishReason
  }
  it("stop, tool-calls, length, error", async () => {
    expect(await finishOf(chatStream(agent("a").model(scriptedModel(text("hi"))), [], "q"))).toBe("stop")
    const { bank } = makeBank(scriptedModel([toolCalls([{ id: "c2", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("unused")]))
    expect(await finishOf(chatStream(bank, [], "send 500 to bob"))).toBe("tool-calls")
    const wordy: ModelClient = { chat: () => Effect.succeed({ _tag: "Text", content: "long", usage: { inputTokens: 10, outputTokens: 500 } }) } as unknown as ModelClient
    expect(await finishOf(chatStream(agent("b").model(wordy).budget({ maxTokens: 100 }), [], "q"))).toBe("length")
    const failing: ModelClient = { chat: () => Effect.die(new Error("boom")) } as unknown as ModelClient
    expect(await finishOf(chatStream(agent("c").model(failing), [], "q"))).toBe("error")
  })
})

describe("an agent called as a tool, on the next turn", () => {
  it("its text and its own calls stream into the message marked as the child's, and the parent's transcript leaves them out", async () => {
    const search = tool("search", { args: Schema.Struct({ q: Schema.String }), run: ({ q }) => `results for ${q}` })
    const research = agent("researcher")
      .model(scriptedModel([toolCalls([{ id: "s1", name: "search", arguments: { q: "effect" } }]), text("Effect 4 is out")], { chunk: 4 }))
      .tools({ search })
      .asTool({ name: "research" })
    const writerModel = scriptedModel([toolCalls([{ id: "c1", name: "research", arguments: { input: "news" } }]), text("Report: Effect 4 is out."), text("Anything else?")])
    const writer = agent("writer").model(writerModel).tools({ research })
    const chat = new TestChat(chatHandler(writer))
    await chat.sendMessage({ text: "write a report" })
    const first = parts(chat.messages[1])
    // The child's work is in the message, for the UI to show.
    expect(first.find((p) => p.type === "tool-search")).toMatchObject({ state: "output-available" })
    expect(first.filter((p) => p.type === "text").map((p) => p.text)).toEqual(["Effect 4 is out", "Report: Effect 4 is out."])
    await chat.sendMessage({ text: "thanks" })
    expect(chat.status).toBe("ready")
    // The writer's second request: its own call and result, its own answer; nothing of the researcher's.
    const sent = writerModel.requests[2]!.messages.map((m) => [m.role, m.content, (m as { toolCalls?: ReadonlyArray<{ name: string }> }).toolCalls?.map((c) => c.name)])
    expect(sent.slice(1)).toEqual([
      ["user", "write a report", undefined],
      ["assistant", "", ["research"]],
      ["tool", "Effect 4 is out", undefined],
      ["assistant", "Report: Effect 4 is out.", undefined],
      ["user", "thanks", undefined]
    ])
  })
})

describe("errors shown to the client", () => {
  const leaky = tool("lookup", { args: Schema.Struct({}), run: () => { throw new Error("connect ECONNREFUSED db.internal:5432 (password=hunter2)") } })
  const failing = () => agent("a").model(scriptedModel([toolCalls([{ id: "l1", name: "lookup", arguments: {} }])])).tools({ lookup: leaky })
  it("onError decides the text of a tool's failure and of the run's, as the AI SDK's onError", async () => {
    const { chunks, refused } = await readUI(await chatHandler(failing(), { onError: () => "An error occurred." })(new Request("http://localhost/api/chat", { method: "POST", body: JSON.stringify([{ id: "u", role: "user", parts: [{ type: "text", text: "q" }] }]) })))
    expect(refused).toEqual([])
    const texts = chunks.flatMap((c) => ("errorText" in c ? [String(c.errorText)] : []))
    expect(texts.length).toBeGreaterThanOrEqual(2)
    expect(texts.every((t) => t === "An error occurred.")).toBe(true)
    expect(JSON.stringify(chunks)).not.toContain("hunter2")
  })
  it("by default shows the error's message; an error whose text cannot be read, or an onError that throws, does not end the stream", async () => {
    const plain = await ui(chatStream(failing(), [], "q"))
    expect(plain.chunks.some((c) => "errorText" in c && String(c.errorText).includes("ECONNREFUSED"))).toBe(true)
    const hostile = tool("odd", { args: Schema.Struct({}), run: () => { throw { toString: () => { throw new Error("no text") } } } })
    const odd = agent("b").model(scriptedModel([toolCalls([{ id: "o1", name: "odd", arguments: {} }]), text("done")])).tools({ odd: hostile })
    const { chunks, errors } = await readUI(eventStreamResponse(chatStream(odd, [], "q"), { format: "ui-message-stream", onError: () => { throw new Error("bad onError") } }))
    expect(errors).toEqual([])
    expect(chunks.at(-1)).toMatchObject({ type: "finish", finishReason: "stop" })
  })
})

describe("a handoff target is the conversation's, even when its caller left calls without an outcome", () => {
  it("a handoff followed by another call in its turn: the target's answer is not marked as a child's", async () => {
    const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
    const billing = agent("billing").model(scriptedModel(text("Refunded.")))
    const triage = agent("triage")
      .model(scriptedModel([toolCalls([{ id: "h1", name: "handoff_to_billing", arguments: {} }, { id: "a1", name: "add", arguments: { a: 1, b: 2 } }])]))
      .tools({ add })
      .skills((t) => [skill("triage").tools(t.add).handoffs(billing)])
    const { chunks } = await ui(chatStream(triage, [], "refund"))
    const textStart = chunks.find((c) => c.type === "text-start") as { providerMetadata?: unknown } | undefined
    expect(textStart).toBeDefined()
    expect(textStart!.providerMetadata).toBeUndefined()
    // The call after the handoff never ran: it still gets its outcome part.
    expect(chunks.find((c) => c.type === "tool-output-error" && c.toolCallId === "a1")).toMatchObject({ errorText: 'not run: handed off to agent "billing"' })
  })

  it("every call ends in an outcome part: the calls after a submit, and a refused submit", async () => {
    const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
    const typed = agent("t", { output: Schema.Struct({ x: Schema.Finite }) })
      .model(scriptedModel([
        toolCalls([{ id: "s1", name: "submit", arguments: { x: "bad" } }]),
        toolCalls([{ id: "s2", name: "submit", arguments: { x: 1 } }, { id: "a1", name: "add", arguments: { a: 1, b: 2 } }])
      ]))
      .tools({ add })
    const { chunks, message } = await ui(chatStream(typed, [], "go"))
    const outcome = (id: string) => chunks.find((c) => (c.type === "tool-output-error" || c.type === "tool-output-available") && c.toolCallId === id)
    expect(outcome("s1")).toMatchObject({ type: "tool-output-error", errorText: "not run" })
    expect(outcome("s2")).toMatchObject({ type: "tool-output-available", output: { x: 1 } })
    expect(outcome("a1")).toMatchObject({ type: "tool-output-error", errorText: "not run: the run ended with its answer" })
    expect(parts(message).filter((p) => p.type.startsWith("tool-")).every((p) => p.state === "output-available" || p.state === "output-error")).toBe(true)
  })
})
