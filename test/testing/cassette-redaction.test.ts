/**
 * What a cassette never writes, and what redaction must never do. A secret in a streamed answer
 * arrives torn across deltas anywhere: the file keeps no piece of it, whatever the tearing (a
 * property). Ordinary words ("the ring bearer", `sk-learn-pipeline`) are not credentials and stay. And
 * redaction never makes two different requests match: the marker's tag is a salted hash of what it
 * replaced, so a question that differs from the recorded one only inside a redacted stretch does not
 * replay its answer.
 */
import { Effect, Stream } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { agent, type LlmMessage, type ModelClient, ModelError, type ModelRequest, type ResponsePart, text } from "../../src/index.ts"
import { type Cassette, memoryCassette, recordCassette, replayCassette } from "../../src/testing/index.ts"

const request = (content: string): ModelRequest => ({ messages: [{ role: "user", content }], tools: [] })
const MARKER = /\[redacted:[0-9a-f]{8}\]/g

/** A client answering every call with `parts` (streamed) or their text (chat). */
const streaming = (parts: ReadonlyArray<ResponsePart>, whole: string): ModelClient => ({
  chat: () => Effect.succeed({ _tag: "Text", content: whole }),
  stream: () => Stream.fromIterable(parts)
})

/** `text` torn at `cuts` (positions, any order, duplicates and ends allowed). */
const tear = (whole: string, cuts: ReadonlyArray<number>): Array<string> => {
  const at = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b)
  const pieces: Array<string> = []
  let from = 0
  for (const c of [...at, whole.length]) {
    pieces.push(whole.slice(from, c))
    from = c
  }
  return pieces
}

// Secret bodies from [A-Z0-9] with a digit: no 8 characters of one can occur by chance in a cassette's
// JSON (keys are camelCase, the salt and tags lowercase hex).
const body = fc.stringMatching(/^[A-Z0-9]{18,40}$/).map((s) => `${s}7Q`)
const PASSED = "pw-PASSEDSECRET42X"
const secretKinds = fc.oneof(
  body.map((b) => ({ shown: `sk-proj-${b}`, sensitive: b })),
  body.map((b) => ({ shown: `Bearer eyJ${b}.${b}`, sensitive: b })),
  body.map((b) => ({ shown: `ghp_${b}`, sensitive: b })),
  body.map((b) => ({ shown: `https://gwuser:${b}@gateway.example/v1`, sensitive: b })),
  fc.constant({ shown: PASSED, sensitive: "PASSEDSECRET42X" })
)
const words = fc.array(fc.constantFrom("the", "key", "is", "and", "then", "ok", ",", ".", "\n"), { maxLength: 8 }).map((w) => w.join(" "))

const eights = (s: string): Array<string> => Array.from({ length: s.length - 7 }, (_, i) => s.slice(i, i + 8))

describe("streamed answers are redacted as the text they make", () => {
  it("no piece of a secret survives in the file, whatever the tearing, in text and tool-call arguments", async () => {
    await fc.assert(
      fc.asyncProperty(words, secretKinds, words, fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), async (before, secret, after, cuts, asToolArgs) => {
        const whole = asToolArgs ? JSON.stringify({ note: `${before} ${secret.shown} ${after}` }) : `${before} ${secret.shown} ${after}`
        const pieces = tear(whole, cuts)
        const parts: Array<ResponsePart> = asToolArgs
          ? [
            { _tag: "ToolCallStart", index: 0, id: "c1", name: "note" },
            ...pieces.map((delta): ResponsePart => ({ _tag: "ToolCallDelta", index: 0, delta })),
            { _tag: "ToolCallEnd", index: 0 },
            { _tag: "Finish", reason: "tool-calls" }
          ]
          : [...pieces.map((delta): ResponsePart => ({ _tag: "TextDelta", delta })), { _tag: "Finish", reason: "stop" }]
        const tape = memoryCassette()
        const recorder = recordCassette(streaming(parts, whole), { cassette: tape, secrets: [PASSED] })
        await Effect.runPromise(Stream.runDrain(recorder.stream(request("q"))))
        await Effect.runPromise(recorder.chat(request("q")))
        const written = tape.text!
        for (const piece of eights(secret.sensitive)) expect(written).not.toContain(piece)
        const cassette = JSON.parse(written) as Cassette
        const [streamed, chatted] = cassette.interactions
        const stored = streamed!.outcome._tag === "Parts"
          ? streamed!.outcome.parts.map(({ part }) => ("delta" in part ? part.delta : "")).join("")
          : ""
        // The pieces, joined, are the whole text redacted: exactly what the same answer recorded with chat stores.
        expect(chatted!.outcome).toMatchObject({ _tag: "Response", response: { content: stored } })
        expect(stored.match(MARKER)?.length).toBe(1)
        // As many pieces as were streamed, each at its time.
        expect(streamed!.outcome._tag === "Parts" && streamed!.outcome.parts.length).toBe(parts.length)
      }),
      { numRuns: 60 }
    )
  })
})

describe("credentials, not words", () => {
  it("keeps ordinary English and hyphenated words, redacts token-shaped credentials", () => {
    const tape = memoryCassette()
    const prose = "The ring bearer is Frodo; Sam is the Bearer of the light. Task: sk-learn-pipeline. Authority: none."
    const creds = "key sk-proj-A1b2C3d4E5f6G7h8I9j0 token Bearer eyJhbGciOiJIUzI1NiJ9.abc gh ghp_ABCDEFGHIJKLMNOPQRSTUV12 url http://gwuser:GWPASSWORD123@gw.example/v1"
    const recorder = recordCassette({ chat: () => Effect.succeed({ _tag: "Text", content: `${prose} ${creds}` }) }, { cassette: tape })
    Effect.runSync(recorder.chat(request(prose)))
    const written = tape.text!
    expect(written).toContain(prose)
    for (const secret of ["A1b2C3d4E5f6G7h8I9j0", "eyJhbGciOiJIUzI1NiJ9", "ABCDEFGHIJKLMNOPQRSTUV12", "gwuser", "GWPASSWORD123"]) expect(written).not.toContain(secret)
    expect(written).toContain("http://[redacted:")
    expect(written).toContain("@gw.example/v1")
  })

  it("redacts URL credentials in an error's reason (a baseURL with user:password)", async () => {
    const tape = memoryCassette()
    const failing: ModelClient = {
      chat: () => Effect.fail(new ModelError({ provider: "openai", reason: "Request cannot be constructed from a URL that includes credentials: http://gwuser:GWPASSWORD123@127.0.0.1:4000/v1/chat", retryable: false }))
    }
    await Effect.runPromiseExit(recordCassette(failing, { cassette: tape }).chat(request("q")))
    expect(tape.text).not.toContain("GWPASSWORD123")
    expect(tape.text).not.toContain("gwuser")
  })

  it("redacts a credential in a URL's query that a server echoed in its error (Azure's api-key, Gemini's key); other parameters stay", async () => {
    const tape = memoryCassette()
    const failing: ModelClient = {
      chat: () => Effect.fail(new ModelError({ provider: "openai", reason: "404 no route /v1?api-key=QUERYSECRET123%2Fchat&model=gpt-x; see https://gw.example/v1beta/models?key=AIzaGEMINIKEY42&alt=sse", retryable: false }))
    }
    await Effect.runPromiseExit(recordCassette(failing, { cassette: tape }).chat(request("q")))
    expect(tape.text).not.toContain("QUERYSECRET")
    expect(tape.text).not.toContain("AIzaGEMINIKEY42")
    expect(tape.text).toContain("model=gpt-x")
    expect(tape.text).toContain("alt=sse")
  })
})

describe("redaction never makes two requests match", () => {
  const answerer = (answer: string): ModelClient => ({ chat: () => Effect.succeed({ _tag: "Text", content: answer }) })

  it("a question differing only inside a redacted stretch is a mismatch, the same question matches", async () => {
    const tape = memoryCassette()
    const asked = (token: string) => request(`Is Bearer ${token} still valid?`)
    Effect.runSync(recordCassette(answerer("yes"), { cassette: tape }).chat(asked("tok-0123456789abcdefXYZ")))
    const replay = replayCassette(tape)
    const other = await Effect.runPromiseExit(replay.chat(asked("tok-9999999999abcdefXYZ")))
    expect(other._tag).toBe("Failure")
    expect(replay.mismatches).toHaveLength(1)
    expect(await Effect.runPromise(replay.chat(asked("tok-0123456789abcdefXYZ")))).toMatchObject({ content: "yes" })
  })

  it("the ring bearer question is stored as asked, and another question does not replay its answer", async () => {
    const tape = memoryCassette()
    const tolkien = agent("tolkien").prompt("You answer questions about books.")
    const live = await tolkien.model(recordCassette(answerer("The ring bearer is Frodo"), { cassette: tape })).run("Who is the bearer of the One Ring?")
    expect(live).toBe("The ring bearer is Frodo")
    const stored = (JSON.parse(tape.text!) as Cassette).interactions[0]!.request.messages.at(-1) as LlmMessage
    expect(stored.content).toBe("Who is the bearer of the One Ring?")
    expect(await tolkien.model(replayCassette(tape)).run("Who is the bearer of the One Ring?")).toBe("The ring bearer is Frodo")
    const other = replayCassette(tape)
    await expect(tolkien.model(other).run("Who is the bearer FOR the One Ring?")).rejects.toMatchObject({ _tag: "ModelError", provider: "cassette" })
    expect(other.mismatches).toHaveLength(1)
  })

  it("an answer that echoed a secret replays into the next request, which still matches its recording", async () => {
    const tape = memoryCassette()
    let calls = 0
    const echo: ModelClient = { chat: () => Effect.sync(() => (++calls === 1 ? { _tag: "Text" as const, content: "your key: sk-proj-A1b2C3d4E5f6G7h8I9j0" } : { _tag: "Text" as const, content: "noted" })) }
    const talk = async (model: ModelClient) => {
      const first = await Effect.runPromise(model.chat(request("what is my key?")))
      const content = first._tag === "Text" ? first.content : ""
      const messages: Array<LlmMessage> = [{ role: "user", content: "what is my key?" }, { role: "assistant", content }, { role: "user", content: "thanks" }]
      return Effect.runPromise(model.chat({ messages, tools: [] }))
    }
    await talk(recordCassette(echo, { cassette: tape }))
    expect(tape.text).not.toContain("A1b2C3d4E5f6G7h8I9j0")
    const replay = replayCassette(tape)
    expect(await talk(replay)).toMatchObject({ content: "noted" })
    expect(replay.unused()).toEqual([])
  })

  it("a cassette recorded before tags (no salt, bare [redacted]) replays as it did", async () => {
    const old = JSON.stringify({ version: 1, interactions: [{ call: "chat", request: request("token [redacted] here"), outcome: { _tag: "Response", response: text("ok"), durationMs: 1 } }] })
    const replay = replayCassette(memoryCassette(old))
    expect(await Effect.runPromise(replay.chat(request("token sk-proj-A1b2C3d4E5f6G7h8I9j0 here")))).toMatchObject({ content: "ok" })
  })
})
