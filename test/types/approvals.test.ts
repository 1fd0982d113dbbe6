/**
 * Approvals in the types: a tool records whether its calls may wait for a human decision, and an
 * agent with such a tool returns `Completed | Suspended` from `run`, `runEffect` and `resume`, so the
 * caller must handle the pause. `tsc --noEmit` fails if an `@ts-expect-error` line stops being an error.
 */
import { Effect, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import {
  agent,
  type Completed,
  Decision,
  type PendingApproval,
  type RunResultOf,
  type Suspended,
  session,
  type Tool,
  tool,
  unsafeNoSchema
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const Transfer = Schema.Struct({ to: Schema.String, amount: Schema.Finite })
const transfer = tool("transfer", { args: Transfer, needsApproval: ({ amount }) => amount > 100, run: ({ amount }) => amount })
const audited = tool("audited", { args: Transfer, needsApproval: true, run: () => "ok" })
const balance = tool("balance", { args: Schema.Struct({}), run: () => 1000 })
const wipe = tool("wipe", { args: unsafeNoSchema({ mode: "human-approval" }), run: () => "wiped" })
const peek = tool("peek", { args: unsafeNoSchema({ mode: "read-only" }), run: () => "seen" })
const model = scriptedModel([])

describe("tools record whether they may need approval", () => {
  it("from needsApproval and from unsafeNoSchema's mode", () => {
    expectTypeOf(transfer).toEqualTypeOf<Tool<"transfer", { readonly to: string; readonly amount: number }, number, never, true>>()
    expectTypeOf(audited.mayNeedApproval).toEqualTypeOf<true>()
    expectTypeOf(balance).toEqualTypeOf<Tool<"balance", {}, number>>()
    expectTypeOf(balance.mayNeedApproval).toEqualTypeOf<false>()
    expectTypeOf(wipe.mayNeedApproval).toEqualTypeOf<true>()
    expectTypeOf(peek.mayNeedApproval).toEqualTypeOf<false>()
  })

  it("types the predicate's arguments from the Schema", () => {
    tool("typed", {
      args: Transfer,
      // @ts-expect-error amount is a number, it has no toUpperCase
      needsApproval: ({ amount }) => amount.toUpperCase() === "X",
      run: () => 1
    })
  })
})

describe("run's result says whether the run may pause", () => {
  it("is the output for an agent without such tools", () => {
    const plain = agent("plain").model(model).tools({ balance, peek })
    expectTypeOf(plain.run).returns.toEqualTypeOf<Promise<string>>()
    expectTypeOf<RunResultOf<{ balance: typeof balance }, string>>().toEqualTypeOf<string>()
  })

  it("is Completed | Suspended for an agent with one, so the pause must be handled", () => {
    // Only compiled, never run: the model has no script.
    const _compiled = async () => {
    const bank = agent("bank").model(model).tools({ balance, transfer, wipe })
    expectTypeOf<Effect.Success<ReturnType<typeof bank.runEffect>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
    const result = await bank.run("pay bob 500")
    // @ts-expect-error the run may be Suspended: narrow on _tag before reading the output
    result.output
    // @ts-expect-error a possibly suspended run is not a string
    const text: string = result
    void text
    if (result._tag === "Completed") expectTypeOf(result.output).toEqualTypeOf<string>()
    else {
      const pending = result.pending[0]!
      expectTypeOf(pending.tool).toEqualTypeOf<"transfer" | "wipe">()
      if (pending.tool === "transfer") expectTypeOf(pending.args).toEqualTypeOf<{ readonly to: string; readonly amount: number }>()
      const resumed = await Effect.runPromise(bank.resume(result.snapshot, { [pending.id]: Decision.approve }))
      expectTypeOf(resumed).toEqualTypeOf<Completed<string> | Suspended<typeof result extends Suspended<infer T> ? T : never>>()
    }
    }
    void _compiled
  })

  it("types a session's send the same way", () => {
    expectTypeOf(session(agent("plain").model(model).tools({ balance }), "s").send).returns.toEqualTypeOf<Promise<string>>()
    const bank = session(agent("bank").model(model).tools({ transfer }), "s")
    expectTypeOf<Awaited<ReturnType<typeof bank.send>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
  })

  it("lists only the tools that may need approval among the pending calls", () => {
    expectTypeOf<PendingApproval<{ balance: typeof balance; transfer: typeof transfer }>["tool"]>().toEqualTypeOf<"transfer">()
  })
})
