/**
 * A resume whose snapshot has already spent the run's `maxDuration` ends at once with `BudgetExceeded`:
 * the calls its decisions approve never run (a deadline of 0 ms used to let a synchronous model and
 * tool go first). Its snapshot and decisions are still checked first.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const bank = () => {
  const ran: Array<string> = []
  const transfer = tool("transfer", {
    args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
    needsApproval: true,
    run: ({ to, amount }) => (ran.push(`${to} ${amount}`), "sent")
  })
  // Holds the event loop past the budget, so the run suspends after its deadline without the timer firing.
  const crunch = tool("crunch", {
    args: Schema.Struct({}),
    run: () => {
      const until = Date.now() + 120
      while (Date.now() < until) {}
      return "crunched"
    }
  })
  const teller = (script: Parameters<typeof scriptedModel>[0]) =>
    agent("teller").model(scriptedModel(script)).budget({ maxDuration: "100 millis" }).tools({ transfer, crunch }).signSnapshots("a-key-of-twenty-chars")
  return { ran, teller }
}

/** The crunch outlasts the budget, then the transfer waits for approval: a snapshot that spent it. */
const suspendedPastBudget = async (teller: ReturnType<typeof bank>["teller"]) => {
  const first = await teller([
    toolCalls([{ id: "k1", name: "crunch", arguments: {} }, { id: "c1", name: "transfer", arguments: { to: "bob", amount: 5 } }]),
    text("done")
  ]).run("go")
  if (first._tag !== "Suspended") throw new Error(`expected a suspension, got ${first._tag}`)
  return first
}

describe("a resume past the duration budget", () => {
  it("ends with BudgetExceeded (duration) and runs none of the approved calls", async () => {
    const { ran, teller } = bank()
    const first = await suspendedPastBudget(teller)
    expect(first.snapshot.state.elapsedMs).toBeGreaterThan(100)
    const exit = await runExit(teller([text("done")]).resume(JSON.stringify(first.snapshot), { c1: Decision.approve }))
    const error = failureOf(exit) as { _tag: string; reason?: string }
    expect(error._tag).toBe("BudgetExceeded")
    expect(error.reason).toBe("duration")
    expect(ran).toEqual([])
  })

  it("an unsigned snapshot edited to have spent the budget ends the same way, with a synchronous model", async () => {
    const { ran } = bank()
    const transfer = tool("transfer", {
      args: Schema.Struct({ to: Schema.String }),
      needsApproval: true,
      run: ({ to }) => (ran.push(to), "sent")
    })
    const teller = (script: Parameters<typeof scriptedModel>[0]) => agent("teller").model(scriptedModel(script)).budget({ maxDuration: "1 second" }).tools({ transfer })
    const first = await (teller([toolCalls([{ id: "c1", name: "transfer", arguments: { to: "bob" } }]), text("done")]).run("go"))
    if (first._tag !== "Suspended") throw new Error(`expected a suspension, got ${first._tag}`)
    for (const elapsedMs of [1_000, 5_000]) {
      const edited = { ...first.snapshot, state: { ...first.snapshot.state, elapsedMs } }
      const error = failureOf(await runExit(teller([text("done")]).resume(edited, { c1: Decision.approve }))) as { _tag: string }
      expect(error._tag).toBe("BudgetExceeded")
    }
    // With time left, the same resume runs the call.
    const edited = { ...first.snapshot, state: { ...first.snapshot.state, elapsedMs: 10 } }
    expect((await Effect.runPromise(teller([text("done")]).resume(edited, { c1: Decision.approve })))._tag).toBe("Completed")
    expect(ran).toEqual(["bob"])
  })

  it("checks the decisions first: a decision for a call that does not wait is DecisionsInvalid, not BudgetExceeded", async () => {
    const { ran, teller } = bank()
    const first = await suspendedPastBudget(teller)
    const error = failureOf(await runExit(teller([text("done")]).resume(JSON.stringify(first.snapshot), { nope: Decision.approve }))) as { _tag: string }
    expect(error._tag).toBe("DecisionsInvalid")
    expect(ran).toEqual([])
  })
})
