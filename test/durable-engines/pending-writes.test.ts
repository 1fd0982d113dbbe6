/**
 * `PendingWrites` (journal events and run-list entries riding along with the next step's write) loses
 * nothing on the way: a write that fails for a passing reason puts what rode along back, ahead of what
 * came since; a caller interrupted after taking it puts it back too; only what the database refuses is
 * dropped. A fake database records what it committed, statement by statement.
 */
import { Deferred, Effect, Fiber, References } from "effect"
import { describe, expect, it } from "vitest"
import type { PipelinedStatement } from "../../src/durable/engines/pglite-client.ts"
import { PendingWrites } from "../../src/durable/engines/pending-writes.ts"

/** Runs `effect` without its warnings in the test's output (what is dropped is checked by what was committed). */
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect.pipe(Effect.provideService(References.MinimumLogLevel, "None")))

const statement = (name: string): PipelinedStatement => ({ name, text: name, params: [] })

const fakeDatabase = () => {
  const committed: Array<string> = []
  let down = false
  let gate: Deferred.Deferred<void> | undefined
  const run = (statements: ReadonlyArray<PipelinedStatement>) =>
    Effect.gen(function*() {
      if (gate !== undefined) yield* Deferred.await(gate)
      if (down) return yield* Effect.fail({ refused: false, message: "the database is unavailable" })
      if (statements.some((s) => s.name?.startsWith("refused") === true)) return yield* Effect.fail({ refused: true, message: "violates a constraint" })
      for (const s of statements) committed.push(s.name!)
    })
  const pending = new PendingWrites(
    60_000,
    run,
    (runId, events) => statement(`events ${runId}: ${events.map((e) => e.key).join(",")}`),
    (error) => (error as { refused?: boolean }).refused === true,
    60_000
  )
  const step = (name: string) => pending.write((riding) => run([...pending.statementsOf(riding), statement(name)]))
  return {
    committed,
    pending,
    step,
    setDown: (value: boolean) => void (down = value),
    hold: () => (gate = Deferred.makeUnsafe<void>()),
    release: () => Effect.runSync(Deferred.succeed(gate!, undefined))
  }
}

describe("PendingWrites", () => {
  it("a write that fails for a passing reason puts back what rode along, ahead of what came since", async () => {
    const db = fakeDatabase()
    db.pending.add("run_1", "e1", "{}")
    db.pending.addStatement(statement("list run_1"))
    db.setDown(true)
    await expect(run(db.step("step 1"))).rejects.toBeDefined()
    db.setDown(false)
    db.pending.add("run_1", "e2", "{}")
    await run(db.step("step 2"))
    expect(db.committed).toEqual(["list run_1", "events run_1: e1,e2", "step 2"])
  })

  it("drops only what the database refuses, and says so; the step and the rest are written", async () => {
    const db = fakeDatabase()
    db.pending.addStatement(statement("refused insert"))
    db.pending.add("run_1", "e1", "{}")
    await run(db.step("step 1"))
    expect(db.committed).toEqual(["events run_1: e1", "step 1"])
  })

  it("a caller interrupted after taking what waits puts it back (waiting for the session, say)", async () => {
    const db = fakeDatabase()
    db.pending.add("run_1", "e1", "{}")
    db.pending.addStatement(statement("list run_1"))
    db.hold()
    const fiber = Effect.runFork(db.step("step 1"))
    await new Promise((resolve) => setTimeout(resolve, 10))
    await Effect.runPromise(Fiber.interrupt(fiber))
    db.release()
    db.pending.add("run_1", "e2", "{}")
    await run(db.pending.flush)
    expect(db.committed).toEqual(["list run_1", "events run_1: e1,e2"])
  })

  it("a flush that fails for a passing reason keeps what waits; closing reports what could not be written", async () => {
    const db = fakeDatabase()
    db.pending.add("run_1", "e1", "{}")
    db.setDown(true)
    await run(db.pending.flush)
    expect(db.committed).toEqual([])
    db.setDown(false)
    await run(db.pending.flush)
    expect(db.committed).toEqual(["events run_1: e1"])
    db.pending.add("run_2", "e1", "{}")
    db.setDown(true)
    await run(db.pending.close)
    db.setDown(false)
    await run(db.pending.flush)
    expect(db.committed).toEqual(["events run_1: e1"])
  })
})

describe("PendingWrites: events numbered by the process", () => {
  it("a refused statement is made again before it is tried alone: events the process numbered go in numbered by the database, not dropped", async () => {
    const committed: Array<string> = []
    const built = new Map<string, number>()
    const pending = new PendingWrites(
      60_000,
      (statements) =>
        statements.some((s) => s.name!.startsWith("numbered by the process"))
          ? Effect.fail({ refused: true, message: "duplicate key value violates unique constraint" })
          : Effect.sync(() => void committed.push(...statements.map((s) => s.name!))),
      // The first statement for a run is numbered by the process (it knows the run's last id), later
      // ones by the database (the id was taken by the first, and is unknown until a write commits).
      (runId, events) => {
        const n = (built.get(runId) ?? 0) + 1
        built.set(runId, n)
        return statement(`${n === 1 ? "numbered by the process" : "numbered by the database"} ${runId}: ${events.map((e) => e.key).join(",")}`)
      },
      (error) => (error as { refused?: boolean }).refused === true,
      60_000
    )
    pending.add("run_1", "e1", "{}")
    pending.addStatement(statement("list run_1"))
    await run(pending.flush)
    expect(committed).toEqual(["list run_1", "numbered by the database run_1: e1"])
  })
})
