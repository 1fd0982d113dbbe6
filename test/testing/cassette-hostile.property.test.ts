/**
 * Hostile cassettes and datasets: any text, any JSON, and real cassettes with one value replaced by
 * garbage either load or end in the documented error (`CassetteError`, `DatasetError`), never another
 * exception; a loaded cassette replays to a response or a `ModelError`, never a defect.
 */
import { test } from "@fast-check/vitest"
import { Cause, Effect, Exit, Stream } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ModelError, type ModelRequest, text, toolCalls } from "../../src/index.ts"
import { datasetFromJsonl, DatasetError } from "../../src/evals/index.ts"
import { CassetteError, memoryCassette, recordCassette, replayCassette, scriptedModel } from "../../src/testing/index.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)
const request: ModelRequest = { messages: [{ role: "user", content: "hi" }], tools: [] }

/** A real cassette's JSON: a chat answer, a streamed answer, and an error. */
const realCassette = async (): Promise<unknown> => {
  const tape = memoryCassette()
  const client = recordCassette(scriptedModel([toolCalls([{ id: "c1", name: "add", arguments: { a: 1 } }]), text("two", { inputTokens: 1, outputTokens: 2 }), new ModelError({ provider: "p", reason: "r", status: 500 })], { chunk: 2 }), { cassette: tape })
  await Effect.runPromise(client.chat(request))
  await Effect.runPromise(Stream.runDrain(client.stream(request)))
  await Effect.runPromiseExit(client.chat(request))
  return JSON.parse(tape.text!)
}

/** Every path to a value in `json`. */
const pathsOf = (json: unknown, at: ReadonlyArray<string | number> = []): Array<ReadonlyArray<string | number>> => {
  if (Array.isArray(json)) return [at, ...json.flatMap((v, i) => pathsOf(v, [...at, i]))]
  if (json !== null && typeof json === "object") return [at, ...Object.entries(json).flatMap(([k, v]) => pathsOf(v, [...at, k]))]
  return [at]
}
const replaced = (json: unknown, path: ReadonlyArray<string | number>, value: unknown): unknown => {
  if (path.length === 0) return value
  const [head, ...rest] = path
  if (Array.isArray(json)) return json.map((v, i) => (i === head ? replaced(v, rest, value) : v))
  return { ...(json as object), [head!]: replaced((json as Record<string, unknown>)[head!], rest, value) }
}

/** Loads `text` and replays all three calls; returns what happened, throwing on anything undocumented. */
const loadAndReplay = async (text: string): Promise<string> => {
  let replay
  try {
    replay = replayCassette(memoryCassette(text))
  } catch (error) {
    if (error instanceof CassetteError) return "refused"
    throw error
  }
  for (const call of [() => replay.chat(request), () => Stream.runCollect(replay.stream(request))]) {
    const exit = await Effect.runPromiseExit(call() as Effect.Effect<unknown, ModelError>)
    if (Exit.isFailure(exit) && (Cause.hasDies(exit.cause) || !(Cause.squash(exit.cause) instanceof ModelError))) {
      throw new Error(`undocumented failure: ${Cause.pretty(exit.cause)}`)
    }
  }
  return "loaded"
}

describe("hostile cassettes", () => {
  it("a real cassette loads and replays; garbage metadata is refused", async () => {
    const base = (await realCassette()) as Record<string, unknown>
    expect(await loadAndReplay(JSON.stringify(base))).toBe("loaded")
    expect(await loadAndReplay(JSON.stringify({ ...base, metadata: { provider: 5 } }))).toBe("refused")
  })

  test.prop([fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v)), fc.jsonValue().map((v) => JSON.stringify({ version: 1, interactions: v })))], { numRuns })(
    "any text is a cassette or a CassetteError",
    async (text) => {
      expect(["refused", "loaded"]).toContain(await loadAndReplay(text))
    }
  )

  it("a real cassette with any one value replaced by garbage loads, or is refused, and replays safely", async () => {
    const base = await realCassette()
    const paths = pathsOf(base)
    const garbage = fc.oneof(fc.constantFrom<unknown>(null, undefined, -1, 1e309, "", [], {}, "__proto__", { _tag: "Nope" }, [{ atMs: 0, part: {} }]), fc.jsonValue())
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), garbage, async (path, value) => {
        expect(["refused", "loaded"]).toContain(await loadAndReplay(JSON.stringify(replaced(base, path, value))))
      }),
      { numRuns }
    )
  })
})

describe("hostile JSON Lines", () => {
  test.prop([fc.array(fc.oneof(fc.string(), fc.jsonValue().map((v) => JSON.stringify(v)), fc.record({ input: fc.jsonValue(), id: fc.oneof(fc.string(), fc.integer()) }).map((v) => JSON.stringify(v))), { maxLength: 6 })], { numRuns })(
    "any lines are a dataset or a DatasetError",
    async (lines) => {
      const exit = await Effect.runPromiseExit(datasetFromJsonl(lines.join("\n")))
      if (Exit.isFailure(exit)) {
        expect(Cause.hasDies(exit.cause)).toBe(false)
        expect(Cause.squash(exit.cause)).toBeInstanceOf(DatasetError)
      } else {
        expect(new Set(exit.value.cases.map((c) => c.id)).size).toBe(exit.value.cases.length)
      }
    }
  )
})
