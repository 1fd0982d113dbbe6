/**
 * What one durable run may see of another, through the stores every run of an engine shares, as an
 * outside tester found it broken, on the in-memory and the embedded engine (one of each for the file):
 *
 * - Tool step keys are one to one in the run id, the turn and the call id (chosen by the caller and
 *   the model): run "a/1" with call "c2" and run "a" with call "1/c2" used to share the claim key
 *   `tool/a/1/1/c2` (the second payment never ran, its run reported the first's), as did a user's run
 *   "x~2" and run "x"'s handoff `x~2`. A claim an earlier version wrote is still found for its own call.
 * - A run id names one run per engine, whatever its agent: a second durable agent starting a run with
 *   the first's id (a business key such as "order-42") shared the first run's wait, cancellation,
 *   journal and claims. Now it is refused (`InputInvalid`) before anything runs, and none of its calls
 *   sees or touches the first run; of two agents starting one id at once, one holds it.
 * - A run that ended (its deadline passed, cancelled) waits for nothing: its waits are closed and
 *   `decide` is refused, nothing recorded (it used to succeed once); of two `decide` calls at the same
 *   moment one is refused (both used to be told ok, one dropped).
 */
import { fc, test } from "@fast-check/vitest"
import { Cause, Effect, Exit, Layer, Option, Schema, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, BudgetExceeded, Cancelled, Decision, DecisionsInvalid, InputInvalid, skill, text, tool, toolCalls } from "../../src/index.ts"
import { ApprovalInbox, approvalInboxSql, durable, ToolIntents } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { toolStepKeys } from "../../src/durable/step-keys.ts"
import { engineKinds, twoEngines } from "./two-engines.ts"

const errorOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Option.getOrUndefined(Exit.findErrorOption(exit)) : undefined)

// --- Agents of the tool step keys: a bank whose model pays with the call id the user message gives.

const paid: Array<string> = []
const pay = tool("pay", {
  args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
  run: ({ to, amount }, ctx) => {
    paid.push(`${amount} to ${to} key=${ctx.idempotencyKey}`)
    return `paid ${amount} to ${to}`
  }
})

/** The user message is "<call id> <to> <amount>": the model pays with that call id, then reports. */
const payerModel = scriptedModel((request) => {
  const user = String(request.messages.find((m) => m.role === "user")?.content ?? "")
  const [callId, to, amount] = user.split(" ")
  const results = request.messages.filter((m) => m.role === "tool").map((m) => m.content)
  return results.length > 0 ? text(`result: ${results.join("|")}`) : toolCalls([{ id: callId!, name: "pay", arguments: { to: to!, amount: Number(amount) } }])
})
const payer = durable(agent("payer").model(payerModel).tools({ pay }))

// Triage hands off to billing, which pays (call "c1"): billing's steps run under the derived id `<run>~2`.
const billingModel = scriptedModel((request) =>
  request.messages.some((m) => m.role === "tool" && String(m.content).startsWith("paid"))
    ? text("billing paid")
    : toolCalls([{ id: "c1", name: "pay", arguments: { to: "billing", amount: 7 } }]))
const billing = agent("billing").model(billingModel).tools({ pay })
const triageModel = scriptedModel(() => toolCalls([{ id: "h1", name: "handoff_to_billing", arguments: {} }]))
const triage = durable(agent("triage").model(triageModel).skills(() => [skill("triage", "route").handoffs(billing)]))

// --- Agents of one run per id: a bank whose payment waits for approval, a shipper whose sending does not.

const ran: Array<string> = []
const asked: Array<string> = []

/** An agent whose model calls `toolName` (call id "c1", the same for every agent here), then answers. */
const make = (who: string, toolName: string, needsApproval: boolean, maxDuration?: number) => {
  const t = tool(toolName, {
    args: Schema.Struct({ amount: Schema.Finite }),
    needsApproval,
    run: ({ amount }) => {
      ran.push(`${who} ${amount}`)
      return `${who} did ${amount}`
    }
  })
  const model = scriptedModel((request) => {
    asked.push(who)
    const results = request.messages.filter((m) => m.role === "tool").map((m) => m.content)
    return results.length > 0 ? text(`${who} done: ${results.join("|")}`) : toolCalls([{ id: "c1", name: toolName, arguments: { amount: who === "ship" ? 3 : 500 } }])
  })
  const a = agent(who).model(model).tools({ [toolName]: t })
  return durable(maxDuration === undefined ? a : a.budget({ maxDuration }))
}
const bank = make("bank", "pay", true)
const ship = make("ship", "send", false)
/** A bank whose runs end 600 ms after they start, waiting or not. */
const hasty = make("hasty", "pay", true, 600)

const engines = twoEngines(Layer.mergeAll(payer.layer, triage.layer, bank.layer, ship.layer, hasty.layer))
beforeAll(() => engines.start(), 120_000)
afterAll(() => engines.stop())

describe.each(engineKinds)("tool step keys (%s engine)", (kind) => {
  const on = <A, E>(effect: Effect.Effect<A, E, any>) => engines.on(kind, effect)

  it('run "a/1" call "c2" and run "a" call "1/c2": both pay, each with its own claim and idempotency key', async () => {
    paid.length = 0
    const a1 = await on(payer.run("c2 alice 10", { runId: `${kind}-a/1` }))
    const a = await on(payer.run("1/c2 bob 500", { runId: `${kind}-a` }))
    expect(a1).toEqual({ _tag: "Completed", output: "result: paid 10 to alice" })
    expect(a).toEqual({ _tag: "Completed", output: "result: paid 500 to bob" })
    expect(paid).toEqual([`10 to alice key=${kind}-a%2F1/1/c2`, `500 to bob key=${kind}-a/1/1%2Fc2`])
    const claims = (await on(payer.journal(`${kind}-a`))).claims
    expect(claims.map((c) => [c.runId, c.toolCallId, c.finished])).toEqual([[`${kind}-a`, "1/c2", true]])
  })

  it('a user\'s run "x~2" is not run "x"\'s handoff "x~2": both pay, and each journal shows its own claim', async () => {
    paid.length = 0
    const root = `${kind}-x`
    expect(await on(triage.run("refund me", { runId: root }))).toEqual({ _tag: "Completed", output: "billing paid" })
    // The same call id at the same turn as billing's, in a run whose id is the handoff's.
    const turn = Number(/\/(\d+)\/c1$/.exec(paid[0]!)![1])
    const user = await on(payer.run(`c1 user ${turn}`, { runId: `${root}~2` }))
    expect(user).toEqual({ _tag: "Completed", output: `result: paid ${turn} to user` })
    expect(paid).toEqual([`7 to billing key=${root}~2/${turn}/c1`, `${turn} to user key=${kind}-x%7E2/1/c1`])
    expect((await on(triage.journal(root))).claims.map((c) => [c.runId, c.tool])).toEqual([[`${root}~2`, "pay"]])
    expect((await on(payer.journal(`${root}~2`))).claims.map((c) => [c.runId, c.tool])).toEqual([[`${root}~2`, "pay"]])
  })

  it("a claim an earlier version wrote under its key (unencoded) is found for its own call: the call does not run again", async () => {
    paid.length = 0
    const runId = `${kind}-legacy/1`
    // As a worker of an earlier version left it: the call claimed and finished, its step not recorded.
    await on(Effect.gen(function*() {
      const intents = yield* ToolIntents
      const key = `tool/${runId}/1/c9`
      yield* intents.claim({ key, runId, tool: "pay", toolCallId: "c9" })
      yield* intents.finish(key, { _tag: "Succeeded", value: "paid 5 to carol (before the upgrade)" })
      // Run "legacy2"'s call "1/c8" under the earlier key that run "legacy2/1"'s call "c8" would have had.
      const other = `tool/${kind}-legacy2/1/1/c8`
      yield* intents.claim({ key: other, runId: `${kind}-legacy2`, tool: "pay", toolCallId: "1/c8" })
      yield* intents.finish(other, { _tag: "Succeeded", value: "someone else's" })
    }))
    expect(await on(payer.run("c9 carol 5", { runId }))).toEqual({ _tag: "Completed", output: "result: paid 5 to carol (before the upgrade)" })
    expect(paid).toEqual([])
    // Another run's claim under the same earlier key is not taken for this call: it runs.
    expect(await on(payer.run("c8 dave 6", { runId: `${kind}-legacy2/1` }))).toEqual({ _tag: "Completed", output: "result: paid 6 to dave" })
    expect(paid).toEqual([`6 to dave key=${kind}-legacy2%2F1/1/c8`])
    expect(Option.isSome(await on(Effect.flatMap(ToolIntents, (i) => i.read(`tool/${kind}-legacy2%2F1/1/c8`))))).toBe(true)
  })
})

describe("toolStepKeys", () => {
  const part = fc.string({ unit: fc.constantFrom("a", "1", "/", "#", "~", "%", "2", "F"), maxLength: 6 })
  test.prop([part, fc.nat(3), part, part, fc.nat(3), part], { numRuns: 2000 })(
    "two calls share a key only when their run, turn and call id are the same",
    (run1, turn1, call1, run2, turn2, call2) => {
      const [k1, k2] = [toolStepKeys(run1, run1, turn1, call1), toolStepKeys(run2, run2, turn2, call2)]
      const same = run1 === run2 && turn1 === turn2 && call1 === call2
      expect(k1.base === k2.base).toBe(same)
      expect(k1.idempotencyKey === k2.idempotencyKey).toBe(same)
    }
  )

  it("an id without / # ~ % keeps an earlier version's key", () => {
    expect(toolStepKeys("run_1", "run_1", 3, "call_abc")).toEqual({ base: "tool/run_1/3/call_abc", legacyBase: undefined, idempotencyKey: "run_1/3/call_abc" })
    expect(toolStepKeys("r", "r~2", 1, "c1").base).toBe("tool/r~2/1/c1")
    expect(toolStepKeys("r~2", "r~2", 1, "c1").base).toBe("tool/r%7E2/1/c1")
  })
})

describe.each(engineKinds)("a run id names one run per engine, whatever its agent (%s engine)", (kind) => {
  const on = <A, E>(effect: Effect.Effect<A, E, any>) => engines.on(kind, effect)

  it("another agent's run with that id is refused before anything runs; none of its calls sees or touches the first run", async () => {
    const id = `${kind}-order-42`
    const first = await on(bank.run("pay", { runId: id }))
    expect(first).toMatchObject({ _tag: "Suspended", runId: id, pending: [{ id: "c1", tool: "pay" }] })
    ran.length = 0
    asked.length = 0

    const refused = errorOf(await on(Effect.exit(ship.run("ship", { runId: id }))))
    expect(refused).toBeInstanceOf(InputInvalid)
    expect((refused as InputInvalid).issues).toContain(`run id "${id}" is a run of "agent/bank"`)
    expect(errorOf(await on(Effect.exit(ship.start("ship", { runId: id }))))).toBeInstanceOf(InputInvalid)
    // Nothing of the second run ran: its model was never asked, its mutating tool (call id c1 as well) never ran.
    expect(asked).toEqual([])
    expect(ran).toEqual([])

    expect((await on(ship.list())).map((r) => r.runId)).not.toContain(id)
    expect(await on(ship.poll(id))).toEqual(Option.none())
    expect(errorOf(await on(Effect.exit(ship.decide(id, { c1: Decision.approve }))))).toBeInstanceOf(DecisionsInvalid)
    expect(errorOf(await on(Effect.exit(ship.cancel(id, "not yours"))))).toBeInstanceOf(InputInvalid)
    expect(await on(ship.journal(id))).toEqual({ runId: id, entries: [], claims: [] })
    const followed = await on(Effect.exit(Stream.runCollect(ship.follow(id)).pipe(Effect.timeout("5 seconds"))))
    expect(errorOf(followed)).toBeInstanceOf(InputInvalid)

    // The first run is as it was: waiting, not cancelled, its journal its own; decided, it completes.
    expect(Option.getOrUndefined(await on(bank.poll(id)))).toMatchObject({ _tag: "Suspended", pending: [{ id: "c1", tool: "pay" }] })
    const journal = await on(bank.journal(id))
    expect(journal.cancelled).toBeUndefined()
    expect(journal.entries.map((e) => e._tag)).toContain("ApprovalRequested")
    expect(ran).toEqual([])
    await on(bank.decide(id, { c1: Decision.approve }))
    expect(await on(bank.join(id))).toBe("bank done: bank did 500")
    expect(ran).toEqual(["bank 500"])
    expect((await on(bank.list())).filter((r) => r.runId === id).map((r) => r.status)).toEqual(["completed"])
  })

  it("two agents starting one run id at the same moment: exactly one holds it", async () => {
    for (let i = 0; i < 6; i++) {
      const id = `${kind}-race-${i}`
      const [a, b] = await on(Effect.all([Effect.exit(bank.start("pay", { runId: id })), Effect.exit(ship.start("ship", { runId: id }))], { concurrency: 2 }))
      const held = [Exit.isSuccess(a), Exit.isSuccess(b)]
      expect(held.filter((x) => x)).toHaveLength(1)
      const loser = Exit.isSuccess(a) ? b : a
      expect(Exit.isFailure(loser) && !Cause.hasDies(loser.cause) ? errorOf(loser) : loser).toBeInstanceOf(InputInvalid)
      const lists = [(await on(bank.list())).some((r) => r.runId === id), (await on(ship.list())).some((r) => r.runId === id)]
      expect(lists).toEqual(held)
    }
  })
})

describe("the run list of an earlier version (embedded engine)", () => {
  it("one run id under two workflows: the first registered keeps it, and the other agent is refused", async () => {
    const held = await engines.on("embedded", Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // As an earlier version left it: no unique run id, one id under two workflows.
      yield* sql`drop index agent_runs_run_id_key`
      yield* sql`insert into agent_runs (workflow, run_id) values ('agent/bank', 'dup-1')`
      yield* sql`insert into agent_runs (workflow, run_id) values ('agent/ship', 'dup-1')`
      // A process of this version opens the store.
      yield* Effect.scoped(Layer.build(approvalInboxSql()))
      const rows = yield* sql<{ readonly workflow: string }>`select workflow from agent_runs where run_id = 'dup-1'`
      const index = yield* sql<{ readonly n: number }>`select count(*)::int as n from pg_indexes where indexname = 'agent_runs_run_id_key'`
      return { rows: rows.map((r) => r.workflow), index: index[0]?.n }
    }))
    expect(held).toEqual({ rows: ["agent/bank"], index: 1 })
    expect(errorOf(await engines.on("embedded", Effect.exit(ship.start("ship", { runId: "dup-1" }))))).toBeInstanceOf(InputInvalid)
  })
})

describe.each(engineKinds)("a run that ended waits for no decisions; a wait is decided once (%s engine)", (kind) => {
  const on = <A, E>(effect: Effect.Effect<A, E, any>) => engines.on(kind, effect)
  const openWait = (runId: string) => on(Effect.flatMap(ApprovalInbox, (inbox) => inbox.current(runId)))
  const waits = async (runId: string) => {
    const result = await on(hasty.run("pay", { runId }).pipe(Effect.orElseSucceed(() => undefined)))
    expect(result).toMatchObject({ _tag: "Suspended", pending: [{ id: "c1" }] })
  }

  it("its deadline passed while it waited: the wait is closed, and decide is refused each time, nothing recorded", async () => {
    const id = `${kind}-expired`
    ran.length = 0
    await waits(id)
    expect(errorOf(await on(Effect.exit(hasty.join(id))))).toBeInstanceOf(BudgetExceeded)
    expect(await openWait(id)).toEqual(Option.none())
    for (const decision of [Decision.approve, Decision.approve]) {
      const refused = errorOf(await on(Effect.exit(hasty.decide(id, { c1: decision }))))
      expect(refused).toBeInstanceOf(DecisionsInvalid)
      expect((refused as DecisionsInvalid).reason).toContain("waits for no decisions")
    }
    expect(await on(Effect.flatMap(ApprovalInbox, (inbox) => inbox.undelivered(id)))).toEqual(Option.none())
    expect(errorOf(await on(Effect.exit(hasty.join(id))))).toBeInstanceOf(BudgetExceeded)
    expect(ran).toEqual([])
  })

  it("cancelled while it waited: decide is refused at once (before the run woke), and the run ends Cancelled", async () => {
    const id = `${kind}-cancelled`
    ran.length = 0
    await on(bank.run("pay", { runId: id }))
    await on(bank.cancel(id, "stop"))
    expect(errorOf(await on(Effect.exit(bank.decide(id, { c1: Decision.approve }))))).toBeInstanceOf(DecisionsInvalid)
    expect(errorOf(await on(Effect.exit(bank.join(id))))).toBeInstanceOf(Cancelled)
    expect(errorOf(await on(Effect.exit(bank.decide(id, { c1: Decision.approve }))))).toBeInstanceOf(DecisionsInvalid)
    expect(await openWait(id)).toEqual(Option.none())
    expect(ran).toEqual([])
  })

  it("two decides at the same moment (approve, deny): one is told ok, the other refused, and the run does what the first said", async () => {
    for (let i = 0; i < 4; i++) {
      const id = `${kind}-race-decide-${i}`
      ran.length = 0
      await on(bank.run("pay", { runId: id }))
      // Two processes: each has read the wait open (its answer slow to come back, as over a network) before either decides.
      const slowReads = Effect.map(ApprovalInbox, (inbox) => ({ ...inbox, current: (runId: string) => Effect.tap(inbox.current(runId), () => Effect.sleep("50 millis")) }))
      const [approve, deny] = await on(Effect.flatMap(slowReads, (inbox) =>
        Effect.all([
          Effect.exit(bank.decide(id, { c1: Decision.approve })),
          Effect.exit(bank.decide(id, { c1: Decision.deny("no") }))
        ], { concurrency: 2 }).pipe(Effect.provideService(ApprovalInbox, inbox))))
      expect([approve, deny].filter(Exit.isSuccess)).toHaveLength(1)
      expect(errorOf(Exit.isSuccess(approve) ? deny : approve)).toBeInstanceOf(DecisionsInvalid)
      const output = await on(bank.join(id))
      expect([output, ran]).toEqual(Exit.isSuccess(approve) ? ["bank done: bank did 500", ["bank 500"]] : [expect.stringContaining("bank done"), []])
    }
  })

  it("a decider that stopped after taking the wait, before handing the decisions over: the next decide hands them over", async () => {
    const id = `${kind}-undelivered`
    ran.length = 0
    await on(bank.run("pay", { runId: id }))
    // What the stopped decider recorded: the wait taken with its decisions, the run not told.
    expect(await on(Effect.flatMap(ApprovalInbox, (inbox) => inbox.take(id, 1, { c1: { _tag: "Approve" } })))).toBe(true)
    const refused = errorOf(await on(Effect.exit(bank.decide(id, { c1: Decision.deny("too late") }))))
    expect((refused as DecisionsInvalid).reason).toContain("were given already")
    expect(await on(bank.join(id))).toBe("bank done: bank did 500")
    expect(ran).toEqual(["bank 500"])
    expect(await on(Effect.flatMap(ApprovalInbox, (inbox) => inbox.undelivered(id)))).toEqual(Option.none())
  })

  it("a run that ended with a wait left open (as an earlier version left it): decide is refused and closes it", async () => {
    const id = `${kind}-left-open`
    await waits(id)
    const wait = Option.getOrThrow(await openWait(id))
    expect(errorOf(await on(Effect.exit(hasty.join(id))))).toBeInstanceOf(BudgetExceeded)
    await on(Effect.flatMap(ApprovalInbox, (inbox) => inbox.open({ ...wait, wait: 2 })))
    const refused = errorOf(await on(Effect.exit(hasty.decide(id, { c1: Decision.approve }))))
    expect((refused as DecisionsInvalid).reason).toContain("has ended")
    expect(await openWait(id)).toEqual(Option.none())
  })
})
