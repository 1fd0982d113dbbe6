/**
 * The fault options every provider shares (`timeout`, `retryTimeouts`, `retry`, `idleTimeout`) are
 * checked when the provider is built, as a budget's limits are: a hostile value (NaN, ±Infinity where
 * it means nothing, negatives, zero timeouts, strings that are no duration, objects, booleans) is an
 * `AgentConfigError` naming the option and the value, for every provider factory; the values the docs
 * accept (Infinity for "no timeout", `retry: false`, `times: 0`, Duration inputs of every form) build a
 * client that works. Before the check, `retry: { times: NaN }` retried forever and `idleTimeout: 0`
 * failed every streamed call without sending a request.
 */
import { fc, test } from "@fast-check/vitest"
import { Duration, Effect, Exit, Stream } from "effect"
import { describe, expect, it } from "vitest"
import {
  AgentConfigError,
  agent,
  anthropic,
  fromAiSdk,
  gemini,
  type ModelClient,
  type ModelRequest,
  ollama,
  openai,
  openaiLayer,
  openaiResponses
} from "../../src/index.ts"
import { quietLogs } from "../support/quiet-logs.ts"
import { openAiText, useLoopback } from "./loopback.ts"

quietLogs()

const serve = useLoopback()
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }
const numRuns = Number(process.env.PROPERTY_RUNS ?? 100)

/** An AI SDK model that is never called: building `fromAiSdk` is what is checked. */
const aiSdkModel = { specificationVersion: "v3", provider: "test", modelId: "m", supportedUrls: {}, doGenerate: () => Promise.reject(new Error("not called")) }

const factories: ReadonlyArray<readonly [string, (options: Record<string, unknown>) => ModelClient]> = [
  ["openai", (o) => openai("m", { apiKey: "k", baseURL: "http://127.0.0.1:9/v1", ...o })],
  ["openaiResponses", (o) => openaiResponses("m", { apiKey: "k", baseURL: "http://127.0.0.1:9/v1", ...o })],
  ["anthropic", (o) => anthropic("m", { apiKey: "k", baseURL: "http://127.0.0.1:9", ...o })],
  ["gemini", (o) => gemini("m", { apiKey: "k", baseURL: "http://127.0.0.1:9", ...o })],
  ["ollama", (o) => ollama("m", { host: "http://127.0.0.1:9", ...o })],
  ["fromAiSdk", (o) => fromAiSdk(aiSdkModel as never, o)]
]

/** What building with `options` throws (`undefined`: it built). */
const thrownBy = (make: (options: Record<string, unknown>) => ModelClient, options: Record<string, unknown>): unknown => {
  try {
    make(options)
    return undefined
  } catch (error) {
    return error
  }
}

/** Sets `path` ("retry.times") of an options object to `value`. */
const optionsWith = (path: string, value: unknown): Record<string, unknown> => {
  const [head, tail] = path.split(".") as [string, string | undefined]
  return tail === undefined ? { [head]: value } : { [head]: { [tail]: value } }
}

// The report's matrix: each was accepted, then misbehaved at call time.
const refused: ReadonlyArray<readonly [string, unknown, string]> = [
  ["retry.times", Number.NaN, "retry.times must be a whole number >= 0 (0: no retry), got NaN"],
  ["retry.times", -1, "got -1"],
  ["retry.times", 1.5, "got 1.5"],
  ["retry.times", Number.POSITIVE_INFINITY, "got Infinity"],
  ["retry.times", "3", 'got "3"'],
  ["idleTimeout", 0, "idleTimeout must be a positive duration"],
  ["idleTimeout", Number.NaN, "got NaN"],
  ["idleTimeout", -1, "got -1"],
  ["idleTimeout", "soon", 'got "soon"'],
  ["idleTimeout", "0 millis", 'got "0 millis"'],
  ["timeout", "soon", 'timeout must be a positive duration ("30 seconds", or milliseconds), or Infinity for none, got "soon"'],
  ["timeout", 0, "got 0"],
  ["timeout", Number.NaN, "got NaN"],
  ["timeout", -5, "got -5"],
  ["timeout", { secs: 5 }, "got an object"],
  ["retry.base", "soon", 'retry.base must be a finite duration >= 0 ("500 millis", or milliseconds), got "soon"'],
  ["retry.base", Number.POSITIVE_INFINITY, "got Infinity"],
  ["retry.factor", Number.NaN, "retry.factor must be a finite number >= 1, got NaN"],
  ["retry.factor", 0, "got 0"],
  ["retry.maxDelay", -1, "retry.maxDelay must be a duration >= 0"],
  ["retry.maxRetryAfter", -1, "retry.maxRetryAfter must be a duration >= 0 (\"10 seconds\", or milliseconds), or Infinity for no bound, got -1"],
  ["retry.maxRetryAfter", "a minute", 'got "a minute"'],
  ["retry.time", 3, "retry.time must be one of retry.times, retry.base, retry.factor, retry.maxDelay, retry.maxRetryAfter (an unknown option), got 3"],
  ["retry", "yes", 'retry must be false (no retry) or an object { times, base, factor, maxDelay, maxRetryAfter }, got "yes"'],
  ["retry", true, "got true"],
  ["retryTimeouts", "yes", 'retryTimeouts must be true or false, got "yes"']
]

describe.each(factories)("%s(...) checks its fault options when it is built", (name, make) => {
  it.each(refused)("%s: %s is an AgentConfigError naming it", (path, value, says) => {
    const error = thrownBy(make, optionsWith(path, value))
    expect(error).toBeInstanceOf(AgentConfigError)
    expect((error as AgentConfigError).message).toContain(`model "`)
    expect((error as AgentConfigError).reason).toContain(path)
    expect((error as AgentConfigError).reason).toContain(says)
  })

  it("accepts what the docs accept: Infinity for no timeout, retry false, times 0, Duration inputs of every form", () => {
    const accepted: ReadonlyArray<Record<string, unknown>> = [
      {},
      { timeout: Number.POSITIVE_INFINITY, idleTimeout: "Infinity" },
      { timeout: Duration.infinity, idleTimeout: Duration.seconds(30) },
      { timeout: "30 seconds", idleTimeout: 250, retryTimeouts: true },
      { timeout: [30, 0], idleTimeout: { minutes: 2 } },
      { retry: false },
      { retry: {} },
      { retry: { times: 0, base: 0, factor: 1, maxDelay: "0 millis", maxRetryAfter: 0 } },
      { retry: { times: 10, base: "10 millis", factor: 1.5, maxDelay: Number.POSITIVE_INFINITY, maxRetryAfter: "Infinity" } }
    ]
    for (const options of accepted) expect(thrownBy(make, options), `${name} ${JSON.stringify(options)}`).toBeUndefined()
  })

  it("refuses the provider SDKs' own names (maxRetries, timeoutMs) from a plain JavaScript caller, naming this package's", () => {
    for (const [option, instead] of [["maxRetries", "retry: { times }"], ["timeoutMs", "timeout"]] as const) {
      const error = thrownBy(make, { [option]: 0 })
      expect(error, `${name} ${option}`).toBeInstanceOf(AgentConfigError)
      expect((error as AgentConfigError).reason).toContain(option)
      expect((error as AgentConfigError).reason).toContain(instead)
    }
  })
})

describe("hostile fault options, for any provider", () => {
  const notNumbers = fc.oneof(
    fc.string().map((s) => `soon${s}`),
    fc.constant(null),
    fc.boolean(),
    fc.array(fc.anything(), { minLength: 3, maxLength: 4 }),
    fc.dictionary(fc.string().filter((k) => !["weeks", "days", "hours", "minutes", "seconds", "milliseconds", "microseconds", "nanoseconds"].includes(k)), fc.anything(), { minKeys: 1 }),
    fc.constant({})
  )
  const negative = fc.double({ max: -Number.MIN_VALUE, noNaN: true })
  /** For each option, values it must refuse. */
  const hostile: ReadonlyArray<readonly [string, fc.Arbitrary<unknown>]> = [
    ["timeout", fc.oneof(notNumbers, negative, fc.constantFrom(0, -0, Number.NaN, Number.NEGATIVE_INFINITY))],
    ["idleTimeout", fc.oneof(notNumbers, negative, fc.constantFrom(0, -0, Number.NaN, Number.NEGATIVE_INFINITY))],
    ["retry.times", fc.oneof(notNumbers, negative, fc.double({ min: 0.001, noNaN: true }).filter((n) => !Number.isInteger(n)), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY))],
    ["retry.factor", fc.oneof(notNumbers, fc.double({ max: 0.999, noNaN: true }), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY))],
    ["retry.base", fc.oneof(notNumbers.filter((v) => !(typeof v === "object" && v !== null && Object.keys(v).length === 0)), negative, fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY))],
    ["retry.maxDelay", fc.oneof(notNumbers.filter((v) => !(typeof v === "object" && v !== null && Object.keys(v).length === 0)), negative, fc.constantFrom(Number.NaN, Number.NEGATIVE_INFINITY))],
    ["retry.maxRetryAfter", fc.oneof(notNumbers.filter((v) => !(typeof v === "object" && v !== null && Object.keys(v).length === 0)), negative, fc.constant(Number.NaN))],
    ["retryTimeouts", fc.oneof(notNumbers.filter((v) => typeof v !== "boolean"), fc.double())],
    ["retry", fc.oneof(fc.string(), fc.double(), fc.constant(true), fc.array(fc.anything(), { maxLength: 2 }))]
  ]

  test.prop([fc.constantFrom(...factories), fc.constantFrom(...hostile).chain(([path, arb]) => arb.map((value) => [path, value] as const))], { numRuns })(
    "is refused when the provider is built, with an AgentConfigError naming the option",
    ([, make], [path, value]) => {
      const error = thrownBy(make, optionsWith(path, value))
      expect(error).toBeInstanceOf(AgentConfigError)
      expect((error as AgentConfigError).reason.startsWith(`${path} must be `)).toBe(true)
    }
  )
})

describe("the checked options at work", () => {
  it("a Layer built with a hostile option fails with the AgentConfigError", async () => {
    const exit = await Effect.runPromiseExit(agent("a").provide(openaiLayer("m", { apiKey: "k", retry: { times: Number.NaN } })).runEffect("hi"))
    expect(Exit.isFailure(exit) && String(exit.cause)).toContain("retry.times must be a whole number >= 0")
  })

  it("timeout and idleTimeout Infinity mean none: a whole and a streamed call succeed", async () => {
    const s = await serve([openAiText("whole"), { pieces: [`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "streamed" }, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`], contentType: "text/event-stream" }])
    const client = openai("m", { apiKey: "k", baseURL: `${s.url}/v1`, timeout: Number.POSITIVE_INFINITY, idleTimeout: Number.POSITIVE_INFINITY })
    expect(await Effect.runPromise(client.chat(request))).toMatchObject({ content: "whole" })
    const parts = await Effect.runPromise(Stream.runCollect(client.stream!(request)))
    expect(parts.filter((p) => p._tag === "TextDelta").map((p) => (p as { delta: string }).delta).join("")).toBe("streamed")
    expect(s.requests).toHaveLength(2)
  })

  it("retry.times 0 makes one attempt", async () => {
    const s = await serve([{ status: 503, json: { error: { message: "overloaded" } } }])
    const exit = await Effect.runPromiseExit(openai("m", { apiKey: "k", baseURL: `${s.url}/v1`, retry: { times: 0 } }).chat(request))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(s.requests).toHaveLength(1)
  })
})
