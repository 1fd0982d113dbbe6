/**
 * Two workers resuming one composite snapshot with a shared `ResumeLedger` whose `consume` takes a few
 * milliseconds, as a database's does (outside tester, s41). A composite consumes one key for its whole
 * snapshot, after every check and before any member continues: exactly one resume goes on, every
 * approved call runs exactly once, and the other fails with `SnapshotAlreadyResumed` having run
 * nothing. Before, each waiting member consumed its own key, so two workers could each win one member
 * and both fail, one approved call lost for good.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  agent,
  Decision,
  type Decisions,
  forum,
  inMemoryResumeLedger,
  loop,
  parallel,
  pipeline,
  ResumeLedger,
  type ResumeLedgerStore,
  text,
  tool,
  toolCalls
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { reorderKeys } from "./reorder-keys.ts"

/** An agent that asks to transfer to itself once (its call `k`), then answers; `ran` records each transfer. */
const payer = (name: string, ran: Array<string>) => {
  const transfer = tool("transfer", {
    args: Schema.Struct({ to: Schema.String }),
    needsApproval: true,
    run: ({ to }) => {
      ran.push(to)
      return `sent to ${to}`
    }
  })
  return agent(name)
    .model(scriptedModel((request) => request.messages.at(-1)?.role === "user" ? toolCalls([{ id: "k", name: "transfer", arguments: { to: name } }]) : text(`${name} done`)))
    .tools({ transfer })
}

/**
 * A ledger like `sqlResumeLedger`: each `consume` is atomic (check and insert at once) but answers after
 * `latency[n]` ms (the n-th call; 1 ms after the list), so concurrent consumptions interleave.
 */
const slowLedger = (latency: ReadonlyArray<number>): ResumeLedgerStore & { readonly keys: Array<string> } => {
  const consumed = new Set<string>()
  const keys: Array<string> = []
  let calls = 0
  return {
    keys,
    consume: (key) =>
      Effect.andThen(Effect.sleep(latency[calls++] ?? 1), Effect.sync(() => {
        keys.push(key)
        if (consumed.has(key)) return false
        consumed.add(key)
        return true
      }))
  }
}

/** A stage that gives its input back. */
const echo = () => agent("echo").model(scriptedModel((request) => text(String(request.messages.at(-1)?.content))))

/** The composites under test, each with two members that wait at once (or one, for pipeline and loop). */
const flows = {
  "pipeline(parallel(A, B), notify)": (ran: Array<string>) => {
    const notify = agent("notify", { input: Schema.Tuple([Schema.String, Schema.String]) }).model(scriptedModel(() => {
      ran.push("notify")
      return text("notified")
    }))
    return { flow: pipeline("flow", parallel("par", [payer("A", ran), payer("B", ran)]), notify), transfers: ["A", "B"] }
  },
  "parallel(A, B)": (ran: Array<string>) => ({ flow: parallel("par", [payer("A", ran), payer("B", ran)]), transfers: ["A", "B"] }),
  "parallel(A, B) collecting": (ran: Array<string>) => ({ flow: parallel("par", [payer("A", ran), payer("B", ran)], { onFailure: "collect" }), transfers: ["A", "B"] }),
  "forum(A, B)": (ran: Array<string>) => ({
    flow: forum("panel", [payer("A", ran), payer("B", ran)], (brief) => brief.answers.map((a) => a.answer).join(", ")),
    transfers: ["A", "B"]
  }),
  "parallel(pipeline(A, echo), parallel(B, C))": (ran: Array<string>) => ({
    flow: parallel("outer", [pipeline("left", payer("A", ran), echo()), parallel("right", [payer("B", ran), payer("C", ran)])]),
    transfers: ["A", "B", "C"]
  }),
  "pipeline(A, echo)": (ran: Array<string>) => ({ flow: pipeline("one", payer("A", ran), echo()), transfers: ["A"] }),
  "loop(A)": (ran: Array<string>) => ({ flow: loop("again", payer("A", ran), { until: () => true, maxIterations: 2 }), transfers: ["A"] })
} satisfies Record<string, (ran: Array<string>) => { readonly flow: unknown; readonly transfers: ReadonlyArray<string> }>

interface Flow {
  run(input: string): Promise<any>
  resume(snapshot: unknown, decisions: Decisions): Effect.Effect<any, any>
}

/** Runs `name` to its suspension, then resumes its JSON snapshot `workers` times at once with `ledger`, approving everything. */
const race = async (name: keyof typeof flows, ledger: ResumeLedgerStore, workers = 2) => {
  const ran: Array<string> = []
  const { flow, transfers } = flows[name](ran) as { readonly flow: Flow; readonly transfers: ReadonlyArray<string> }
  const first = await flow.run("go")
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  expect(ran).toEqual([])
  const stored = JSON.stringify(first.snapshot)
  const decisions: Decisions = Object.fromEntries(first.pending.map((p: { readonly id: string }) => [p.id, Decision.approve]))
  const resumeOnce = () => runExit(flow.resume(stored, decisions).pipe(Effect.provideService(ResumeLedger, ledger)))
  const exits = await Promise.all(Array.from({ length: workers }, resumeOnce))
  return { exits, ran, transfers, flow, stored, decisions }
}

describe("two workers resuming one composite snapshot with a slow shared ledger", () => {
  it("pipeline(parallel(A, B), notify), the tester's interleaving: exactly one completes, each transfer and the next stage run once, the other is refused", async () => {
    // Consumptions answer after 20, 1, 10, 5 ms: keyed per member, worker 1 won B and worker 2 won A.
    const ledger = slowLedger([20, 1, 10, 5])
    const { exits, ran, flow, stored, decisions } = await race("pipeline(parallel(A, B), notify)", ledger)
    expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
    expect(exits.filter(Exit.isSuccess)[0]!.value).toEqual({ _tag: "Completed", output: "notified" })
    expect(failureOf(exits.find(Exit.isFailure)!)).toMatchObject({ _tag: "SnapshotAlreadyResumed", agent: "flow" })
    expect([...ran].sort()).toEqual(["A", "B", "notify"])
    // A third resume (its keys reordered) is refused and runs nothing.
    const third = await runExit(flow.resume(reorderKeys(JSON.parse(stored)), decisions).pipe(Effect.provideService(ResumeLedger, ledger)))
    expect(failureOf(third)).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect([...ran].sort()).toEqual(["A", "B", "notify"])
  })

  for (const name of Object.keys(flows) as Array<keyof typeof flows>) {
    it(`${name}: one resume goes on, the other fails before anything runs`, async () => {
      const { exits, ran, transfers } = await race(name, slowLedger([20, 1, 10, 5, 3, 2]))
      expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
      expect(exits.filter(Exit.isFailure).map((exit) => failureOf(exit))).toMatchObject([{ _tag: "SnapshotAlreadyResumed" }])
      expect(ran.filter((r) => r !== "notify").sort()).toEqual([...transfers].sort())
    })
  }

  it("members under a gated composite consume their own keys too and pass: nested composites resume once with a ledger", async () => {
    const ledger = slowLedger([])
    const { exits } = await race("parallel(pipeline(A, echo), parallel(B, C))", ledger, 1)
    expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
    // The outer composite's key first, then the nested composites' and the agents' own.
    expect(ledger.keys[0]).toMatch(/^parallel:outer\//)
    expect(ledger.keys).toHaveLength(6)
    expect(new Set(ledger.keys).size).toBe(6)
  })

  it("a refused resume consumes nothing: after DecisionsInvalid the snapshot still resumes once", async () => {
    const ran: Array<string> = []
    const { flow } = flows["parallel(A, B)"](ran)
    const first = await flow.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const ledger = inMemoryResumeLedger()
    const resume = (decisions: Decisions) => runExit(flow.resume(first.snapshot, decisions).pipe(Effect.provideService(ResumeLedger, ledger)))
    expect(failureOf(await resume({ "0/k": Decision.approve, "1/k": Decision.edit({ to: 42 }) }))).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "1/k" })
    expect(failureOf(await resume({ "0/k": Decision.approve }))).toMatchObject({ _tag: "DecisionsInvalid" })
    expect(ran).toEqual([])
    expect(Exit.isSuccess(await resume({ "0/k": Decision.approve, "1/k": Decision.approve }))).toBe(true)
    expect(failureOf(await resume({ "0/k": Decision.approve, "1/k": Decision.approve }))).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect([...ran].sort()).toEqual(["A", "B"])
  })

  it("the key is where the snapshot waits: a copy with other outputs or spent is refused before anything runs", async () => {
    const ran: Array<string> = []
    const flow = parallel("par", [payer("A", ran), payer("B", ran), echo()]).budget({ maxTokens: 10_000 })
    const first = await flow.run("go")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.snapshot.state.outputs).toEqual([{ stage: 2, output: "go" }])
    const ledger = inMemoryResumeLedger()
    const decisions = { "0/k": Decision.approve, "1/k": Decision.approve }
    const resume = (snapshot: unknown) => runExit(flow.resume(snapshot, decisions).pipe(Effect.provideService(ResumeLedger, ledger)))
    expect(Exit.isSuccess(await resume(first.snapshot))).toBe(true)
    const state = first.snapshot.state
    for (const copy of [{ ...state, outputs: [{ stage: 2, output: "other" }] }, { ...state, spent: { tokens: 0, toolCalls: 0, elapsedMs: 0 } }]) {
      expect(failureOf(await resume({ ...first.snapshot, state: copy }))).toMatchObject({ _tag: "SnapshotAlreadyResumed", agent: "par" })
    }
    expect([...ran].sort()).toEqual(["A", "B"])
  })

  test.prop(
    [
      fc.constantFrom(...(Object.keys(flows) as Array<keyof typeof flows>)),
      fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 12 }),
      fc.integer({ min: 2, max: 3 })
    ],
    { numRuns: 25 }
  )("any latencies, two or three workers: exactly one completes, every approved call runs exactly once, the others are refused", async (name, latency, workers) => {
    const { exits, ran, transfers } = await race(name, slowLedger(latency), workers)
    expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
    for (const exit of exits.filter(Exit.isFailure)) expect(failureOf(exit)).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect(ran.filter((r) => r !== "notify").sort()).toEqual([...transfers].sort())
    expect(ran.filter((r) => r === "notify").length).toBeLessThanOrEqual(1)
  })
})
