/**
 * A cassette as a file and as evidence: a write torn by a crash never destroys the recording (the
 * file is replaced by a rename), a hand-edited entry of the wrong shape is refused at load naming it,
 * a failed call's token usage is kept, a mismatch is described against the recording it meant to
 * match, and a pace that would wait for ever is refused.
 */
import { Effect } from "effect"
import fs from "node:fs"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import { AgentConfigError, type ModelClient, ModelError, type ModelRequest, text } from "../../src/index.ts"
import { CassetteError, CassetteMismatch, memoryCassette, parseCassette, recordCassette, replayCassette } from "../../src/testing/index.ts"

const request = (...users: ReadonlyArray<string>): ModelRequest => ({
  messages: [{ role: "system", content: "You are a calculator." }, ...users.map((content) => ({ role: "user" as const, content }))],
  tools: []
})
const answering = (answer: string): ModelClient => ({ chat: () => Effect.succeed(text(answer)) })

afterEach(() => {
  vi.restoreAllMocks()
})

describe("a write torn by a crash", () => {
  it("leaves the previous cassette whole and no temporary file behind", () => {
    const file = join(mkdtempSync(join(tmpdir(), "cassette-")), "tape.json")
    const recorder = recordCassette(answering("8"), { cassette: file })
    Effect.runSync(recorder.chat(request("3 + 5?")))
    const before = readFileSync(file, "utf8")
    // The next write dies half-way, as a killed process would: half the text reaches its file.
    const original = fs.writeFileSync
    vi.spyOn(fs, "writeFileSync").mockImplementation((target, data, ...rest) => {
      const whole = String(data)
      original(target, whole.slice(0, whole.length >> 1), ...(rest as []))
      throw new Error("killed mid-write")
    })
    const exit = Effect.runSyncExit(recorder.chat(request("4 + 5?")))
    vi.restoreAllMocks()
    expect(exit._tag).toBe("Failure")
    expect(readFileSync(file, "utf8")).toBe(before)
    expect(parseCassette(readFileSync(file, "utf8"), file).interactions).toHaveLength(1)
    expect(readdirSync(join(file, ".."))).toEqual(["tape.json"])
  })
})

describe("a hand-edited cassette", () => {
  const recorded = () => {
    const tape = memoryCassette()
    Effect.runSync(recordCassette(answering("8"), { cassette: tape }).chat({
      messages: [{ role: "user", content: "3 + 5?" }, { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "add", arguments: "{}" }] }, { role: "tool", toolCallId: "c1", name: "add", content: "8" }],
      tools: []
    }))
    return JSON.parse(tape.text!) as { interactions: Array<{ request: { messages: Array<Record<string, unknown>> } }> }
  }

  it.each([["not an array", "oops"], ["null inside", [null]], ["a call without a name", [{ id: "c1", arguments: "{}" }]]])("with toolCalls %s is refused at load, naming the entry", (_, toolCalls) => {
    const cassette = recorded()
    cassette.interactions[0]!.request.messages[1]!.toolCalls = toolCalls
    expect(() => replayCassette(memoryCassette(JSON.stringify(cassette)))).toThrow(CassetteError)
    expect(() => replayCassette(memoryCassette(JSON.stringify(cassette)))).toThrow(/interactions.*0.*request.*messages.*1/)
  })

  it("with a tool message without its toolCallId is refused at load", () => {
    const cassette = recorded()
    delete cassette.interactions[0]!.request.messages[2]!.toolCallId
    expect(() => replayCassette(memoryCassette(JSON.stringify(cassette)))).toThrow(CassetteError)
  })
})

describe("what a failed call cost", () => {
  it("is kept with its error and replayed", async () => {
    const tape = memoryCassette()
    const truncating: ModelClient = {
      chat: () => Effect.fail(new ModelError({ provider: "openai", reason: "cut off", kind: "length", retryable: false, usage: { inputTokens: 4000, outputTokens: 596 } }))
    }
    await Effect.runPromiseExit(recordCassette(truncating, { cassette: tape }).chat(request("q")))
    const replayed = await Effect.runPromise(Effect.flip(replayCassette(tape).chat(request("q"))))
    expect(replayed).toMatchObject({ _tag: "ModelError", kind: "length", usage: { inputTokens: 4000, outputTokens: 596 } })
  })
})

describe("a mismatch", () => {
  it("is described against the closest recording, not the next unused one", async () => {
    const tape = memoryCassette()
    const recorder = recordCassette(answering("ok"), { cassette: tape })
    for (const q of ["What is 3 + 5?", "What is 6 * 7?", "What is (2 + 3) * 4?"]) Effect.runSync(recorder.chat(request(q)))
    const replay = replayCassette(tape)
    Effect.runSync(replay.chat(request("What is 3 + 5?")))
    const changed = { ...request("What is (2 + 3) * 4?"), messages: [{ role: "system" as const, content: "You are a terse calculator." }, { role: "user" as const, content: "What is (2 + 3) * 4?" }] }
    await Effect.runPromiseExit(replay.chat(changed))
    const mismatch = replay.mismatches[0]
    expect(mismatch).toBeInstanceOf(CassetteMismatch)
    expect(mismatch!.changes).toEqual([`system prompt line 1: "You are a calculator." → "You are a terse calculator."`])
  })
})

describe("pace", () => {
  it.each([[0], [-1], [Number.NaN], [Number.POSITIVE_INFINITY], ["10"]])("{ speedup: %s } is refused", (speedup) => {
    expect(() => replayCassette({ version: 1, interactions: [] }, { pace: { speedup: speedup as number } })).toThrow(AgentConfigError)
    expect(() => replayCassette({ version: 1, interactions: [] }, { pace: { speedup: speedup as number } })).toThrow(/speedup/)
  })

  it("{ speedup: 10 } is accepted", () => {
    expect(() => replayCassette({ version: 1, interactions: [] }, { pace: { speedup: 10 } })).not.toThrow()
  })
})
