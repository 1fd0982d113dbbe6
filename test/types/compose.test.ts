/**
 * Compile-time guarantees of the composition operators: `tsc --noEmit` fails if any `@ts-expect-error`
 * line below stops being an error. The messages themselves are asserted against TypeScript 5 in
 * test/package/consumer.test.ts.
 */
import { type Effect, Result, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { type AgentError, agent, branch, forum, loop, parallel, pipeline, skill, type StepFailed, type Tool } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const model = scriptedModel([])
const Plan = Schema.Struct({ topic: Schema.String })
const planner = agent("planner", { output: Plan }).model(model)
const writer = agent("writer", { input: Plan }).model(model)
const chat = agent("chat").model(model)
const counter = agent("counter", { input: Schema.Finite, output: Schema.Finite }).model(model)
const Ticket = Schema.Union([
  Schema.TaggedStruct("Refund", { orderId: Schema.String }),
  Schema.TaggedStruct("Question", { topic: Schema.String })
])
const triage = agent("triage", { output: Ticket }).model(model)
const refunds = agent("refunds", { input: Schema.TaggedStruct("Refund", { orderId: Schema.String }) }).model(model)

describe("pipelines line up", () => {
  it("types input and output from the ends", () => {
    const research = pipeline("research", planner, writer, chat)
    expectTypeOf(research.run).parameter(0).toEqualTypeOf<string>()
    expectTypeOf(research.run).returns.toEqualTypeOf<Promise<string>>()
    expectTypeOf(pipeline("p", chat, planner).andThen(writer).run).returns.toEqualTypeOf<Promise<string>>()
  })

  it("rejects adjacent stages whose types differ", () => {
    // @ts-expect-error writer takes a plan, chat outputs text
    pipeline("bad", chat, writer)
    // @ts-expect-error .andThen: writer takes a plan, chat outputs text
    pipeline("p", planner, writer).andThen(writer)
  })
})

describe("fan-out and forums", () => {
  it("gives a typed tuple, or typed results under collect", () => {
    expectTypeOf(parallel("p", [planner, chat]).run).returns.toEqualTypeOf<Promise<readonly [{ readonly topic: string }, string]>>()
    const settled = parallel("p", [planner, chat], { onFailure: "collect" })
    expectTypeOf(settled.run).returns.toEqualTypeOf<
      Promise<readonly [Result.Result<{ readonly topic: string }, AgentError>, Result.Result<string, AgentError>]>
    >()
  })

  it("rejects branches with different inputs", () => {
    // @ts-expect-error writer takes a plan, chat takes text
    parallel("p", [chat, writer])
  })

  it("types the captain's brief and output", () => {
    const panel = forum("panel", [planner, chat], (brief) => {
      expectTypeOf(brief.input).toEqualTypeOf<string>()
      expectTypeOf(brief.answers[0].answer).toEqualTypeOf<{ readonly topic: string }>()
      expectTypeOf(brief.answers[1].answer).toEqualTypeOf<string>()
      return brief.answers.map((a) => String(a.answer)).join("\n")
    })
    expectTypeOf(panel.runEffect).returns.toEqualTypeOf<Effect.Effect<string, AgentError | StepFailed, never>>()
    // @ts-expect-error a captain agent must take text or the brief, not a plan
    forum("bad", [chat], writer)
  })
})

describe("loops and branches", () => {
  it("needs a body that outputs what it takes", () => {
    expectTypeOf(loop("l", counter, { until: (n) => n > 3, maxIterations: 5 }).run).returns.toEqualTypeOf<Promise<number>>()
    // @ts-expect-error planner takes text and outputs a plan
    loop("bad", planner, { until: () => true, maxIterations: 3 })
  })

  it("needs exactly one case per tag", () => {
    const routed = branch("support", triage, { Refund: refunds, Question: (q) => q.topic.length })
    expectTypeOf(routed.run).returns.toEqualTypeOf<Promise<string | number>>()
    // @ts-expect-error the Question case is missing
    branch("partial", triage, { Refund: refunds })
    // @ts-expect-error Other is not a tag of the union
    branch("extra", triage, { Refund: refunds, Question: () => 1, Other: () => 2 })
    // @ts-expect-error the Question case's agent takes the Refund member
    branch("wrong", triage, { Refund: refunds, Question: refunds })
    // @ts-expect-error chat outputs text, not a tagged union
    branch("untagged", chat, {})
  })
})

describe("agents as tools and handoffs", () => {
  it("types a tool from the agent: object inputs as is, other inputs as { input }", () => {
    expectTypeOf(writer.asTool({ name: "write" })).toEqualTypeOf<Tool<"write", { readonly topic: string }, string>>()
    expectTypeOf(chat.asTool({ name: "chat" })).toEqualTypeOf<Tool<"chat", { readonly input: string }, string>>()
    expectTypeOf(counter.asTool({ name: "count" })).toEqualTypeOf<Tool<"count", { readonly input: number }, number>>()
    expectTypeOf(planner.asTool({ name: "plan" })).toEqualTypeOf<Tool<"plan", { readonly input: string }, { readonly topic: string }>>()
  })

  it("takes handoff targets whose input and output are the agent's", () => {
    agent("front").model(model).skills(() => [skill("s").handoffs(chat)])
    // @ts-expect-error the target answers a plan, the agent text
    agent("front").model(model).skills(() => [skill("s").handoffs(planner)])
    // @ts-expect-error the target takes a plan, the agent text
    agent("front").model(model).skills(() => [skill("s").handoffs(writer)])
  })

  it("checks the targets of every .handoffs(...) call, not only the first's", () => {
    const support = agent("support").model(model)
    agent("front").model(model).skills(() => [skill("s").handoffs(chat).handoffs(support)])
    // @ts-expect-error the second call's target answers a plan, the agent text
    agent("front").model(model).skills(() => [skill("s").handoffs(chat).handoffs(planner)])
    // @ts-expect-error the second call's target takes a plan, the agent text
    agent("front").model(model).skills(() => [skill("s").handoffs(chat).handoffs(writer)])
  })

  it("needs no model when every skill is deterministic", () => {
    const parse = agent("parse").skills(() => [skill("p").implementedBy((s: string) => s.trim())])
    expectTypeOf(parse.runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
  })
})
