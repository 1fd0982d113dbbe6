/**
 * Cassettes: record a client's calls to stable, versioned JSON and replay them with no client; a
 * request that no longer matches fails with what changed; streamed parts keep their timing.
 */
import { Cause, Effect, Exit, Schema, Stream } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { agent, type LlmResponse, type ModelClient, ModelError, type ModelRequest, type ResponsePart, text, tool, toolCalls } from "../../src/index.ts"
import {
  type Cassette,
  CassetteError,
  CassetteMismatch,
  memoryCassette,
  parseCassette,
  recordCassette,
  replayCassette,
  scriptedModel,
  stableJson
} from "../../src/testing/index.ts"

const add = tool("add", { description: "Add two numbers", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const calculator = agent("calc").prompt("You are a calculator.").tools({ add })
const script = () => scriptedModel([toolCalls([{ id: "c1", name: "add", arguments: { a: 3, b: 5 } }]), text("8", { inputTokens: 10, outputTokens: 2 })])

const errorOf = async (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e)

describe("recordCassette / replayCassette", () => {
  it("replays a recorded run with no model, and writes stable versioned JSON", async () => {
    const tape = memoryCassette()
    expect(await calculator.model(recordCassette(script(), { cassette: tape })).run("3 + 5?")).toBe("8")
    const written = tape.text!
    const parsed = JSON.parse(written) as Cassette
    expect(parsed.version).toBe(1)
    expect(parsed.interactions).toHaveLength(2)
    expect(parsed.interactions[1]!.outcome).toMatchObject({ _tag: "Response", response: { _tag: "Text", content: "8", usage: { inputTokens: 10, outputTokens: 2 } } })
    // Stable: keys sorted at every level, the same text whatever order the keys were built in.
    expect(written).toBe(stableJson(JSON.parse(written)))
    expect(written.indexOf('"interactions"')).toBeLessThan(written.indexOf('"version"'))
    expect(stableJson({ b: 1, a: { d: 1, c: [2] } })).toBe('{\n  "a": {\n    "c": [\n      2\n    ],\n    "d": 1\n  },\n  "b": 1\n}\n')

    const replay = replayCassette(tape)
    expect(await calculator.model(replay).run("3 + 5?")).toBe("8")
    expect(replay.unused()).toEqual([])
    expect(replay.mismatches).toEqual([])
  })

  it("writes to a file and replays from it in another client", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "cassette-")), "nested", "calc.json")
    await calculator.model(recordCassette(script(), { cassette: file })).run("3 + 5?")
    expect(await calculator.model(replayCassette(file)).run("3 + 5?")).toBe("8")
  })

  it("fails a changed request with what changed: system prompt, tools, messages", async () => {
    const tape = memoryCassette()
    await calculator.model(recordCassette(script(), { cassette: tape })).run("3 + 5?")
    const changesOf = async (run: Promise<unknown>) => {
      const error = await errorOf(run)
      expect(error).toBeInstanceOf(ModelError)
      const cause = (error as ModelError).cause
      expect(cause).toBeInstanceOf(CassetteMismatch)
      expect((error as ModelError).isRetryable).toBe(false)
      return (cause as CassetteMismatch).changes
    }
    expect(await changesOf(calculator.prompt("You are terse.").model(replayCassette(tape)).run("3 + 5?"))).toEqual([
      'system prompt line 1: "You are a calculator." → "You are terse."'
    ])
    const mul = tool("mul", { args: Schema.Struct({ a: Schema.Finite }), run: ({ a }) => a })
    expect(await changesOf(calculator.tools({ mul }).model(replayCassette(tape)).run("3 + 5?"))).toContain("tools added: mul")
    const changes = await changesOf(calculator.model(replayCassette(tape)).run("4 + 5?"))
    expect(changes).toEqual(['message 1: user: "3 + 5?" → user: "4 + 5?"'])
    const replay = replayCassette(tape)
    const error = await errorOf(calculator.prompt("x").model(replay).run("3 + 5?"))
    expect(String((error as Error).message)).toContain("request 1 does not match cassette memory")
    expect(replay.mismatches).toHaveLength(1)
  })

  it("runs out of interactions with a clear message", async () => {
    const tape = memoryCassette()
    const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }
    const recorder = recordCassette(scriptedModel(text("hello")), { cassette: tape })
    await Effect.runPromise(recorder.chat(request))
    const replay = replayCassette(tape)
    expect(await Effect.runPromise(replay.chat(request))).toMatchObject({ content: "hello" })
    const exit = await Effect.runPromiseExit(replay.chat(request))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("no interaction left")
  })

  it("matches exactly by default; ignore-volatile forgives tool-call ids, reasoning and temperature", async () => {
    const recorded: ModelRequest = {
      messages: [
        { role: "user", content: "3+5" },
        { role: "assistant", content: "", toolCalls: [{ id: "call_abc", name: "add", arguments: "{}" }], reasoning: [{ _tag: "Thinking", text: "t", signature: "s1" }] },
        { role: "tool", toolCallId: "call_abc", name: "add", content: "8" }
      ],
      tools: [],
      temperature: 0.7
    }
    const live: ModelRequest = {
      messages: [
        { role: "user", content: "3+5" },
        { role: "assistant", content: "", toolCalls: [{ id: "call_xyz", name: "add", arguments: "{}" }] },
        { role: "tool", toolCallId: "call_xyz", name: "add", content: "8" }
      ],
      tools: []
    }
    const cassette: Cassette = { version: 1, interactions: [{ call: "chat", request: recorded, outcome: { _tag: "Response", response: text("8"), durationMs: 1 } }] }
    const exact = await Effect.runPromiseExit(replayCassette(cassette).chat(live))
    expect(Exit.isFailure(exact)).toBe(true)
    expect(await Effect.runPromise(replayCassette(cassette, { match: "ignore-volatile" }).chat(live))).toMatchObject({ content: "8" })
    // A result answering another call than recorded is not volatile.
    const crossed: ModelRequest = { ...live, messages: [...live.messages.slice(0, 2), { role: "tool", toolCallId: "other", name: "add", content: "8" }] }
    expect(Exit.isFailure(await Effect.runPromiseExit(replayCassette(cassette, { match: "ignore-volatile" }).chat(crossed)))).toBe(true)
    // A custom rule: only the first user message counts.
    const firstUser = (r: ModelRequest) => r.messages.find((m) => m.role === "user")?.content
    expect(await Effect.runPromise(replayCassette(cassette, { match: firstUser }).chat({ messages: [{ role: "user", content: "3+5" }], tools: [] }))).toMatchObject({ content: "8" })
  })

  it("refuses unknown versions, non-JSON, malformed entries and a missing file with CassetteError", () => {
    const cases: Array<[string, string]> = [
      ['{"version":2,"interactions":[]}', "unsupported cassette version 2: this library reads version 1"],
      ['{"interactions":[]}', "unsupported cassette version (none)"],
      ["not json", "not JSON"],
      ["[1]", "not a JSON object"],
      ['{"version":1,"interactions":[{"call":"chat","request":{"messages":[],"tools":[]},"outcome":{"_tag":"Response","response":{"_tag":"Text"},"durationMs":1}}]}', "malformed cassette"],
      ['{"version":1,"interactions":[{"call":"fax","request":{},"outcome":{}}]}', "malformed cassette"],
      ['{"version":1,"interactions":[{"call":"stream","request":{"messages":[],"tools":[]},"outcome":{"_tag":"Parts","parts":[{"atMs":0,"part":{"_tag":"TextDelta","delta":7}}],"durationMs":1}}]}', "interaction 1, part 1"]
    ]
    for (const [text, reason] of cases) {
      const error = (() => {
        try {
          replayCassette(memoryCassette(text))
        } catch (e) {
          return e
        }
      })()
      expect(error, text).toBeInstanceOf(CassetteError)
      expect((error as CassetteError).message).toContain(reason)
    }
    expect(() => replayCassette(join(tmpdir(), "no-such-cassette-here.json"))).toThrow(/no such cassette/)
    // A folder where the file should be: reading and writing fail with CassetteError too.
    const folder = mkdtempSync(join(tmpdir(), "cassette-dir-"))
    expect(() => replayCassette(folder)).toThrow(CassetteError)
    expect(() => replayCassette(folder)).toThrow(/cannot read it/)
  })

  it("a cassette that cannot be written stops the call with a defect carrying CassetteError (never a silent loss)", async () => {
    const folder = mkdtempSync(join(tmpdir(), "cassette-dir-"))
    const exit = await Effect.runPromiseExit(recordCassette(scriptedModel(text("hi")), { cassette: folder }).chat({ messages: [{ role: "user", content: "hi" }], tools: [] }))
    expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
    expect(Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined).toBeInstanceOf(CassetteError)
    expect(parseCassette('{"version":1,"interactions":[]}', "x")).toEqual({ version: 1, interactions: [] })
  })

  it("records what is missing when given a client, and then replays it alone", async () => {
    const tape = memoryCassette()
    const live = replayCassette(tape, { recordMissing: script() })
    expect(await calculator.model(live).run("3 + 5?")).toBe("8")
    expect(JSON.parse(tape.text!).interactions).toHaveLength(2)
    // A new question: the first two calls replay, the new ones are recorded.
    const more = replayCassette(tape, { recordMissing: scriptedModel([text("9")]) })
    expect(await calculator.model(more).run("4 + 5?")).toBe("9")
    expect(JSON.parse(tape.text!).interactions).toHaveLength(3)
    expect(await calculator.model(replayCassette(tape)).run("4 + 5?")).toBe("9")
    expect(await calculator.model(replayCassette(tape)).run("3 + 5?")).toBe("8")
  })

  it("records a ModelError's fields, never its cause, and redacts secrets", async () => {
    const tape = memoryCassette()
    const failing: ModelClient = {
      chat: () =>
        Effect.fail(new ModelError({ provider: "openai", reason: "Incorrect API key provided: sk-live-1234567890abcdef; header Authorization: Bearer abc.def", status: 401, retryable: false, cause: { headers: { authorization: "Bearer topsecret" }, key: "my-own-secret-key" } }))
    }
    const recorder = recordCassette(failing, { cassette: tape, secrets: ["my-own-secret-key"] })
    await Effect.runPromiseExit(recorder.chat({ messages: [{ role: "user", content: "with my-own-secret-key inside" }], tools: [] }))
    const written = tape.text!
    expect(written).not.toContain("sk-live-1234567890abcdef")
    expect(written).not.toContain("abc.def")
    expect(written).not.toContain("topsecret")
    expect(written).not.toContain("my-own-secret-key")
    expect(written).not.toContain("cause")
    // The live request is redacted as the recorded one was, so it still matches.
    const exit = await Effect.runPromiseExit(replayCassette(tape, { secrets: ["my-own-secret-key"] }).chat({ messages: [{ role: "user", content: "with my-own-secret-key inside" }], tools: [] }))
    const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error: ModelError }).error : undefined
    expect(error).toBeInstanceOf(ModelError)
    expect(error).toMatchObject({ provider: "openai", status: 401, retryable: false })
    expect(error!.reason).toMatch(/provided: \[redacted:[0-9a-f]{8}\]; header Authorization: Bearer \[redacted:[0-9a-f]{8}\]/)
  })
})

describe("streamed answers", () => {
  const parts: ReadonlyArray<ResponsePart> = [
    { _tag: "TextDelta", delta: "he" },
    { _tag: "TextDelta", delta: "llo" },
    { _tag: "Usage", usage: { inputTokens: 3, outputTokens: 2 } },
    { _tag: "Finish", reason: "stop" }
  ]
  // A client streaming a part every 40 ms, then optionally failing.
  const slow = (fail = false): ModelClient => ({
    chat: () => Effect.succeed(text("hello")),
    stream: () => {
      const timed = Stream.fromIterable(parts).pipe(Stream.mapEffect((p) => Effect.as(Effect.sleep("40 millis"), p)))
      return fail ? Stream.concat(timed, Stream.fail(new ModelError({ provider: "slow", reason: "connection reset", retryable: true }))) : timed
    }
  })
  const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }
  const collect = (client: ModelClient) => Effect.runPromiseExit(Stream.runCollect(client.stream!(request)))

  it("keeps each part's timing and replays at recorded, accelerated or instant pace", async () => {
    const tape = memoryCassette()
    await collect(recordCassette(slow(), { cassette: tape }))
    const recorded = JSON.parse(tape.text!) as Cassette
    const outcome = recorded.interactions[0]!.outcome
    expect(outcome._tag).toBe("Parts")
    const times = outcome._tag === "Parts" ? outcome.parts.map((p) => p.atMs) : []
    expect(times[3]).toBeGreaterThanOrEqual(150)
    const timed = async (pace: Parameters<typeof replayCassette>[1]) => {
      const start = Date.now()
      const exit = await collect(replayCassette(tape, pace))
      expect(exit).toEqual(Exit.succeed(parts))
      return Date.now() - start
    }
    expect(await timed({ pace: "recorded" })).toBeGreaterThanOrEqual(times[3]! - 5)
    expect(await timed({ pace: { speedup: 10 } })).toBeLessThan(times[3]! / 2)
    expect(await timed({})).toBeLessThan(50)
  })

  it("replays a stream that failed midway as the same parts then the same error; chat gets the error", async () => {
    const tape = memoryCassette()
    const live = await collect(recordCassette(slow(true), { cassette: tape }))
    expect(Exit.isFailure(live)).toBe(true)
    const replay = replayCassette(tape)
    const seen: Array<ResponsePart> = []
    const exit = await Effect.runPromiseExit(Stream.runForEach(replay.stream!(request), (p) => Effect.sync(() => void seen.push(p))))
    expect(seen).toEqual(parts)
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("connection reset")
    const again = await Effect.runPromiseExit(replayCassette(tape).chat(request))
    expect(Exit.isFailure(again)).toBe(true)
  })

  it("answers chat from a recorded stream and stream from a recorded chat", async () => {
    const tape = memoryCassette()
    await collect(recordCassette(slow(), { cassette: tape }))
    const response: LlmResponse = await Effect.runPromise(replayCassette(tape).chat(request))
    expect(response).toMatchObject({ _tag: "Text", content: "hello", usage: { inputTokens: 3, outputTokens: 2 } })
    const chatTape = memoryCassette()
    await Effect.runPromise(recordCassette(slow(), { cassette: chatTape }).chat(request))
    const streamed = await collect(replayCassette(chatTape))
    expect(Exit.isSuccess(streamed) && streamed.value.filter((p) => p._tag === "TextDelta").map((p) => (p as { delta: string }).delta).join("")).toBe("hello")
  })

  it("an interrupted call is not recorded (it has no answer to replay)", async () => {
    const tape = memoryCassette()
    const recorder = recordCassette(slow(), { cassette: tape })
    const exit = await Effect.runPromiseExit(Stream.runCollect(recorder.stream!(request)).pipe(Effect.timeout("60 millis")))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(tape.text).toBeUndefined()
    const hanging: ModelClient = { chat: () => Effect.never }
    await Effect.runPromiseExit(recordCassette(hanging, { cassette: tape }).chat(request).pipe(Effect.timeout("10 millis")))
    expect(tape.text).toBeUndefined()
  })

  it("a streaming agent run replays the same events", async () => {
    const tape = memoryCassette()
    const model = scriptedModel([toolCalls([{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }]), text("3")], { chunk: 2 })
    const tags = async (client: ModelClient) =>
      (await Effect.runPromise(Stream.runCollect(calculator.model(client).runStream("1 + 2?")))).map((e) => ("delta" in e ? `${e._tag}:${String(e.delta)}` : e._tag))
    const live = await tags(recordCassette(model, { cassette: tape }))
    expect(await tags(replayCassette(tape))).toEqual(live)
  })
})
