/**
 * Wire bodies for streaming tests, written from each API's documented format: Anthropic Messages SSE
 * events; SSE framing with LF or CRLF line ends and keep-alive comments; bodies torn at byte offsets
 * (inside UTF-8 characters, SSE lines and JSON).
 */

import type { ModelClient } from "../../src/index.ts"

/** A provider's wire: its client on a base URL, and one reply as a JSON body or as a stream body. */
export interface Wire {
  readonly name: string
  readonly client: (url: string) => ModelClient
  readonly json: (reply: WireReply, turn: number) => unknown
  readonly stream: (reply: WireReply, turn: number, sizes: ReadonlyArray<number>, style: SseStyle) => string
  /** Whether a request asks for a stream. */
  readonly isStream: (url: string, body: any) => boolean
  /** Whether the client assigns the call ids (the wire has none): requests are then compared up to them. */
  readonly assignsIds?: boolean
  /** What of a request body must be the same streamed or not. */
  readonly comparable?: (body: any) => unknown
}

/** What a model answers in one turn, independent of any wire. */
export interface WireReply {
  readonly thinking?: { readonly text: string; readonly signature: string } | undefined
  readonly redacted?: string | undefined
  readonly text: string
  readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly input: Record<string, unknown> }>
  readonly usage: { readonly input: number; readonly output: number }
}

/** Splits a text into pieces whose sizes cycle through `sizes` (JS characters). */
export const pieces = (text: string, sizes: ReadonlyArray<number>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0, k = 0; i < text.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length]!)
    out.push(text.slice(i, i + size))
    i += size
  }
  return out
}

/** Tears a body's UTF-8 bytes at sizes cycling through `sizes`, so a piece may end inside a character. */
export const tearBytes = (body: string, sizes: ReadonlyArray<number> = [7, 3, 11, 1, 5]): Array<Uint8Array> => {
  const bytes = Buffer.from(body, "utf8")
  const out: Array<Uint8Array> = []
  for (let i = 0, k = 0; i < bytes.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length]!)
    out.push(bytes.subarray(i, i + size))
    i += size
  }
  return out
}

/** SSE framing options: CRLF line ends and `: keep-alive` comments between events. */
export interface SseStyle {
  readonly crlf?: boolean
  readonly keepAlive?: boolean
}

/** An SSE body of named events (`event:` + `data:`), or of unnamed `data:` events when `name` is undefined. */
export const sse = (events: ReadonlyArray<readonly [string | undefined, unknown]>, style: SseStyle = {}, tail = ""): string => {
  const nl = style.crlf === true ? "\r\n" : "\n"
  return events
    .map(([name, data], i) =>
      (style.keepAlive === true && i % 2 === 0 ? `: keep-alive${nl}${nl}` : "") +
      (name === undefined ? "" : `event: ${name}${nl}`) +
      `data: ${JSON.stringify(data)}${nl}${nl}`
    )
    .join("") + tail
}

// ---- Anthropic Messages ----

/** The non-streamed Messages reply (its id the same for the streamed reply, so both paths agree). */
export const anthropicJson = (reply: WireReply) => ({
  id: "msg_01wire",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-6",
  content: [
    ...(reply.thinking === undefined ? [] : [{ type: "thinking", thinking: reply.thinking.text, signature: reply.thinking.signature }]),
    ...(reply.redacted === undefined ? [] : [{ type: "redacted_thinking", data: reply.redacted }]),
    ...(reply.text === "" ? [] : [{ type: "text", text: reply.text }]),
    ...reply.calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.input }))
  ],
  stop_reason: reply.calls.length > 0 ? "tool_use" : "end_turn",
  stop_sequence: null,
  usage: { input_tokens: reply.usage.input, output_tokens: reply.usage.output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
})

/**
 * The same reply as Messages stream events: `message_start`, a `ping`, each block's start, deltas
 * (texts torn at `sizes`) and stop, `message_delta` with the stop reason and output usage, `message_stop`.
 */
export const anthropicEvents = (reply: WireReply, sizes: ReadonlyArray<number> = [5]): Array<readonly [string, unknown]> => {
  const json = anthropicJson(reply)
  const events: Array<readonly [string, unknown]> = [
    ["message_start", { type: "message_start", message: { ...json, content: [], stop_reason: null, usage: { ...json.usage, output_tokens: 1 } } }],
    ["ping", { type: "ping" }]
  ]
  json.content.forEach((block, index) => {
    const b = block as Record<string, any>
    if (b.type === "thinking") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } }])
      for (const piece of pieces(b.thinking, sizes)) events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } }])
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: b.signature } }])
    } else if (b.type === "redacted_thinking") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: b }])
    } else if (b.type === "text") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }])
      for (const piece of pieces(b.text, sizes)) events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }])
    } else {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } }])
      const args = JSON.stringify(b.input)
      for (const piece of args === "{}" ? [] : pieces(args, sizes)) {
        events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } }])
      }
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }])
  })
  events.push(["message_delta", { type: "message_delta", delta: { stop_reason: json.stop_reason, stop_sequence: null }, usage: { output_tokens: reply.usage.output } }])
  events.push(["message_stop", { type: "message_stop" }])
  return events
}

// ---- OpenAI Chat Completions (also what @ai-sdk/openai-compatible speaks) ----

/** The non-streamed completion; thinking goes as `reasoning_content` (as DeepSeek, vLLM send it). Its id is the turn's, streamed or not. */
export const openAiChatJson = (reply: WireReply, turn: number) => ({
  id: `chatcmpl-w${turn}`,
  object: "chat.completion",
  created: 1_700_000_000,
  model: "gpt-4o-mini",
  choices: [{
    index: 0,
    message: {
      role: "assistant",
      content: reply.text === "" && reply.calls.length > 0 ? null : reply.text,
      ...(reply.thinking === undefined ? {} : { reasoning_content: reply.thinking.text }),
      ...(reply.calls.length === 0
        ? {}
        : { tool_calls: reply.calls.map((c) => ({ id: `call_${turn}_${c.id}`, type: "function", function: { name: c.name, arguments: JSON.stringify(c.input) } })) })
    },
    logprobs: null,
    finish_reason: reply.calls.length > 0 ? "tool_calls" : "stop"
  }],
  usage: { prompt_tokens: reply.usage.input, completion_tokens: reply.usage.output, total_tokens: reply.usage.input + reply.usage.output }
})

/** The same reply as `chat.completion.chunk` events (unnamed `data:` lines), usage last, then `[DONE]`. */
export const openAiChatEvents = (reply: WireReply, turn: number, sizes: ReadonlyArray<number> = [5]): Array<readonly [undefined, unknown]> => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: `chatcmpl-w${turn}`,
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "gpt-4o-mini",
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }]
  })
  const out: Array<readonly [undefined, unknown]> = [[undefined, chunk({ role: "assistant", content: "" })]]
  for (const piece of reply.thinking === undefined ? [] : pieces(reply.thinking.text, sizes)) out.push([undefined, chunk({ reasoning_content: piece })])
  for (const piece of pieces(reply.text, sizes)) out.push([undefined, chunk({ content: piece })])
  reply.calls.forEach((c, index) => {
    out.push([undefined, chunk({ tool_calls: [{ index, id: `call_${turn}_${c.id}`, type: "function", function: { name: c.name, arguments: "" } }] })])
    for (const piece of pieces(JSON.stringify(c.input), sizes)) out.push([undefined, chunk({ tool_calls: [{ index, function: { arguments: piece } }] })])
  })
  out.push([undefined, chunk({}, reply.calls.length > 0 ? "tool_calls" : "stop")])
  out.push([undefined, { ...chunk({}), choices: [], usage: { prompt_tokens: reply.usage.input, completion_tokens: reply.usage.output, total_tokens: reply.usage.input + reply.usage.output } }])
  return out
}

// ---- OpenAI Responses ----

const responsesOutput = (reply: WireReply, turn: number) => [
  ...(reply.thinking === undefined
    ? []
    : [{ type: "reasoning", id: `rs_${turn}`, summary: [{ type: "summary_text", text: reply.thinking.text }], encrypted_content: reply.thinking.signature }]),
  ...(reply.text === "" ? [] : [{ type: "message", id: `msg_${turn}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.text, annotations: [] }] }]),
  ...reply.calls.map((c) => ({ type: "function_call", id: `fc_${turn}_${c.id}`, call_id: `call_${turn}_${c.id}`, name: c.name, arguments: JSON.stringify(c.input), status: "completed" }))
]

/** The non-streamed Responses reply (`status: "completed"`, unless `status` says otherwise). */
export const responsesJson = (reply: WireReply, turn: number, extra: Record<string, unknown> = {}) => ({
  id: `resp_${turn}`,
  object: "response",
  created_at: 1_700_000_000,
  status: "completed",
  model: "gpt-5-mini",
  output: responsesOutput(reply, turn),
  usage: {
    input_tokens: reply.usage.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: reply.usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: reply.usage.input + reply.usage.output
  },
  ...extra
})

/**
 * The same reply as Responses stream events (named SSE events whose `type` is the event name):
 * created, each item added / its deltas / done, then `response.completed` (or the `end` given).
 */
export const responsesEvents = (
  reply: WireReply,
  turn: number,
  sizes: ReadonlyArray<number> = [5],
  end: "response.completed" | "response.incomplete" = "response.completed",
  extra: Record<string, unknown> = {}
): Array<readonly [string, unknown]> => {
  const whole = responsesJson(reply, turn, extra)
  let seq = 0
  const ev = (type: string, data: Record<string, unknown>): readonly [string, unknown] => [type, { type, sequence_number: seq++, ...data }]
  const out: Array<readonly [string, unknown]> = [ev("response.created", { response: { ...whole, status: "in_progress", output: [], usage: null } })]
  whole.output.forEach((item: Record<string, any>, output_index) => {
    if (item.type === "reasoning") {
      out.push(ev("response.output_item.added", { output_index, item: { ...item, summary: [], encrypted_content: null } }))
      for (const piece of pieces(item.summary[0].text, sizes)) {
        out.push(ev("response.reasoning_summary_text.delta", { item_id: item.id, output_index, summary_index: 0, delta: piece }))
      }
    } else if (item.type === "message") {
      out.push(ev("response.output_item.added", { output_index, item: { ...item, content: [], status: "in_progress" } }))
      for (const piece of pieces(item.content[0].text, sizes)) {
        out.push(ev("response.output_text.delta", { item_id: item.id, output_index, content_index: 0, delta: piece, logprobs: [] }))
      }
    } else {
      out.push(ev("response.output_item.added", { output_index, item: { ...item, arguments: "", status: "in_progress" } }))
      for (const piece of pieces(item.arguments, sizes)) {
        out.push(ev("response.function_call_arguments.delta", { item_id: item.id, output_index, delta: piece }))
      }
      out.push(ev("response.function_call_arguments.done", { item_id: item.id, output_index, arguments: item.arguments }))
    }
    out.push(ev("response.output_item.done", { output_index, item }))
  })
  out.push(ev(end, { response: whole }))
  return out
}

// ---- Gemini generateContent ----

/** The parts of a Gemini model turn: thought summary, text, function calls (no ids, as the Gemini API sends them); the thought signature on the first call, else on the text. */
const geminiParts = (reply: WireReply) => {
  const signature = reply.thinking?.signature
  const calls = reply.calls.map((c, i) => ({ functionCall: { name: c.name, args: c.input }, ...(i === 0 && signature !== undefined ? { thoughtSignature: signature } : {}) }))
  const textSigned = calls.length === 0 && signature !== undefined
  return [
    ...(reply.thinking === undefined ? [] : [{ text: reply.thinking.text, thought: true }]),
    ...(reply.text === "" && !textSigned ? [] : [{ text: reply.text, ...(textSigned ? { thoughtSignature: signature } : {}) }]),
    ...calls
  ]
}

const geminiUsage = (reply: WireReply, final: boolean) => ({
  promptTokenCount: reply.usage.input,
  ...(final ? { candidatesTokenCount: reply.usage.output, totalTokenCount: reply.usage.input + reply.usage.output } : {}),
  ...(final && reply.thinking !== undefined ? { thoughtsTokenCount: 7 } : {})
})

/** The non-streamed `generateContent` reply. */
export const geminiJson = (reply: WireReply, extra: Record<string, unknown> = {}) => ({
  candidates: [{ content: { role: "model", parts: geminiParts(reply) }, finishReason: "STOP", index: 0, ...extra }],
  usageMetadata: geminiUsage(reply, true),
  modelVersion: "gemini-2.5-flash",
  responseId: "resp-1"
})

/** The same reply as `streamGenerateContent?alt=sse` chunks (unnamed `data:` events): texts torn at `sizes`, calls whole, the finish reason and full usage last. */
export const geminiEvents = (reply: WireReply, sizes: ReadonlyArray<number> = [5], finishReason = "STOP"): Array<readonly [undefined, unknown]> => {
  const chunk = (parts: Array<unknown>, final = false) => ({
    candidates: [{ content: { role: "model", parts }, ...(final ? { finishReason } : {}), index: 0 }],
    usageMetadata: geminiUsage(reply, final),
    modelVersion: "gemini-2.5-flash",
    responseId: "resp-1"
  })
  const out: Array<readonly [undefined, unknown]> = []
  for (const part of geminiParts(reply)) {
    const p = part as Record<string, any>
    if (typeof p.text === "string" && p.text !== "") {
      const texts = pieces(p.text, sizes)
      texts.forEach((text, i) => {
        const last = i === texts.length - 1
        out.push([undefined, chunk([{ ...p, text, ...(last || p.thoughtSignature === undefined ? {} : { thoughtSignature: undefined }) }].map((x) => (last ? x : { ...x, thoughtSignature: undefined })).map((x) => JSON.parse(JSON.stringify(x))))])
      })
    } else out.push([undefined, chunk([p])])
  }
  out.push([undefined, chunk([], true)])
  return out
}

// ---- Ollama /api/chat ----

/** The non-streamed `/api/chat` reply (tool calls without ids, arguments as objects). */
export const ollamaJson = (reply: WireReply) => ({
  model: "qwen3:8b",
  created_at: "2026-11-22T14:13:43.416799Z",
  message: {
    role: "assistant",
    content: reply.text,
    ...(reply.thinking === undefined ? {} : { thinking: reply.thinking.text }),
    ...(reply.calls.length === 0 ? {} : { tool_calls: reply.calls.map((c) => ({ function: { name: c.name, arguments: c.input } })) })
  },
  done: true,
  done_reason: "stop",
  prompt_eval_count: reply.usage.input,
  eval_count: reply.usage.output
})

/** The same reply as NDJSON lines: thinking and content torn at `sizes`, tool calls whole, then the `done` line. */
export const ollamaLines = (reply: WireReply, sizes: ReadonlyArray<number> = [5]): string => {
  const line = (message: Record<string, unknown>, done = false) =>
    JSON.stringify({
      model: "qwen3:8b",
      created_at: "2026-11-22T14:13:43.416799Z",
      message: { role: "assistant", content: "", ...message },
      done,
      ...(done ? { done_reason: "stop", prompt_eval_count: reply.usage.input, eval_count: reply.usage.output } : {})
    }) + "\n"
  return [
    ...pieces(reply.thinking?.text ?? "", sizes).map((thinking) => line({ thinking })),
    ...pieces(reply.text, sizes).map((content) => line({ content })),
    ...(reply.calls.length === 0 ? [] : [line({ tool_calls: reply.calls.map((c) => ({ function: { name: c.name, arguments: c.input } })) })]),
    line({}, true)
  ].join("")
}
