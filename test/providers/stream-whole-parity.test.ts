/**
 * Streamed or whole, the same reply means the same thing: for each provider, a table of replies (plain,
 * edge and malformed) is sent once as the provider's whole JSON answer and once as its documented
 * stream (derived from the same reply, texts torn), through a loopback server; the loop must see the
 * same `LlmResponse` (ids the client assigned compared as "assigned") or the same `ModelError` (same
 * kind, same retryable flag), never a defect and never a call without a name.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { Cause, Effect, Exit, Result, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { anthropic, fromAiSdk, gemini, type ModelClient, ModelError, type ModelRequest, ollama, openai, openaiResponses, PartsAssembler } from "../../src/index.ts"
import { checkResponseAssigningIds } from "../../src/model/normalize-response.ts"
import { makeCalculatorTools } from "../fixtures.ts"
import { type Reply, useLoopback } from "./loopback.ts"
import { pieces, sse, tearBytes } from "./wire.ts"
import { quietLogs } from "../support/quiet-logs.ts"

quietLogs()

const serve = useLoopback()
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [makeCalculatorTools().add.definition] }
const options = { retry: false, timeout: "5 seconds", idleTimeout: "5 seconds" } as const
const sizes = [3, 1, 5]

/** What the loop sees: a checked response (as `runtime/call-model.ts` checks it), or an error's tag, kind and retryable flag. */
type Outcome =
  | { readonly response: unknown }
  | { readonly error: { readonly tag: string; readonly kind: string | undefined; readonly retryable: boolean } }
  | { readonly defect: string }

/** Ids the client made up (the wire had none): random `call_<base36>` whole, `call_<turn>_<index>` streamed, Gemini's `gemini_call_…`. */
const assigned = /^(call_[0-9a-z]{6,}|call_\d+_\d+|gemini_call_.*)$/

const outcomeOf = (exit: Exit.Exit<unknown, unknown>): Outcome => {
  if (Exit.isSuccess(exit)) {
    const checked = checkResponseAssigningIds(exit.value, 1)
    if (Result.isFailure(checked)) return { error: { tag: "ModelError", kind: undefined, retryable: false } }
    const response = checked.success
    if (response._tag !== "ToolCalls") return { response }
    return { response: { ...response, calls: response.calls.map((c) => ({ ...c, id: assigned.test(c.id) ? "(assigned)" : c.id })) } }
  }
  const error = Cause.squash(exit.cause)
  if (error instanceof ModelError) return { error: { tag: error._tag, kind: error.kind, retryable: error.isRetryable } }
  return { defect: String(error) }
}

const whole = (client: ModelClient) => Effect.runPromiseExit(client.chat(request)).then(outcomeOf)

/** The stream folded as the loop folds it (`PartsAssembler`); parts that make no response are a ModelError, as in the loop. */
const streamed = (client: ModelClient) =>
  Effect.runPromiseExit(
    Effect.suspend(() => {
      const assembler = new PartsAssembler(1)
      return client.stream!(request).pipe(
        Stream.runForEach((part) => Effect.sync(() => assembler.add(part))),
        Effect.flatMap(() => {
          const response = assembler.response()
          return Result.isSuccess(response) ? Effect.succeed(response.success) : Effect.fail(new ModelError({ provider: "model client", reason: response.failure, retryable: false }))
        })
      )
    })
  ).then(outcomeOf)

/** What a case must end with, beside being the same both ways. */
type Expected = "Text" | "ToolCalls" | { readonly kind?: string; readonly retryable: boolean }

interface Case<W> {
  readonly name: string
  readonly reply: W
  readonly expected: Expected
  /** A stream that is not the derived one (a wire that says more, or less, while streaming). */
  readonly stream?: Reply
}

const sseReply = (body: string): Reply => ({ pieces: tearBytes(body, [7, 3, 11, 1, 5]), contentType: "text/event-stream" })

const checkExpected = (outcome: Outcome, expected: Expected) => {
  expect(outcome).not.toHaveProperty("defect")
  if (typeof expected === "string") {
    expect(outcome).toHaveProperty("response._tag", expected)
    const response = (outcome as { response: { calls?: ReadonlyArray<{ name: unknown }> } }).response
    // A malformed call is a ModelError, never a call the allowlist would refuse under a made-up name.
    for (const call of response.calls ?? []) expect(call.name === "" || call.name === "undefined" || typeof call.name !== "string").toBe(false)
  } else {
    expect(outcome).toHaveProperty("error")
    const error = (outcome as { error: { kind: string | undefined; retryable: boolean } }).error
    expect({ kind: error.kind, retryable: error.retryable }).toEqual({ kind: expected.kind, retryable: expected.retryable })
  }
}

const parity = <W>(provider: string, client: (url: string) => ModelClient, wholeReply: (w: W) => Reply, streamReply: (w: W) => Reply, cases: ReadonlyArray<Case<W>>) =>
  describe(`${provider}: the same reply streamed or whole`, () => {
    it.each(cases)("$name", async (c) => {
      const server = await serve([wholeReply(c.reply), c.stream ?? streamReply(c.reply)])
      const a = await whole(client(server.url))
      const b = await streamed(client(server.url))
      expect(b).toEqual(a)
      checkExpected(a, c.expected)
    })
  })

const usage = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 }

// ---- OpenAI Chat Completions (openai and fromAiSdk over @ai-sdk/openai-compatible) ----

interface ChatReply {
  readonly message: Record<string, any>
  /** `null`: the server sends none (some OpenAI-compatible ones never do); the stream still ends with `[DONE]`. */
  readonly finish: string | null
}

const chatWhole = (r: ChatReply): Reply => ({
  json: {
    id: "chatcmpl-p",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-4o-mini",
    choices: [{ index: 0, message: { role: "assistant", refusal: null, ...r.message }, logprobs: null, finish_reason: r.finish }],
    usage
  }
})

/** The chunks of the same message: reasoning, content and refusal torn; each call's id, type and name first, its arguments torn after. */
const chatEvents = (r: ChatReply, deltas: ReadonlyArray<Record<string, unknown>> = []): Array<unknown> => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: "chatcmpl-p",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "gpt-4o-mini",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
  })
  const m = r.message
  const out: Array<unknown> = [chunk({ role: "assistant", content: "" })]
  for (const piece of pieces(typeof m.reasoning_content === "string" ? m.reasoning_content : "", sizes)) out.push(chunk({ reasoning_content: piece }))
  for (const piece of pieces(typeof m.content === "string" ? m.content : "", sizes)) out.push(chunk({ content: piece }))
  for (const piece of pieces(typeof m.refusal === "string" ? m.refusal : "", sizes)) out.push(chunk({ refusal: piece }))
  ;(m.tool_calls ?? []).forEach((call: Record<string, any>, index: number) => {
    const { arguments: args, ...fn } = call.function ?? {}
    const torn = typeof args === "string"
    out.push(chunk({ tool_calls: [{ ...call, index, function: { ...fn, ...(torn ? { arguments: "" } : args === undefined ? {} : { arguments: args }) } }] }))
    if (torn) for (const piece of pieces(args, sizes)) out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
  })
  for (const delta of deltas) out.push(chunk(delta))
  out.push(chunk({}, r.finish))
  out.push({ ...chunk({}), choices: [], usage })
  return out
}
/** The reply's stream; `deltas`: more deltas, before the finish (what the message cannot say, such as a legacy `function_call`'s). */
const chatStream = (r: ChatReply, deltas?: ReadonlyArray<Record<string, unknown>>): Reply =>
  sseReply(chatEvents(r, deltas).map((e) => `data: ${JSON.stringify(e)}\n\n`).join("") + "data: [DONE]\n\n")

const fn = (id: string | undefined, name: unknown, args?: unknown) => ({
  ...(id === undefined ? {} : { id }),
  type: "function",
  function: { ...(name === undefined ? {} : { name }), ...(args === undefined ? {} : { arguments: args }) }
})

const chatCases: ReadonlyArray<Case<ChatReply>> = [
  { name: "a text", reply: { message: { content: "4" }, finish: "stop" }, expected: "Text" },
  { name: "tool calls with ids", reply: { message: { content: null, tool_calls: [fn("t1", "add", '{"a":1,"b":2}'), fn("t2", "add", '{"a":3,"b":4}')] }, finish: "tool_calls" }, expected: "ToolCalls" },
  { name: "a tool call without an id", reply: { message: { content: null, tool_calls: [fn(undefined, "add", '{"a":1,"b":2}')] }, finish: "tool_calls" }, expected: "ToolCalls" },
  { name: "text beside a tool call", reply: { message: { content: "Adding.", tool_calls: [fn("t1", "add", '{"a":1,"b":2}')] }, finish: "tool_calls" }, expected: "ToolCalls" },
  { name: "a tool call without arguments", reply: { message: { content: null, tool_calls: [fn("t1", "add")] }, finish: "tool_calls" }, expected: "ToolCalls" },
  { name: "a tool call whose name is empty", reply: { message: { content: null, tool_calls: [fn("t1", "", '{"a":1}')] }, finish: "tool_calls" }, expected: { retryable: false } },
  { name: "a tool call without a name", reply: { message: { content: null, tool_calls: [fn("t1", undefined, '{"a":1}')] }, finish: "tool_calls" }, expected: { retryable: false } },
  { name: "cut at the token limit in a text", reply: { message: { content: "The answer is" }, finish: "length" }, expected: { kind: "length", retryable: false } },
  { name: "cut at the token limit in a call's arguments", reply: { message: { content: null, tool_calls: [fn("t1", "add", '{"a":1,"b"')] }, finish: "length" }, expected: { kind: "length", retryable: false } },
  { name: "filtered", reply: { message: { content: "" }, finish: "content_filter" }, expected: { kind: "content-filter", retryable: false } },
  { name: "a refusal", reply: { message: { content: null, refusal: "I can't help with that." }, finish: "stop" }, expected: { kind: "refusal", retryable: false } },
  { name: "nothing, for an unknown reason", reply: { message: { content: "" }, finish: "weird" }, expected: { kind: "malformed", retryable: false } },
  { name: "finish_reason tool_calls without a tool call", reply: { message: { content: null }, finish: "tool_calls" }, expected: { kind: "malformed", retryable: false } },
  {
    name: "a legacy function_call",
    reply: { message: { content: null, function_call: { name: "add", arguments: '{"a":1,"b":2}' } }, finish: "function_call" },
    expected: { kind: "malformed", retryable: false },
    // Streamed as the legacy API streams it: `delta.function_call`, its arguments torn.
    stream: chatStream({ message: { content: null }, finish: "function_call" }, [{ function_call: { name: "add", arguments: "" } }, { function_call: { arguments: '{"a":1,' } }, { function_call: { arguments: '"b":2}' } }])
  },
  { name: "only reasoning", reply: { message: { content: "", reasoning_content: "Let me think." }, finish: "stop" }, expected: { kind: "thinking-only", retryable: false } },
  { name: "a text without a finish_reason", reply: { message: { content: "The answer is 42." }, finish: null }, expected: "Text" },
  { name: "a tool call without a finish_reason", reply: { message: { content: null, tool_calls: [fn("t1", "add", '{"a":1,"b":2}')] }, finish: null }, expected: "ToolCalls" }
]

parity("openai (Chat Completions)", (url) => openai("gpt-4o-mini", { apiKey: "k", baseURL: `${url}/v1`, ...options }), chatWhole, chatStream, chatCases)

parity(
  "fromAiSdk(@ai-sdk/openai-compatible)",
  (url) => fromAiSdk(createOpenAICompatible({ name: "p", baseURL: `${url}/v1`, apiKey: "k" })("gpt-4o-mini"), options),
  chatWhole,
  chatStream,
  // The AI SDK provider reads the wire itself: it makes up its own ids for calls without one (random, in
  // both paths), refuses a whole answer's call without `arguments` (its response schema requires them;
  // its stream does not), finishes a refusal as `content-filter`, and fails a stream without a
  // finish_reason itself ("Response stream ended without a finish reason.", an error part), [DONE] or not.
  chatCases
    .filter((c) => c.name !== "a tool call without an id" && c.name !== "a tool call without arguments" && c.reply.finish !== null)
    .map((c) => (c.name === "a refusal" ? { ...c, expected: { kind: "content-filter", retryable: false } } : c))
)

// ---- OpenAI Responses ----

interface ResponsesReply {
  readonly output: ReadonlyArray<Record<string, any>>
  readonly status?: "completed" | "incomplete" | "failed"
  readonly extra?: Record<string, unknown>
}

const responsesBody = (r: ResponsesReply) => ({
  id: "resp_p",
  object: "response",
  created_at: 1_700_000_000,
  status: r.status ?? "completed",
  model: "gpt-5-mini",
  output: r.output,
  usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 4, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 14 },
  ...r.extra
})

/** The same response as stream events: each item added, its deltas (texts and arguments torn), done; then the end event its status names. */
const responsesStream = (r: ResponsesReply): Reply => {
  const body = responsesBody(r)
  let seq = 0
  const ev = (type: string, data: Record<string, unknown>): readonly [string, unknown] => [type, { type, sequence_number: seq++, ...data }]
  const out: Array<readonly [string, unknown]> = [ev("response.created", { response: { ...body, status: "in_progress", output: [], usage: null } })]
  r.output.forEach((item, output_index) => {
    if (item.type === "reasoning") {
      out.push(ev("response.output_item.added", { output_index, item: { ...item, summary: [], encrypted_content: null } }))
      ;(item.summary ?? []).forEach((s: { text: string }, summary_index: number) => {
        for (const delta of pieces(s.text, sizes)) out.push(ev("response.reasoning_summary_text.delta", { item_id: item.id, output_index, summary_index, delta }))
      })
    } else if (item.type === "message") {
      out.push(ev("response.output_item.added", { output_index, item: { ...item, content: [], status: "in_progress" } }))
      ;(item.content ?? []).forEach((part: Record<string, any>, content_index: number) => {
        const type = part.type === "refusal" ? "response.refusal.delta" : "response.output_text.delta"
        for (const delta of pieces(part.type === "refusal" ? part.refusal : part.text, sizes)) out.push(ev(type, { item_id: item.id, output_index, content_index, delta }))
      })
    } else if (item.type === "function_call") {
      out.push(ev("response.output_item.added", { output_index, item: { ...item, arguments: "", status: "in_progress" } }))
      if (typeof item.arguments === "string") {
        for (const delta of pieces(item.arguments, sizes)) out.push(ev("response.function_call_arguments.delta", { item_id: item.id, output_index, delta }))
        out.push(ev("response.function_call_arguments.done", { item_id: item.id, output_index, arguments: item.arguments }))
      }
    } else out.push(ev("response.output_item.added", { output_index, item }))
    out.push(ev("response.output_item.done", { output_index, item }))
  })
  const status = r.status ?? "completed"
  out.push(ev(`response.${status}`, { response: body }))
  return sseReply(sse(out))
}

const message = (...content: ReadonlyArray<Record<string, unknown>>) => ({ type: "message", id: "msg_p", role: "assistant", status: "completed", content })
const outputText = (text: string) => ({ type: "output_text", text, annotations: [] })
const functionCall = (fields: Record<string, unknown>) => ({ type: "function_call", id: "fc_p", status: "completed", ...fields })
const reasoningItem = (id: string, summaries: ReadonlyArray<string>, encrypted?: string) => ({
  type: "reasoning",
  id,
  summary: summaries.map((text) => ({ type: "summary_text", text })),
  ...(encrypted === undefined ? {} : { encrypted_content: encrypted })
})

parity(
  "openaiResponses",
  (url) => openaiResponses("gpt-5-mini", { apiKey: "k", baseURL: `${url}/v1`, ...options }),
  (r) => ({ json: responsesBody(r) }),
  responsesStream,
  [
    { name: "a text", reply: { output: [message(outputText("4"))] }, expected: "Text" },
    { name: "a function call", reply: { output: [functionCall({ call_id: "c1", name: "add", arguments: '{"a":1,"b":2}' })] }, expected: "ToolCalls" },
    { name: "a function call without call_id", reply: { output: [functionCall({ name: "add", arguments: '{"a":1,"b":2}' })] }, expected: "ToolCalls" },
    { name: "a function call without arguments", reply: { output: [functionCall({ call_id: "c1", name: "add" })] }, expected: "ToolCalls" },
    { name: "a function call whose name is empty", reply: { output: [functionCall({ call_id: "c1", name: "", arguments: "{}" })] }, expected: { retryable: false } },
    { name: "a function call without a name", reply: { output: [functionCall({ call_id: "c1", arguments: "{}" })] }, expected: { retryable: false } },
    {
      name: "output_text after a function call",
      reply: { output: [functionCall({ call_id: "c1", name: "add", arguments: '{"a":1,"b":2}' }), message(outputText("Adding."))] },
      expected: "ToolCalls"
    },
    {
      name: "reasoning items (summaries, none, encrypted) before a call",
      reply: {
        output: [reasoningItem("rs_1", ["First.", "Second."], "enc1"), reasoningItem("rs_2", []), functionCall({ call_id: "c1", name: "add", arguments: "{}" })]
      },
      expected: "ToolCalls"
    },
    { name: "only reasoning", reply: { output: [reasoningItem("rs_1", ["Hmm."])] }, expected: { kind: "thinking-only", retryable: false } },
    {
      name: "incomplete at max_output_tokens with text",
      reply: { output: [message(outputText("The answer"))], status: "incomplete", extra: { incomplete_details: { reason: "max_output_tokens" } } },
      expected: { kind: "length", retryable: false }
    },
    {
      name: "incomplete at max_output_tokens inside a call",
      reply: { output: [functionCall({ call_id: "c1", name: "add", arguments: '{"a":' })], status: "incomplete", extra: { incomplete_details: { reason: "max_output_tokens" } } },
      expected: { kind: "length", retryable: false }
    },
    {
      name: "incomplete by the content filter",
      reply: { output: [], status: "incomplete", extra: { incomplete_details: { reason: "content_filter" } } },
      expected: { kind: "content-filter", retryable: false }
    },
    {
      name: "failed with server_error",
      reply: { output: [], status: "failed", extra: { error: { code: "server_error", message: "boom" } } },
      expected: { retryable: true }
    },
    {
      name: "failed with invalid_prompt",
      reply: { output: [], status: "failed", extra: { error: { code: "invalid_prompt", message: "no" } } },
      expected: { retryable: false }
    },
    { name: "a refusal", reply: { output: [message({ type: "refusal", refusal: "I can't." })] }, expected: { kind: "refusal", retryable: false } }
  ]
)

// ---- Anthropic Messages ----

interface AnthropicReply {
  readonly content: ReadonlyArray<Record<string, any>>
  readonly stop: string | null
  /** The arguments a `tool_use` block streams when they are not its `input` as JSON (a call cut mid-way). */
  readonly partial?: string
}

const anthropicBody = (r: AnthropicReply) => ({
  id: "msg_p",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-6",
  content: r.content,
  stop_reason: r.stop,
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
})

const anthropicStream = (r: AnthropicReply): Reply => {
  const body = anthropicBody(r)
  const out: Array<readonly [string, unknown]> = [
    ["message_start", { type: "message_start", message: { ...body, content: [], stop_reason: null, usage: { ...body.usage, output_tokens: 1 } } }]
  ]
  r.content.forEach((b, index) => {
    const delta = (d: Record<string, unknown>) => out.push(["content_block_delta", { type: "content_block_delta", index, delta: d }])
    if (b.type === "text") {
      out.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }])
      for (const text of pieces(b.text, sizes)) delta({ type: "text_delta", text })
    } else if (b.type === "thinking") {
      out.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } }])
      for (const thinking of pieces(b.thinking, sizes)) delta({ type: "thinking_delta", thinking })
      delta({ type: "signature_delta", signature: b.signature })
    } else if (b.type === "tool_use") {
      out.push(["content_block_start", { type: "content_block_start", index, content_block: { ...b, input: {} } }])
      const args = r.partial ?? JSON.stringify(b.input ?? {})
      for (const partial_json of args === "{}" ? [] : pieces(args, sizes)) delta({ type: "input_json_delta", partial_json })
    } else out.push(["content_block_start", { type: "content_block_start", index, content_block: b }])
    out.push(["content_block_stop", { type: "content_block_stop", index }])
  })
  out.push(["message_delta", { type: "message_delta", delta: { stop_reason: r.stop, stop_sequence: null }, usage: { output_tokens: 4 } }])
  out.push(["message_stop", { type: "message_stop" }])
  return sseReply(sse(out))
}

const toolUse = (fields: Record<string, unknown>) => ({ type: "tool_use", ...fields })

parity(
  "anthropic",
  (url) => anthropic("claude-sonnet-4-6", { apiKey: "k", baseURL: url, ...options }),
  (r) => ({ json: anthropicBody(r) }),
  anthropicStream,
  [
    { name: "a text", reply: { content: [{ type: "text", text: "4" }], stop: "end_turn" }, expected: "Text" },
    { name: "tool_use", reply: { content: [toolUse({ id: "toolu_1", name: "add", input: { a: 1, b: 2 } })], stop: "tool_use" }, expected: "ToolCalls" },
    { name: "tool_use without arguments", reply: { content: [toolUse({ id: "toolu_1", name: "add", input: {} })], stop: "tool_use" }, expected: "ToolCalls" },
    { name: "tool_use without stop_reason tool_use", reply: { content: [{ type: "text", text: "Adding." }, toolUse({ id: "toolu_1", name: "add", input: { a: 1 } })], stop: "end_turn" }, expected: "ToolCalls" },
    { name: "tool_use without an id", reply: { content: [toolUse({ name: "add", input: { a: 1 } })], stop: "tool_use" }, expected: "ToolCalls" },
    { name: "tool_use without a name", reply: { content: [toolUse({ id: "toolu_1", input: { a: 1 } })], stop: "tool_use" }, expected: { retryable: false } },
    { name: "tool_use whose name is empty", reply: { content: [toolUse({ id: "toolu_1", name: "", input: { a: 1 } })], stop: "tool_use" }, expected: { retryable: false } },
    {
      name: "max_tokens mid tool_use (partial JSON)",
      reply: { content: [toolUse({ id: "toolu_1", name: "add", input: {} })], stop: "max_tokens", partial: '{"a": 1, "b' },
      expected: { kind: "length", retryable: false }
    },
    { name: "max_tokens in a text", reply: { content: [{ type: "text", text: "The answer" }], stop: "max_tokens" }, expected: { kind: "length", retryable: false } },
    { name: "pause_turn with text", reply: { content: [{ type: "text", text: "Searching." }], stop: "pause_turn" }, expected: "Text" },
    { name: "pause_turn with nothing", reply: { content: [], stop: "pause_turn" }, expected: { kind: "malformed", retryable: false } },
    { name: "stop_reason tool_use without a tool_use block", reply: { content: [], stop: "tool_use" }, expected: { kind: "malformed", retryable: false } },
    { name: "a refusal", reply: { content: [{ type: "text", text: "I can't" }], stop: "refusal" }, expected: { kind: "refusal", retryable: false } },
    {
      name: "signed and redacted thinking before a call",
      reply: {
        content: [{ type: "thinking", thinking: "Add them.", signature: "sig" }, { type: "redacted_thinking", data: "xyz" }, toolUse({ id: "toolu_1", name: "add", input: { a: 1 } })],
        stop: "tool_use"
      },
      expected: "ToolCalls"
    },
    { name: "only thinking", reply: { content: [{ type: "thinking", thinking: "Hmm.", signature: "sig" }], stop: "end_turn" }, expected: { kind: "thinking-only", retryable: false } },
    // The stream still ends with message_stop.
    { name: "a text without a stop_reason", reply: { content: [{ type: "text", text: "The answer is 42." }], stop: null }, expected: "Text" },
    { name: "tool_use without a stop_reason", reply: { content: [toolUse({ id: "toolu_1", name: "add", input: { a: 1 } })], stop: null }, expected: "ToolCalls" }
  ]
)

// ---- Gemini generateContent ----

interface GeminiReply {
  readonly parts?: ReadonlyArray<Record<string, unknown>>
  readonly finish?: string
  readonly extra?: Record<string, unknown>
}

const geminiUsage = { promptTokenCount: 10, candidatesTokenCount: 4, totalTokenCount: 14 }
const geminiBody = (r: GeminiReply) => ({
  candidates: [{ ...(r.parts === undefined ? {} : { content: { role: "model", parts: r.parts } }), ...(r.finish === undefined ? {} : { finishReason: r.finish }), index: 0 }],
  usageMetadata: geminiUsage,
  modelVersion: "gemini-2.5-flash",
  responseId: "resp-p",
  ...r.extra
})

/** The same reply as `streamGenerateContent` chunks: one per part (texts torn, calls whole), the finish reason on the last. */
const geminiStream = (r: GeminiReply): Reply => {
  const chunk = (parts: ReadonlyArray<unknown> | undefined, finish?: string) => ({
    candidates: [{ ...(parts === undefined ? {} : { content: { role: "model", parts } }), ...(finish === undefined ? {} : { finishReason: finish }), index: 0 }],
    usageMetadata: geminiUsage,
    modelVersion: "gemini-2.5-flash",
    responseId: "resp-p",
    ...r.extra
  })
  const out: Array<unknown> = []
  for (const part of r.parts ?? []) {
    if (typeof part.text === "string" && part.text !== "") {
      const texts = pieces(part.text, sizes)
      texts.forEach((text, i) => out.push(chunk([{ ...part, text, ...(i === texts.length - 1 ? {} : { thoughtSignature: undefined }) }])))
    } else out.push(chunk([part]))
  }
  out.push(chunk(r.parts === undefined ? undefined : [], r.finish))
  return sseReply(out.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(""))
}

const call = (name: unknown, args: unknown = { a: 1, b: 2 }) => ({ functionCall: { ...(name === undefined ? {} : { name }), args } })

parity(
  "gemini",
  (url) => gemini("gemini-2.5-flash", { apiKey: "k", baseURL: url, ...options }),
  (r) => ({ json: geminiBody(r) }),
  geminiStream,
  [
    { name: "a text", reply: { parts: [{ text: "4" }], finish: "STOP" }, expected: "Text" },
    { name: "function calls", reply: { parts: [call("add"), call("add", { a: 3, b: 4 })], finish: "STOP" }, expected: "ToolCalls" },
    { name: "a function call without a name", reply: { parts: [call(undefined)], finish: "STOP" }, expected: { retryable: false } },
    { name: "a function call whose name is empty", reply: { parts: [call("")], finish: "STOP" }, expected: { retryable: false } },
    { name: "SAFETY after some text", reply: { parts: [{ text: "Well" }], finish: "SAFETY" }, expected: { kind: "content-filter", retryable: false } },
    { name: "SAFETY without content", reply: { finish: "SAFETY" }, expected: { kind: "content-filter", retryable: false } },
    { name: "RECITATION", reply: { parts: [{ text: "Once upon" }], finish: "RECITATION" }, expected: { kind: "content-filter", retryable: false } },
    { name: "MAX_TOKENS in a text", reply: { parts: [{ text: "The answer" }], finish: "MAX_TOKENS" }, expected: { kind: "length", retryable: false } },
    { name: "MAX_TOKENS after a function call", reply: { parts: [call("add")], finish: "MAX_TOKENS" }, expected: { kind: "length", retryable: false } },
    { name: "MALFORMED_FUNCTION_CALL", reply: { finish: "MALFORMED_FUNCTION_CALL" }, expected: { kind: "malformed", retryable: false } },
    { name: "MALFORMED_FUNCTION_CALL after some text", reply: { parts: [{ text: "Let me add." }], finish: "MALFORMED_FUNCTION_CALL" }, expected: { kind: "malformed", retryable: false } },
    { name: "a blocked prompt", reply: { extra: { candidates: undefined, promptFeedback: { blockReason: "SAFETY" } } }, expected: { kind: "content-filter", retryable: false } },
    {
      name: "a thought and a signed call",
      reply: { parts: [{ text: "Add.", thought: true }, { ...call("add"), thoughtSignature: "sig" }], finish: "STOP" },
      expected: "ToolCalls"
    },
    // The stream's body still ends cleanly after its last chunk (Gemini's stream has no last event).
    { name: "a text without a finishReason", reply: { parts: [{ text: "The answer is 42." }] }, expected: "Text" },
    { name: "function calls without a finishReason", reply: { parts: [call("add")] }, expected: "ToolCalls" },
    { name: "no candidates", reply: { extra: { candidates: [] } }, expected: { retryable: false } }
  ]
)

// ---- Ollama /api/chat ----

interface OllamaReply {
  readonly message: Record<string, any>
  readonly doneReason?: string
}

const ollamaBody = (r: OllamaReply, message: Record<string, unknown>, done: boolean) => ({
  model: "qwen3:8b",
  created_at: "2026-11-22T14:13:43.416799Z",
  message: { role: "assistant", content: "", ...message },
  done,
  ...(done ? { ...(r.doneReason === undefined ? {} : { done_reason: r.doneReason }), prompt_eval_count: 10, eval_count: 4 } : {})
})

const ollamaStream = (r: OllamaReply): Reply => {
  const { content, thinking, tool_calls } = r.message
  const lines = [
    ...pieces(thinking ?? "", sizes).map((t) => ollamaBody(r, { thinking: t }, false)),
    ...pieces(content ?? "", sizes).map((c) => ollamaBody(r, { content: c }, false)),
    ...(tool_calls === undefined ? [] : [ollamaBody(r, { tool_calls }, false)]),
    ollamaBody(r, {}, true)
  ]
  return { pieces: tearBytes(lines.map((l) => `${JSON.stringify(l)}\n`).join("")), contentType: "application/x-ndjson" }
}

const ollamaCall = (name: unknown, args?: unknown) => ({ function: { ...(name === undefined ? {} : { name }), ...(args === undefined ? {} : { arguments: args }) } })

parity(
  "ollama",
  (url) => ollama("qwen3:8b", { host: url, ...options }),
  (r) => ({ json: ollamaBody(r, r.message, true) }),
  ollamaStream,
  [
    { name: "a text", reply: { message: { content: "4" }, doneReason: "stop" }, expected: "Text" },
    { name: "tool calls", reply: { message: { tool_calls: [ollamaCall("add", { a: 1, b: 2 }), ollamaCall("add", { a: 3 })] }, doneReason: "stop" }, expected: "ToolCalls" },
    { name: "a tool call without arguments", reply: { message: { tool_calls: [ollamaCall("add")] }, doneReason: "stop" }, expected: "ToolCalls" },
    { name: "a tool call with arguments as text", reply: { message: { tool_calls: [ollamaCall("add", '{"a":1}')] }, doneReason: "stop" }, expected: "ToolCalls" },
    { name: "a tool call without a name", reply: { message: { tool_calls: [ollamaCall(undefined, {})] }, doneReason: "stop" }, expected: { retryable: false } },
    { name: "a tool call whose name is empty", reply: { message: { tool_calls: [ollamaCall("", {})] }, doneReason: "stop" }, expected: { retryable: false } },
    { name: "done_reason length in a text", reply: { message: { content: "The answer" }, doneReason: "length" }, expected: { kind: "length", retryable: false } },
    { name: "done_reason length beside a call", reply: { message: { tool_calls: [ollamaCall("add", { a: 1 })] }, doneReason: "length" }, expected: { kind: "length", retryable: false } },
    { name: "done_reason load with nothing", reply: { message: { content: "" }, doneReason: "load" }, expected: { kind: "malformed", retryable: false } },
    { name: "done_reason unload with a text", reply: { message: { content: "4" }, doneReason: "unload" }, expected: "Text" },
    { name: "no done_reason", reply: { message: { content: "4" } }, expected: "Text" },
    { name: "only thinking", reply: { message: { content: "", thinking: "Hmm." }, doneReason: "stop" }, expected: { kind: "thinking-only", retryable: false } }
  ]
)
