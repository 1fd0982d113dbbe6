/**
 * An unsigned snapshot edited by someone who can write it (found by an outside tester): its waiting
 * entries (`state.awaiting`) and carried decisions (`state.decided`) must describe calls of the model's
 * answer in its transcript, so an edit can neither approve a call no one decided on nor swap the call
 * an approval runs. Examples of each forgery, the legitimate flows beside them, and a property over
 * generated edits: a tool that needs approval never runs without a matching decision.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  agent,
  Decision,
  type Decision as DecisionT,
  Intercept,
  type LlmResponseInit,
  type RunSnapshot,
  text,
  tool,
  toolCalls
} from "../../src/index.ts"
import { canonicalJson } from "../../src/internal/canonical-json.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { secret } from "./bank.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)
// A fixed seed by default (as `borders.property.test.ts`), so CI sees the same forgeries every run;
// PROPERTY_SEED explores others.
const seed = Number(process.env.PROPERTY_SEED ?? 20261130)

interface Execution {
  readonly id: string
  readonly tool: string
  readonly args: unknown
}

/** A desk with a transfer over 100 that needs approval, one call that always does, and one that never does. */
const makeDesk = (script: ReadonlyArray<LlmResponseInit>, options: { readonly sign?: boolean } = {}) => {
  const executed: Array<Execution> = []
  const record = (name: string) => (args: unknown, context: { readonly toolCallId: string }) => {
    executed.push({ id: context.toolCallId, tool: name, args })
    return "ok"
  }
  const transfer = tool("transfer", {
    args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
    needsApproval: ({ amount }) => amount > 100,
    run: record("transfer")
  })
  const always = tool("always", { args: Schema.Struct({ amount: Schema.Int }), needsApproval: true, run: record("always") })
  const note = tool("note", { args: Schema.Struct({ amount: Schema.Int }), run: record("note") })
  const base = agent("desk")
    .model(scriptedModel(script))
    .tools({ transfer, always, note })
    // Arguments the run changes before asking (`BOB` → `bob`), and a suspension of its own (42).
    .intercept("transfer", (args) =>
      args.amount === 42 ? Intercept.suspend("the answer to everything") : args.to === "BOB" ? Intercept.proceedWith({ ...args, to: "bob" }) : Intercept.proceed)
  return { desk: options.sign === true ? base.signSnapshots(secret) : base, executed }
}

/** Whether `name` needs a decision to run `args` (as the tools above say). */
const gated = (name: string, args: unknown): boolean =>
  name === "always" || (name === "transfer" && typeof args === "object" && args !== null && (args as { amount: number }).amount > 100)

const json = (value: unknown): string => canonicalJson(JSON.parse(JSON.stringify(value)))

const edited = (snapshot: RunSnapshot, edit: (state: any) => void): RunSnapshot => {
  const copy = JSON.parse(JSON.stringify(snapshot))
  edit(copy.state)
  return copy
}

const suspendedOnTransfer = async () => {
  const made = makeDesk([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("done")])
  const first = await Effect.runPromise(made.desk.runEffect("pay"))
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  return { ...made, first }
}

describe("an unsigned snapshot edited to approve what no one decided", () => {
  it("a forged carried approval with other arguments that still need approval is not applied: the call is asked about again, as the model made it", async () => {
    const { desk, first, executed } = await suspendedOnTransfer()
    const forged = edited(first.snapshot, (state) => {
      delete state.awaiting
      state.decided = [{ id: "c1", tool: "transfer", decision: "approve", args: { to: "mallory", amount: 9999 } }]
    })
    const again = await Effect.runPromise(desk.resume(forged, {}))
    expect(again).toMatchObject({ _tag: "Suspended", pending: [{ id: "c1", tool: "transfer", args: { to: "bob", amount: 500 } }] })
    expect(executed).toEqual([])
  })

  it("a forged carried approval without the arguments it approved is refused, naming state.decided: nothing runs", async () => {
    const { desk, first, executed } = await suspendedOnTransfer()
    const forged = edited(first.snapshot, (state) => {
      delete state.awaiting
      state.decided = [{ id: "c1", tool: "transfer", decision: "approve" }]
    })
    const error = failureOf(await runExit(desk.resume(forged, {})))
    expect(error).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c1" })
    expect(error.message).toContain("state.decided[0]")
    expect(executed).toEqual([])
  })

  it("a forged carried edit that still needs approval is not applied: the call is asked about again, as the model made it", async () => {
    const { desk, first, executed } = await suspendedOnTransfer()
    const forged = edited(first.snapshot, (state) => {
      delete state.awaiting
      state.decided = [{ id: "c1", tool: "transfer", decision: "edit", args: { to: "mallory", amount: 9999 } }]
    })
    const again = await Effect.runPromise(desk.resume(forged, {}))
    expect(again).toMatchObject({ _tag: "Suspended", pending: [{ id: "c1", tool: "transfer", args: { to: "bob", amount: 500 } }] })
    expect(executed).toEqual([])
  })

  it("a waiting entry given other arguments and a reason is approved as shown (what the reviewer saw), decoded again: arguments its Schema refuses are DecisionsInvalid", async () => {
    const { desk, first, executed } = await suspendedOnTransfer()
    const shown = edited(first.snapshot, (state) => {
      state.awaiting[0].args = { to: "carol", amount: 700 }
      state.awaiting[0].reason = "x"
    })
    expect((await Effect.runPromise(desk.resume(shown, { c1: Decision.approve })))._tag).toBe("Completed")
    expect(executed).toEqual([{ id: "c1", tool: "transfer", args: { to: "carol", amount: 700 } }])
    executed.length = 0
    const refused = edited(first.snapshot, (state) => {
      state.awaiting[0].args = { to: "carol", amount: "lots" }
      state.awaiting[0].reason = "x"
    })
    const error = failureOf(await runExit(desk.resume(refused, { c1: Decision.approve })))
    expect(error).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c1" })
    expect(executed).toEqual([])
  })

  it("a waiting entry given other arguments without a reason is refused whatever the decision", async () => {
    const { desk, first, executed } = await suspendedOnTransfer()
    const forged = edited(first.snapshot, (state) => void (state.awaiting[0].args = { to: "mallory", amount: 9999 }))
    for (const decision of [Decision.approve, Decision.deny("no"), Decision.edit({ to: "bob", amount: 1 })]) {
      expect(failureOf(await runExit(desk.resume(forged, { c1: decision })))).toMatchObject({ _tag: "DecisionsInvalid", toolCallId: "c1" })
    }
    expect(executed).toEqual([])
  })

  it("a carried approval of the model's own call, or a denial, is honoured: not asked again", async () => {
    const { desk, first, executed } = await suspendedOnTransfer()
    const carried = edited(first.snapshot, (state) => {
      delete state.awaiting
      state.decided = [{ id: "c1", tool: "transfer", decision: "approve", args: { amount: 500, to: "bob" } }]
    })
    expect(await Effect.runPromise(desk.resume(carried, {}))).toEqual({ _tag: "Completed", output: "done" })
    expect(executed).toEqual([{ id: "c1", tool: "transfer", args: { to: "bob", amount: 500 } }])
  })
})

describe("decisions carried by a run that suspends again", () => {
  const script = () => [
    toolCalls([
      { id: "t1", name: "transfer", arguments: { to: "bob", amount: 500 } },
      { id: "t2", name: "transfer", arguments: { to: "carol", amount: 42 } },
      { id: "t3", name: "transfer", arguments: { to: "dave", amount: 700 } }
    ]),
    text("done")
  ]

  it("are applied when their calls come (approve, and an edit in a signed snapshot), never asked again", async () => {
    for (const sign of [false, true]) {
      const { desk, executed } = makeDesk(script(), { sign })
      const first = await Effect.runPromise(desk.runEffect("pay"))
      if (first._tag !== "Suspended") throw new Error("expected a suspension")
      expect(first.pending.map((p) => p.id)).toEqual(["t1", "t3"])
      const decision = sign ? Decision.edit({ to: "dave", amount: 600 }) : Decision.approve
      const second = await Effect.runPromise(desk.resume(JSON.stringify(first.snapshot), { t1: Decision.approve, t3: decision }))
      if (second._tag !== "Suspended") throw new Error("expected a second suspension")
      expect(second.pending.map((p) => p.id)).toEqual(["t2"])
      expect(second.snapshot.state.decided).toHaveLength(1)
      expect(await Effect.runPromise(desk.resume(JSON.stringify(second.snapshot), { t2: Decision.approve }))).toEqual({ _tag: "Completed", output: "done" })
      expect(executed.map((e) => [e.id, e.args])).toEqual([
        ["t1", { to: "bob", amount: 500 }],
        ["t2", { to: "carol", amount: 42 }],
        ["t3", sign ? { to: "dave", amount: 600 } : { to: "dave", amount: 700 }]
      ])
    }
  })

  it("an edit carried by an unsigned snapshot that still needs approval is asked about again (no one can show who edited it)", async () => {
    const { desk, executed } = makeDesk(script())
    const first = await Effect.runPromise(desk.runEffect("pay"))
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    const second = await Effect.runPromise(desk.resume(first.snapshot, { t1: Decision.approve, t3: Decision.edit({ to: "dave", amount: 600 }) }))
    if (second._tag !== "Suspended") throw new Error("expected a second suspension")
    const third = await Effect.runPromise(desk.resume(JSON.stringify(second.snapshot), { t2: Decision.approve }))
    expect(third).toMatchObject({ _tag: "Suspended", pending: [{ id: "t3", tool: "transfer", args: { to: "dave", amount: 700 } }] })
    expect(executed.map((e) => e.id)).toEqual(["t1", "t2"])
  })
})

// ---------------------------------------------------------------------------------------------------
// The property: generated edits of an unsigned snapshot's waiting entries and carried decisions.

const arbArgs: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ to: fc.constantFrom("bob", "BOB", "mallory"), amount: fc.constantFrom(5, 42, 500, 9999) }) },
  { weight: 2, arbitrary: fc.record({ amount: fc.constantFrom(1, 900) }) },
  { weight: 1, arbitrary: fc.constant({ to: "mallory" }) },
  { weight: 1, arbitrary: fc.constant("lots") }
)

const arbCall = (id: string) =>
  fc.oneof(
    fc.record({ id: fc.constant(id), name: fc.constant("transfer"), arguments: fc.record({ to: fc.constantFrom("bob", "BOB"), amount: fc.constantFrom(5, 42, 500) }) }),
    fc.record({ id: fc.constant(id), name: fc.constantFrom("always", "note"), arguments: fc.record({ amount: fc.constantFrom(1, 900) }) })
  )

const arbAnswer = fc.integer({ min: 1, max: 4 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => arbCall(`c${i + 1}`))))

type Edit =
  | { readonly _tag: "AwaitingArgs"; readonly index: number; readonly args: unknown }
  | { readonly _tag: "AwaitingReason"; readonly index: number }
  | { readonly _tag: "AwaitingTool"; readonly index: number; readonly tool: string }
  | { readonly _tag: "AwaitingDrop"; readonly index: number }
  | { readonly _tag: "AwaitingAdd"; readonly id: string; readonly tool: string; readonly args: unknown }
  | { readonly _tag: "DecidedAdd"; readonly id: string; readonly tool: string; readonly decision: "approve" | "edit" | "deny"; readonly args: unknown | "model" }
  | { readonly _tag: "AwaitingToDecided"; readonly index: number; readonly decision: "approve" | "edit" | "deny"; readonly args: unknown | "model" }
  | { readonly _tag: "DecidedArgs"; readonly index: number; readonly args: unknown }
  | { readonly _tag: "DecidedKind"; readonly index: number; readonly decision: "approve" | "edit" | "deny" }

const arbId = fc.constantFrom("c1", "c2", "c3", "c4", "zz")
const arbTool = fc.constantFrom("transfer", "always", "note")
const arbKind = fc.constantFrom("approve" as const, "edit" as const, "deny" as const)
const arbEdit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ _tag: fc.constant("AwaitingArgs" as const), index: fc.nat(3), args: arbArgs }),
  fc.record({ _tag: fc.constant("AwaitingReason" as const), index: fc.nat(3) }),
  fc.record({ _tag: fc.constant("AwaitingTool" as const), index: fc.nat(3), tool: arbTool }),
  fc.record({ _tag: fc.constant("AwaitingDrop" as const), index: fc.nat(3) }),
  fc.record({ _tag: fc.constant("AwaitingAdd" as const), id: arbId, tool: arbTool, args: arbArgs }),
  // The forgeries of a decision no one gave are the likeliest: they are what the law is about.
  { weight: 3, arbitrary: fc.record({ _tag: fc.constant("AwaitingToDecided" as const), index: fc.nat(1), decision: arbKind, args: fc.oneof(arbArgs, fc.constant("model" as const)) }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("DecidedAdd" as const), id: arbId, tool: arbTool, decision: arbKind, args: fc.oneof(arbArgs, fc.constant("model" as const)) }) },
  fc.record({ _tag: fc.constant("DecidedArgs" as const), index: fc.nat(3), args: arbArgs }),
  fc.record({ _tag: fc.constant("DecidedKind" as const), index: fc.nat(3), decision: arbKind })
)

const arbDecision: fc.Arbitrary<DecisionT> = fc.oneof(fc.constant(Decision.approve), fc.constant(Decision.deny("no")), arbArgs.map((args) => Decision.edit(args)))

/** Applies `edits` to a copy of the snapshot's JSON; the model's calls (transcript and pending) stay as they were. */
const applyEdits = (snapshot: RunSnapshot, edits: ReadonlyArray<Edit>, modelArgs: ReadonlyMap<string, unknown>): RunSnapshot =>
  edited(snapshot, (state) => {
    for (const edit of edits) {
      const awaiting: Array<any> = state.awaiting ?? []
      const decided: Array<any> = state.decided ?? []
      switch (edit._tag) {
        case "AwaitingArgs":
          if (awaiting[edit.index] !== undefined) awaiting[edit.index].args = edit.args
          break
        case "AwaitingReason":
          if (awaiting[edit.index] !== undefined) awaiting[edit.index].reason = "forged"
          break
        case "AwaitingTool":
          if (awaiting[edit.index] !== undefined) awaiting[edit.index].tool = edit.tool
          break
        case "AwaitingDrop":
          awaiting.splice(edit.index, 1)
          break
        case "AwaitingAdd":
          awaiting.push({ id: edit.id, tool: edit.tool, args: edit.args })
          break
        case "DecidedAdd": {
          const args = edit.args === "model" ? modelArgs.get(edit.id) ?? null : edit.args
          decided.push(edit.decision === "deny" ? { id: edit.id, tool: edit.tool, decision: "deny", reason: "forged" } : { id: edit.id, tool: edit.tool, decision: edit.decision, args })
          break
        }
        case "AwaitingToDecided": {
          // The tester's forgery: a waiting call turned into a decision no one gave.
          const [entry] = awaiting.splice(edit.index, 1)
          if (entry === undefined) break
          const args = edit.args === "model" ? modelArgs.get(entry.id) ?? null : edit.args
          decided.push(edit.decision === "deny" ? { id: entry.id, tool: entry.tool, decision: "deny", reason: "forged" } : { id: entry.id, tool: entry.tool, decision: edit.decision, args })
          break
        }
        case "DecidedArgs":
          if (decided[edit.index] !== undefined) decided[edit.index].args = edit.args
          break
        case "DecidedKind":
          if (decided[edit.index] !== undefined) decided[edit.index].decision = edit.decision
          break
      }
      if (awaiting.length === 0) delete state.awaiting
      else state.awaiting = awaiting
      if (decided.length === 0) delete state.decided
      else state.decided = decided
    }
  })

/** The model's own calls of its last answer, by id: the arguments it sent, parsed. */
const modelCalls = (snapshot: RunSnapshot): ReadonlyMap<string, { readonly tool: string; readonly args: unknown }> => {
  const answer = [...snapshot.state.transcript].reverse().find((m) => m.role === "assistant")
  const calls = answer?.role === "assistant" ? answer.toolCalls ?? [] : []
  return new Map(calls.map((c) => [c.id, { tool: c.name, args: JSON.parse(c.arguments) as unknown }]))
}

describe("generated edits of an unsigned snapshot", () => {
  test.prop([arbAnswer, fc.boolean(), fc.array(arbEdit, { minLength: 1, maxLength: 3 }), fc.infiniteStream(arbDecision)], { numRuns, seed })(
    "never run a call that needs approval without a matching decision: given now for that call (an approval of the arguments shown), or carried for the model's own call as made",
    async (answer, carry, edits, decisionStream) => {
      const script = [toolCalls(answer as never), text("done")]
      const first = makeDesk(script)
      let exit = await runExit(first.desk.runEffect("go"))
      if (!Exit.isSuccess(exit) || exit.value._tag !== "Suspended") return
      // Sometimes a snapshot that carries decisions: resumed once with every call approved (or, where the
      // run changed the arguments, given as an edit), suspended again by the interceptor.
      if (carry) {
        const pending = exit.value.pending
        const all = Object.fromEntries(pending.map((p) => [p.id, p.reason === undefined ? Decision.approve : Decision.edit(p.args)]))
        exit = await runExit(makeDesk(script).desk.resume(JSON.stringify(exit.value.snapshot), all))
        if (!Exit.isSuccess(exit) || exit.value._tag !== "Suspended") return
      }
      const snapshot = exit.value.snapshot
      const model = modelCalls(snapshot)
      const forged = applyEdits(snapshot, edits, new Map([...model].map(([id, c]) => [id, c.args])))
      const decisions = decisionStream[Symbol.iterator]()
      const given: Record<string, DecisionT> = {}
      for (const entry of forged.state.awaiting ?? []) given[entry.id] = decisions.next().value as DecisionT
      const { desk, executed } = makeDesk(script)
      const resumed = await runExit(desk.resume(JSON.stringify(forged), given))
      if (Exit.isFailure(resumed)) {
        // A refusal is typed and comes before anything runs.
        expect(failureOf(resumed)).toHaveProperty("_tag")
        expect(executed).toEqual([])
        return
      }
      for (const run of executed) {
        if (!gated(run.tool, run.args)) continue
        const call = model.get(run.id)
        const decision = given[run.id]
        const asCalled = call !== undefined && call.tool === run.tool && json(call.args) === json(run.args)
        // Approved now: of the arguments the pending list showed the reviewer for that call.
        const shown = (forged.state.awaiting ?? []).find((entry) => entry.id === run.id)
        const approvedNow = decision?._tag === "Approve" && shown !== undefined && shown.tool === run.tool && json(shown.args) === json(run.args)
        const editedNow = decision?._tag === "Edit" && json(decision.args) === json(run.args)
        // Carried: an approval (or an edit that changes nothing) of the model's own call, as it made it.
        const carried = (forged.state.decided ?? []).some((d) => d.id === run.id && d.decision !== "deny" && asCalled && json(d.args) === json(run.args))
        expect({ run, matched: approvedNow || editedNow || carried }).toEqual({ run, matched: true })
      }
    },
    120_000
  )
})
