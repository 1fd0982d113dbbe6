/**
 * GenAI spans under the capturing tracer (STACK.md "Spans"): names, kinds and attributes of the
 * invoke_agent / chat / execute_tool spans, the provider's response id and model (streamed or not),
 * `error.type` on failures, the session id as conversation id, the client's metadata, and content
 * capture: off by default, on when asked.
 */
import { Effect, Exit, Schedule, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, anthropic, CaptureMessageContent, jsonMode, ModelClient, ModelError, ModelErrorPolicy, ollama, openai, outputStrategy, session, text, tool, toolCalls, withModelErrorPolicy } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { captureFlag, captureContentVariable } from "../../src/runtime/gen-ai-content.ts"
import { chatSpan } from "../../src/runtime/gen-ai-spans.ts"
import { captureSpans } from "../fixtures.ts"
import { completion, startLoopback } from "../providers/loopback.ts"

const echo = tool("echo", { description: "Echo the text", args: Schema.Struct({ text: Schema.String }), run: ({ text }) => text })

const echoAgent = (client: ModelClient) => agent("echoer").prompt("Repeat what you are told.").model(client).tools({ echo })

const script = () =>
  scriptedModel([toolCalls([{ id: "e1", name: "echo", arguments: { text: "secret-42" } }]), text("said secret-42", { inputTokens: 7, outputTokens: 2 })])

const contentKeys = ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"]

describe("GenAI spans", () => {
  it("name the agent, the model and the tool, with the conventions' kinds", async () => {
    const { spans, tracer } = captureSpans()
    const client = { ...script(), metadata: { provider: "ollama", model: "qwen2.5:7b", temperature: 0.2 } }
    await Effect.runPromise(echoAgent(client).runEffect("say it").pipe(Effect.withTracer(tracer)))
    expect(spans.map((s) => `${s.name} (${s.kind})`)).toEqual([
      "invoke_agent echoer (internal)",
      "agent.turn (internal)",
      "chat qwen2.5:7b (client)",
      "execute_tool echo (internal)",
      "agent.turn (internal)",
      "chat qwen2.5:7b (client)"
    ])
    const chat = Object.fromEntries(spans[5]!.attributes)
    expect(chat).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "ollama",
      "gen_ai.request.model": "qwen2.5:7b",
      "gen_ai.request.temperature": 0.2,
      "gen_ai.usage.input_tokens": 7,
      "gen_ai.usage.output_tokens": 2,
      "gen_ai.response.finish_reasons": ["stop"]
    })
    expect(chat).not.toHaveProperty("gen_ai.request.max_tokens")
    expect(Object.fromEntries(spans[3]!.attributes)).toMatchObject({
      "gen_ai.tool.name": "echo",
      "gen_ai.tool.call.id": "e1",
      "gen_ai.tool.type": "function",
      "gen_ai.tool.description": "Echo the text",
      "tool.outcome": "success"
    })
  })

  it("capture no content by default", async () => {
    expect(process.env[captureContentVariable]).toBeUndefined()
    const { spans, tracer } = captureSpans()
    await Effect.runPromise(echoAgent(script()).runEffect("say secret-42").pipe(Effect.withTracer(tracer)))
    const keys = spans.flatMap((s) => [...s.attributes.keys()])
    expect(keys.filter((k) => contentKeys.includes(k))).toEqual([])
    expect(spans.flatMap((s) => [...s.attributes.values()]).filter((v) => String(v).includes("secret-42"))).toEqual([])
  })

  it("capture prompts, completions, tool arguments and results when CaptureMessageContent is provided", async () => {
    const { spans, tracer } = captureSpans()
    await Effect.runPromise(
      echoAgent(script()).runEffect("say secret-42").pipe(Effect.provideService(CaptureMessageContent, true), Effect.withTracer(tracer))
    )
    const firstChat = spans.find((s) => s.name === "chat")!
    expect(JSON.parse(String(firstChat.attributes.get("gen_ai.system_instructions")))).toEqual([
      { type: "text", content: expect.stringContaining("Repeat what you are told.") }
    ])
    expect(JSON.parse(String(firstChat.attributes.get("gen_ai.input.messages")))).toEqual([{ role: "user", parts: [{ type: "text", content: "say secret-42" }] }])
    const tool = spans.find((s) => s.name === "execute_tool echo")!
    expect(tool.attributes.get("gen_ai.tool.call.arguments")).toBe('{"text":"secret-42"}')
    expect(tool.attributes.get("gen_ai.tool.call.result")).toBe("secret-42")
    const lastChat = spans.filter((s) => s.name === "chat").at(-1)!
    expect(JSON.parse(String(lastChat.attributes.get("gen_ai.output.messages")))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "said secret-42" }], finish_reason: "stop" }
    ])
  })

  it("set error.type on the chat and invoke_agent spans when the model fails", async () => {
    const { spans, tracer } = captureSpans()
    const failing = ModelClient.fromFunction(() => Effect.fail(new ModelError({ provider: "test", reason: "503", retryable: false })), { provider: "openai", model: "gpt-x" })
    const exit = await Effect.runPromise(Effect.exit(agent("a").model(failing).runEffect("hi").pipe(Effect.withTracer(tracer))))
    expect(Exit.isFailure(exit)).toBe(true)
    const chat = spans.find((s) => s.name === "chat gpt-x")!
    expect(chat.attributes.get("error.type")).toBe("ModelError")
    expect(chat.status._tag === "Ended" && Exit.isFailure(chat.status.exit)).toBe(true)
    expect(spans.find((s) => s.name === "invoke_agent a")!.attributes.get("error.type")).toBe("ModelError")
  })

  it("set gen_ai.response.id and gen_ai.response.model when the answer carries them, streamed or not", async () => {
    for (const run of ["runEffect", "runStream"] as const) {
      const { spans, tracer } = captureSpans()
      const model = scriptedModel([
        { ...toolCalls([{ id: "e1", name: "echo", arguments: { text: "x" } }]), responseId: "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", responseModel: "gpt-4o-mini-2024-07-18" },
        text("said x")
      ], { chunk: 2 })
      const client = { ...model, metadata: { provider: "openai", model: "gpt-4o-mini" } }
      const program = run === "runEffect" ? echoAgent(client).runEffect("say x") : Stream.runDrain(echoAgent(client).runStream("say x"))
      await Effect.runPromise(program.pipe(Effect.withTracer(tracer)))
      const [first, second] = spans.filter((s) => s.name === "chat gpt-4o-mini").map((s) => Object.fromEntries(s.attributes))
      expect(first, run).toMatchObject({
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.response.id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18"
      })
      // An answer that says neither leaves both out.
      expect(second, run).not.toHaveProperty("gen_ai.response.id")
      expect(second, run).not.toHaveProperty("gen_ai.response.model")
    }
  })

  it("carry what a provider answered over its wire (openai against a loopback server)", async () => {
    const server = await startLoopback([{ json: { ...completion({ content: "hi" }, "stop"), id: "chatcmpl-loop1" } }])
    try {
      const { spans, tracer } = captureSpans()
      await Effect.runPromise(agent("a").model(openai("gpt-4o-mini", { apiKey: "k", baseURL: server.url })).runEffect("hi").pipe(Effect.withTracer(tracer)))
      expect(Object.fromEntries(spans.find((s) => s.name === "chat gpt-4o-mini")!.attributes)).toMatchObject({
        "gen_ai.response.id": "chatcmpl-loop1",
        "gen_ai.response.model": "gpt-4o-mini-2024-07-18"
      })
    } finally {
      await server.close()
    }
  })

  it("set gen_ai.output.type=json on a chat span whose request asks for a JSON answer, and nothing otherwise", async () => {
    const { spans, tracer } = captureSpans()
    const Answer = Schema.Struct({ value: Schema.Finite })
    await Effect.runPromise(agent("solver", { output: outputStrategy(Answer, "native") }).model(scriptedModel(text('{"value":4}'))).runEffect("2 + 2").pipe(Effect.withTracer(tracer)))
    await Effect.runPromise(agent("plain").model(scriptedModel(text("4"))).runEffect("2 + 2").pipe(Effect.withTracer(tracer)))
    expect(spans.filter((s) => s.name === "chat").map((s) => s.attributes.get("gen_ai.output.type"))).toEqual(["json", undefined])
  })

  it("report a session's id as gen_ai.conversation.id, and no conversation outside one", async () => {
    const { spans, tracer } = captureSpans()
    const chat = session(agent("assistant").model(scriptedModel([text("hello"), text("again")])), "user-42")
    await Effect.runPromise(chat.sendEffect("hi").pipe(Effect.withTracer(tracer)))
    await Effect.runPromise(agent("assistant").model(scriptedModel(text("plain"))).runEffect("hi").pipe(Effect.withTracer(tracer)))
    const runs = spans.filter((s) => s.name === "invoke_agent assistant")
    expect(runs.map((s) => s.attributes.get("gen_ai.conversation.id"))).toEqual(["user-42", undefined])
  })
})

describe("invoke_agent usage", () => {
  it("sums the run's own model calls' input and output tokens; an agent called as a tool has its own", async () => {
    const { spans, tracer } = captureSpans()
    const research = agent("researcher").model(scriptedModel(text("found", { inputTokens: 50, outputTokens: 5 }))).asTool({ name: "research" })
    const model = scriptedModel([
      { ...toolCalls([{ id: "r1", name: "research", arguments: { input: "x" } }]), usage: { inputTokens: 10, outputTokens: 3 } },
      text("done", { inputTokens: 20, outputTokens: 4 })
    ])
    await Effect.runPromise(agent("writer").model(model).tools({ research }).runEffect("go").pipe(Effect.withTracer(tracer)))
    const usage = (name: string) => {
      const attributes = Object.fromEntries(spans.find((s) => s.name === `invoke_agent ${name}`)!.attributes)
      return [attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]]
    }
    expect(usage("writer")).toEqual([30, 7])
    expect(usage("researcher")).toEqual([50, 5])
  })
})

describe("gen_ai.tool.call.result", () => {
  it("is recorded for a call that ran, not for one refused with invalid arguments (the model gets feedback, not a result)", async () => {
    const { spans, tracer } = captureSpans()
    const model = scriptedModel([toolCalls([{ id: "e1", name: "echo", arguments: { text: 42 } }]), toolCalls([{ id: "e2", name: "echo", arguments: { text: "ok" } }]), text("done")])
    await Effect.runPromise(echoAgent(model).runEffect("say it").pipe(Effect.provideService(CaptureMessageContent, true), Effect.withTracer(tracer)))
    const tools = spans.filter((s) => s.name === "execute_tool echo").map((s) => Object.fromEntries(s.attributes))
    expect(tools.map((t) => t["tool.outcome"])).toEqual(["invalid_args", "success"])
    expect(tools[0]).not.toHaveProperty("gen_ai.tool.call.result")
    expect(tools[1]!["gen_ai.tool.call.result"]).toBe("ok")
  })
})

describe("chatSpan", () => {
  it("says gen_ai.request.stream=true for a streaming call, and nothing for one that is not", () => {
    const request = { messages: [{ role: "user" as const, content: "hi" }], tools: [] }
    expect(chatSpan(1, request, undefined, true).options.attributes).toMatchObject({ "gen_ai.request.stream": true })
    expect(chatSpan(1, request, undefined).options.attributes).not.toHaveProperty("gen_ai.request.stream")
  })

  it("a run's chat spans carry it when the run streams (runStream), not when it does not (run)", async () => {
    const streamedRun = captureSpans()
    await Effect.runPromise(Stream.runDrain(echoAgent(script()).runStream("say it")).pipe(Effect.withTracer(streamedRun.tracer)))
    const chats = (spans: typeof streamedRun.spans) => spans.filter((s) => s.name.startsWith("chat")).map((s) => Object.fromEntries(s.attributes)["gen_ai.request.stream"])
    expect(chats(streamedRun.spans)).toEqual([true, true])
    const plainRun = captureSpans()
    await Effect.runPromise(echoAgent(script()).runEffect("say it").pipe(Effect.withTracer(plainRun.tracer)))
    expect(chats(plainRun.spans)).toEqual([undefined, undefined])
  })
})

describe("ModelClient.metadata", () => {
  it("is filled by the providers and left out by fromFunction unless given", () => {
    expect(openai("gpt-4o-mini", { apiKey: "k", maxTokens: 100 }).metadata).toEqual({ provider: "openai", model: "gpt-4o-mini", maxTokens: 100 })
    expect(anthropic("claude-sonnet-4-5", { apiKey: "k", temperature: 0.5 }).metadata).toEqual({
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      temperature: 0.5,
      maxTokens: 4096
    })
    expect(ollama("qwen2.5:7b", { numPredict: 64 }).metadata).toEqual({ provider: "ollama", model: "qwen2.5:7b", maxTokens: 64 })
    expect(ModelClient.fromFunction(() => ({ _tag: "Text", content: "x" })).metadata).toBeUndefined()
    expect(ModelClient.fromFunction(() => ({ _tag: "Text", content: "x" }), { model: "m" }).metadata).toEqual({ model: "m" })
    expect(scriptedModel(text("x")).metadata).toBeUndefined()
  })

  it("is kept by the wrappers (a model-error policy, jsonMode): their spans name the wrapped provider and model", async () => {
    const metadata = { provider: "openai", model: "gpt-4o-mini" }
    const base = (content = "ok") => ModelClient.fromFunction(() => ({ _tag: "Text", content }), metadata)
    const wrapped = [
      withModelErrorPolicy(base(), ModelErrorPolicy.respond({ _tag: "Text", content: "busy" })),
      withModelErrorPolicy(base(), ModelErrorPolicy.retry(Schedule.recurs(1))),
      withModelErrorPolicy(base(), ModelErrorPolicy.fallback([scriptedModel(text("x"))])),
      jsonMode(base(`{"output":"ok"}`))
    ]
    for (const client of wrapped) {
      expect(client.metadata).toEqual(metadata)
      const { spans, tracer } = captureSpans()
      await Effect.runPromise(agent("a").model(client).runEffect("hi").pipe(Effect.withTracer(tracer)))
      const chat = spans.find((span) => span.name.startsWith("chat"))!
      expect(chat.name).toBe("chat gpt-4o-mini")
      expect(Object.fromEntries(chat.attributes)).toMatchObject({ "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini" })
    }
    expect(jsonMode(scriptedModel(text("x"))).metadata).toBeUndefined()
  })
})

describe("captureFlag", () => {
  it("turns capture on for true and 1 only", () => {
    expect(["true", "TRUE", " True ", "1"].map(captureFlag)).toEqual([true, true, true, true])
    expect([undefined, "", "false", "0", "yes", "on", "truee", "1 1"].map(captureFlag)).toEqual([false, false, false, false, false, false, false, false])
  })
})
