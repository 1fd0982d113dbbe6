/**
 * Handoffs in the run's result type: a handoff target that may wait for a human decision makes the
 * run that hands off to it one that may too (its `Suspended` lists the target's waiting calls), through
 * any chain of handoffs; a target that never waits leaves the result the plain output. Declaring the
 * handoff needs no cast. `tsc --noEmit` fails if an `@ts-expect-error` line stops being an error.
 */
import { Effect, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import {
  type AgentError,
  agent,
  type Completed,
  Decision,
  type MayNeedApproval,
  pipeline,
  type RunResultOf,
  session,
  skill,
  type Suspended,
  type Tool,
  tool,
  unsafeNoSchema
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const Transfer = Schema.Struct({ to: Schema.String, amount: Schema.Finite })
const transfer = tool("transfer", { args: Transfer, needsApproval: ({ amount }) => amount > 100, run: ({ amount }) => `sent ${amount}` })
const wipe = tool("wipe", { args: unsafeNoSchema({ mode: "human-approval" }), run: () => "wiped" })
const balance = tool("balance", { args: Schema.Struct({}), run: () => 1000 })
const model = scriptedModel([])

/** The record of tools of an agent's `Suspended`. */
type SuspendedTools<R> = Extract<R, { readonly _tag: "Suspended" }> extends Suspended<infer T> ? T : never

const bank = agent("bank").model(model).tools({ balance, transfer })
const cleaner = agent("cleaner").model(model).tools({ wipe })
const clerk = agent("clerk").model(model).tools({ balance })

describe("a handoff to a target that may wait for approval", () => {
  it("compiles without a cast, and the caller's run may be Suspended on the target's calls", () => {
    const front = agent("front").model(model).skills(() => [skill("triage", "route").handoffs(bank)])
    expectTypeOf<Awaited<ReturnType<typeof front.run>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
    expectTypeOf<Effect.Success<ReturnType<typeof front.runEffect>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
    expectTypeOf<Extract<Awaited<ReturnType<typeof front.run>>, { _tag: "Completed" }>>().toEqualTypeOf<Completed<string>>()
    // The waiting calls are the target's (handoff targets' calls keep their ids and tools).
    expectTypeOf<Extract<Awaited<ReturnType<typeof front.run>>, { _tag: "Suspended" }>["pending"][number]["tool"]>().toEqualTypeOf<"transfer">()
    expectTypeOf<MayNeedApproval<SuspendedTools<Awaited<ReturnType<typeof front.run>>>>>().toEqualTypeOf<true>()
  })

  it("makes the caller handle the pause, and its resume is typed as an agent's with approval tools", () => {
    // Only compiled, never run: the models have no script.
    const _compiled = async () => {
      const front = agent("front").model(model).tools({ balance }).skills(({ balance }) => [skill("triage", "route").tools(balance).handoffs(bank, cleaner)])
      const result = await front.run("pay bob 500")
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
        const resumed = await Effect.runPromise(front.resume(result.snapshot, { [pending.id]: Decision.approve }))
        expectTypeOf(resumed).toEqualTypeOf<Awaited<ReturnType<typeof front.run>>>()
        expectTypeOf(front.resume).returns.toEqualTypeOf<ReturnType<typeof front.runEffect>>()
        expectTypeOf(front.resume).returns.toEqualTypeOf<Effect.Effect<Completed<string> | Suspended<SuspendedTools<typeof resumed>>, AgentError, never>>()
      }
    }
    void _compiled
  })

  it("lists the agent's own waiting calls beside the target's", () => {
    const guarded = tool("guarded", { args: Schema.Struct({}), needsApproval: true, run: () => "ok" })
    const front = agent("front").model(model).tools({ guarded }).skills(({ guarded }) => [skill("s").tools(guarded).handoffs(bank)])
    expectTypeOf<Extract<Awaited<ReturnType<typeof front.run>>, { _tag: "Suspended" }>["pending"][number]["tool"]>().toEqualTypeOf<"guarded" | "transfer">()
  })

  it("is kept when .skills(...) adds more skills (skills add up), and joins theirs", () => {
    const front = agent("front").model(model).skills(() => [skill("pay").handoffs(bank)]).skills(() => [skill("talk").chat()])
    expectTypeOf<Awaited<ReturnType<typeof front.run>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
    const both = front.skills(() => [skill("clean").handoffs(cleaner)])
    expectTypeOf<Extract<Awaited<ReturnType<typeof both.run>>, { _tag: "Suspended" }>["pending"][number]["tool"]>().toEqualTypeOf<"transfer" | "wipe">()
  })

  it("types a session's send, the caller as a tool and a pipeline of it the same way", () => {
    const front = agent("front").model(model).skills(() => [skill("triage").handoffs(bank)])
    const chat = session(front, "s")
    expectTypeOf<Awaited<ReturnType<typeof chat.send>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
    expectTypeOf<Awaited<ReturnType<typeof chat.resume>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
    // Run as a child, the caller's suspension suspends its own caller (the runtime's `mayNeedApproval` follows handoffs).
    expectTypeOf(front.asTool({ name: "desk" })).toEqualTypeOf<Tool<"desk", { readonly input: string }, string, never, true>>()
    const desk = pipeline("desk", front, clerk)
    expectTypeOf<Awaited<ReturnType<typeof desk.run>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
  })

  it("keeps refusing a target whose output or input is not the agent's", () => {
    const typedBank = agent("typed-bank", { output: Schema.Finite }).model(model).tools({ transfer })
    // @ts-expect-error the target answers a number, the agent text (once completed)
    agent("front").model(model).skills(() => [skill("s").handoffs(typedBank)])
    const numbers = agent("numbers", { input: Schema.Finite }).model(model).tools({ transfer })
    // @ts-expect-error the target takes a number, the agent text
    agent("front").model(model).skills(() => [skill("s").handoffs(numbers)])
    // A target whose completed output is the agent's typed output is accepted.
    const front = agent("front", { output: Schema.Finite }).model(model).skills(() => [skill("s").handoffs(typedBank)])
    expectTypeOf<Extract<Awaited<ReturnType<typeof front.run>>, { _tag: "Completed" }>>().toEqualTypeOf<Completed<number>>()
  })
})

describe("a handoff to a target that never waits", () => {
  it("leaves the caller's result its plain output", () => {
    const front = agent("front").model(model).skills(() => [skill("triage").handoffs(clerk)])
    expectTypeOf(front.run).returns.toEqualTypeOf<Promise<string>>()
    expectTypeOf(front.runEffect).returns.toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
    expectTypeOf(front.resume).returns.toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
    expectTypeOf(session(front, "s").send).returns.toEqualTypeOf<Promise<string>>()
    expectTypeOf(front.asTool({ name: "desk" })).toEqualTypeOf<Tool<"desk", { readonly input: string }, string>>()
    // Nor does a handoff add a tool name: recovery and interception still see the registered tools only.
    const withTools = agent("front").model(model).tools({ balance }).skills(({ balance }) => [skill("s").tools(balance).handoffs(bank)])
    withTools.recoverTool("balance", {})
    // Only compiled: the builder refuses these names when run, too.
    const _refused = () => {
      // @ts-expect-error transfer is the target's tool, not this agent's
      withTools.recoverTool("transfer", {})
      // @ts-expect-error transfer is the target's tool, not this agent's
      withTools.intercept("transfer", () => ({ _tag: "Proceed" }) as never)
    }
    void _refused
  })

  it("is the output for a deterministic target", () => {
    const echo = agent("echo").skills(() => [skill("echo").implementedBy((s: string) => s)])
    const front = agent("front").model(model).skills(() => [skill("triage").handoffs(echo)])
    expectTypeOf(front.run).returns.toEqualTypeOf<Promise<string>>()
  })
})

describe("a chain of handoffs", () => {
  it("A → B → C where only C may wait: A's result may be Suspended on C's calls", () => {
    const c = agent("c").model(model).tools({ transfer })
    const b = agent("b").model(model).tools({ balance }).skills(({ balance }) => [skill("b").tools(balance).handoffs(c)])
    const a = agent("a").model(model).skills(() => [skill("a").handoffs(b)])
    expectTypeOf<Awaited<ReturnType<typeof b.run>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
    expectTypeOf<Awaited<ReturnType<typeof a.run>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
    expectTypeOf<Extract<Awaited<ReturnType<typeof a.run>>, { _tag: "Suspended" }>["pending"][number]["tool"]>().toEqualTypeOf<"transfer">()
    expectTypeOf<Effect.Success<ReturnType<typeof a.resume>>["_tag"]>().toEqualTypeOf<"Completed" | "Suspended">()
  })

  it("A → B → C where none may wait: A's result is its output", () => {
    const c = agent("c").model(model).tools({ balance })
    const b = agent("b").model(model).skills(() => [skill("b").handoffs(c)])
    const a = agent("a").model(model).skills(() => [skill("a").handoffs(b)])
    expectTypeOf(a.run).returns.toEqualTypeOf<Promise<string>>()
  })

  it("RunResultOf of a record without handoffs is unchanged", () => {
    expectTypeOf<RunResultOf<{ balance: typeof balance }, string>>().toEqualTypeOf<string>()
    expectTypeOf<RunResultOf<{ transfer: typeof transfer }, string>>().toEqualTypeOf<Completed<string> | Suspended<{ transfer: typeof transfer }>>()
  })
})
