/**
 * A failed reply's reason is the server's message, whatever shape its body has: OpenAI's
 * `{"error": {"message"}}`, vLLM's `{"object": "error", "message"}`, FastAPI's `{"detail"}` (a string
 * or a list of `{ loc, msg }`), a proxy's `{"message"}`, a bare `{"error": "…"}`, plain text or an HTML
 * page (cut short). Before, the `openai` SDK read only `error`, so every other shape became
 * "400 status code (no body)". The same for whole and streamed calls, Chat Completions and Responses;
 * and a successful reply whose JSON is labelled `text/plain` is read (Chat Completions, Responses,
 * Anthropic's Messages), not "a completion without choices" or "no output".
 */
import { Effect, Stream } from "effect"
import { describe, expect, it, vi } from "vitest"
import { anthropic, gemini, type ModelClient, type ModelRequest, ollama, openai, openaiResponses } from "../../src/index.ts"
import { bodySummary, errorBodyMessage } from "../../src/providers/error-body.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"
import { anthropicMessage, completion, openAiChunk, type Reply, sseBody, useLoopback } from "./loopback.ts"

quietLogs()

const serve = useLoopback()
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }
const once = { retry: false, timeout: "5 seconds", idleTimeout: "5 seconds" } as const

const bodies: ReadonlyArray<readonly [string, Reply, string]> = [
  [
    "vLLM's ErrorResponse",
    { status: 400, json: { object: "error", message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.", type: "BadRequestError", param: null, code: 400 } },
    "400 This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."
  ],
  [
    "FastAPI's validation detail",
    { status: 422, json: { detail: [{ loc: ["body", "messages"], msg: "field required", type: "value_error.missing" }, { loc: ["body", "model"], msg: "str type expected" }] } },
    "422 body.messages: field required; body.model: str type expected"
  ],
  ["FastAPI's detail string", { status: 404, json: { detail: "Not Found" } }, "404 Not Found"],
  ["a proxy's message", { status: 403, json: { message: "model 'gpt-x' is not allowed for this key" } }, "403 model 'gpt-x' is not allowed for this key"],
  ["a bare error string", { status: 400, json: { error: "model not loaded" } }, "400 model not loaded"],
  ["OpenAI's error object (as before)", { status: 400, json: { error: { message: "Invalid 'messages'.", type: "invalid_request_error" } } }, "400 Invalid 'messages'."],
  ["plain text", { status: 400, raw: "Bad Request: missing model", headers: { "content-type": "text/plain" } }, "400 Bad Request: missing model"],
  ["an empty body (as before)", { status: 400, raw: "" }, "400 status code (no body)"],
  ["JSON of another shape", { status: 400, json: { ok: false, code: 17 } }, '400 {"ok":false,"code":17}']
]

const clients: ReadonlyArray<readonly [string, (url: string) => ModelClient]> = [
  ["openai", (url) => openai("m", { apiKey: "k", baseURL: `${url}/v1`, ...once })],
  ["openaiResponses", (url) => openaiResponses("m", { apiKey: "k", baseURL: `${url}/v1`, ...once })]
]

describe.each(clients)("%s: the server's message of a failed reply", (_name, client) => {
  it.each(bodies)("%s, whole and streamed", async (_shape, reply, reason) => {
    const s = await serve([reply])
    const whole = failureOf(await runExit(client(s.url).chat(request)))
    const streamed = failureOf(await runExit(Stream.runCollect(client(s.url).stream!(request))))
    expect(whole).toMatchObject({ _tag: "ModelError", reason, status: (reply as { status: number }).status, retryable: false })
    expect(streamed).toMatchObject({ _tag: "ModelError", reason, status: (reply as { status: number }).status, retryable: false })
  })

  it("an HTML page is its text, without tags, cut short", async () => {
    const page = `<html><head><style>${"body{margin:0}".repeat(500)}</style></head><body><h1>400 Bad Request</h1><p>${"The request was refused by the gateway. ".repeat(50)}</p></body></html>`
    const s = await serve([{ status: 400, raw: page, headers: { "content-type": "text/html" } }])
    const error = failureOf(await runExit(client(s.url).chat(request)))
    expect(error.reason).toMatch(/^400 400 Bad Request The request was refused by the gateway\./)
    expect(error.reason).not.toMatch(/[<>{}]/)
    expect(error.reason.length).toBeLessThan(220)
  })
})

describe("a successful reply labelled as text", () => {
  it("openai: JSON sent as text/plain is read as the completion it is", async () => {
    const s = await serve([{ raw: JSON.stringify(completion({ content: "fine" }, "stop")), headers: { "content-type": "text/plain" } }])
    expect(await Effect.runPromise(openai("m", { apiKey: "k", baseURL: `${s.url}/v1`, ...once }).chat(request))).toMatchObject({ _tag: "Text", content: "fine" })
  })

  const responsesReply = { id: "resp_1", object: "response", status: "completed", model: "m", output: [{ type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "fine", annotations: [] }] }], usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } }
  const labelledText: ReadonlyArray<readonly [string, (url: string) => ModelClient, unknown]> = [
    ["openaiResponses", (url) => openaiResponses("m", { apiKey: "k", baseURL: `${url}/v1`, ...once }), responsesReply],
    ["anthropic", (url) => anthropic("m", { apiKey: "k", baseURL: url, ...once }), anthropicMessage([{ type: "text", text: "fine" }], "end_turn")]
  ]

  it.each(labelledText)("%s: JSON sent as text/plain is read as the reply it is", async (_name, client, reply) => {
    const s = await serve([{ raw: JSON.stringify(reply), headers: { "content-type": "text/plain" } }])
    expect(await Effect.runPromise(client(s.url).chat(request))).toMatchObject({ _tag: "Text", content: "fine" })
  })

  it.each(labelledText)("%s: a body that is not JSON says so", async (_name, client) => {
    const s = await serve([{ raw: "<html><body>Welcome to nginx!</body></html>", headers: { "content-type": "text/html" } }])
    const error = failureOf(await runExit(client(s.url).chat(request)))
    expect(error).toMatchObject({ retryable: false, reason: "the response body is not a JSON object: Welcome to nginx!" })
  })

  it("openai: a body that is not JSON says so, not that the completion has no choices", async () => {
    const s = await serve([{ raw: "<html><body>Welcome to nginx!</body></html>", headers: { "content-type": "text/html" } }])
    const error = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: `${s.url}/v1`, ...once }).chat(request)))
    expect(error).toMatchObject({ retryable: false, reason: "the response body is not a JSON object: Welcome to nginx!" })
  })
})

describe("a successful reply that is not a JSON object", () => {
  const allClients: ReadonlyArray<readonly [string, (url: string) => ModelClient]> = [
    ...clients,
    ["anthropic", (url) => anthropic("m", { apiKey: "k", baseURL: url, ...once })],
    ["gemini", (url) => gemini("g", { apiKey: "k", baseURL: url, ...once })],
    ["ollama", (url) => ollama("m", { host: url, ...once })]
  ]
  it.each(allClients.flatMap(([name, client]) => ["null", "123", '"str"'].map((body) => [name, body, client] as const)))(
    "%s: %s says so, not a TypeError from inside the client",
    async (_name, body, client) => {
      const s = await serve([{ raw: body }])
      const error = failureOf(await runExit(client(s.url).chat(request)))
      expect(error).toMatchObject({ _tag: "ModelError", retryable: false, reason: expect.stringMatching(/^(the response body is not a JSON object|unexpected response shape): /) })
      expect(error.reason).toContain(body === '"str"' ? "str" : body)
    }
  )
})

describe("gemini: a failed reply that is not Google's error shape", () => {
  it("a proxy's {message} is its reason", async () => {
    const s = await serve([{ status: 403, json: { message: "key not allowed here" } }])
    const error = failureOf(await runExit(gemini("g", { apiKey: "k", baseURL: s.url, ...once }).chat(request)))
    expect(error).toMatchObject({ status: 403, reason: "key not allowed here", retryable: false })
  })
})

describe("errorBodyMessage", () => {
  it("keeps a server's message whole unless it is huge, and a body's text short", () => {
    expect(errorBodyMessage(JSON.stringify({ message: "m".repeat(1_500) }))).toHaveLength(1_500)
    expect(errorBodyMessage(JSON.stringify({ message: "m".repeat(50_000) }))!.length).toBeLessThanOrEqual(2_001)
    expect(errorBodyMessage(JSON.stringify({ other: "x".repeat(50_000) }))!.length).toBeLessThanOrEqual(201)
    expect(errorBodyMessage("y".repeat(100_000))!.length).toBeLessThanOrEqual(201)
  })

  it("says nothing of an empty body or an error object without a message (the SDK's wording stays)", () => {
    expect(errorBodyMessage("  ")).toBeUndefined()
    expect(errorBodyMessage('{"error":{"code":500}}')).toBeUndefined()
  })

  it("summarises a page without its scripts and styles", () => {
    expect(bodySummary("<html><script>var x</script><style>p{}</style><h1>502</h1> <p>Bad   Gateway</p><!-- c --></html>")).toBe("502 Bad Gateway")
  })
})

describe("a 200 that carries an error, whole and streamed alike", () => {
  const routerError = { error: { code: 502, message: "Provider returned error: upstream overloaded" } }
  it("openai: the same ModelError and retry verdict whole as streamed (it was 'no choices', not retried, whole)", async () => {
    const twice = { ...once, retry: { times: 1, base: "1 millis" } } as const
    const whole = await serve([{ json: { id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "error" }], ...routerError } }, { json: routerError }])
    const wholeError = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: `${whole.url}/v1`, ...twice }).chat(request)))
    const streamed = await serve([1, 2].map(() => ({ pieces: [`data: ${JSON.stringify(routerError)}\n\n`], contentType: "text/event-stream" })))
    const streamedError = failureOf(await runExit(Stream.runCollect(openai("m", { apiKey: "k", baseURL: `${streamed.url}/v1`, ...twice }).stream!(request))))
    expect(wholeError).toMatchObject({ _tag: "ModelError", retryable: true, reason: expect.stringContaining("upstream overloaded") })
    expect(streamedError).toMatchObject({ retryable: wholeError.retryable, reason: wholeError.reason })
    expect(whole.requests).toHaveLength(2)
    expect(streamed.requests).toHaveLength(2)
  })

  // A gateway's error sent whole with a 200 to a streamed request: the provider's error, as the whole call reads it.
  const openAiClient = (url: string) => openai("m", { apiKey: "k", baseURL: `${url}/v1`, ...once })
  const anthropicClient = (url: string) => anthropic("m", { apiKey: "k", baseURL: url, ...once })
  const wholeErrors: ReadonlyArray<readonly [string, unknown, boolean, (url: string) => ModelClient]> = [
    ["openai", { error: { code: 502, message: "upstream died" } }, true, openAiClient],
    ["openai", { error: { message: "upstream refused the key", type: "invalid_request_error" } }, false, openAiClient],
    ["openaiResponses", { error: { code: 502, message: "upstream died" } }, true, (url) => openaiResponses("m", { apiKey: "k", baseURL: `${url}/v1`, ...once })],
    ["anthropic", { type: "error", error: { type: "overloaded_error", message: "upstream died" } }, true, anthropicClient],
    ["anthropic", { type: "error", error: { type: "invalid_request_error", message: "upstream refused the key" } }, false, anthropicClient],
    // Gemini's whole call read it as a reply without candidates (not retried) while its stream retried it.
    ["gemini", { error: { code: 503, status: "UNAVAILABLE", message: "upstream overloaded" } }, true, (url) => gemini("g", { apiKey: "k", baseURL: url, ...once })],
    ["gemini", { error: { code: 400, status: "INVALID_ARGUMENT", message: "upstream refused the request" } }, false, (url) => gemini("g", { apiKey: "k", baseURL: url, ...once })]
  ]
  it.each(wholeErrors)("%s: a whole JSON error to a streamed request is that error, as the whole call says it (%j)", async (_name, body, retryable, client) => {
    const s = await serve([{ json: body }])
    const wholeError = failureOf(await runExit(client(s.url).chat(request)))
    const streamedError = failureOf(await runExit(Stream.runCollect(client(s.url).stream!(request))))
    expect(wholeError).toMatchObject({ _tag: "ModelError", retryable, reason: expect.stringContaining("upstream") })
    expect(streamedError).toMatchObject({ _tag: "ModelError", retryable: wholeError.retryable, reason: wholeError.reason })
    expect(streamedError.kind).toBe(wholeError.kind)
  })

  it("openai: a streamed request answered with a whole JSON error is retried as the whole call is", async () => {
    const s = await serve([{ json: { error: { code: 502, message: "upstream died" } } }, { pieces: [sseBody([openAiChunk({ content: "hello" }, "stop")])], contentType: "text/event-stream" }])
    const parts = await Effect.runPromise(Stream.runCollect(openai("m", { apiKey: "k", baseURL: `${s.url}/v1`, ...once, retry: { times: 1, base: "1 millis" } }).stream!(request)))
    expect(parts.flatMap((p) => (p._tag === "TextDelta" ? [p.delta] : [])).join("")).toBe("hello")
    expect(s.requests).toHaveLength(2)
  })
})

describe("openai: a message's content as an array of parts", () => {
  it("is its text parts joined (Magistral's answers), not an empty answer", async () => {
    const s = await serve([{ json: completion({ content: [{ type: "thinking", thinking: [] }, { type: "text", text: "The answer " }, { type: "text", text: "is 4." }] } as never, "stop") }])
    expect(await Effect.runPromise(openai("m", { apiKey: "k", baseURL: `${s.url}/v1`, ...once }).chat(request))).toMatchObject({ _tag: "Text", content: "The answer is 4." })
  })

  it("of another kind is a ModelError saying so", async () => {
    const s = await serve([{ json: completion({ content: 42 } as never, "stop") }])
    const error = failureOf(await runExit(openai("m", { apiKey: "k", baseURL: `${s.url}/v1`, ...once }).chat(request)))
    expect(error).toMatchObject({ retryable: false, reason: "unexpected response shape: the message's content is 42, not text" })
  })
})

describe("anthropic: the server's message of a failed reply, whatever its shape, and always text", () => {
  const anthropicClient = (url: string) => anthropic("m", { apiKey: "k", baseURL: url, ...once })
  it.each([
    ["Anthropic's own shape", { status: 400, json: { type: "error", error: { type: "invalid_request_error", message: "max_tokens: too large" } } }, "max_tokens: too large"],
    ["a gateway's bare error string", { status: 400, json: { error: "plain error from a gateway" } }, "plain error from a gateway"],
    ["FastAPI's detail list", { status: 422, json: { detail: [{ loc: ["body", "model"], msg: "field required" }] } }, "body.model: field required"],
    ["an HTML page", { status: 502, raw: "<html><head><style>p{}</style></head><body><h1>502 Bad Gateway</h1></body></html>", headers: { "content-type": "text/html" } }, "502 Bad Gateway"]
  ] as const)("%s", async (_shape, reply, reason) => {
    const s = await serve([reply as Reply])
    const error = failureOf(await runExit(anthropicClient(s.url).chat(request)))
    expect(error).toMatchObject({ _tag: "ModelError", reason, status: reply.status })
  })

  it("a message of another kind than text is never the reason (it was an object, and broke the cassette)", async () => {
    const s = await serve([{ status: 400, json: { type: "error", error: { type: "invalid_request_error", message: { detail: "bad" } } } }, { status: 400, json: { type: "error", error: { message: 12345 } } }])
    for (let i = 0; i < 2; i++) {
      const error = failureOf(await runExit(anthropicClient(s.url).chat(request)))
      expect(typeof error.reason).toBe("string")
      expect(error.reason).not.toBe("[object Object]")
    }
  })
})

describe("ollama: the server's message of a failed reply, whatever its shape, and nothing printed", () => {
  it("an error object's code still decides the retry (429 insufficient_quota is not retried)", async () => {
    const s = await serve([{ status: 429, json: { error: { code: "insufficient_quota", message: "You exceeded your quota" } } }])
    const error = failureOf(await runExit(ollama("m", { host: s.url, ...once, retry: { times: 2, base: "1 millis" } }).chat(request)))
    expect(error).toMatchObject({ status: 429, retryable: false, reason: "You exceeded your quota" })
    expect(s.requests).toHaveLength(1)
  })

  it.each([
    ["Ollama's own shape", { status: 404, json: { error: "model \"m\" not found" } }, 'model "m" not found'],
    ["a proxy's message", { status: 400, json: { message: "context length exceeded (from proxy)" } }, "context length exceeded (from proxy)"],
    ["FastAPI's detail list", { status: 422, json: { detail: [{ loc: ["body", "model"], msg: "field required" }] } }, "body.model: field required"],
    ["an HTML page", { status: 502, raw: "<html><head><style>p{}</style></head><body><h1>502 Bad Gateway</h1></body></html>", headers: { "content-type": "text/html" } }, "502 Bad Gateway"]
  ] as const)("%s", async (_shape, reply, reason) => {
    const s = await serve([reply as Reply])
    const printed = vi.spyOn(console, "log")
    try {
      const whole = failureOf(await runExit(ollama("m", { host: s.url, ...once }).chat(request)))
      const streamed = failureOf(await runExit(Stream.runCollect(ollama("m", { host: s.url, ...once }).stream!(request))))
      expect(whole).toMatchObject({ _tag: "ModelError", reason, status: reply.status })
      expect(streamed).toMatchObject({ _tag: "ModelError", reason, status: reply.status })
      expect(printed).not.toHaveBeenCalled()
    } finally {
      printed.mockRestore()
    }
  })
})

describe("a streamed request answered with a whole JSON reply (a server that ignores stream: true)", () => {
  const twice = { ...once, retry: { times: 2, base: "1 millis" } } as const
  const geminiAnswer = { candidates: [{ content: { role: "model", parts: [{ text: "fine" }] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 } }
  const geminiClient = (url: string) => gemini("gemini-2.5-flash", { apiKey: "k", baseURL: url, ...twice })
  it.each([
    ["openai", (url: string) => openai("m", { apiKey: "k", baseURL: `${url}/v1`, ...twice }), completion({ content: "fine" }, "stop"), "`stream: true`"],
    ["anthropic", (url: string) => anthropic("m", { apiKey: "k", baseURL: url, ...twice }), anthropicMessage([{ type: "text", text: "fine" }], "end_turn"), "`stream: true`"],
    // A gateway that drops `?alt=sse`: Gemini's own stream without it is a JSON array of responses.
    ["gemini (a whole response)", geminiClient, geminiAnswer, "`alt=sse`"],
    ["gemini (a JSON array of responses)", geminiClient, [geminiAnswer], "`alt=sse`"]
  ] as const)("%s: a ModelError saying so, not retried (it was taken for a cut stream and asked again)", async (_name, client, reply, asked) => {
    const s = await serve([{ json: reply }])
    const error = failureOf(await runExit(Stream.runCollect(client(s.url).stream!(request))))
    expect(error).toMatchObject({ _tag: "ModelError", retryable: false, reason: expect.stringContaining(`not an event stream (it ignored ${asked})`) })
    expect(s.requests).toHaveLength(1)
  })
})

describe("a streamed request answered with a page that is not an event stream (a proxy's, a captive portal's)", () => {
  const twice = { ...once, retry: { times: 2, base: "1 millis" } } as const
  // The providers that read server-sent events, each retrying twice.
  const eventStreamClients = [
    ["openai", (url: string) => openai("m", { apiKey: "k", baseURL: `${url}/v1`, ...twice })],
    ["openaiResponses", (url: string) => openaiResponses("m", { apiKey: "k", baseURL: `${url}/v1`, ...twice })],
    ["anthropic", (url: string) => anthropic("m", { apiKey: "k", baseURL: url, ...twice })],
    ["gemini", (url: string) => gemini("g", { apiKey: "k", baseURL: url, ...twice })]
  ] as const
  const page: Reply = { raw: "<html><head><title>Welcome</title></head><body><h1>Welcome to nginx!</h1>\n\n<p>It works.</p></body></html>", headers: { "content-type": "text/html" } }
  it.each(eventStreamClients)("%s: not retried, as the whole call is not, quoting the page (it was a cut stream, asked again)", async (_name, client) => {
    const s = await serve([page])
    const whole = failureOf(await runExit(client(s.url).chat(request)))
    const streamed = failureOf(await runExit(Stream.runCollect(client(s.url).stream!(request))))
    expect(whole).toMatchObject({ _tag: "ModelError", retryable: false })
    expect(streamed).toMatchObject({ _tag: "ModelError", retryable: false, reason: "the server answered with something that is not an event stream (text/html): Welcome Welcome to nginx! It works." })
    expect(s.requests).toHaveLength(2)
  })

  // A page that ends on a blank line (its text read as events with no data field), and a text that is
  // no page but is declared as something other than an event stream (an Envoy or load balancer message).
  const pageEndingOnABlankLine: Reply = { raw: "<html><body><h1>Welcome to nginx!</h1></body></html>\n\n", headers: { "content-type": "text/html" } }
  const plainText: Reply = { raw: "upstream connect error or disconnect/reset before headers. reset reason: connection failure", headers: { "content-type": "text/plain" } }
  it.each(eventStreamClients)("%s: a page ending on a blank line, and plain text declared text/plain, are no event stream either (not retried)", async (_name, client) => {
    const s = await serve([pageEndingOnABlankLine, plainText])
    const page = failureOf(await runExit(Stream.runCollect(client(s.url).stream!(request))))
    const text = failureOf(await runExit(Stream.runCollect(client(s.url).stream!(request))))
    expect(page).toMatchObject({ _tag: "ModelError", retryable: false, reason: "the server answered with something that is not an event stream (text/html): Welcome to nginx!" })
    expect(text).toMatchObject({
      _tag: "ModelError",
      retryable: false,
      reason: "the server answered with something that is not an event stream (text/plain): upstream connect error or disconnect/reset before headers. reset reason: connection failure"
    })
    expect(s.requests).toHaveLength(2)
  })

  it("openai: a stream cut before its first event is still a cut, retried", async () => {
    const s = await serve([{ pieces: ['data: {"id":"c'], contentType: "text/event-stream" }, { pieces: [sseBody([openAiChunk({ content: "hello" }, "stop")])], contentType: "text/event-stream" }])
    const parts = await Effect.runPromise(Stream.runCollect(openai("m", { apiKey: "k", baseURL: `${s.url}/v1`, ...twice }).stream!(request)))
    expect(parts.flatMap((p) => (p._tag === "TextDelta" ? [p.delta] : [])).join("")).toBe("hello")
    expect(s.requests).toHaveLength(2)
  })
})
