/**
 * Our client (`a2aAgent`) against servers we did not write: the official SDK's own request handler
 * with scripted executors (text, data parts with Schemas, failure, input-required, a hang, a
 * non-streaming agent), a server that drops its stream, a missing card; and against our own server
 * (usage charged to the calling run's budget, approvals across the border).
 */
import { TaskState } from "@a2a-js/sdk"
import { AgentEvent } from "@a2a-js/sdk/server"
import { Effect, Exit, Fiber, Schema, Stream } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { agent, Decision, type RunStreamEvent, session, skill, tool } from "../../../src/index.ts"
import { parallel, pipeline } from "../../../src/compose/index.ts"
import { executeTool } from "../../../src/dsl/tool.ts"
import { A2aError, a2aAgent, a2aRemoteAgent, serveA2a, type A2aUpdate } from "../../../src/protocols/a2a/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import { chatStream } from "../../../src/web/index.ts"
import { droppingServer, sdkServer } from "./sdk-server.ts"

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
})
const track = <T extends { readonly close: () => Promise<void> }>(server: T): T => (closers.push(server.close), server)

const inputText = (context: { readonly userMessage: { readonly parts: ReadonlyArray<{ readonly content?: { $case: string; value: unknown } | undefined }> } }) =>
  context.userMessage.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("")
const failureOf = async (effect: Effect.Effect<unknown, unknown>) => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  const error = exit.cause.reasons.find((r) => r._tag === "Fail") as { readonly error: unknown } | undefined
  return error?.error
}

/**
 * A remote payer on the SDK's own handler: a new task asks `question` (input-required); the answer on
 * the same task pays from the account it names. `asked` lists each message it got, with its task id.
 */
const askingPayer = async (question: string) => {
  const asked: Array<{ readonly taskId: string; readonly text: string }> = []
  const server = track(await sdkServer({
    execute: async (context, out) => {
      asked.push({ taskId: context.taskId, text: inputText(context) })
      if (context.task === undefined) out.status(TaskState.TASK_STATE_INPUT_REQUIRED, question)
      else {
        out.bus.publish(AgentEvent.task({ ...context.task, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined } }))
        out.artifact([{ content: { $case: "text", value: `paid from ${inputText(context)}` }, metadata: undefined, filename: "", mediaType: "text/plain" }])
        out.status(TaskState.TASK_STATE_COMPLETED)
      }
      out.finished()
    }
  }))
  return { server, asked }
}

describe("a2aAgent against the SDK's own request handler", () => {
  it("reads the card, streams the task, and answers the text; updates reach onUpdate", async () => {
    const server = track(await sdkServer({
      execute: async (context, out) => {
        out.status(TaskState.TASK_STATE_WORKING, "thinking")
        out.artifact([{ content: { $case: "text", value: `remote says: ${inputText(context)}` }, metadata: undefined, filename: "", mediaType: "text/plain" }])
        out.status(TaskState.TASK_STATE_COMPLETED)
        out.finished()
      }
    }))
    const updates: Array<A2aUpdate> = []
    const remote = await a2aAgent(server.url, { name: "remote", onUpdate: (u) => updates.push(u) })
    expect(remote.name).toBe("remote")
    expect(remote.definition.description).toBe("A scripted agent on the SDK's own handler")
    expect(await Effect.runPromise(executeTool(remote, { input: "hi" }, "c1"))).toBe("remote says: hi")
    expect(updates.map((u) => u._tag)).toEqual(["Status", "Artifact", "Status"])
    expect(updates[0]).toMatchObject({ _tag: "Status", text: "thinking" })
  })

  it("its updates are ToolProgress events of the calling run: hooks and runStream see them, in order, before the result", async () => {
    const server = track(await sdkServer({
      execute: async (context, out) => {
        out.status(TaskState.TASK_STATE_WORKING, "looking up")
        out.status(TaskState.TASK_STATE_WORKING, "almost there")
        out.artifact([{ content: { $case: "text", value: `found ${inputText(context)}` }, metadata: undefined, filename: "", mediaType: "text/plain" }])
        out.status(TaskState.TASK_STATE_COMPLETED)
        out.finished()
      }
    }))
    const remote = await a2aAgent(server.url, { name: "finder" })
    const lead = () => agent("lead")
      .model(scriptedModel([{ _tag: "ToolCalls", calls: [{ id: "f1", name: "finder", arguments: { input: "order 7" } }] }, { _tag: "Text", content: "ok" }]))
      .tools({ finder: remote })
    const heard: Array<string> = []
    await lead().onEvent((e) => void heard.push(e._tag === "ToolProgress" ? `progress:${(e.data as A2aUpdate)._tag}:${(e.data as { text?: string }).text ?? ""}` : e._tag)).run("find")
    const around = heard.filter((t) => t.startsWith("progress") || t === "ToolUse")
    expect(around.slice(0, 2)).toEqual(["progress:Status:looking up", "progress:Status:almost there"])
    expect(around.at(-1)).toBe("ToolUse")
    expect(around.filter((t) => t.startsWith("progress:Artifact"))).toHaveLength(1)
    const streamed = await Effect.runPromise(Stream.runCollect(lead().runStream("find")))
    const progress = [...streamed].filter((e) => e._tag === "ToolProgress")
    expect(progress.length).toBeGreaterThanOrEqual(3)
    expect(progress[0]).toMatchObject({ tool: "finder", toolCallId: "f1", data: { _tag: "Status", text: "looking up" } })
  })

  it("is a tool of our agent: the model calls it and sees its answer", async () => {
    const server = track(await sdkServer({
      execute: async (context, out) => {
        out.artifact([{ content: { $case: "text", value: inputText(context).toUpperCase() }, metadata: undefined, filename: "", mediaType: "text/plain" }])
        out.status(TaskState.TASK_STATE_COMPLETED)
        out.finished()
      }
    }))
    const shout = await a2aAgent(server.url, { name: "shout" })
    const model = scriptedModel([{ _tag: "ToolCalls", calls: [{ id: "1", name: "shout", arguments: { input: "quiet" } }] }, (req) => ({ _tag: "Text", content: String(req.messages.at(-1)?.content) })])
    const answer = await agent("lead").model(model).tools({ shout }).run("shout it")
    expect(answer).toContain("QUIET")
  })

  it("sends data parts with an args Schema and decodes the answer with an output Schema", async () => {
    const server = track(await sdkServer({
      execute: async (context, out) => {
        const data = context.userMessage.parts[0]?.content
        const { a, b } = (data?.$case === "data" ? data.value : {}) as { a: number; b: number }
        out.artifact([{ content: { $case: "data", value: { sum: a + b } }, metadata: undefined, filename: "", mediaType: "application/json" }])
        out.status(TaskState.TASK_STATE_COMPLETED)
        out.finished()
      }
    }))
    const add = await a2aAgent(server.url, { name: "add", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), output: Schema.Struct({ sum: Schema.Finite }) })
    expect(add.definition.parameters).toMatchObject({ properties: { a: { type: "number" }, b: { type: "number" } } })
    expect(await Effect.runPromise(executeTool(add, { a: 2, b: 3 }, "c1"))).toEqual({ sum: 5 })
    const wrong = await a2aAgent(server.url, { name: "add", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), output: Schema.Struct({ total: Schema.Finite }) })
    expect(await failureOf(executeTool(wrong, { a: 2, b: 3 }, "c1"))).toMatchObject({ _tag: "A2aError", kind: "invalid-output" })
  })

  it("a failed, rejected or input-required task is a typed A2aError", async () => {
    for (const [state, kind] of [[TaskState.TASK_STATE_FAILED, "task-failed"], [TaskState.TASK_STATE_REJECTED, "task-rejected"], [TaskState.TASK_STATE_INPUT_REQUIRED, "input-required"]] as const) {
      const server = track(await sdkServer({
        execute: async (_context, out) => {
          out.status(state, "no can do")
          out.finished()
        }
      }))
      const remote = await a2aAgent(server.url, { name: "remote" })
      const error = await failureOf(executeTool(remote, { input: "x" }, "c1"))
      expect(error).toBeInstanceOf(A2aError)
      expect(error).toMatchObject({ kind, reason: "no can do" })
    }
  })

  it("a server that hangs: the call times out, fails with kind timeout, and the remote task is canceled", async () => {
    const server = track(await sdkServer({ execute: (_context, out) => (out.status(TaskState.TASK_STATE_WORKING, "forever"), new Promise<void>(() => {})) }))
    const remote = await a2aAgent(server.url, { name: "remote", timeoutMs: 300 })
    const started = Date.now()
    const error = await failureOf(executeTool(remote, { input: "x" }, "c1"))
    expect(error).toMatchObject({ _tag: "A2aError", kind: "timeout" })
    expect(Date.now() - started).toBeLessThan(3_000)
    expect(server.cancels.length).toBe(1)
  })

  it("interrupting our run aborts the request and cancels the remote task", async () => {
    const server = track(await sdkServer({ execute: (_context, out) => (out.status(TaskState.TASK_STATE_WORKING), new Promise<void>(() => {})) }))
    const remote = await a2aAgent(server.url, { name: "remote" })
    const model = scriptedModel([{ _tag: "ToolCalls", calls: [{ id: "1", name: "remote", arguments: { input: "x" } }] }, { _tag: "Text", content: "never" }])
    const fiber = Effect.runFork(agent("lead").model(model).tools({ remote }).runEffect("go"))
    while (server.cancels.length === 0 && model.requests.length === 0) await new Promise((r) => setTimeout(r, 5))
    await new Promise((r) => setTimeout(r, 100))
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(server.cancels.length).toBe(1)
  })

  it("the run's wall-time budget ends the remote call and cancels the task", async () => {
    const server = track(await sdkServer({ execute: (_context, out) => (out.status(TaskState.TASK_STATE_WORKING), new Promise<void>(() => {})) }))
    const remote = await a2aAgent(server.url, { name: "remote" })
    const model = scriptedModel([{ _tag: "ToolCalls", calls: [{ id: "1", name: "remote", arguments: { input: "x" } }] }, { _tag: "Text", content: "never" }])
    await expect(agent("lead").model(model).budget({ maxDuration: "300 millis" }).tools({ remote }).run("go")).rejects.toMatchObject({ _tag: "BudgetExceeded" })
    expect(server.cancels.length).toBe(1)
  })

  it("a non-streaming agent is sent a blocking request and polled until its task settles", async () => {
    const server = track(await sdkServer({
      execute: async (context, out) => {
        out.status(TaskState.TASK_STATE_WORKING)
        await new Promise((r) => setTimeout(r, 50))
        out.artifact([{ content: { $case: "text", value: `slowly: ${inputText(context)}` }, metadata: undefined, filename: "", mediaType: "text/plain" }])
        out.status(TaskState.TASK_STATE_COMPLETED)
        out.finished()
      }
    }, { streaming: false }))
    const remote = await a2aAgent(server.url, { name: "remote", pollMs: 20 })
    expect(await Effect.runPromise(executeTool(remote, { input: "x" }, "c1"))).toBe("slowly: x")
  })

  it("a stream dropped before a final state is a transport error, never a hang", async () => {
    const server = track(await droppingServer())
    const remote = await a2aAgent(server.url, { name: "remote", timeoutMs: 5_000 })
    const error = await failureOf(executeTool(remote, { input: "x" }, "c1"))
    expect(error).toMatchObject({ _tag: "A2aError", kind: "transport" })
  })

  it("a URL without a card is an A2aError of kind card", async () => {
    const server = track(await droppingServer())
    await expect(a2aAgent(server.url, { cardPath: "/missing.json" })).rejects.toMatchObject({ _tag: "A2aError", kind: "card" })
    await expect(a2aAgent("http://127.0.0.1:9/")).rejects.toMatchObject({ _tag: "A2aError", kind: "card" })
    const started = Date.now()
    await expect(a2aAgent(server.url, { cardPath: "/hang", cardTimeoutMs: 200 })).rejects.toMatchObject({ _tag: "A2aError", kind: "card" })
    expect(Date.now() - started).toBeLessThan(2_000)
  })
})

describe("a2aAgent against our own server", () => {
  it("the usage the remote reports is charged to the calling run's token budget", async () => {
    const remoteAgent = agent("helper").model(scriptedModel({ _tag: "Text", content: "42", usage: { inputTokens: 400, outputTokens: 200 } }))
    const server = track(await serveA2a(remoteAgent))
    const helper = await a2aAgent(server.url, { name: "helper" })
    expect(await Effect.runPromise(executeTool(helper, { input: "x" }, "c1"))).toBe("42")
    const model = scriptedModel([
      { _tag: "ToolCalls", calls: [{ id: "1", name: "helper", arguments: { input: "x" } }], usage: { inputTokens: 10, outputTokens: 10 } },
      { _tag: "Text", content: "done", usage: { inputTokens: 10, outputTokens: 10 } }
    ])
    await expect(agent("lead").model(model).budget({ maxTokens: 500 }).tools({ helper }).run("go")).rejects.toMatchObject({ _tag: "BudgetExceeded" })
    const roomy = scriptedModel([
      { _tag: "ToolCalls", calls: [{ id: "1", name: "helper", arguments: { input: "x" } }], usage: { inputTokens: 10, outputTokens: 10 } },
      { _tag: "Text", content: "done", usage: { inputTokens: 10, outputTokens: 10 } }
    ])
    expect(await agent("lead").model(roomy).budget({ maxTokens: 5_000 }).tools({ helper }).run("go")).toBe("done")
  })

  it("a remote approval is input-required: the call fails typed, and the remote tool never ran", async () => {
    let runs = 0
    const pay = tool("pay", { args: Schema.Struct({}), needsApproval: true, run: () => (runs += 1, "paid") })
    const bank = agent("bank").model(scriptedModel({ _tag: "ToolCalls", calls: [{ id: "p1", name: "pay", arguments: {} }] })).tools({ pay })
    const server = track(await serveA2a(bank))
    const remote = await a2aAgent(server.url)
    expect(remote.name).toBe("bank")
    const error = await failureOf(executeTool(remote, { input: "pay" }, "c1"))
    expect(error).toMatchObject({ _tag: "A2aError", kind: "input-required" })
    expect((error as A2aError).reason).toContain("pay (p1)")
    expect(runs).toBe(0)
  })
})

describe("a2aRemoteAgent: a remote agent as an agent of ours", () => {
  it("is a handoff target: the model hands off, the remote gets the conversation, and its answer is the run's output", async () => {
    const seen: Array<string> = []
    const server = track(await sdkServer({
      execute: async (context, out) => {
        seen.push(inputText(context))
        out.artifact([{ content: { $case: "text", value: `billing handled: ${inputText(context).split("\n").at(-1)}` }, metadata: undefined, filename: "", mediaType: "text/plain" }])
        out.status(TaskState.TASK_STATE_COMPLETED)
        out.finished()
      }
    }))
    const billing = await a2aRemoteAgent(server.url, { name: "billing" })
    const model = scriptedModel((req) => ({ _tag: "ToolCalls", calls: [{ id: `h${req.messages.length}`, name: "handoff_to_billing", arguments: {} }] }))
    // A target that may ask for input makes the run `Completed | Suspended`.
    const triage = agent("triage").model(model).skills(() => [skill("route", "Route requests").handoffs(billing)])
    expect(await triage.run("refund my order")).toMatchObject({ _tag: "Completed", output: "billing handled: refund my order" })
    expect(model.requests[0]?.tools.map((t) => t.name)).toContain("handoff_to_billing")
    // A handoff after a conversation sends the conversation, not only the input.
    const chat = session(triage, "s1")
    await chat.send("my order 7 arrived broken")
    await chat.send("refund it please")
    expect(seen.at(-1)).toContain("The conversation so far:\nuser: my order 7 arrived broken")
    expect(seen.at(-1)!.split("\n").at(-1)).toBe("refund it please")
  })

  it("is a composite member, and its failure ends the run with a ModelError caused by the A2aError", async () => {
    const server = track(await sdkServer({
      execute: async (context, out) => {
        if (inputText(context).includes("fail")) out.status(TaskState.TASK_STATE_FAILED, "remote broke")
        else {
          out.artifact([{ content: { $case: "text", value: `[${inputText(context)}]` }, metadata: undefined, filename: "", mediaType: "text/plain" }])
          out.status(TaskState.TASK_STATE_COMPLETED)
        }
        out.finished()
      }
    }))
    const bracket = await a2aRemoteAgent(server.url, { name: "bracket" })
    const upper = agent("upper").model(scriptedModel((req) => ({ _tag: "Text", content: String(req.messages.at(-1)?.content).toUpperCase() })))
    expect(await (pipeline("both", upper, bracket as any) as any).run("hi")).toMatchObject({ output: "[HI]" })
    const error = await bracket.run("please fail").then(() => undefined, (e: unknown) => e)
    expect(error).toMatchObject({ _tag: "ModelError", retryable: false })
    expect((error as { cause: unknown }).cause).toMatchObject({ _tag: "A2aError", kind: "task-failed", reason: "remote broke" })
  })

  it("streams the remote's progress into our run's events, and charges the usage it reports", async () => {
    const server = track(await sdkServer({
      execute: async (context, out) => {
        out.status(TaskState.TASK_STATE_WORKING, "looking it up")
        out.artifact([{ content: { $case: "text", value: `found ${inputText(context)}` }, metadata: undefined, filename: "", mediaType: "text/plain" }])
        out.status(TaskState.TASK_STATE_COMPLETED, undefined, { usage: { inputTokens: 40, outputTokens: 2 } })
        out.finished()
      }
    }))
    const finder = await a2aRemoteAgent(server.url, { name: "finder" })
    const events: Array<RunStreamEvent> = []
    await Effect.runPromise(Stream.runForEach(finder.runStream("order 7"), (e) => Effect.sync(() => void events.push(e))))
    expect(events.filter((e) => e._tag === "ReasoningDelta").map((e) => (e as { delta: string }).delta)).toEqual(["looking it up\n"])
    expect(events.filter((e) => e._tag === "TextDelta").map((e) => (e as { delta: string }).delta)).toEqual(["found order 7"])
    const response = events.find((e) => e._tag === "ModelResponse") as { response: { usage?: unknown } }
    expect(response.response.usage).toEqual({ inputTokens: 40, outputTokens: 2 })
    // As a tool of ours: the child's progress is in the caller's stream, and its tokens count against the caller's budget.
    const lead = agent("lead").model(scriptedModel([{ _tag: "ToolCalls", calls: [{ id: "f1", name: "finder", arguments: { input: "order 9" } }] }, { _tag: "Text", content: "ok" }]))
      .tools({ finder: (finder as any).asTool({ name: "finder", description: "Finds orders" }) } as any)
    const parent: Array<RunStreamEvent> = []
    await Effect.runPromise(Stream.runForEach(chatStream(lead as any, [], "find order 9"), (e) => Effect.sync(() => void parent.push(e))))
    expect(parent.some((e) => e._tag === "TextDelta" && e.parentRunId !== undefined && e.delta === "found order 9")).toBe(true)
    const over = await (agent("lead").model(scriptedModel([{ _tag: "ToolCalls", calls: [{ id: "f1", name: "finder", arguments: { input: "x" } }] }, { _tag: "Text", content: "ok" }]))
      .tools({ finder: (finder as any).asTool({ name: "finder", description: "Finds orders" }) } as any).budget({ maxTokens: 10 }) as any).run("find").then(() => undefined, (e: unknown) => e)
    expect(over).toMatchObject({ _tag: "BudgetExceeded" })
  })

  it("a remote asking for input suspends the calling run; our resume sends the answer to the same remote task", async () => {
    const { server, asked } = await askingPayer("Which account, checking or savings?")
    const payer = await a2aRemoteAgent(server.url, { name: "payer" })
    const model = scriptedModel((req) =>
      req.messages.at(-1)?.role === "user"
        ? { _tag: "ToolCalls", calls: [{ id: "p1", name: "payer", arguments: { input: "pay 10" } }] }
        : { _tag: "Text", content: `lead: ${String(req.messages.at(-1)?.content)}` })
    const lead = agent("lead").model(model).tools({ payer: (payer as any).asTool({ name: "payer", description: "Pays" }) } as any) as any
    const first = await lead.run("pay 10")
    expect(first._tag).toBe("Suspended")
    expect(first.pending).toHaveLength(1)
    const waiting = first.pending[0]
    expect(waiting.tool).toBe("reply_to_payer")
    expect(waiting.id.startsWith("p1/")).toBe(true)
    expect(waiting.args).toMatchObject({ question: "Which account, checking or savings?", taskId: asked[0]!.taskId })
    // The snapshot crosses as JSON (another process could resume it).
    const snapshot = JSON.parse(JSON.stringify(first.snapshot))
    const done = await Effect.runPromise(lead.resume(snapshot, { [waiting.id]: Decision.edit({ ...waiting.args, answer: "savings" }) }))
    expect(done).toMatchObject({ _tag: "Completed", output: "lead: paid from savings" })
    expect(asked).toHaveLength(2)
    expect(asked[1]).toEqual({ taskId: asked[0]!.taskId, text: "savings" })

    // Denied: the remote task is canceled and the run goes on with the refusal.
    const again = await lead.run("pay 10")
    const wait2 = again.pending[0]
    const denied: any = await Effect.runPromise(lead.resume(again.snapshot, { [wait2.id]: Decision.deny("not now") }))
    expect(denied._tag).toBe("Completed")
    expect(String(denied.output)).toContain("asked for input and got none")
    expect(server.cancels).toContain(wait2.args.taskId)
  })
  it("a remote asking for input inside a parallel: every decision is checked before any member continues; the answer reaches the asking task only", async () => {
    const { server, asked } = await askingPayer("Which account?")
    const payer = await a2aRemoteAgent(server.url, { name: "payer" })
    const ran: Array<string> = []
    const gated = tool("transfer", { description: "Moves money", args: Schema.Struct({ amount: Schema.Number }), needsApproval: true, run: ({ amount }) => (ran.push(`transfer ${amount}`), "moved") })
    const banker = agent("banker")
      .model(scriptedModel((req) => req.messages.at(-1)?.role === "user" ? { _tag: "ToolCalls", calls: [{ id: "t1", name: "transfer", arguments: { amount: 5 } }] } : { _tag: "Text", content: "banked" }))
      .tools({ transfer: gated })
    const flow = parallel("both", [banker, payer] as any) as any
    const first = await flow.run("pay 10")
    expect(first._tag).toBe("Suspended")
    const reply = first.pending.find((p: any) => p.tool === "reply_to_payer")
    const transfer = first.pending.find((p: any) => p.tool === "transfer")
    expect(reply.id.startsWith("1/")).toBe(true)
    expect(transfer.id).toBe("0/t1")
    const stored = JSON.stringify(first.snapshot)
    // An answer its Schema refuses is refused before the banker's approved transfer runs, and nothing reaches the remote.
    const refused = await failureOf(flow.resume(JSON.parse(stored), { [reply.id]: Decision.edit({ ...reply.args, answer: 42 }), [transfer.id]: Decision.approve }))
    expect(refused).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(ran).toEqual([])
    expect(asked).toHaveLength(1)
    // An edit naming another task still answers the task that asked (the ids come from the remote's own question).
    const done: any = await Effect.runPromise(flow.resume(JSON.parse(stored), {
      [reply.id]: Decision.edit({ ...reply.args, taskId: "someone-elses-task", answer: "savings" }),
      [transfer.id]: Decision.approve
    }))
    expect(done._tag).toBe("Completed")
    expect(ran).toEqual(["transfer 5"])
    expect(asked[1]).toEqual({ taskId: asked[0]!.taskId, text: "savings" })
  })
})
