/**
 * Our A2A server at its harder borders, driven by the official SDK's client (and raw JSON-RPC): the
 * messages a task does not take (a second one while its run is in flight, input its Schema refuses,
 * a reply that decides nothing), each under `serveA2a` and with our executor under the SDK's own
 * `DefaultRequestHandler`; several approvals of one waiting task at once; a streaming client that
 * drops its connection mid-run, `close()` with runs in flight, and a request whose ids have the
 * wrong type; and our client (`a2aAgent`) reading a server's JSON-RPC errors.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { type Part, type Task, TaskState } from "@a2a-js/sdk"
import type { Client } from "@a2a-js/sdk/client"
import { DefaultExecutionEventBusManager, DefaultRequestHandler, InMemoryTaskStore, type ServerCallContext, type TaskStore } from "@a2a-js/sdk/server"
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express"
import { Effect, Exit, Schema } from "effect"
import express from "express"
import { afterEach, describe, expect, it, vi } from "vitest"
import { agent, inMemorySessionStore, ModelError, type SessionStore, tool } from "../../../src/index.ts"
import { definitionOf } from "../../../src/dsl/agent-definition.ts"
import { executeTool } from "../../../src/dsl/tool.ts"
import { a2aAgent, agentCardOf, agentExecutor, serveA2a, type A2aServableAgent, type A2aServer, type TaskExecutorOptions } from "../../../src/protocols/a2a/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import { asTask, makeBank, outputText, request, sdkClient, sleep, text, userMessage } from "./helpers.ts"

const servers: Array<{ readonly close: () => Promise<void> }> = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})
const serve = async (...args: Parameters<typeof serveA2a>) => {
  const server = await serveA2a(...args)
  servers.push(server)
  return server
}

/** Waits until `done()` holds, at most `ms` milliseconds; says whether it held. */
const waitFor = async (done: () => boolean, ms = 1_000): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (!done()) {
    if (Date.now() > deadline) return false
    await sleep(5)
  }
  return true
}

/**
 * An agent that calls `gate` (which waits until `open()`), then `after`, then answers "end":
 * `afterRuns()` counts the runs that got past the gate.
 */
const makeGated = () => {
  let opener: (() => void) | undefined
  let afterRuns = 0
  const gate = tool("gate", { args: Schema.Struct({}), run: () => Effect.as(Effect.promise(() => new Promise<void>((resolve) => (opener = resolve))), "opened") })
  const after = tool("after", { args: Schema.Struct({}), run: () => (afterRuns += 1, "after ran") })
  const gated = agent("gated").model(scriptedModel((req) => {
    const results = req.messages.filter((m) => m.role === "tool").length
    return results === 0
      ? { _tag: "ToolCalls", calls: [{ id: "g1", name: "gate", arguments: {} }] }
      : results === 1
      ? { _tag: "ToolCalls", calls: [{ id: "a1", name: "after", arguments: {} }] }
      : { _tag: "Text", content: "end" }
  })).tools({ gate, after })
  return { gated, waiting: () => opener !== undefined, open: () => opener?.(), afterRuns: () => afterRuns }
}

/** A bank whose approved `transfer` takes 100 ms; `transfers()` counts the transfers that ran. */
const makeSlowBank = () => {
  let transfers = 0
  const transfer = tool("transfer", {
    args: Schema.Struct({}),
    needsApproval: true,
    run: () => Effect.map(Effect.sleep("100 millis"), () => (transfers += 1, "sent"))
  })
  const bank = agent("bank").model(scriptedModel((req) =>
    req.messages.some((m) => m.role === "tool") ? { _tag: "Text", content: "done" } : { _tag: "ToolCalls", calls: [{ id: "t1", name: "transfer", arguments: {} }] }
  )).tools({ transfer })
  return { bank, transfers: () => transfers }
}

/**
 * `builder`'s `agentExecutor` under the SDK's own `DefaultRequestHandler` and Express handlers, none of
 * `serveA2a`'s own, on 127.0.0.1: what a user who mounts the executor in a server of their own gets
 * (the executor given the handler's task store, as its docs ask).
 */
const serveOnSdkHandler = async (
  builder: A2aServableAgent,
  store: TaskStore = new InMemoryTaskStore(),
  options: TaskExecutorOptions = {}
): Promise<{ readonly url: string }> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const definition = definitionOf(builder)
  const handler = new DefaultRequestHandler(agentCardOf(definition, { url: `${url}/rpc` }), store, agentExecutor(definition, { ...options, taskStore: store }), options.eventBusManager)
  const app = express()
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }))
  app.use("/rpc", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))
  server.on("request", app)
  servers.push({ close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) })
  return { url }
}

/** Where a test's agent is served: `serveA2a`, or our executor under the SDK's own request handler. */
const servings = [
  ["serveA2a", (builder: A2aServableAgent) => serve(builder)],
  ["our executor under the SDK's own DefaultRequestHandler", (builder: A2aServableAgent) => serveOnSdkHandler(builder)]
] as const

/** The messages of task `taskId`'s history, by id. */
const historyIds = async (client: Client, taskId: string): Promise<Array<string>> =>
  (await client.getTask({ tenant: "", id: taskId })).history.map((message) => message.messageId)

const dataPart = (value: unknown): Part => ({ content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" })

/** The SDK's bus manager, counting the buses it holds. */
class CountingBuses extends DefaultExecutionEventBusManager {
  readonly live = new Set<string>()
  override createOrGetByTaskId(taskId: string, context?: ServerCallContext) {
    this.live.add(taskId)
    return super.createOrGetByTaskId(taskId, context)
  }
  override cleanupByTaskId(taskId: string, context?: ServerCallContext) {
    this.live.delete(taskId)
    super.cleanupByTaskId(taskId, context)
  }
}

describe("our executor under the SDK's own DefaultRequestHandler, given its event bus manager", () => {
  it("refused new messages leave no event bus behind; a run's bus goes when it settles", async () => {
    const model = scriptedModel({ _tag: "Text", content: "{\"total\":3}" })
    const adder = agent("adder", { input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }) }).model(model)
    const buses = new CountingBuses()
    const client = await sdkClient((await serveOnSdkHandler(adder, new InMemoryTaskStore(), { eventBusManager: buses })).url)
    // The SDK logs each refused stream on the console: kept off the test run's output.
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined)
    try {
      for (let i = 0; i < 3; i++) {
        await expect(client.sendMessage(request(userMessage([dataPart({ a: "two", b: i })])))).rejects.toMatchObject({ name: "RequestMalformedError" })
        await expect(client.sendMessageStream(request(userMessage([text("three")]))).next()).rejects.toMatchObject({ name: "RequestMalformedError" })
      }
    } finally {
      logged.mockRestore()
    }
    expect(buses.live.size).toBe(0)
    const task = asTask(await client.sendMessage(request(userMessage([dataPart({ a: 1, b: 2 })]))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(buses.live.size).toBe(0)
  })
})

describe.each(servings)("messages the task does not take, under %s", (_, start) => {
  it("a message on a task whose run is in flight is refused (-32004) and kept out of its history; the run goes on and completes with its own answer", async () => {
    const { gated, waiting, open, afterRuns } = makeGated()
    const client = await sdkClient((await start(gated)).url)
    const stream = client.sendMessageStream(request(userMessage([text("go")])))
    const first = await stream.next()
    const taskId = (first.value as { payload: { value: { id: string } } }).payload.value.id
    expect(await waitFor(waiting)).toBe(true)
    const again = userMessage([text("again")], { taskId })
    await expect(client.sendMessage(request(again))).rejects.toMatchObject({
      name: "UnsupportedOperationError",
      message: expect.stringContaining(`task ${taskId} is running`)
    })
    // The refused message changed nothing: the task still works, and its stream ends completed.
    expect((await client.getTask({ tenant: "", id: taskId })).status?.state).toBe(TaskState.TASK_STATE_WORKING)
    open()
    const states: Array<TaskState> = []
    for await (const event of stream) if (event.payload?.$case === "statusUpdate") states.push(event.payload.value.status!.state)
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(states).not.toContain(TaskState.TASK_STATE_FAILED)
    const done = await client.getTask({ tenant: "", id: taskId })
    expect([done.status?.state, outputText(done), afterRuns()]).toEqual([TaskState.TASK_STATE_COMPLETED, "end", 1])
    expect(await historyIds(client, taskId)).not.toContain(again.messageId)
  })

  it("a new message whose parts the input Schema refuses, or that no agent takes, is invalid params (-32602), sent or streamed; no task is created", async () => {
    const model = scriptedModel({ _tag: "Text", content: "{\"total\":3}" })
    const adder = agent("adder", { input: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }) }).model(model)
    const client = await sdkClient((await start(adder)).url)
    const refused = [[dataPart({ a: "two", b: 3 })], [text("two and three")], [], [dataPart(JSON.parse("[".repeat(100) + "]".repeat(100)))]]
    for (const parts of refused) {
      await expect(client.sendMessage(request(userMessage(parts)))).rejects.toMatchObject({ name: "RequestMalformedError" })
      await expect(client.sendMessageStream(request(userMessage(parts))).next()).rejects.toMatchObject({ name: "RequestMalformedError" })
    }
    const tasks = await client.listTasks({ tenant: "", contextId: "", status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 100, pageToken: "", historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false })
    expect([tasks.tasks.length, model.requests.length]).toEqual([0, 0])
  })

  it("a reply that decides nothing, or an edit its tool refuses, is invalid params (-32602) and kept out of the history; the task keeps waiting and an approval resumes it", async () => {
    const { bank, transferRuns } = makeBank()
    const client = await sdkClient((await start(bank)).url)
    const task = asTask(await client.sendMessage(request(userMessage([text("pay bob 10")]))))
    const callId = (task.status?.message?.parts.find((p) => p.content?.$case === "data")?.content?.value as { pending: Array<{ id: string }> }).pending[0]!.id
    const ids = { taskId: task.id, contextId: task.contextId }
    const replies = [userMessage([text("maybe later")], ids), userMessage([dataPart({ decisions: { [callId]: { edit: { to: 5 } } } })], ids)]
    for (const reply of replies) {
      await expect(client.sendMessage(request(reply))).rejects.toMatchObject({ name: "RequestMalformedError" })
    }
    expect((await client.getTask({ tenant: "", id: task.id })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const kept = await historyIds(client, task.id)
    expect(replies.filter((reply) => kept.includes(reply.messageId))).toEqual([])
    const done = asTask(await client.sendMessage(request(userMessage([text("approve")], ids))))
    expect([done.status?.state, transferRuns()]).toEqual([TaskState.TASK_STATE_COMPLETED, 1])
  })
})

describe("one task, one message at a time", () => {
  it("approvals of one waiting task sent at once: one resumes it, the others are refused; the task completes and the tool runs once", async () => {
    const { bank, transfers } = makeSlowBank()
    const server = await serve(bank)
    const client = await sdkClient(server.url)
    const task = asTask(await client.sendMessage(request(userMessage([text("pay")]))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const ids = { taskId: task.id, contextId: task.contextId }
    const answers = await Promise.allSettled([0, 1, 2].map(() => client.sendMessage(request(userMessage([text("approve")], ids)))))
    const resumed = answers.flatMap((a) => (a.status === "fulfilled" ? [asTask(a.value)] : []))
    expect(resumed.map((t) => [t.status?.state, outputText(t)])).toEqual([[TaskState.TASK_STATE_COMPLETED, "done"]])
    const refusals = answers.flatMap((a) => (a.status === "rejected" ? [(a.reason as Error).name] : []))
    expect(refusals).toEqual(["UnsupportedOperationError", "UnsupportedOperationError"])
    const stored = await client.getTask({ tenant: "", id: task.id })
    expect([stored.status?.state, outputText(stored), transfers()]).toEqual([TaskState.TASK_STATE_COMPLETED, "done", 1])
  })
})

/**
 * An in-memory task store that can hold the next `count` loads of a task until they have all been
 * asked: messages sent at once on that task then all read it before any of them reaches the executor.
 */
class LoadBarrierStore extends InMemoryTaskStore {
  #barrier: { readonly taskId: string; readonly count: number; loads: number; readonly opened: Promise<void>; readonly open: () => void } | undefined
  holdLoads(taskId: string, count: number): void {
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    this.#barrier = { taskId, count, loads: 0, opened, open }
  }
  override async load(...args: Parameters<InMemoryTaskStore["load"]>) {
    const task = await super.load(...args)
    const barrier = this.#barrier
    if (barrier?.taskId === args[0]) {
      barrier.loads += 1
      if (barrier.loads === barrier.count) {
        this.#barrier = undefined
        barrier.open()
      }
      await barrier.opened
    }
    return task
  }
}

describe("one task, one message at a time, with our executor under the SDK's own request handler", () => {
  it("approvals of one waiting task sent at once: one resumes it, the other is refused (-32004); the approved tool runs once", async () => {
    const { bank, transfers } = makeSlowBank()
    const store = new LoadBarrierStore()
    const server = await serveOnSdkHandler(bank, store)
    const client = await sdkClient(server.url)
    const task = asTask(await client.sendMessage(request(userMessage([text("pay")]))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const ids = { taskId: task.id, contextId: task.contextId }
    // Both approvals read the task as waiting for input, so both reach the executor.
    store.holdLoads(task.id, 2)
    const answers = await Promise.allSettled([0, 1].map(() => client.sendMessage(request(userMessage([text("approve")], ids)))))
    const resumed = answers.flatMap((a) => (a.status === "fulfilled" ? [asTask(a.value)] : []))
    expect(resumed.map((t) => [t.status?.state, outputText(t)])).toEqual([[TaskState.TASK_STATE_COMPLETED, "done"]])
    const refusals = answers.flatMap((a) => (a.status === "rejected" ? [(a.reason as Error).name] : []))
    expect(refusals).toEqual(["UnsupportedOperationError"])
    // Longer than a transfer takes: a second resume, had one started, would have transferred by now.
    await sleep(150)
    const stored = await client.getTask({ tenant: "", id: task.id })
    expect([stored.status?.state, outputText(stored), transfers()]).toEqual([TaskState.TASK_STATE_COMPLETED, "done", 1])
  })

  it("a reply decided only after `execute` returned (a session store that reads asynchronously) is answered by its task: it keeps waiting, or fails when its run no longer waits, saying why", async () => {
    const memory = inMemorySessionStore()
    const slow: SessionStore = { ...memory, waiting: (session) => Effect.andThen(Effect.sleep("1 millis"), memory.waiting!(session)) }
    const { bank, transferRuns } = makeBank()
    const client = await sdkClient((await serveOnSdkHandler(bank, new InMemoryTaskStore(), { sessions: () => ({ store: slow }) })).url)
    const statusText = (task: Task) => task.status?.message?.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join(" ")
    const task = asTask(await client.sendMessage(request(userMessage([text("pay bob 10")]))))
    const ids = { taskId: task.id, contextId: task.contextId }
    const unclear = asTask(await client.sendMessage(request(userMessage([text("maybe later")], ids))))
    expect([unclear.status?.state, statusText(unclear)]).toEqual([TaskState.TASK_STATE_INPUT_REQUIRED, expect.stringContaining("the message was refused (invalid params): the task waits for a decision")])
    expect(asTask(await client.sendMessage(request(userMessage([text("approve")], ids)))).status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    // A later task of the same context waits now: the earlier one can never resume.
    const earlier = asTask(await client.sendMessage(request(userMessage([text("pay bob 10")], { contextId: "stale" }))))
    expect(asTask(await client.sendMessage(request(userMessage([text("pay bob 10")], { contextId: "stale" })))).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const stale = asTask(await client.sendMessage(request(userMessage([text("approve")], { taskId: earlier.id, contextId: "stale" }))))
    expect([stale.status?.state, statusText(stale)]).toEqual([TaskState.TASK_STATE_FAILED, expect.stringContaining("the message was refused (invalid params): the run of task")])
    expect(transferRuns()).toBe(1)
  })

  it("a task whose execution ended takes its next message as usual: a waiting one resumes, a settled one gets the SDK's own answer", async () => {
    const { bank, transfers } = makeSlowBank()
    const client = await sdkClient((await serveOnSdkHandler(bank)).url)
    const paid = asTask(await client.sendMessage(request(userMessage([text("pay")]))))
    expect(asTask(await client.sendMessage(request(userMessage([text("approve")], { taskId: paid.id })))).status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const denied = asTask(await client.sendMessage(request(userMessage([text("pay")]))))
    expect(asTask(await client.sendMessage(request(userMessage([text("deny not today")], { taskId: denied.id })))).status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const canceled = asTask(await client.sendMessage(request(userMessage([text("pay")]))))
    expect((await client.cancelTask({ tenant: "", id: canceled.id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    const broken = agent("broken").model(scriptedModel([new ModelError({ provider: "scripted", reason: "down", retryable: false })]))
    const brokenClient = await sdkClient((await serveOnSdkHandler(broken)).url)
    const failed = asTask(await brokenClient.sendMessage(request(userMessage([text("go")]))))
    expect(failed.status?.state).toBe(TaskState.TASK_STATE_FAILED)
    const { gated, waiting } = makeGated()
    const gatedClient = await sdkClient((await serveOnSdkHandler(gated)).url)
    const stream = gatedClient.sendMessageStream(request(userMessage([text("go")])))
    const interrupted = ((await stream.next()).value as { payload: { value: { id: string } } }).payload.value.id
    expect(await waitFor(waiting)).toBe(true)
    expect((await gatedClient.cancelTask({ tenant: "", id: interrupted, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    for await (const event of stream) void event
    const settled = [[client, paid.id], [client, denied.id], [client, canceled.id], [brokenClient, failed.id], [gatedClient, interrupted]] as const
    for (const [to, taskId] of settled) {
      await expect(to.sendMessage(request(userMessage([text("approve")], { taskId })))).rejects.toMatchObject({ message: expect.stringContaining("terminal state") })
    }
    expect(transfers()).toBe(1)
  })
})

describe("dropped connections", () => {
  it("a streaming client that disconnects interrupts the run: the task ends canceled and nothing after it runs", async () => {
    const { gated, waiting, open, afterRuns } = makeGated()
    const server = await serve(gated)
    const client = await sdkClient(server.url)
    const controller = new AbortController()
    const stream = client.sendMessageStream(request(userMessage([text("go")])), { signal: controller.signal })
    const first = await stream.next()
    const taskId = (first.value as { payload: { value: { id: string } } }).payload.value.id
    expect(await waitFor(() => waiting() && server.running() === 1)).toBe(true)
    controller.abort()
    await stream.return(undefined).catch(() => undefined)
    const stopped = await waitFor(() => server.running() === 0)
    open()
    await sleep(50)
    expect({ stopped, afterRuns: afterRuns() }).toEqual({ stopped: true, afterRuns: 0 })
    expect((await client.getTask({ tenant: "", id: taskId })).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
  })

  it("a stream that ends at input-required is not canceled when its connection closes: the approval still resumes it", async () => {
    const { bank, transfers } = makeSlowBank()
    const server = await serve(bank)
    const client = await sdkClient(server.url)
    let taskId = ""
    for await (const event of client.sendMessageStream(request(userMessage([text("pay")])))) {
      if (event.payload?.$case === "task") taskId = event.payload.value.id
    }
    await sleep(50)
    expect((await client.getTask({ tenant: "", id: taskId })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const done = asTask(await client.sendMessage(request(userMessage([text("approve")], { taskId }))))
    expect([done.status?.state, transfers()]).toEqual([TaskState.TASK_STATE_COMPLETED, 1])
  })

  it("close() interrupts a run in flight before it resolves; nothing after it runs", async () => {
    const first = makeGated()
    const server = await serveA2a(first.gated)
    const client = await sdkClient(server.url)
    const blocking = client.sendMessage(request(userMessage([text("go")]))).catch((error: unknown) => error)
    expect(await waitFor(() => first.waiting() && server.running() === 1)).toBe(true)
    await server.close()
    expect(server.running()).toBe(0)
    first.open()
    await sleep(50)
    expect(first.afterRuns()).toBe(0)
    await blocking
  })
})

describe("hostile JSON-RPC", () => {
  const rpc = async (server: A2aServer, body: unknown, headers: Record<string, string> = {}): Promise<any> =>
    (await fetch(server.endpoint, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })).json()

  it("a task or context id that is not a string is invalid params (-32602) in both bindings, not an internal error nor a task", async () => {
    const { gated } = makeGated()
    const server = await serve(gated)
    for (const key of ["taskId", "contextId"]) {
      for (const value of [5, { id: "x" }, ["x"], true]) {
        const v03 = { kind: "message", messageId: "m1", role: "user", [key]: value, parts: [{ kind: "text", text: "hi" }] }
        for (const method of ["message/send", "message/stream"]) {
          const answer = await rpc(server, { jsonrpc: "2.0", id: 7, method, params: { message: v03 } })
          expect(answer).toMatchObject({ id: 7, error: { code: -32602, message: `message.${key} must be a string` } })
        }
        // The 1.0 binding made a string of it ("Task not found: [object Object]", -32001) before.
        const v10 = { messageId: "m1", role: "ROLE_USER", [key]: value, parts: [{ text: "hi" }] }
        for (const method of ["SendMessage", "SendStreamingMessage"]) {
          const answer = await rpc(server, { jsonrpc: "2.0", id: "a", method, params: { message: v10 } }, { "A2A-Version": "1.0" })
          expect(answer).toMatchObject({ id: "a", error: { code: -32602, message: `message.${key} must be a string` } })
        }
      }
    }
    expect(server.running()).toBe(0)
    // A body that is not JSON is still answered as the SDK answers it.
    const broken = await (await fetch(server.endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: "{" })).json()
    expect(broken).toMatchObject({ id: null, error: { code: -32700 } })
  })

  it("a data part nested thousands of levels deep is invalid params (-32602), not a stack overflow answered -32603", async () => {
    const { gated } = makeGated()
    const server = await serve(gated)
    const deep = "[".repeat(3_000) + "]".repeat(3_000)
    const body = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":${deep}}]}}}`
    const answer: any = await (await fetch(server.endpoint, { method: "POST", headers: { "content-type": "application/json", "A2A-Version": "1.0" }, body })).json()
    expect(answer.error?.code).toBe(-32602)
    expect(answer.error?.message).toMatch(/nested/)
  })
})

describe("a2aAgent against a JSON-RPC server of our own", () => {
  /**
   * A JSON-RPC server of our own (not the SDK's): a card that is fine (no streaming), and every call
   * answered by `answer(call)` (its `result` or `error`).
   */
  const rawServer = async (name: string, answer: (call: { readonly method: string; readonly id: unknown }) => Record<string, unknown>) => {
    const server = createServer((req, res) => {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      res.setHeader("content-type", "application/json")
      if (req.method !== "POST") {
        res.end(JSON.stringify({
          name,
          description: `the raw server "${name}"`,
          supportedInterfaces: [{ url: `${url}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
          version: "1",
          capabilities: { streaming: false },
          defaultInputModes: ["text/plain"],
          defaultOutputModes: ["text/plain"],
          skills: []
        }))
        return
      }
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        const call = JSON.parse(body)
        res.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, ...answer(call) }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())) }
  }

  /** A server that answers every call with the JSON-RPC error `code`. */
  const erring = (code: number) => rawServer("erring", () => ({ error: { code, message: `error ${code}` } }))

  it("a task polled many times leaves no listener behind on the call's signal (one abort listener a poll piled up before)", async () => {
    let polls = 0
    const task = (state: string) => ({
      id: "t1",
      contextId: "c1",
      status: { state },
      artifacts: state === "TASK_STATE_COMPLETED" ? [{ artifactId: "a1", parts: [{ text: "slow answer" }] }] : [],
      history: []
    })
    const server = await rawServer("slow", (call) => ({
      result: call.method === "SendMessage" ? { task: task("TASK_STATE_WORKING") } : task(++polls < 30 ? "TASK_STATE_WORKING" : "TASK_STATE_COMPLETED")
    }))
    servers.push(server)
    // The abort listeners on each signal, at most at any one time during the call.
    const live = new Map<EventTarget, Set<unknown>>()
    let most = 0
    const { addEventListener, removeEventListener } = EventTarget.prototype
    EventTarget.prototype.addEventListener = function(this: EventTarget, ...args: Parameters<EventTarget["addEventListener"]>) {
      if (args[0] === "abort" && this instanceof AbortSignal) {
        const listeners = live.get(this) ?? new Set()
        listeners.add(args[1])
        live.set(this, listeners)
        most = Math.max(most, listeners.size)
      }
      return addEventListener.apply(this, args)
    }
    EventTarget.prototype.removeEventListener = function(this: EventTarget, ...args: Parameters<EventTarget["removeEventListener"]>) {
      if (args[0] === "abort") live.get(this)?.delete(args[1])
      return removeEventListener.apply(this, args)
    }
    try {
      const remote = await a2aAgent(server.url, { name: "slow", pollMs: 1 })
      expect(await Effect.runPromise(executeTool(remote, { input: "x" }, "c1"))).toBe("slow answer")
    } finally {
      EventTarget.prototype.addEventListener = addEventListener
      EventTarget.prototype.removeEventListener = removeEventListener
    }
    expect(polls).toBe(30)
    expect(most).toBeLessThan(10)
  })

  it("a JSON-RPC error answer is a protocol error carrying the server's own code", async () => {
    for (const code of [-32001, -32601, -32603, -32004, -32008]) {
      const server = await erring(code)
      try {
        const remote = await a2aAgent(server.url, { name: "erring" })
        const exit = await Effect.runPromiseExit(executeTool(remote, { input: "x" }, "c1"))
        const error = Exit.isFailure(exit) ? (exit.cause.reasons.find((r) => r._tag === "Fail") as { readonly error: unknown } | undefined)?.error : undefined
        expect({ code, error }).toMatchObject({ code, error: { _tag: "A2aError", kind: "protocol", code } })
      } finally {
        await server.close()
      }
    }
  })
})
