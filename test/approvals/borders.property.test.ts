/**
 * The approval law across borders (issue 29): arbitrary scripts for a caller, a child agent it uses as
 * a tool and a handoff target; arbitrary decisions; repeated suspensions; every snapshot serialised,
 * parsed and its keys reordered (signed or not) before a freshly built agent resumes it; some
 * snapshots resumed a second time with a resume ledger; some runs inside a composite: a pipeline (the
 * caller a stage that suspends the pipeline, a later stage after it), a parallel and a forum (the caller
 * and a second agent with gated tools of its own as members or participants, both possibly waiting at
 * once, a captain after them). Laws: a gated call runs only after an approve
 * (or edit) of that exact call, at most once per decision; a denied call never runs; every call of
 * every assistant message a model saw has exactly one result; a second resume is refused and runs nothing.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Exit, Schema } from "effect"
import { afterAll, describe, expect } from "vitest"
import {
  agent,
  Decision,
  type Decision as DecisionT,
  inMemoryResumeLedger,
  type LlmResponseInit,
  forum,
  type ModelClient,
  parallel,
  pipeline,
  ResumeLedger,
  skill,
  text,
  tool,
  toolCalls
} from "../../src/index.ts"
import { canonicalJson } from "../../src/internal/canonical-json.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { secret } from "./bank.ts"
import { reorderKeys } from "./reorder-keys.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 80)
// The coverage counters below need every kind of border in one run of `numRuns` examples: with a random
// seed, about one run in seven missed one of them and failed `afterAll` (found 2026-11-29). A fixed seed
// by default keeps CI deterministic; PROPERTY_SEED (or more PROPERTY_RUNS) explores others.
const seed = Number(process.env.PROPERTY_SEED ?? 20261129)

interface Execution {
  readonly id: string
  readonly tool: string
  readonly args: unknown
}

const Amount = Schema.Struct({ amount: Schema.Int })

const build = (models: { readonly front: ModelClient; readonly child: ModelClient; readonly grandchild: ModelClient; readonly desk: ModelClient }, executed: Array<Execution>, sign: boolean) => {
  const record = (name: string) => (args: unknown, context: { readonly toolCallId: string }) => {
    executed.push({ id: context.toolCallId, tool: name, args })
    return "ok"
  }
  const gatedTools = <const P extends string>(prefix: P) => ({
    free: tool(`${prefix}free`, { args: Amount, run: record(`${prefix}free`) }),
    guarded: tool(`${prefix}guarded`, { args: Amount, needsApproval: ({ amount }) => amount > 50, run: record(`${prefix}guarded`) })
  })
  const signed = <A extends { signSnapshots: (s: string) => any }>(a: A): A => (sign ? a.signSnapshots(secret) : a)
  const g = gatedTools("g_")
  const grandchild = signed(agent("grandchild").model(models.grandchild).budget({ maxTurns: 3 }).disallowedToolPolicy("feedback").tools({ g_free: g.free, g_guarded: g.guarded }))
  const c = gatedTools("c_")
  const child = signed(
    agent("child").model(models.child).budget({ maxTurns: 4 }).disallowedToolPolicy("feedback")
      .tools({ c_free: c.free, c_guarded: c.guarded, deeper: grandchild.asTool({ name: "deeper" }) })
  )
  const d = gatedTools("d_")
  const desk = signed(agent("desk").model(models.desk).budget({ maxTurns: 4 }).disallowedToolPolicy("feedback").tools({ d_free: d.free, d_guarded: d.guarded }))
  const f = gatedTools("")
  const delegate = child.asTool({ name: "delegate" })
  return signed(
    agent("front")
      .model(models.front)
      .budget({ maxTurns: 5 })
      .disallowedToolPolicy("feedback")
      .tools({ free: f.free, guarded: f.guarded, delegate })
      .skills(({ free, guarded, delegate }) => [skill("main", "everything").tools(free, guarded, delegate).handoffs(desk)])
  )
}

/** Whether a call may run without a decision. */
const freeToRun = (tool: string, args: unknown): boolean =>
  tool.endsWith("free") || (tool.endsWith("guarded") && typeof args === "object" && args !== null && (args as { amount: number }).amount <= 50)

const arbArgs: fc.Arbitrary<unknown> = fc.oneof(fc.record({ amount: fc.integer({ min: 0, max: 120 }) }), fc.constant({ amount: "lots" }))

const arbTurn = (names: ReadonlyArray<string>): fc.Arbitrary<LlmResponseInit> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.uniqueArray(
        fc.record({ id: fc.constantFrom("a", "b", "c", "d"), name: fc.constantFrom(...names), arguments: arbArgs }),
        { minLength: 1, maxLength: 3, selector: (c) => c.id }
      ).map((calls) => toolCalls(calls.map((c) => (c.name === "delegate" || c.name === "deeper" ? { ...c, arguments: { input: "go" } } : c.name === "handoff_to_desk" ? { ...c, arguments: {} } : c)) as never))
    },
    { weight: 1, arbitrary: fc.constant(text("done")) }
  )

const arbDecision: fc.Arbitrary<DecisionT> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(Decision.approve) },
  { weight: 2, arbitrary: fc.constant(Decision.deny("no")) },
  { weight: 2, arbitrary: arbArgs.map((args) => Decision.edit(args)) }
)

const key = (tool: string, id: string, args: unknown) => `${tool}|${id}|${canonicalJson(args)}`

/** Every call of every assistant message a model saw has exactly one tool result after it. */
const eachCallAnsweredOnce = (model: ReturnType<typeof scriptedModel>) => {
  for (const request of model.requests) {
    const messages = request.messages
    messages.forEach((m, i) => {
      if (m.role !== "assistant" || m.toolCalls === undefined) return
      const next = messages.slice(i + 1).findIndex((n) => n.role === "assistant")
      const results = messages.slice(i + 1, next === -1 ? undefined : i + 1 + next).filter((n) => n.role === "tool")
      for (const call of m.toolCalls) expect(results.filter((r) => r.role === "tool" && r.toolCallId === call.id)).toHaveLength(1)
    })
  }
}

/** What the runs went through, so the laws are not vacuous (checked after the property). */
const seen = { refusedWithBothWaiting: 0, parallelSuspensions: 0, forumSuspensions: 0, bothMembersWaiting: 0, pipelineSuspensions: 0, suspensions: 0, childSuspensions: 0, grandchildSuspensions: 0, handoffSuspensions: 0, refusedSecondResumes: 0, gatedRuns: 0 }

describe("approvals across borders", () => {
  afterAll(() => {
    expect(seen.suspensions).toBeGreaterThan(0)
    expect(seen.childSuspensions).toBeGreaterThan(0)
    expect(seen.grandchildSuspensions).toBeGreaterThan(0)
    expect(seen.handoffSuspensions).toBeGreaterThan(0)
    expect(seen.refusedSecondResumes).toBeGreaterThan(0)
    expect(seen.gatedRuns).toBeGreaterThan(0)
    expect(seen.pipelineSuspensions).toBeGreaterThan(0)
    expect(seen.parallelSuspensions).toBeGreaterThan(0)
    expect(seen.forumSuspensions).toBeGreaterThan(0)
    expect(seen.bothMembersWaiting).toBeGreaterThan(0)
  })

  test.prop(
    [
      fc.array(arbTurn(["free", "guarded", "delegate", "handoff_to_desk", "nope"]), { minLength: 1, maxLength: 5 }),
      fc.array(arbTurn(["c_free", "c_guarded", "deeper"]), { minLength: 0, maxLength: 6 }),
      fc.array(arbTurn(["g_free", "g_guarded"]), { minLength: 0, maxLength: 4 }),
      fc.array(arbTurn(["d_free", "d_guarded"]), { minLength: 0, maxLength: 4 }),
      fc.infiniteStream(arbDecision),
      fc.boolean(),
      fc.infiniteStream(fc.boolean()),
      fc.constantFrom("alone", "pipeline", "parallel", "forum"),
      // The second member mostly asks first, so both members often wait at once.
      fc.tuple(fc.integer({ min: 20, max: 120 }), fc.array(arbTurn(["s_free", "s_guarded"]), { minLength: 0, maxLength: 3 }))
        .map(([amount, rest]) => [toolCalls([{ id: "a", name: "s_guarded", arguments: { amount } }]), ...rest]),
      fc.boolean()
    ],
    { numRuns, seed }
  )("a gated call runs only once per approval of that exact call; a denied one never; every call gets one result; a second resume runs nothing", async (front, child, grandchild, desk, decisionStream, sign, againStream, container, side, sideFirst) => {
    const models = { front: scriptedModel(front), child: scriptedModel(child), grandchild: scriptedModel(grandchild), desk: scriptedModel(desk) }
    const sideModel = scriptedModel(side)
    const executed: Array<Execution> = []
    const authorised = new Map<string, number>()
    const decisions = decisionStream[Symbol.iterator]()
    const again = againStream[Symbol.iterator]()
    const ledger = inMemoryResumeLedger()
    const after = agent("after").model(scriptedModel(() => text("after")))
    type Resumable = { resume(s: unknown, d: Record<string, DecisionT>): Effect.Effect<any, any>; runEffect(input: string): Effect.Effect<any, any> }
    /** A second member with gated tools of its own, for the parallel and the forum. */
    const sideAgent = () => {
      const run = (name: string) => (args: unknown, context: { readonly toolCallId: string }) => void executed.push({ id: context.toolCallId, tool: name, args })
      const free = tool("s_free", { args: Amount, run: run("s_free") })
      const guarded = tool("s_guarded", { args: Amount, needsApproval: ({ amount }) => amount > 50, run: run("s_guarded") })
      const made = agent("side").model(sideModel).budget({ maxTurns: 4 }).disallowedToolPolicy("feedback").tools({ s_free: free, s_guarded: guarded })
      return sign ? made.signSnapshots(secret) : made
    }
    const fresh = (): Resumable => {
      const caller = build(models, executed, sign)
      switch (container) {
        case "alone":
          return caller as unknown as Resumable
        case "pipeline":
          return pipeline("flow", caller, after) as unknown as Resumable
        case "parallel":
          return parallel("flow", (sideFirst ? [sideAgent(), caller] : [caller, sideAgent()]) as any) as unknown as Resumable
        case "forum":
          return forum("flow", (sideFirst ? [sideAgent(), caller] : [caller, sideAgent()]) as any, after as any) as unknown as Resumable
      }
    }
    const resume = (stored: unknown, chosen: Record<string, DecisionT>) =>
      Effect.runPromise(Effect.exit(fresh().resume(stored, chosen).pipe(Effect.provideService(ResumeLedger, ledger)) as Effect.Effect<any, any>))
    let exit: Exit.Exit<any, any> = await Effect.runPromise(Effect.exit(fresh().runEffect("go") as Effect.Effect<any, any>))
    let rounds = 0
    while (Exit.isSuccess(exit) && exit.value._tag === "Suspended" && rounds++ < 20) {
      const suspended = exit.value as { pending: ReadonlyArray<{ id: string; tool: string; args: unknown }>; snapshot: unknown }
      const stored = reorderKeys(JSON.parse(JSON.stringify(suspended.snapshot)))
      // The caller's own snapshot, if it waits: the composite's member 0 (1 when the second member comes first).
      const members: ReadonlyArray<{ stage: number; member: any }> = container === "alone"
        ? [{ stage: 0, member: stored }]
        : [{ stage: stored.state.stage, member: stored.state.member }, ...(stored.state.waiting ?? [])]
      const callerAt = sideFirst && (container === "parallel" || container === "forum") ? 1 : 0
      const runSnapshot = members.find((m) => m.stage === callerAt)?.member ?? { state: {} }
      if (container === "pipeline") seen.pipelineSuspensions++
      if (container === "parallel") seen.parallelSuspensions++
      if (container === "forum") seen.forumSuspensions++
      if (members.length > 1) seen.bothMembersWaiting++
      seen.suspensions++
      // A parallel's or forum's calls are named <member index>/<call id>: the member's own ids after it.
      const memberIds = suspended.pending.map((p) => (container === "parallel" || container === "forum" ? p.id.slice(p.id.indexOf("/") + 1) : p.id))
      if (memberIds.some((id) => id.includes("/"))) seen.childSuspensions++
      if (memberIds.some((id) => id.split("/").length > 2)) seen.grandchildSuspensions++
      if (runSnapshot.state.handoff !== undefined) seen.handoffSuspensions++
      const chosen: Record<string, DecisionT> = {}
      for (const pending of suspended.pending) chosen[pending.id] = decisions.next().value as DecisionT
      const before = executed.length
      exit = await resume(stored, chosen)
      if (Exit.isFailure(exit) && exit.cause.reasons.some((r) => r._tag === "Fail" && (r.error as { _tag?: string })._tag === "DecisionsInvalid")) {
        // An invalid edit is refused before anything runs; the reviewer then approves everything.
        expect(executed.length).toBe(before)
        if (members.length > 1) seen.refusedWithBothWaiting++
        for (const id of Object.keys(chosen)) chosen[id] = Decision.approve
        exit = await resume(stored, chosen)
      }
      for (const pending of suspended.pending) {
        const decision = chosen[pending.id]!
        const id = pending.id.split("/").at(-1)!
        const args = decision._tag === "Edit" ? decision.args : decision._tag === "Approve" ? pending.args : undefined
        if (args !== undefined) authorised.set(key(pending.tool, id, args), (authorised.get(key(pending.tool, id, args)) ?? 0) + 1)
      }
      if (again.next().value === true) {
        // The same snapshot again, with the ledger: refused, and nothing runs.
        const count = executed.length
        const second = await resume(JSON.parse(JSON.stringify(stored)), chosen)
        expect(Exit.isFailure(second) && second.cause.reasons.some((r) => r._tag === "Fail" && (r.error as { _tag?: string })._tag === "SnapshotAlreadyResumed")).toBe(true)
        expect(executed.length).toBe(count)
        seen.refusedSecondResumes++
      }
    }
    for (const run of executed) {
      if (freeToRun(run.tool, run.args)) continue
      seen.gatedRuns++
      const k = key(run.tool, run.id, run.args)
      const left = authorised.get(k) ?? 0
      expect(left, `${k} ran without an approval left`).toBeGreaterThan(0)
      authorised.set(k, left - 1)
    }
    eachCallAnsweredOnce(models.front)
    eachCallAnsweredOnce(models.child)
    eachCallAnsweredOnce(models.grandchild)
    eachCallAnsweredOnce(models.desk)
    eachCallAnsweredOnce(sideModel)
  }, 120_000)
})
