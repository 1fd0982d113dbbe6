/**
 * Our A2A server against the official SDK's client (`@a2a-js/sdk` 1.x) on a real loopback server:
 * the card, send, stream, get, cancel, input-required and resume on the same task, contexts as
 * sessions, a v0.3 client through the compatibility layer, malformed parts refused with -32602,
 * unknown task ids, and the bearer check.
 */
import { TaskState } from "@a2a-js/sdk"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, skill, tool } from "../../../src/index.ts"
import { serveA2a, type A2aServer } from "../../../src/protocols/a2a/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import { asTask, makeBank, outputText, request, sdkClient, sleep, text, userMessage } from "./helpers.ts"

const echoModel = scriptedModel((req) => ({ _tag: "Text", content: `echo: ${String(req.messages.at(-1)?.content)} (${req.messages.length} messages)` }))
const echo = agent("echo").prompt("Echoes what it is told.").model(echoModel)

const { bank, transferRuns } = makeBank()

let slowStarted = 0
let slowInterrupted = 0
const slow = tool("slow", {
  args: Schema.Struct({}),
  run: () =>
    Effect.callback<string>(() => {
      slowStarted += 1
      return Effect.sync(() => void (slowInterrupted += 1))
    })
})
const sleepy = agent("sleepy").model(scriptedModel({ _tag: "ToolCalls", calls: [{ id: "s1", name: "slow", arguments: {} }] })).tools({ slow })

let echoServer: A2aServer
let bankServer: A2aServer
let sleepyServer: A2aServer
let securedServer: A2aServer
beforeAll(async () => {
  echoServer = await serveA2a(echo)
  bankServer = await serveA2a(bank)
  sleepyServer = await serveA2a(sleepy)
  securedServer = await serveA2a(echo, { bearer: (token) => token === "s3cret" })
})
afterAll(async () => {
  await Promise.all([echoServer, bankServer, sleepyServer, securedServer].map((s) => s?.close()))
})

describe("the agent card", () => {
  it("is served at the well-known path, with skills, modes, streaming and both protocol versions", async () => {
    const card: any = await (await fetch(`${echoServer.url}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } })).json()
    expect(card.name).toBe("echo")
    expect(card.description).toBe("Echoes what it is told.")
    expect(card.capabilities.streaming).toBe(true)
    expect(card.defaultInputModes).toContain("text/plain")
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual(["echo"])
    expect(card.supportedInterfaces.map((i: { protocolVersion: string }) => i.protocolVersion)).toEqual(["1.0", "0.3"])
    const legacy: any = await (await fetch(`${echoServer.url}/.well-known/agent-card.json`)).json()
    expect(legacy.protocolVersion).toBe("0.3")
    expect(legacy.url).toBe(echoServer.endpoint)
  })

  it("declares the bearer scheme when a token check is given", async () => {
    const card: any = await (await fetch(`${securedServer.url}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } })).json()
    expect(JSON.stringify(card.securitySchemes)).toContain("Bearer")
    expect(card.securityRequirements.length).toBe(1)
  })
})

describe("the SDK's client against our server", () => {
  it("SendMessage completes a task with the output as an artifact; GetTask reads it back", async () => {
    const client = await sdkClient(echoServer.url)
    const task = asTask(await client.sendMessage(request(userMessage([text("hello")]))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(outputText(task)).toBe("echo: hello (2 messages)")
    const again = await client.getTask({ tenant: "", id: task.id })
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(outputText(again)).toBe("echo: hello (2 messages)")
  })

  it("SendStreamingMessage streams the task, working updates, the artifact, then the final state", async () => {
    const client = await sdkClient(echoServer.url)
    const kinds: Array<string> = []
    const states: Array<TaskState> = []
    for await (const event of client.sendMessageStream(request(userMessage([text("stream me")])))) {
      kinds.push(event.payload?.$case ?? "none")
      if (event.payload?.$case === "statusUpdate") states.push(event.payload.value.status!.state)
    }
    expect(kinds[0]).toBe("task")
    expect(kinds).toContain("artifactUpdate")
    expect(states[0]).toBe(TaskState.TASK_STATE_WORKING)
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED)
  })

  it("a contextId is a session: the second task sees the first exchange", async () => {
    const client = await sdkClient(echoServer.url)
    const contextId = crypto.randomUUID()
    const first = asTask(await client.sendMessage(request(userMessage([text("one")], { contextId }))))
    expect(first.contextId).toBe(contextId)
    const second = asTask(await client.sendMessage(request(userMessage([text("two")], { contextId }))))
    expect(outputText(second)).toBe("echo: two (4 messages)")
    const other = asTask(await client.sendMessage(request(userMessage([text("three")]))))
    expect(outputText(other)).toBe("echo: three (2 messages)")
  })

  it("a suspended approval is input-required; the next message on the task approves and resumes it", async () => {
    const client = await sdkClient(bankServer.url)
    const before = transferRuns()
    const task = asTask(await client.sendMessage(request(userMessage([text("pay bob 10")]))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const pending = task.status?.message?.parts.find((p) => p.content?.$case === "data")?.content?.value as { pending: Array<{ id: string; tool: string }> }
    expect(pending.pending.map((p) => p.tool)).toEqual(["transfer"])
    expect(transferRuns()).toBe(before)
    const resumed = asTask(await client.sendMessage(request(userMessage([text("approve")], { taskId: task.id, contextId: task.contextId }))))
    expect(resumed.id).toBe(task.id)
    expect(resumed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(outputText(resumed)).toBe("done: sent 10 to bob")
    expect(transferRuns()).toBe(before + 1)
    // The task is terminal: a further message on it is refused, and the tool never runs twice.
    await expect(client.sendMessage(request(userMessage([text("approve")], { taskId: task.id, contextId: task.contextId })))).rejects.toThrow()
    expect(transferRuns()).toBe(before + 1)
  })

  it("a denial with a data part resumes the run without running the tool; bad decisions are invalid params", async () => {
    const client = await sdkClient(bankServer.url)
    const before = transferRuns()
    const task = asTask(await client.sendMessage(request(userMessage([text("pay bob 10")]))))
    const id = (task.status?.message?.parts.find((p) => p.content?.$case === "data")?.content?.value as { pending: Array<{ id: string }> }).pending[0]!.id
    const ids = { taskId: task.id, contextId: task.contextId }
    await expect(client.sendMessage(request(userMessage([text("maybe later")], ids)))).rejects.toMatchObject({ name: "RequestMalformedError" })
    // An edit the tool's Schema refuses: invalid params, and the task still waits for a decision.
    const badEdit = userMessage([{ content: { $case: "data", value: { decisions: { [id]: { edit: { to: 5 } } } } }, metadata: undefined, filename: "", mediaType: "application/json" }], ids)
    await expect(client.sendMessage(request(badEdit))).rejects.toMatchObject({ name: "RequestMalformedError" })
    expect(transferRuns()).toBe(before)
    const denied = asTask(await client.sendMessage(request(userMessage([{ content: { $case: "data", value: { decisions: { [id]: { deny: "not today" } } } }, metadata: undefined, filename: "", mediaType: "application/json" }], ids))))
    expect(denied.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(outputText(denied)).toContain("not today")
    expect(transferRuns()).toBe(before)
  })

  it("an approval binds to its own task's run: once a later task of the context waits, the earlier one is refused", async () => {
    const client = await sdkClient(bankServer.url)
    const before = transferRuns()
    const contextId = crypto.randomUUID()
    const first = asTask(await client.sendMessage(request(userMessage([text("pay bob 10")], { contextId }))))
    const second = asTask(await client.sendMessage(request(userMessage([text("pay bob 10 again")], { contextId }))))
    expect([first.status?.state, second.status?.state]).toEqual([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_INPUT_REQUIRED])
    // "approve" on the first task must not approve the second task's calls.
    await expect(client.sendMessage(request(userMessage([text("approve")], { taskId: first.id, contextId })))).rejects.toMatchObject({ name: "RequestMalformedError" })
    expect(transferRuns()).toBe(before)
    const done = asTask(await client.sendMessage(request(userMessage([text("approve")], { taskId: second.id, contextId }))))
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(transferRuns()).toBe(before + 1)
  })

  it("CancelTask on an input-required task ends it canceled; its approval can no longer be given", async () => {
    const client = await sdkClient(bankServer.url)
    const before = transferRuns()
    const task = asTask(await client.sendMessage(request(userMessage([text("pay bob 10")]))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const canceled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined })
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    await expect(client.sendMessage(request(userMessage([text("approve")], { taskId: task.id, contextId: task.contextId })))).rejects.toThrow()
    expect(transferRuns()).toBe(before)
  })

  it("CancelTask interrupts the run and its tool; the task ends canceled", async () => {
    const client = await sdkClient(sleepyServer.url)
    const before = slowInterrupted
    const stream = client.sendMessageStream(request(userMessage([text("go")])))
    const first = await stream.next()
    const taskId = (first.value as { payload: { value: { id: string } } }).payload.value.id
    while (slowStarted === 0 || sleepyServer.running() === 0) await sleep(5)
    const canceled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined })
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    const states: Array<TaskState> = []
    for await (const event of stream) if (event.payload?.$case === "statusUpdate") states.push(event.payload.value.status!.state)
    expect(slowInterrupted).toBe(before + 1)
    expect(sleepyServer.running()).toBe(0)
    expect((await client.getTask({ tenant: "", id: taskId })).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
  })

  it("unknown task ids end in TaskNotFound for get, cancel and a message", async () => {
    const client = await sdkClient(echoServer.url)
    const id = crypto.randomUUID()
    await expect(client.getTask({ tenant: "", id })).rejects.toMatchObject({ name: "TaskNotFoundError" })
    await expect(client.cancelTask({ tenant: "", id, metadata: undefined })).rejects.toMatchObject({ name: "TaskNotFoundError" })
    await expect(client.sendMessage(request(userMessage([text("hi")], { taskId: id })))).rejects.toMatchObject({ name: "TaskNotFoundError" })
  })

  it("malformed parts are refused with invalid params before anything runs", async () => {
    const client = await sdkClient(echoServer.url)
    const calls = echoModel.requests.length
    await expect(client.sendMessage(request(userMessage([])))).rejects.toMatchObject({ name: "RequestMalformedError" })
    await expect(client.sendMessage(request(userMessage([{ content: { $case: "url", value: "http://127.0.0.1/x.png" }, metadata: undefined, filename: "x.png", mediaType: "image/png" }]))))
      .rejects.toMatchObject({ name: "RequestMalformedError" })
    expect(echoModel.requests.length).toBe(calls)
  })

  it("a body over the parser's limit is a JSON-RPC error, never a page with a stack trace", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: { message: { kind: "message", messageId: "m", role: "user", parts: [{ kind: "text", text: "x".repeat(300_000) }] } } })
    const answer = await fetch(bankServer.endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: big })
    expect(answer.status).toBe(413)
    const body = await answer.text()
    expect(JSON.parse(body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } })
    expect(body).not.toMatch(/node_modules|\bat \w/)
  })

  it("the bearer check refuses requests without the token and accepts them with it", async () => {
    await expect((await sdkClient(securedServer.url)).sendMessage(request(userMessage([text("hi")])))).rejects.toThrow()
    await expect((await sdkClient(securedServer.url, { authorization: "Bearer wrong" })).sendMessage(request(userMessage([text("hi")])))).rejects.toThrow()
    const task = asTask(await (await sdkClient(securedServer.url, { authorization: "Bearer s3cret" })).sendMessage(request(userMessage([text("hi")]))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
  })
})

describe("a v0.3 client through the compatibility layer", () => {
  const rpc = async (server: A2aServer, method: string, params: unknown): Promise<any> =>
    (await fetch(server.endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })).json()

  it("message/send, tasks/get and tasks/cancel speak v0.3", async () => {
    const sent = await rpc(echoServer, "message/send", { message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text: "old" }] } })
    expect(sent.result.kind).toBe("task")
    expect(sent.result.status.state).toBe("completed")
    expect(JSON.stringify(sent.result.artifacts)).toContain("echo: old")
    const got = await rpc(echoServer, "tasks/get", { id: sent.result.id })
    expect(got.result.status.state).toBe("completed")
    const missing = await rpc(echoServer, "tasks/cancel", { id: crypto.randomUUID() })
    expect(missing.error.code).toBe(-32001)
  })

  it("message/stream streams v0.3 events to a final state; input-required resumes on the same task", async () => {
    const response = await fetch(bankServer.endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "message/stream", params: { message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text: "pay" }] } } })
    })
    const body = await response.text()
    const events = body.split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)).result)
    const last = events.at(-1)
    expect(last.kind).toBe("status-update")
    expect(last.status.state).toBe("input-required")
    // The SDK's compatibility layer marks only terminal states final; the stream ends here all the same.
    const resumed = await rpc(bankServer, "message/send", {
      message: { kind: "message", messageId: crypto.randomUUID(), role: "user", taskId: last.taskId, contextId: last.contextId, parts: [{ kind: "text", text: "yes" }] }
    })
    expect(resumed.result.status.state).toBe("completed")
  })

  it("a malformed part is the invalid-params error -32602", async () => {
    const refused = await rpc(echoServer, "message/send", { message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "file", file: { uri: "http://127.0.0.1/a.png" } }] } })
    expect(refused.error.code).toBe(-32602)
  })
})

describe("typed agents over A2A", () => {
  const Sum = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
  const Total = Schema.Struct({ total: Schema.Finite })
  const adder = agent("adder", { input: Sum, output: Total }).skills(() => [skill("add", "Adds two numbers").implementedBy(({ a, b }: { a: number; b: number }) => ({ total: a + b }))])
  let server: A2aServer
  beforeAll(async () => {
    server = await serveA2a(adder, { publicUrl: "http://agents.example.test/adder/" })
  })
  afterAll(() => server?.close())

  it("decodes a data part with the input Schema and answers a data part; the card has its skill, JSON modes and the public URL", async () => {
    expect(server.card.skills.map((s) => s.id)).toEqual(["add"])
    expect(server.card.defaultInputModes).toContain("application/json")
    expect(server.card.defaultOutputModes).toEqual(["application/json"])
    expect(server.card.supportedInterfaces[0]?.url).toBe("http://agents.example.test/adder/a2a/jsonrpc")
    expect(server.url).toBe("http://agents.example.test/adder")
  })

  it("over the SDK client: data in, data out; input the Schema refuses is invalid params", async () => {
    const direct = await serveA2a(adder)
    try {
      const client = await sdkClient(direct.url)
      const data = (value: unknown) => ({ content: { $case: "data" as const, value }, metadata: undefined, filename: "", mediaType: "application/json" })
      const task = asTask(await client.sendMessage(request(userMessage([data({ a: 2, b: 3 })]))))
      expect(task.artifacts[0]?.parts[0]?.content).toEqual({ $case: "data", value: { total: 5 } })
      const fromText = asTask(await client.sendMessage(request(userMessage([text('{"a":1,"b":1}')]))))
      expect(fromText.artifacts[0]?.parts[0]?.content).toEqual({ $case: "data", value: { total: 2 } })
      await expect(client.sendMessage(request(userMessage([data({ a: "two", b: 3 })])))).rejects.toMatchObject({ name: "RequestMalformedError" })
      await expect(client.sendMessage(request(userMessage([data({ a: 1, b: 2, c: 3 })])))).rejects.toMatchObject({ name: "RequestMalformedError" })
      await expect(client.sendMessage(request(userMessage([text("two and three")])))).rejects.toMatchObject({ name: "RequestMalformedError" })
    } finally {
      await direct.close()
    }
  })
})
