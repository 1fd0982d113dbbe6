/**
 * The cassette law: for any model behaviour (arbitrary scripts: valid, invalid, unknown and foreign
 * calls, empty replies, model errors), recording a run and replaying it from the cassette's text (its
 * keys reordered, as a hand edit or another serialiser would) gives the same requests, the same
 * outcome and the same tool executions, with every recorded interaction used.
 */
import { test } from "@fast-check/vitest"
import { Effect, Schema, Stream } from "effect"
import fc from "fast-check"
import { describe, expect } from "vitest"
import { agent, type ModelClient, skill, tool } from "../../src/index.ts"
import { memoryCassette, recordCassette, replayCassette, runScript, type ScriptRun, scriptedModel } from "../../src/testing/index.ts"
import { arbModelScript } from "../../src/testing/arbitraries.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 100)

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const add = tool("add", { description: "Add two numbers", args: Operands, run: ({ a, b }) => a + b })
const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, run: ({ a, b }) => a * b })
const wipe = tool("wipe", { description: "Delete everything", args: Schema.Struct({}), safe: false, run: () => "wiped" })
const calculator = agent("calculator")
  .prompt("You are a calculator.")
  .budget({ maxTurns: 5 })
  .tools({ add, multiply, wipe })
  .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])

/** Keys of every object in reverse order: the same JSON value, written differently. */
const reversedKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(reversedKeys)
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversedKeys(v)]))
  return value
}

/** What must be equal between the live run and its replay (errors by tag and message). */
const observable = (run: ScriptRun<unknown>) => ({
  requests: run.requests,
  executed: run.executed,
  outcome: run.outcome._tag === "Failure" ? { _tag: "Failure", error: run.outcome.error._tag, message: run.outcome.error.message } : run.outcome
})

/** Runs `client` through runScript (one function step answering every call). */
const runWith = (client: ModelClient) => runScript(calculator, (request) => client.chat(request), "What is (3 + 5) * 2?")

describe("record then replay", () => {
  const scripts = arbModelScript([add, multiply], { invalidRate: 0.3, foreignNames: ["wipe"], maxLength: 6, modelErrorRate: 0.1 })

  test.prop([scripts], { numRuns })("gives the same requests, outcome and tool executions", async (script) => {
    const tape = memoryCassette()
    const live = await runWith(recordCassette(scriptedModel(script), { cassette: tape }))
    const text = JSON.stringify(reversedKeys(JSON.parse(tape.text ?? '{"version":1,"interactions":[]}')))
    const replay = replayCassette(memoryCassette(text))
    const replayed = await runWith(replay)
    expect(observable(replayed)).toEqual(observable(live))
    expect(replay.unused()).toEqual([])
    expect(replay.mismatches).toEqual([])
  })

  test.prop([scripts, fc.integer({ min: 1, max: 5 })], { numRuns: Math.ceil(numRuns / 2) })(
    "a streaming run replays the same events and deltas",
    async (script, chunk) => {
      const tape = memoryCassette()
      const events = (client: ModelClient) =>
        Effect.runPromise(
          Stream.runCollect(calculator.model(client).runStream("What is (3 + 5) * 2?")).pipe(
            Effect.map((all) => all.map((e) => JSON.stringify(e, (k, v) => (k === "durationMs" || k === "runId" || k === "snapshot" || k === "error" ? undefined : v)))),
            Effect.catch((error) => Effect.succeed([`failed: ${error._tag}: ${error.message}`]))
          )
        )
      const live = await events(recordCassette(scriptedModel(script, { chunk }), { cassette: tape }))
      const replayed = await events(replayCassette(memoryCassette(tape.text ?? '{"version":1,"interactions":[]}')))
      expect(replayed).toEqual(live)
    }
  )
})
