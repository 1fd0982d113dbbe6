/**
 * What runs inside a durable run beside plain tools: an agent called as a tool (one recorded step,
 * whose usage a replay charges again), a handoff (the target's steps recorded under a derived run id),
 * knowledge and memory; and the documented at-least-once delivery of hooks.
 */
import { Effect, Exit, Layer, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, BudgetExceeded, Decision, inMemoryStore, type LlmResponseInit, skill, text, tool, toolCalls } from "../../src/index.ts"
import { durable, memoryEngine } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const onMemory = <A, E>(d: { readonly layer: Layer.Layer<never, never, any> }, program: Effect.Effect<A, E, any>): Promise<Exit.Exit<A, E>> =>
  Effect.runPromise(Effect.exit(program.pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine)))) as Effect.Effect<A, E>))

const errorOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined => (Exit.isFailure(exit) ? Option.getOrUndefined(Exit.findErrorOption(exit)) : undefined)

/** The caller asks the child (which spends 100 tokens), waits for approval, then spends 100 more. */
const callerScript = (): ReadonlyArray<LlmResponseInit> => [
  { _tag: "ToolCalls", calls: [{ id: "c1", name: "research", arguments: { input: "x" } }], usage: { inputTokens: 50, outputTokens: 50 } },
  { _tag: "ToolCalls", calls: [{ id: "c2", name: "approve", arguments: {} }], usage: { inputTokens: 50, outputTokens: 50 } },
  { _tag: "Text", content: "done", usage: { inputTokens: 50, outputTokens: 50 } }
]

const makeCaller = () => {
  const childModel = scriptedModel([{ _tag: "Text", content: "facts", usage: { inputTokens: 60, outputTokens: 40 } }])
  const researcher = agent("researcher").model(childModel)
  const research = researcher.asTool({ name: "research", description: "research" })
  const approve = tool("approve", { args: Schema.Struct({}), needsApproval: true, run: () => "ok" })
  const model = scriptedModel(callerScript())
  return { caller: agent("caller").model(model).tools({ research, approve }).budget({ maxTokens: 350 }), childModel, model }
}

describe("an agent called as a tool inside a durable run", () => {
  it("is one recorded step: a replay does not run the child again, and charges the caller's budget with what the child used", async () => {
    const { caller, childModel } = makeCaller()
    const d = durable(caller)
    const exit = await onMemory(d, Effect.gen(function*() {
      yield* d.run("go", { runId: "child" })
      yield* d.decide("child", { c2: Decision.approve })
      return yield* d.join("child")
    }))
    const plain = makeCaller()
    const plainExit = await Effect.runPromise(Effect.exit(Effect.gen(function*() {
      const first = yield* plain.caller.runEffect("go")
      if (first._tag !== "Suspended") throw new Error("expected a suspension")
      return yield* plain.caller.resume(first.snapshot, { c2: Decision.approve })
    })))
    // 100 (turn 1) + 100 (child) + 100 (turn 2) + 100 (turn 3) = 400 > 350, on both sides.
    expect(errorOf(exit)).toBeInstanceOf(BudgetExceeded)
    expect(errorOf(exit)).toMatchObject({ reason: "tokens", used: 400, limit: 350 })
    expect((errorOf(exit) as BudgetExceeded).transcript).toEqual((errorOf(plainExit) as BudgetExceeded).transcript)
    expect(childModel.requests).toHaveLength(1)
  })
})

describe("a handoff inside a durable run", () => {
  it("a handoff target that finishes: the run's output is the target's", async () => {
    const targetModel = scriptedModel([text("billing here")])
    const billing = agent("billing").model(targetModel)
    const triageModel = scriptedModel([toolCalls([{ id: "h1", name: "handoff_to_billing", arguments: {} }])])
    const triage = agent("triage").model(triageModel).skills(() => [skill("triage", "route").handoffs(billing)])
    const d = durable(triage)
    const exit = await onMemory(d, d.run("refund me", { runId: "handoff-2" }))
    expect(exit).toEqual(Exit.succeed({ _tag: "Completed", output: "billing here" }))
    expect([triageModel.requests.length, targetModel.requests.length]).toEqual([1, 1])
  })
})

describe("knowledge and memory inside a durable run", () => {
  it("a preloaded source is loaded once, memory calls once each, across the replay a decision causes", async () => {
    let loads = 0
    const store = inMemoryStore()
    let writes = 0
    const counting = { ...store, write: (key: string, value: string) => { writes++; return store.write(key, value) } }
    const approve = tool("approve", { args: Schema.Struct({}), needsApproval: true, run: () => "ok" })
    const model = scriptedModel([
      toolCalls([{ id: "m1", name: "memory_write", arguments: { key: "k", value: "v" } }]),
      toolCalls([{ id: "a1", name: "approve", arguments: {} }]),
      toolCalls([{ id: "m2", name: "memory_read", arguments: { key: "k" } }]),
      text("remembered")
    ])
    const helper = agent("helper").model(model).memory(counting).tools({ approve }).skills(({ approve }) => [
      skill("help", "help").tools(approve).knowledge("policy", "the policy", () => {
        loads++
        return "be kind"
      }, { preload: true })
    ])
    const d = durable(helper)
    const exit = await onMemory(d, Effect.gen(function*() {
      yield* d.run("remember", { runId: "mem" })
      yield* d.decide("mem", { a1: Decision.approve })
      return yield* d.join("mem")
    }))
    expect(exit).toEqual(Exit.succeed("remembered"))
    expect(loads).toBe(1)
    expect(writes).toBe(1)
    expect(model.requests[0]!.messages[0]!.content).toContain("be kind")
    expect(model.requests[3]!.messages.at(-1)).toMatchObject({ role: "tool", content: "v" })
  })
})

describe("hooks in a durable run", () => {
  it("fire at least once: a replay (here, after a decision) fires the hooks of recorded steps again", async () => {
    const used: Array<string> = []
    const look = tool("look", { args: Schema.Struct({}), effect: "readOnly", run: () => "seen" })
    const approve = tool("approve", { args: Schema.Struct({}), needsApproval: true, run: () => "ok" })
    const model = scriptedModel([
      toolCalls([{ id: "l1", name: "look", arguments: {} }]),
      toolCalls([{ id: "a1", name: "approve", arguments: {} }]),
      text("done")
    ])
    const watched = agent("watched").model(model).tools({ look, approve }).onToolUse((e) => {
      used.push(e.toolCallId)
    })
    const d = durable(watched)
    await onMemory(d, Effect.gen(function*() {
      yield* d.run("go", { runId: "hooks" })
      yield* d.decide("hooks", { a1: Decision.approve })
      return yield* d.join("hooks")
    }))
    expect(used).toEqual(["l1", "l1", "a1"])
  })
})
