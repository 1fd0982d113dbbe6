/** Types of the durable form: results typed from the agent, requirements of its layer, the effect option. */
import { Effect, Schema } from "effect"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, type AgentError, type DecisionsInvalid, type ModelClientService, tool, type ToolImplementation, toolLayer } from "../../src/index.ts"
import { type ApprovalInbox, durable, type DurableRunUnreadable, type RunJournal, type ToolIntents } from "../../src/durable/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const model = scriptedModel([])

describe("durable(agent) types", () => {
  it("types the output and the pending calls from the agent", () => {
    const transfer = tool("transfer", { args: Schema.Struct({ amount: Schema.Finite }), needsApproval: true, run: ({ amount }) => amount })
    const typed = agent("typed", { output: Schema.Struct({ total: Schema.Finite }) }).model(model).tools({ transfer })
    const d = durable(typed)
    type Result = Effect.Success<ReturnType<typeof d.run>>
    expectTypeOf<Extract<Result, { _tag: "Completed" }>["output"]>().toEqualTypeOf<{ readonly total: number }>()
    expectTypeOf<Extract<Result, { _tag: "Suspended" }>["pending"][number]["args"]>().toEqualTypeOf<{ readonly amount: number }>()
    expectTypeOf(d.join).returns.toEqualTypeOf<Effect.Effect<{ readonly total: number }, AgentError | DurableRunUnreadable, WorkflowEngine>>()
    expectTypeOf(d.decide).returns.toEqualTypeOf<Effect.Effect<void, DecisionsInvalid, WorkflowEngine | ApprovalInbox>>()
  })

  it("the layer requires the engine, the stores and what the agent still requires", () => {
    const lookup = tool("lookup", { args: Schema.Struct({ id: Schema.String }) })
    const needy = agent("needy").tools({ lookup })
    const d = durable(needy)
    type Requirements = typeof d.layer extends import("effect").Layer.Layer<never, never, infer R> ? R : never
    expectTypeOf<WorkflowEngine | ToolIntents | ApprovalInbox | RunJournal | ModelClientService | ToolImplementation<"lookup">>().toEqualTypeOf<Requirements>()
    const served = durable(needy.model(model).provide(toolLayer(lookup, ({ id }) => id)))
    type Served = typeof served.layer extends import("effect").Layer.Layer<never, never, infer R> ? R : never
    expectTypeOf<Served>().toEqualTypeOf<WorkflowEngine | ToolIntents | ApprovalInbox | RunJournal>()
  })

  it("the input is the agent's", () => {
    const typedIn = agent("in", { input: Schema.Struct({ n: Schema.Finite }) }).model(model)
    const d = durable(typedIn)
    d.start({ n: 1 })
    // @ts-expect-error the input is { n: number }
    d.start("text")
  })

  it("effect is one of the three classes", () => {
    tool("a", { args: Schema.Struct({}), effect: "readOnly", run: () => 1 })
    tool("b", { args: Schema.Struct({}), effect: "idempotent", run: (_, context) => context.idempotencyKey ?? "" })
    // Refused at construction for untyped callers too.
    expect(() =>
      // @ts-expect-error not an effect class
      tool("c", { args: Schema.Struct({}), effect: "sideEffect", run: () => 1 })
    ).toThrow(/effect/)
  })
})
