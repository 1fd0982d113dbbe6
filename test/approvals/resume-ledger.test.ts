import { Effect, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Decision, inMemoryResumeLedger, ResumeLedger, type ResumeLedgerStore, text, toolCalls } from "../../src/index.ts"
import { sqlResumeLedger } from "../../src/postgres/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"
import { startDatabase, type TestDatabase } from "../support/database.ts"
import { makeBank } from "./bank.ts"
import { reorderKeys } from "./reorder-keys.ts"

const suspended = async () => {
  const model = scriptedModel(() => text("done"))
  const script = scriptedModel([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob", amount: 500 } }]), text("done")])
  const first = await Effect.runPromise(makeBank(script).bank.runEffect("pay bob 500"))
  if (first._tag !== "Suspended") throw new Error("expected a suspension")
  // The resuming side: a bank built again, as another process would.
  const made = makeBank(model)
  return { ...made, json: JSON.stringify(first.snapshot) }
}

const withLedger = (ledger: ResumeLedgerStore) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, ResumeLedger, ledger)

describe("resuming one snapshot twice (item 7)", () => {
  it("without a ledger runs the approved transfer twice: what the README warns about", async () => {
    const { bank, json, executed } = await suspended()
    await Effect.runPromise(bank.resume(json, { c1: Decision.approve }))
    await Effect.runPromise(bank.resume(json, { c1: Decision.approve }))
    expect(executed.filter((e) => e.tool === "transfer")).toHaveLength(2)
  })

  it("with a ledger is refused with SnapshotAlreadyResumed, even with its keys reordered; the transfer ran once", async () => {
    const { bank, json, executed } = await suspended()
    const ledger = inMemoryResumeLedger()
    expect(await Effect.runPromise(bank.resume(json, { c1: Decision.approve }).pipe(withLedger(ledger)))).toEqual({ _tag: "Completed", output: "done" })
    const again = failureOf(await runExit(bank.resume(reorderKeys(JSON.parse(json)), { c1: Decision.deny("changed my mind") }).pipe(withLedger(ledger))))
    expect(again).toMatchObject({ _tag: "SnapshotAlreadyResumed" })
    expect(again.message).toContain("already resumed")
    expect(executed.filter((e) => e.tool === "transfer")).toHaveLength(1)
  })

  it("with a ledger, refused decisions consume nothing, and a later suspension of the same run resumes", async () => {
    const model = scriptedModel([
      toolCalls([{ id: "a", name: "transfer", arguments: { to: "bob", amount: 500 } }]),
      toolCalls([{ id: "b", name: "transfer", arguments: { to: "bob", amount: 600 } }]),
      text("done")
    ])
    const { bank, executed } = makeBank(model)
    const ledger = inMemoryResumeLedger()
    const first = await Effect.runPromise(bank.runEffect("pay"))
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(failureOf(await runExit(bank.resume(first.snapshot, {}).pipe(withLedger(ledger))))).toMatchObject({ _tag: "DecisionsInvalid" })
    const second = await Effect.runPromise(bank.resume(first.snapshot, { a: Decision.approve }).pipe(withLedger(ledger)))
    if (second._tag !== "Suspended") throw new Error("expected a second suspension")
    expect(await Effect.runPromise(bank.resume(second.snapshot, { b: Decision.approve }).pipe(withLedger(ledger)))).toEqual({ _tag: "Completed", output: "done" })
    expect(executed.map((e) => e.args)).toEqual([{ to: "bob", amount: 500 }, { to: "bob", amount: 600 }])
  })
})

describe("the SQL resume ledger", () => {
  let db: TestDatabase | undefined
  beforeAll(async () => {
    db = await startDatabase()
  }, 120_000)
  afterAll(() => db?.stop(), 60_000)

  it("lets exactly one of two concurrent resumes through, each on its own connection", async () => {
    const { bank, json, executed } = await suspended()
    const scope = Effect.runSync(Scope.make())
    const open = () =>
      Effect.runPromise(Effect.flatMap(Layer.buildWithScope(db!.sql(), scope), (client) => sqlResumeLedger().pipe(Effect.provide(client))))
    const [one, two] = [await open(), await open()]
    const exits = await Promise.all([
      runExit(bank.resume(json, { c1: Decision.approve }).pipe(withLedger(one))),
      runExit(bank.resume(json, { c1: Decision.approve }).pipe(withLedger(two)))
    ])
    await Effect.runPromise(Scope.close(scope, Effect.void as never))
    expect(exits.filter((e) => e._tag === "Success")).toHaveLength(1)
    expect(exits.map((e) => (e._tag === "Failure" ? failureOf(e)._tag : "ok")).sort()).toEqual(["SnapshotAlreadyResumed", "ok"])
    expect(executed.filter((e) => e.tool === "transfer")).toHaveLength(1)
  }, 60_000)

  it("refuses a table name that is not a plain identifier", async () => {
    const scope = Effect.runSync(Scope.make())
    const exit = await runExit(Effect.flatMap(Layer.buildWithScope(db!.sql(), scope), (client) => sqlResumeLedger({ table: "x; drop table y" }).pipe(Effect.provide(client))))
    expect(failureOf(exit)).toMatchObject({ _tag: "ResumeLedgerFailed" })
    await Effect.runPromise(Scope.close(scope, Effect.void as never))
  })
})
