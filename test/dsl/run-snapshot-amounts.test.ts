/**
 * A snapshot's amounts are never below zero (outside tester, s42): `state.ledger.tokens` and
 * `state.elapsedMs` of a run snapshot, as `turns` and `toolCalls` are, and a composite's
 * `state.spent`. A negative one on an unsigned snapshot would lift `maxTokens` or `maxDuration` by as
 * much: it is `SnapshotInvalid` naming the field, and nothing runs.
 */
import { fc, test } from "@fast-check/vitest"
import { Clock, Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, decodeSnapshot, decodeSnapshotValue, pipeline, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const usage = { inputTokens: 50, outputTokens: 50 }

const build = () => {
  const ran: Array<number> = []
  const transfer = tool("transfer", {
    args: Schema.Struct({ n: Schema.Number }),
    needsApproval: true,
    run: ({ n }) => {
      ran.push(n)
      return `ok ${n}`
    }
  })
  const teller = agent("teller")
    .model(scriptedModel([{ ...toolCalls([{ id: "c0", name: "transfer", arguments: { n: 0 } }]), usage }, { ...text("done"), usage }]))
    .tools({ transfer })
    .budget({ maxTokens: 1_000, maxDuration: 60_000 })
  return { ran, teller }
}

const suspended = async () => {
  const first = await build().teller.run("go")
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  return JSON.parse(JSON.stringify(first.snapshot))
}

const edited = (snapshot: any, field: "tokens" | "elapsedMs" | "turns", value: number) =>
  field === "elapsedMs"
    ? { ...snapshot, state: { ...snapshot.state, elapsedMs: value } }
    : { ...snapshot, state: { ...snapshot.state, ledger: { ...snapshot.state.ledger, [field]: value } } }

describe("the amounts of a run snapshot", () => {
  for (const field of ["tokens", "elapsedMs", "turns"] as const) {
    it(`a negative ${field} is SnapshotInvalid naming it, decoded or resumed; nothing runs`, async () => {
      const snapshot = await suspended()
      const bad = edited(snapshot, field, -1_000_000)
      for (const decoded of [decodeSnapshot(JSON.stringify(bad)), decodeSnapshotValue(bad)]) {
        const error = failureOf(await runExit(decoded))
        expect(error).toMatchObject({ _tag: "SnapshotInvalid" })
        expect((error as { readonly issues: string }).issues).toContain(field)
      }
      const { ran, teller } = build()
      expect(failureOf(await runExit(teller.resume(bad, { c0: Decision.approve })))).toMatchObject({ _tag: "SnapshotInvalid" })
      expect(ran).toEqual([])
    })
  }

  it("zero and positive amounts decode as before", async () => {
    const snapshot = await suspended()
    for (const field of ["tokens", "elapsedMs"] as const) {
      expect((await Effect.runPromise(decodeSnapshotValue(edited(snapshot, field, 0)))).agent).toBe("teller")
      expect((await Effect.runPromise(decodeSnapshotValue(edited(snapshot, field, 12.5)))).agent).toBe("teller")
    }
  })

  test.prop([fc.constantFrom("tokens" as const, "elapsedMs" as const), fc.double({ max: -Number.MIN_VALUE, noNaN: true, noDefaultInfinity: true })], { numRuns: 30 })(
    "any negative tokens or elapsedMs is refused",
    async (field, value) => {
      const snapshot = await suspended()
      expect(failureOf(await runExit(decodeSnapshotValue(edited(snapshot, field, value))))).toMatchObject({ _tag: "SnapshotInvalid" })
    }
  )
})

describe("a wall clock set back while a run waits", () => {
  /** A clock that goes back one second at every reading (a wall clock corrected, as Clock's docs warn). */
  const backwards = (): Clock.Clock => {
    let now = 1_000_000_000
    const millis = () => (now -= 1_000)
    const base = Clock.Clock.defaultValue()
    return {
      currentTimeMillisUnsafe: millis,
      currentTimeMillis: Effect.sync(millis),
      currentTimeNanosUnsafe: () => BigInt(millis()) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => BigInt(millis()) * 1_000_000n),
      monotonicTimeNanosUnsafe: () => base.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: base.monotonicTimeNanos,
      sleep: (duration) => base.sleep(duration)
    }
  }

  it("never takes a snapshot with a negative elapsedMs: the snapshot it gives decodes (agent and composite)", async () => {
    const clock = backwards()
    const first = await Effect.runPromise(build().teller.runEffect("go").pipe(Effect.provideService(Clock.Clock, clock)))
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.snapshot.state.elapsedMs).toBe(0)
    expect((await Effect.runPromise(decodeSnapshot(JSON.stringify(first.snapshot)))).state.elapsedMs).toBe(0)
    const flow = pipeline("flow", build().teller, agent("echo").model(scriptedModel(() => text("echo")))).budget({ maxDuration: 60_000 })
    const suspendedFlow = await Effect.runPromise(flow.runEffect("go").pipe(Effect.provideService(Clock.Clock, backwards())))
    if (suspendedFlow._tag !== "Suspended") throw new Error("expected a suspension")
    expect(suspendedFlow.snapshot.state.spent?.elapsedMs).toBe(0)
  })
})

describe("the amounts of a composite snapshot", () => {
  it("a negative state.spent is SnapshotInvalid naming the field; nothing runs", async () => {
    const { ran, teller } = build()
    const echo = agent("echo").model(scriptedModel(() => text("echo")))
    const flow = pipeline("flow", teller, echo).budget({ maxTokens: 1_000 })
    const first = await flow.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.snapshot.state.spent).toMatchObject({ tokens: 100 })
    for (const key of ["tokens", "toolCalls", "elapsedMs"] as const) {
      const bad = { ...first.snapshot, state: { ...first.snapshot.state, spent: { ...first.snapshot.state.spent!, [key]: -1 } } }
      const error = failureOf(await runExit(flow.resume(bad, { c0: Decision.approve })))
      expect(error).toMatchObject({ _tag: "SnapshotInvalid" })
      expect((error as { readonly issues: string }).issues).toContain(key)
    }
    expect(ran).toEqual([])
  })
})
