/** A loop whose body waits for a human decision in some iteration suspends as a whole (issue 29, composites). */
import { Effect } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, type Completed, type CompositeSuspended, Decision, inMemoryResumeLedger, loop, ResumeLedger, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { makeBank } from "./bank.ts"
import { reorderKeys } from "./reorder-keys.ts"

const transferCall = toolCalls([{ id: "k1", name: "transfer", arguments: { to: "bob", amount: 500 } }])

/** Iteration 1 answers "a"; iteration 2 asks for a transfer, then answers "b"; iteration 3 answers "c", which stops it. */
const build = (options: { readonly fresh?: boolean; readonly maxIterations?: number } = {}) => {
  const { tools, executed } = makeBank(scriptedModel([]))
  const script = options.fresh === true ? [text("b"), text("c")] : [text("a"), transferCall, text("b"), text("c")]
  const body = agent("drafter").model(scriptedModel(script)).tools({ transfer: tools.transfer })
  const seen: Array<[string, number]> = []
  const drafts = loop("drafts", body, {
    until: (output, iteration) => (seen.push([output, iteration]), output === "c"),
    maxIterations: options.maxIterations ?? 5
  })
  return { executed, seen, drafts }
}

const suspended = async (options: { readonly maxIterations?: number } = {}) => {
  const first = await build(options).drafts.run("start")
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  return first
}

describe("a loop whose body waits for approval", () => {
  it("suspends in the iteration that asked, holding the outputs before it; a fresh loop resumes from reordered JSON and goes on", async () => {
    const first = await suspended()
    expect(first.pending).toEqual([{ id: "k1", tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(first.snapshot).toMatchObject({ composite: "drafts", kind: "loop", state: { stage: 0, iterations: ["a"] } })
    const again = build({ fresh: true })
    const stored = reorderKeys(JSON.parse(JSON.stringify(first.snapshot)))
    expect(await Effect.runPromise(again.drafts.resume(stored, { k1: Decision.approve }))).toEqual({ _tag: "Completed", output: "c" })
    expect(again.executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
    expect(again.seen).toEqual([["b", 2], ["c", 3]])
  })

  it("deny never runs the tool; a second resume with a ResumeLedger is refused", async () => {
    const first = await suspended()
    const again = build({ fresh: true })
    const ledger = inMemoryResumeLedger()
    const once = (d: Parameters<typeof again.drafts.resume>[1]) => again.drafts.resume(first.snapshot, d).pipe(Effect.provideService(ResumeLedger, ledger))
    expect(await Effect.runPromise(once({ k1: Decision.deny("no") }))).toEqual({ _tag: "Completed", output: "c" })
    expect(failureOf(await runExit(once({ k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect(again.executed).toEqual([])
  })

  it("keeps its cap across a resume: LoopLimitExceeded carries the outputs from before the suspension", async () => {
    const first = await suspended({ maxIterations: 2 })
    const again = build({ fresh: true, maxIterations: 2 })
    expect(failureOf(await runExit(again.drafts.resume(first.snapshot, { k1: Decision.approve })))).toMatchObject({ _tag: "LoopLimitExceeded", iterations: ["a", "b"] })
    const five = await suspended()
    const forged = { ...five.snapshot, state: { ...five.snapshot.state, iterations: ["a", "b", "x", "y", "z"] } }
    expect(failureOf(await runExit(build({ fresh: true }).drafts.resume(forged, { k1: Decision.approve })))).toMatchObject({ _tag: "SnapshotInvalid" })
  })

  it("its cap and its `until` are part of its shape: a loop changed since the snapshot refuses it (DefinitionChanged), running nothing", async () => {
    const first = await suspended()
    const wider = build({ fresh: true, maxIterations: 6 })
    expect(failureOf(await runExit(wider.drafts.resume(first.snapshot, { k1: Decision.approve })))).toMatchObject({ _tag: "DefinitionChanged" })
    const { tools, executed } = makeBank(scriptedModel([]))
    const body = agent("drafter").model(scriptedModel([text("b"), text("c")])).tools({ transfer: tools.transfer })
    const otherUntil = loop("drafts", body, { until: (output) => output === "b", maxIterations: 5 })
    expect(failureOf(await runExit(otherUntil.resume(first.snapshot, { k1: Decision.approve })))).toMatchObject({ _tag: "DefinitionChanged" })
    expect([...wider.executed, ...executed]).toEqual([])
  })

  it("types: Completed | Suspended, and `until` sees the completed output", () => {
    const { drafts } = build()
    expectTypeOf<Awaited<ReturnType<typeof drafts.run>>>().toEqualTypeOf<Completed<string> | CompositeSuspended>()
  })
})
