/**
 * Typed output the model did not write: a deterministic skill's value and a handoff target's result
 * are checked against the typed agent's own output Schema (its type side) on every path a run ends by
 * (a fresh run, a resume, a durable replay, a stream's `RunEnd`), and a value it refuses ends the run
 * with a typed error at once: `SkillFailed` (cause `OutputInvalid`) for a skill, `OutputInvalid` for a
 * handoff target. The model is never asked to correct a value it did not produce.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Schema, Stream } from "effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import {
  agent,
  type AgentError,
  Decision,
  isAgentError,
  OutputInvalid,
  resume,
  type RunResult,
  runUntil,
  type RunStreamEvent,
  skill,
  SkillFailed,
  text,
  tool,
  toolCalls
} from "../../src/index.ts"
import { Durability } from "../../src/runtime/durability.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const Out = Schema.Struct({ n: Schema.Finite.check(Schema.isGreaterThan(0)) })
const Loose = Schema.Struct({ n: Schema.Number })

/** What the typed agent promises: the value is of `Out`'s type, strictly (no extra key), as an answer would be. */
const accepted = (value: unknown) =>
  Result.isSuccess(Schema.decodeUnknownResult(Schema.toType(Out))(value, { onExcessProperty: "error" }))

const frontModel = () => scriptedModel([toolCalls([{ id: "h", name: "handoff_to_target", arguments: {} }])])

describe("a deterministic skill of a typed agent", () => {
  it("that returns a value its Schema refuses ends the run with SkillFailed, its cause the OutputInvalid report", async () => {
    const det = agent("det", { output: Out }).skills(() => [skill("s").implementedBy((_: string) => ({ n: -5 }))])
    const error = failureOf(await runExit(det.runEffect("x")))
    expect(error).toBeInstanceOf(SkillFailed)
    expect(error).toMatchObject({ agent: "det", skill: "s", input: "x" })
    const cause = (error as SkillFailed).cause
    expect(cause).toBeInstanceOf(OutputInvalid)
    expect(cause).toMatchObject({ agent: "det", raw: `{"n":-5}`, transcript: [] })
    expect((error as SkillFailed).message).toContain("Expected a value greater than 0")
  })

  it("returns a value its Schema accepts, as it was", async () => {
    const det = agent("det", { output: Out }).skills(() => [skill("s").implementedBy((_: string) => ({ n: 5 }))])
    expect(await det.run("x")).toEqual({ n: 5 })
  })

  it("is checked as a value of the Schema's type: a transformation's decoded form passes, its encoded form does not", async () => {
    const Tr = Schema.Struct({ d: Schema.NumberFromString })
    const good = agent("tr", { output: Tr }).skills(() => [skill("s").implementedBy((_: string) => ({ d: 12 }))])
    expect(await good.run("x")).toEqual({ d: 12 })
    const encoded = (agent("tr", { output: Tr }) as any).skills(() => [skill("s").implementedBy(() => ({ d: "12" }))])
    expect(failureOf(await runExit(encoded.runEffect("x")))).toBeInstanceOf(SkillFailed)
  })

  it("refuses an extra key as an answer would, and a throwing getter without a defect", async () => {
    const extra = { n: 1, more: true }
    const withExtra = agent("det", { output: Out }).skills(() => [skill("s").implementedBy((_: string) => extra)])
    expect(failureOf(await runExit(withExtra.runEffect("x")))).toBeInstanceOf(SkillFailed)
    const hostile = Object.defineProperty({}, "n", { enumerable: true, get: () => { throw new Error("boom") } })
    const throwing = (agent("det", { output: Out }) as any).skills(() => [skill("s").implementedBy(() => hostile)])
    const error = failureOf(await runExit(throwing.runEffect("x")))
    expect(error).toBeInstanceOf(SkillFailed)
  })

  it("of a skill with its own output Schema is checked with that Schema", async () => {
    const Positive = Schema.Struct({ n: Schema.Finite.check(Schema.isGreaterThan(10)) })
    const det = agent("det", { output: Out }).skills(() => [skill("s").output(Positive).implementedBy((_: string) => ({ n: 5 }))])
    expect(failureOf(await runExit(det.runEffect("x")))).toBeInstanceOf(SkillFailed)
  })

  it("is checked when a durable run replays its recorded value (the implementation does not run again)", async () => {
    let ran = 0
    const det = agent("det", { output: Out }).skills(() => [skill("s").implementedBy((_: string) => (ran++, { n: 5 }))])
    // A journal written by an earlier version of the skill, read back instead of running it.
    const replaying: Durability = {
      runId: (fresh) => fresh,
      startedAt: (_, now) => Effect.succeed(now),
      model: (_, call) => call,
      tool: (_, run) => run({}),
      knowledge: (_, __, load) => load,
      skill: () => Effect.succeed({ n: -5 }),
      toolSelection: (_, pick) => pick
    }
    const error = failureOf(await runExit(det.runEffect("x").pipe(Effect.provideService(Durability, replaying))))
    expect(error).toBeInstanceOf(SkillFailed)
    expect(ran).toBe(0)
  })

  it("of an agent without an output Schema is returned as it is", async () => {
    const plain = (agent("plain") as any).skills(() => [skill("s").implementedBy(() => ({ n: -5 }))])
    expect(await plain.run("x")).toEqual({ n: -5 })
  })
})

describe("a handoff from a typed agent", () => {
  it("to a target of the same type with a looser Schema ends with OutputInvalid, the model not asked to correct it", async () => {
    const target = agent("target", { output: Loose }).model(scriptedModel([toolCalls([{ id: "s", name: "submit", arguments: { n: -7 } }])]))
    const model = frontModel()
    const front = agent("front", { output: Out }).model(model).skills(() => [skill("s").handoffs(target)])
    const error = failureOf(await runExit(front.runEffect("x")))
    expect(error).toBeInstanceOf(OutputInvalid)
    expect(error).toMatchObject({ agent: "front", raw: `{"n":-7}` })
    expect((error as OutputInvalid).issues).toContain(`agent "target"`)
    expect((error as OutputInvalid).issues).toContain("Expected a value greater than 0")
    expect(model.requests).toHaveLength(1)
  })

  it("to a text agent (an untyped caller) ends with OutputInvalid, never the text", async () => {
    const textual = agent("target").model(scriptedModel([text("not an object")]))
    const front = (agent("front", { output: Out }) as any).model(frontModel()).skills(() => [skill("s").handoffs(textual)])
    const error = failureOf(await runExit(front.runEffect("x")))
    expect(error).toBeInstanceOf(OutputInvalid)
    expect((error as OutputInvalid).raw).toBe("not an object")
  })

  it("to a target whose result the Schema accepts returns it", async () => {
    const target = agent("target", { output: Loose }).model(scriptedModel([toolCalls([{ id: "s", name: "submit", arguments: { n: 7 } }])]))
    const front = agent("front", { output: Out }).model(frontModel()).skills(() => [skill("s").handoffs(target)])
    expect(await front.run("x")).toEqual({ n: 7 })
  })

  it("streams RunEnd with the failure, and the stream fails with it", async () => {
    const target = agent("target", { output: Loose }).model(scriptedModel([toolCalls([{ id: "s", name: "submit", arguments: { n: -7 } }])]))
    const front = agent("front", { output: Out }).model(frontModel()).skills(() => [skill("s").handoffs(target)])
    const events: Array<RunStreamEvent> = []
    const exit = await Effect.runPromiseExit(Stream.runForEach(front.runStream("x"), (e) => Effect.sync(() => void events.push(e))))
    expect(exit._tag).toBe("Failure")
    const ends = events.filter((e) => e._tag === "RunEnd")
    // The target's run ended with what its own Schema accepted; the front's with the failure.
    expect(ends.map((e) => [e.agent, e.outcome._tag])).toEqual([["target", "Success"], ["front", "Failure"]])
    const last = ends.at(-1)!
    expect(last.outcome._tag === "Failure" && last.outcome.error).toBeInstanceOf(OutputInvalid)
  })

  it("resumed between two steps, then handing off, is checked", async () => {
    const target = agent("target", { output: Loose }).model(scriptedModel([toolCalls([{ id: "s", name: "submit", arguments: { n: -7 } }])]))
    const front = agent("front", { output: Out }).model(frontModel()).skills(() => [skill("s").handoffs(target)])
    // The agent has its model: nothing is left to provide.
    const first = await Effect.runPromise(runUntil(front, "x", { suspendAfter: 1 }) as Effect.Effect<RunResult, AgentError>)
    if (first._tag !== "Suspended") throw new Error("expected a suspension after the model step")
    expect(failureOf(await runExit(resume(front, first.snapshot) as Effect.Effect<RunResult, AgentError>))).toBeInstanceOf(OutputInvalid)
  })

  it("to a target that waited for an approval is checked when the resume completes it", async () => {
    const transfer = tool("transfer", {
      args: Schema.Struct({ amount: Schema.Finite }),
      needsApproval: () => true,
      run: ({ amount }) => `sent ${amount}`
    })
    const target = agent("target", { output: Loose })
      .model(scriptedModel([toolCalls([{ id: "k1", name: "transfer", arguments: { amount: 5 } }]), toolCalls([{ id: "s", name: "submit", arguments: { n: -7 } }])]))
      .tools({ transfer })
    const front = agent("front", { output: Out }).model(frontModel()).skills(() => [skill("s").handoffs(target)])
    const first = await front.run("x")
    if (first._tag !== "Suspended") throw new Error("expected the handoff target to wait for a decision")
    const error = failureOf(await runExit(front.resume(first.snapshot, { k1: Decision.approve })))
    expect(error).toBeInstanceOf(OutputInvalid)
  })
})

describe("the model's own answer", () => {
  it("is decoded once, not checked again", async () => {
    let checks = 0
    const Counted = Schema.Struct({ n: Schema.Finite.check(Schema.makeFilter((n: number) => (checks++, n > 0))) })
    const typed = agent("typed", { output: Counted }).model(scriptedModel([toolCalls([{ id: "s", name: "submit", arguments: { n: 1 } }])]))
    expect(await typed.run("x")).toEqual({ n: 1 })
    expect(checks).toBe(1)
  })
})

/** Values a deterministic skill or an untyped handoff target might produce: near `Out`, and anything. */
const candidate = fc.oneof(
  fc.record({ n: fc.double() }),
  fc.record({ n: fc.oneof(fc.integer(), fc.string(), fc.constant(null)) }),
  fc.record({ n: fc.double({ min: 1, max: 1e6, noNaN: true }), extra: fc.anything() }, { requiredKeys: ["n"] }),
  fc.anything()
)

const endsTyped = (exit: Awaited<ReturnType<typeof runExit<unknown, unknown>>>, expected: (e: unknown) => boolean) => {
  if (exit._tag === "Success") return accepted(exit.value)
  const error = failureOf(exit)
  return isAgentError(error) && expected(error)
}

describe("property: a typed agent's output passes its Schema, or the run ends with the typed error", () => {
  test.prop([candidate], { numRuns: 150 })("from a deterministic skill", async (value) => {
    const det = (agent("det", { output: Out }) as any).skills(() => [skill("s").implementedBy(() => value)])
    const exit = await runExit(det.runEffect("x") as Effect.Effect<unknown, unknown>)
    expect(endsTyped(exit, (e) => e instanceof SkillFailed && e.cause instanceof OutputInvalid)).toBe(true)
  })

  test.prop([candidate], { numRuns: 150 })("from a handoff target", async (value) => {
    const target = (agent("target") as any).skills(() => [skill("t").implementedBy(() => value)])
    const front = (agent("front", { output: Out }) as any).model(frontModel()).skills(() => [skill("s").handoffs(target)])
    const exit = await runExit(front.runEffect("x") as Effect.Effect<unknown, unknown>)
    expect(endsTyped(exit, (e) => e instanceof OutputInvalid)).toBe(true)
  })
})
