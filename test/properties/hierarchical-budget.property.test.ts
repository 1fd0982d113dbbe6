/**
 * Property: hierarchical budgets are never exceeded. For arbitrary trees (a bounded composite over
 * agents, some calling other agents as tools, run in parallel or in sequence) and arbitrary scripts
 * (several tool calls per turn, arbitrary token counts, zero included), counted outside the library:
 * - no tool ever executes once the tree, or any agent above it, has no tool call left;
 * - no model call starts once the tree, or any agent above it, has used its tokens;
 * - every run ends in success or a documented tagged error.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Exit, Schema } from "effect"
import { describe, expect } from "vitest"
import { agent, isAgentError, type LlmResponse, type ModelClient, tool } from "../../src/index.ts"
import { parallel, pipeline } from "../../src/compose/index.ts"
import { executeTool } from "../../src/dsl/tool.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 300)

type Turn = { readonly calls: number; readonly sub: boolean; readonly tokens: number }
interface LeafPlan {
  readonly turns: ReadonlyArray<Turn>
  readonly finalTokens: number
  readonly maxToolCalls: number | undefined
  readonly maxTokens: number | undefined
  /** A child agent this one may call as a tool, with its own plan. */
  readonly child: LeafPlan | undefined
}

const arbTurn: fc.Arbitrary<Turn> = fc.record({ calls: fc.integer({ min: 1, max: 3 }), sub: fc.boolean(), tokens: fc.nat({ max: 40 }) })
const arbLeaf = (depth: number): fc.Arbitrary<LeafPlan> =>
  fc.record({
    turns: fc.array(arbTurn, { maxLength: 4 }),
    finalTokens: fc.nat({ max: 40 }),
    maxToolCalls: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
    maxTokens: fc.option(fc.integer({ min: 1, max: 120 }), { nil: undefined }),
    child: depth === 0 ? fc.constant(undefined) : fc.option(arbLeaf(depth - 1), { nil: undefined })
  })

/** Who is above whom, and what each node used, counted by the test (not by the library). */
interface Node {
  readonly name: string
  readonly maxToolCalls: number
  readonly maxTokens: number
  readonly parent: Node | undefined
  toolCalls: number
  tokens: number
}
const chain = (node: Node | undefined): Array<Node> => (node === undefined ? [] : [node, ...chain(node.parent)])

/** Counts one execution starting in `node`, for it and every node above it; flags any limit passed. */
const countExecution = (node: Node, violations: Array<string>) => {
  for (const n of chain(node)) {
    n.toolCalls += 1
    if (n.toolCalls > n.maxToolCalls) violations.push(`${node.name}: execution ${n.toolCalls} of ${n.name}'s ${n.maxToolCalls}`)
  }
}

const build = (plan: LeafPlan, name: string, parent: Node, violations: Array<string>): any => {
  const node: Node = { name, maxToolCalls: plan.maxToolCalls ?? Infinity, maxTokens: plan.maxTokens ?? Infinity, parent, toolCalls: 0, tokens: 0 }
  let step = 0
  const model: ModelClient = {
    chat: () =>
      Effect.suspend(() => {
        for (const n of chain(node)) if (n.tokens >= n.maxTokens) violations.push(`${name}: model call with ${n.name}'s ${n.tokens} tokens used`)
        const turn = plan.turns[step]
        step++
        const response: LlmResponse = turn === undefined
          ? { _tag: "Text", content: "done", usage: { inputTokens: plan.finalTokens, outputTokens: 0 } }
          : {
            _tag: "ToolCalls",
            calls: Array.from({ length: turn.calls }, (_, i) => ({
              id: `${name}-${step}-${i}`,
              name: turn.sub && plan.child !== undefined ? "sub" : "work",
              arguments: turn.sub && plan.child !== undefined ? '{"input":"go"}' : "{}"
            })),
            usage: { inputTokens: turn.tokens, outputTokens: 0 }
          }
        return Effect.yieldNow.pipe(Effect.as(response))
      })
  }
  const work = tool("work", { args: Schema.Struct({}), run: () => Effect.sync(() => countExecution(node, violations)).pipe(Effect.as("ok")) })
  // Each call of the sub-agent is a new run with its own budget (and its own counters here).
  const child = () => (plan.child === undefined ? undefined : build(plan.child, `${name}.sub`, node, violations).asTool({ name: "sub" }))
  const sub = tool("sub", {
    args: Schema.Struct({ input: Schema.String }),
    run: (args, context) =>
      Effect.sync(() => countExecution(node, violations)).pipe(
        Effect.andThen(Effect.yieldNow),
        Effect.andThen(Effect.suspend(() => {
          const run = child()
          return run === undefined ? Effect.succeed("none") : executeTool(run, args, context.toolCallId)
        }))
      )
  })
  // Tokens are counted when the library has the response (the ModelResponse event), not when the mock makes it.
  return agent(name).model(model).tools({ work, sub }).budget({
    maxTurns: 20,
    ...(plan.maxToolCalls === undefined ? {} : { maxToolCalls: plan.maxToolCalls }),
    ...(plan.maxTokens === undefined ? {} : { maxTokens: plan.maxTokens })
  }).onModelResponse((e) => {
    for (const n of chain(node)) n.tokens += e.response.usage?.inputTokens ?? 0
  })
}

describe("hierarchical budgets", () => {
  test.prop([
    fc.array(arbLeaf(1), { minLength: 1, maxLength: 3 }),
    fc.constantFrom("parallel" as const, "pipeline" as const),
    fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: 1, max: 150 })
  ], { numRuns })("are never exceeded, and every run ends in success or a tagged error", async (plans, kind, maxToolCalls, maxTokens) => {
    const violations: Array<string> = []
    const root: Node = { name: "tree", maxToolCalls, maxTokens, parent: undefined, toolCalls: 0, tokens: 0 }
    const agents = plans.map((plan, i) => build(plan, `a${i}`, root, violations))
    // A one-agent pipeline runs the plan twice: two runs, each with the agent's own budget, so two nodes
    // (one shared node would count the second run against the first run's per-run limits).
    const stages = agents.length === 1 ? [...agents, build(plans[0]!, "a0 again", root, violations)] : agents
    const tree = (kind === "parallel" ? parallel("tree", agents as any) : pipeline("tree", ...(stages as [any, any]))).budget({ maxToolCalls, maxTokens })
    const exit = await Effect.runPromise(Effect.exit(tree.runEffect("go") as Effect.Effect<unknown, unknown>))
    expect(violations).toEqual([])
    expect(root.toolCalls).toBeLessThanOrEqual(maxToolCalls)
    if (Exit.isFailure(exit)) {
      const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
      expect(failure?._tag === "Fail" && isAgentError(failure.error)).toBe(true)
    }
  }, 300_000)
})
