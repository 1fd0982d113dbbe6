/**
 * A durable run's wait for decisions as an outside tester found it broken:
 *
 * - The wait's row (`agent_approval_waits.snapshot`) edited (500 → 5): `poll`/`list` showed 5, `decide`
 *   approved, and the run paid 500, even with `.signSnapshots`. Now a signing agent's edited row is
 *   `DurableRunUnreadable` to `poll`/`list` and refused by `decide` (`DecisionsInvalid`, the
 *   `SnapshotRejected` named), as `resume` refuses it; and decisions are bound to the snapshot they
 *   were checked against, so an unsigned row's edit (or a validly signed snapshot of another run put
 *   in its place) runs nothing: the run waits again with its own calls.
 * - A decider stopped between taking the wait and handing the decisions over left the run waiting
 *   for nothing: now the next runner to start hands them over.
 * - A wait that expired at `maxDuration` journalled no final `RunEnd`: `follow` never ended.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Exit, Layer, Option, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, Decision, DecisionsInvalid, skill, text, toolCalls } from "../../src/index.ts"
import { ApprovalInbox, durable, DurableRunUnreadable, memoryEngine } from "../../src/durable/index.ts"
import { decodeSnapshotValue, type RunSnapshot } from "../../src/runtime/snapshot.ts"
import { waitBinding } from "../../src/durable/wait-binding.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { makeBank, secret } from "../approvals/bank.ts"
import { engineKinds, sharedStorage, sharedStores, startRunner } from "./harness.ts"
import { twoEngines } from "./two-engines.ts"

const errorOf = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? Option.getOrUndefined(Exit.findErrorOption(exit)) : undefined)

/** A bank whose model transfers the amount the user message names (call "c1"), then reports. */
const bankOf = (sign: boolean) => {
  const model = scriptedModel((request) => {
    const results = request.messages.filter((m) => m.role === "tool").map((m) => m.content)
    if (results.length > 0) return text(`done: ${results.join("|")}`)
    const amount = Number(String(request.messages.find((m) => m.role === "user")?.content ?? "").split(" ")[1])
    return toolCalls([{ id: "c1", name: "transfer", arguments: { to: "mallory", amount } }])
  })
  return makeBank(model, sign ? { sign: secret } : {})
}
const signed = bankOf(true)
const unsigned = bankOf(false)
const signedBank = durable(signed.bank, { name: "agent/signed-bank" })
const plainBank = durable(unsigned.bank, { name: "agent/plain-bank" })

describe("an edited wait row (embedded engine: the row edited with SQL)", () => {
  const engines = twoEngines(Layer.mergeAll(signedBank.layer, plainBank.layer))
  beforeAll(() => engines.start(), 60_000)
  afterAll(() => engines.stop())
  const on = <A, E>(effect: Effect.Effect<A, E, any>) => engines.on("embedded", effect)
  const editRow = (runId: string, from: string, to: string) =>
    on(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`update agent_approval_waits set snapshot = replace(snapshot, ${from}, ${to}) where run_id = ${runId}`))

  it("signed: poll and list do not show the edited call, decide is refused as resume refuses it, nothing runs; the row put right, it goes on", async () => {
    signed.executed.length = 0
    expect(await on(signedBank.run("pay 500", { runId: "s-edit" }))).toMatchObject({ _tag: "Suspended", pending: [{ id: "c1", args: { amount: 500 } }] })
    const [row] = await on(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly snapshot: string }>`select snapshot from agent_approval_waits where run_id = 's-edit'`))
    await editRow("s-edit", "500", "5")
    const polled = errorOf(await on(Effect.exit(signedBank.poll("s-edit"))))
    expect(polled).toBeInstanceOf(DurableRunUnreadable)
    expect((polled as DurableRunUnreadable).reason).toContain("does not match its signature")
    const listed = (await on(signedBank.list())).find((r) => r.runId === "s-edit")
    expect(listed).toMatchObject({ status: "unreadable" })
    expect(listed?.pending).toBeUndefined()
    const refused = errorOf(await on(Effect.exit(signedBank.decide("s-edit", { c1: Decision.approve }))))
    expect(refused).toBeInstanceOf(DecisionsInvalid)
    expect((refused as DecisionsInvalid).reason).toContain("SnapshotRejected")
    expect(signed.executed).toEqual([])
    // Nothing was recorded: the row put right, the same decision goes through.
    await on(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`update agent_approval_waits set snapshot = ${row!.snapshot} where run_id = 's-edit'`))
    expect(await on(signedBank.poll("s-edit"))).toMatchObject(Option.some({ pending: [{ args: { amount: 500 } }] }))
    await on(signedBank.decide("s-edit", { c1: Decision.approve }))
    expect(await on(signedBank.join("s-edit"))).toBe("done: sent 500 to mallory")
    expect(signed.executed).toEqual([{ tool: "transfer", args: { to: "mallory", amount: 500 } }])
  })

  it("signed: a validly signed snapshot of another run put in the row: shown with the other run's id refused, decisions never run the call", async () => {
    signed.executed.length = 0
    await on(signedBank.run("pay 200", { runId: "s-small" }))
    await on(signedBank.run("pay 500", { runId: "s-big" }))
    await on(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`update agent_approval_waits set snapshot = (select snapshot from agent_approval_waits where run_id = 's-small') where run_id = 's-big'`))
    expect(errorOf(await on(Effect.exit(signedBank.poll("s-big"))))).toBeInstanceOf(DurableRunUnreadable)
    expect(errorOf(await on(Effect.exit(signedBank.decide("s-big", { c1: Decision.approve }))))).toBeInstanceOf(DecisionsInvalid)
    expect(signed.executed).toEqual([])
  })

  it("unsigned: decisions checked against the edited row run nothing; the run waits again with its own call, decided once it pays once", async () => {
    unsigned.executed.length = 0
    await on(plainBank.run("pay 500", { runId: "u-edit" }))
    await editRow("u-edit", "500", "5")
    // An unsigned row cannot show it was edited (docs: an unsigned snapshot protects against accidents only)...
    expect(await on(plainBank.poll("u-edit"))).toMatchObject(Option.some({ pending: [{ args: { amount: 5 } }] }))
    await on(plainBank.decide("u-edit", { c1: Decision.approve }))
    // ...but the approval of "5" is not applied to the run's 500: it waits again, showing its own call.
    const again = await on(plainBank.result("u-edit"))
    expect(again).toMatchObject({ _tag: "Suspended", pending: [{ id: "c1", args: { to: "mallory", amount: 500 } }] })
    expect(unsigned.executed).toEqual([])
    await on(plainBank.decide("u-edit", { c1: Decision.approve }))
    expect(await on(plainBank.join("u-edit"))).toBe("done: sent 500 to mallory")
    expect(unsigned.executed).toEqual([{ tool: "transfer", args: { to: "mallory", amount: 500 } }])
  })

  it("the store lists the runs whose taken decisions were not handed over (what a starting runner hands over)", async () => {
    await on(plainBank.run("pay 500", { runId: "u-taken" }))
    const runs = await on(Effect.gen(function*() {
      const inbox = yield* ApprovalInbox
      expect(yield* inbox.undeliveredRuns("agent/plain-bank")).not.toContain("u-taken")
      expect(yield* inbox.take("u-taken", 1, { c1: { _tag: "Deny", reason: "no" } })).toBe(true)
      return yield* inbox.undeliveredRuns("agent/plain-bank")
    }))
    expect(runs).toContain("u-taken")
    expect(await on(ApprovalInbox.pipe(Effect.flatMap((inbox) => inbox.undeliveredRuns("agent/signed-bank"))))).not.toContain("u-taken")
  })
})

describe.each(engineKinds)("a decider stopped between taking the wait and handing the decisions over (%s engine)", (engine) => {
  it("the next runner to start hands them over: the approved call runs once", async () => {
    const { bank, executed } = bankOf(false)
    const d = durable(bank)
    const exit = await Effect.gen(function*() {
      const driver = yield* sharedStorage(engine)
      const stores = yield* sharedStores()
      const runner = () => d.layer.pipe(Layer.provideMerge(driver.engine()), Layer.provideMerge(Layer.succeedContext(stores)))
      const first = yield* startRunner(runner())
      expect(yield* d.run("pay 500", { runId: "dk" }).pipe(Effect.provide(first.context))).toMatchObject({ _tag: "Suspended" })
      // The decider dies right after its take (as a process killed there): the run is not told.
      const dying = Effect.map(ApprovalInbox, (inbox) => ({ ...inbox, take: (...args: Parameters<typeof inbox.take>) => Effect.andThen(inbox.take(...args), Effect.die("killed")) }))
      const decided = yield* Effect.flatMap(dying, (inbox) => Effect.exit(d.decide("dk", { c1: Decision.approve }).pipe(Effect.provideService(ApprovalInbox, inbox)))).pipe(
        Effect.provide(first.context)
      )
      expect(Exit.isFailure(decided)).toBe(true)
      yield* first.stop
      const second = yield* startRunner(runner())
      const out = yield* Effect.exit(d.join("dk").pipe(Effect.timeout("8 seconds"), Effect.provide(second.context)))
      yield* second.stop
      return out
    }).pipe(Effect.runPromise)
    expect(exit).toEqual(Exit.succeed("done: sent 500 to mallory"))
    expect(executed).toEqual([{ tool: "transfer", args: { to: "mallory", amount: 500 } }])
  }, 30_000)

  it("a denial handed over at start: the call never runs", async () => {
    const { bank, executed } = bankOf(false)
    const d = durable(bank)
    const output = await Effect.gen(function*() {
      const driver = yield* sharedStorage(engine)
      const stores = yield* sharedStores()
      const runner = () => d.layer.pipe(Layer.provideMerge(driver.engine()), Layer.provideMerge(Layer.succeedContext(stores)))
      const first = yield* startRunner(runner())
      yield* d.run("pay 500", { runId: "dk-deny" }).pipe(Effect.provide(first.context))
      const dying = Effect.map(ApprovalInbox, (inbox) => ({ ...inbox, take: (...args: Parameters<typeof inbox.take>) => Effect.andThen(inbox.take(...args), Effect.die("killed")) }))
      yield* Effect.flatMap(dying, (inbox) => Effect.exit(d.decide("dk-deny", { c1: Decision.deny("no") }).pipe(Effect.provideService(ApprovalInbox, inbox)))).pipe(Effect.provide(first.context))
      yield* first.stop
      const second = yield* startRunner(runner())
      const out = yield* d.join("dk-deny").pipe(Effect.timeout("8 seconds"), Effect.provide(second.context))
      yield* second.stop
      return out
    }).pipe(Effect.runPromise)
    expect(output).toContain("done")
    expect(executed).toEqual([])
  }, 30_000)
})

describe("the binding holds for what a replay computes afresh", () => {
  it("a handoff target waiting for approval (its snapshot nested in the run's): one decide, the call runs once", async () => {
    const { bank, executed, tools } = bankOf(false)
    void bank
    const billingModel = scriptedModel((request) =>
      request.messages.some((m) => m.role === "tool" && String(m.content).startsWith("sent"))
        ? text("billing paid")
        : toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]))
    const billing = agent("billing").model(billingModel).tools({ transfer: tools.transfer })
    const triage = agent("triage").model(scriptedModel(() => toolCalls([{ id: "h1", name: "handoff_to_billing", arguments: {} }])))
      .skills(() => [skill("triage", "route").handoffs(billing)])
    const d = durable(triage)
    const output = await Effect.gen(function*() {
      const waiting = yield* d.run("pay", { runId: "ho" })
      // A run waiting in a handoff target lists the target's waiting calls, as resume takes them.
      const listed = { _tag: "Suspended", pending: [{ id: "c1", tool: "transfer", args: { to: "bob", amount: 500 } }] }
      expect(waiting).toMatchObject(listed)
      yield* Effect.sleep("30 millis")
      expect(Option.getOrUndefined(yield* d.poll("ho"))).toMatchObject(listed)
      yield* d.decide("ho", { c1: Decision.approve })
      return yield* d.join("ho").pipe(Effect.timeout("8 seconds"))
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.runPromise)
    expect(output).toBe("billing paid")
    expect(executed).toEqual([{ tool: "transfer", args: { to: "bob", amount: 500 } }])
  }, 20_000)
})

describe("a wait that expires at maxDuration", () => {
  it("journals the run's end: follow ends with RunEnd(Failure: BudgetExceeded)", async () => {
    const { bank } = bankOf(false)
    const d = durable(bank.budget({ maxDuration: 300 }))
    const events = await Effect.gen(function*() {
      yield* d.run("pay 500", { runId: "fe" })
      yield* Effect.exit(d.join("fe"))
      return yield* d.follow("fe").pipe(Stream.runCollect, Effect.timeout("5 seconds"))
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.runPromise)
    const last = [...events].at(-1)?.event
    expect(last).toMatchObject({ _tag: "RunEnd", runId: "fe", outcome: { _tag: "Failure", error: { _tag: "BudgetExceeded", reason: "duration" } } })
  }, 20_000)
})

describe("waitBinding", () => {
  const snapshotOf = async (): Promise<RunSnapshot> => {
    const { bank } = bankOf(true)
    const d = durable(bank)
    return Effect.gen(function*() {
      yield* d.run("pay 500", { runId: "b" })
      const wait = Option.getOrThrow(yield* (yield* ApprovalInbox).current("b"))
      return yield* decodeSnapshotValue(wait.snapshot)
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.runPromise)
  }
  let snapshot: RunSnapshot
  beforeAll(async () => {
    snapshot = await snapshotOf()
  })

  test.prop([fc.nat(), fc.string()])("the same for another time spent and signature; another for any other amount or recipient", (elapsedMs, to) => {
    const bound = waitBinding(snapshot)
    const later = { ...snapshot, signature: "v2.x.y", state: { ...snapshot.state, elapsedMs } }
    expect(waitBinding(later)).toBe(bound)
    const entry = snapshot.state.awaiting![0]!
    const edited = (args: unknown) => ({ ...snapshot, state: { ...snapshot.state, awaiting: [{ ...entry, args: args as never }] } })
    if (to !== "mallory") expect(waitBinding(edited({ to, amount: 500 }))).not.toBe(bound)
    if (elapsedMs !== 500) expect(waitBinding(edited({ to: "mallory", amount: elapsedMs }))).not.toBe(bound)
  })
})
