import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { agent, decodeSnapshot, decodeSnapshotValue, DefinitionChanged, encodeSnapshot, resume, runUntil, SnapshotInvalid, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"

const { add, multiply } = makeCalculatorTools()
const script = () => scriptedModel([
  toolCalls([{ id: "c1", name: "add", arguments: { a: 3, b: 5 } }, { id: "c2", name: "multiply", arguments: { a: 8, b: 2 } }]),
  text("16")
])

const suspend = async (subject: Parameters<typeof runUntil>[0], steps: number) => {
  const result = await Effect.runPromise(runUntil(subject, "(3 + 5) * 2", { suspendAfter: steps }) as Effect.Effect<any, any>)
  if (result._tag !== "Suspended") throw new Error("expected a suspension")
  return result.snapshot
}

describe("a run snapshot", () => {
  it("holds the skill, transcript, pending calls and ledger between two steps, as JSON", async () => {
    const model = script()
    const calculator = agent("calc").model(model).tools({ add, multiply })
    const snapshot = await suspend(calculator, 2)
    expect(snapshot).toMatchObject({
      version: 1,
      agent: "calc",
      state: {
        skill: "calc",
        pending: [{ id: "c2", name: "multiply", arguments: '{"a":8,"b":2}' }],
        ledger: { turns: 1, toolCalls: 1, lastTool: "add", consecutive: 1 }
      }
    })
    expect(snapshot.state.transcript.at(-1)).toEqual({ role: "tool", toolCallId: "c1", name: "add", content: "8" })
    const json = encodeSnapshot(snapshot)
    expect(JSON.parse(json)).toMatchObject({ version: 1, agent: "calc" })
    expect(await Effect.runPromise(decodeSnapshot(json))).toEqual(snapshot)
    const rest = await Effect.runPromise(resume(agent("calc").model(model).tools({ add, multiply }), snapshot) as Effect.Effect<any, any>)
    expect(rest).toEqual({ _tag: "Done", output: "16" })
  })

  it("refuses a changed definition with DefinitionChanged", async () => {
    const snapshot = await suspend(agent("calc").model(script()).tools({ add, multiply }), 1)
    const changed = agent("calc").model(script()).tools({ add })
    const error = failureOf(await runExit(resume(changed, snapshot) as Effect.Effect<any, any>))
    expect(error).toBeInstanceOf(DefinitionChanged)
    expect(error.message).toContain("the definition changed since the snapshot")
    const other = failureOf(await runExit(resume(agent("other").model(script()).tools({ add, multiply }), snapshot) as Effect.Effect<any, any>))
    expect(other).toMatchObject({ _tag: "DefinitionChanged", reason: 'the snapshot belongs to agent "calc"' })
    const budget = failureOf(await runExit(resume(agent("calc").model(script()).tools({ add, multiply }).budget({ maxTurns: 3 }), snapshot) as Effect.Effect<any, any>))
    expect(budget).toBeInstanceOf(DefinitionChanged)
  })

  it("refuses text that is not a snapshot with SnapshotInvalid", async () => {
    const exit = await Effect.runPromise(Effect.exit(decodeSnapshot('{"version": 2}')))
    expect(Exit.isFailure(exit) && failureOf(exit)).toBeInstanceOf(SnapshotInvalid)
    expect(failureOf(await runExit(decodeSnapshot("not json")))).toBeInstanceOf(SnapshotInvalid)
  })

  it("refuses a value that throws when read with SnapshotInvalid saying what threw, and reads nothing before it runs", async () => {
    let reads = 0
    const hostile = { version: 1, agent: "a", fingerprint: "f" }
    Object.defineProperty(hostile, "state", { enumerable: true, get: () => { reads++; throw new Error("boom") } })
    const decoding = decodeSnapshotValue(hostile)
    expect(reads).toBe(0)
    const error = failureOf(await runExit(decoding))
    expect(error).toBeInstanceOf(SnapshotInvalid)
    expect((error as SnapshotInvalid).message).toMatch(/could not be read: boom/)
  })
})
