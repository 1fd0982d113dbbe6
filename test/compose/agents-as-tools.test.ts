/**
 * Agents as tools and hierarchical budgets: a child run's arguments are decoded with its input
 * Schema, its events name the calling run, its spans nest under the caller's tool span, and its usage
 * is charged to every enclosing budget.
 */
import { Effect, Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, type AgentError, type AgentEvent, AgentConfigError, type ModelClientService, skill, text, toolCalls, tool } from "../../src/index.ts"
import { parallel, pipeline } from "../../src/compose/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { captureSpans, failureOf, runExit } from "../fixtures.ts"

const usage = (tokens: number) => ({ inputTokens: tokens, outputTokens: 0 })

describe("agent.asTool", () => {
  it("runs the agent as a child run of the caller, on its text input", async () => {
    const { spans, tracer } = captureSpans()
    const events: Array<AgentEvent> = []
    const researcherModel = scriptedModel(text("Effect 4 merged the platform packages"))
    const researcher = agent("researcher").model(researcherModel).prompt("Find facts").onEvent((e) => void events.push(e))
    const research = researcher.asTool({ name: "research", description: "Find facts about a topic" })
    expect(research.definition.parameters).toMatchObject({ type: "object", properties: { input: { type: "string" } }, required: ["input"] })
    const writerModel = scriptedModel([toolCalls([{ id: "c1", name: "research", arguments: { input: "Effect 4" } }]), text("report")])
    const writer = agent("writer").model(writerModel).tools({ research }).onEvent((e) => void events.push(e))
    expect(await Effect.runPromise(writer.runEffect("write").pipe(Effect.withTracer(tracer)))).toBe("report")
    expect(researcherModel.requests[0]?.messages.at(-1)).toEqual({ role: "user", content: "Effect 4" })
    expect(writerModel.requests[1]?.messages.at(-1)).toMatchObject({ role: "tool", content: "Effect 4 merged the platform packages" })
    const writerRun = events.find((e) => e.agent === "writer")!.runId
    const child = events.filter((e) => e.agent === "researcher")
    expect(child.length).toBeGreaterThan(0)
    expect(child.every((e) => e.parentRunId === writerRun)).toBe(true)
    expect(events.filter((e) => e.agent === "writer").every((e) => e.parentRunId === undefined)).toBe(true)
    const toolSpan = spans.find((s) => s.name.startsWith("execute_tool "))!
    const childRun = spans.find((s) => s.name === "invoke_agent researcher")!
    expect(childRun.parent._tag === "Some" && childRun.parent.value.spanId).toBe(toolSpan.spanId)
  })

  it("takes an object input Schema as the arguments, and refuses invalid ones before the child runs", async () => {
    const Topic = Schema.Struct({ topic: Schema.String, depth: Schema.Finite })
    const childModel = scriptedModel(text('{"summary":"ok"}'))
    const child = agent("summariser", { input: Topic, output: Schema.Struct({ summary: Schema.String }) }).model(childModel)
    const summarise = child.asTool({ name: "summarise" })
    expect(summarise.definition.parameters).toMatchObject({ type: "object", required: ["topic", "depth"] })
    const parentModel = scriptedModel([
      toolCalls([{ id: "bad", name: "summarise", arguments: { topic: "x", depth: "deep" } }]),
      toolCalls([{ id: "good", name: "summarise", arguments: { topic: "x", depth: 2 } }]),
      text("done")
    ])
    const parent = agent("parent").model(parentModel).tools({ summarise })
    expect(await parent.run("go")).toBe("done")
    expect(childModel.requests).toHaveLength(1)
    expect(childModel.requests[0]?.messages.at(-1)).toEqual({ role: "user", content: '{"topic":"x","depth":2}' })
    expect(parentModel.requests[2]?.messages.at(-1)).toMatchObject({ role: "tool", content: '{"summary":"ok"}' })
  })

  it("uses the caller's model when the child has none", async () => {
    const model = scriptedModel([toolCalls([{ id: "c1", name: "helper", arguments: { input: "q" } }]), text("from child"), text("from parent")])
    const helper = agent("helper").prompt("Help").asTool({ name: "helper" })
    expect(await agent("parent").model(model).tools({ helper }).run("go")).toBe("from parent")
    expect(model.requests[1]?.messages[0]).toMatchObject({ role: "system" })
    expect(model.requests[2]?.messages.at(-1)).toMatchObject({ role: "tool", content: "from child" })
  })

  it("refuses a bad tool name at construction", () => {
    expect(() => agent("a").asTool({ name: "not a name" })).toThrow(AgentConfigError)
  })
})

describe("hierarchical budgets", () => {
  it("charges a child's tool calls to the calling agent, whose own limit then bounds the tree", async () => {
    let echoes = 0
    const echo = tool("echo", { args: Schema.Struct({ s: Schema.String }), run: ({ s }) => (echoes++, s) })
    const childModel = scriptedModel([
      toolCalls([{ id: "e1", name: "echo", arguments: { s: "a" } }]),
      toolCalls([{ id: "e2", name: "echo", arguments: { s: "b" } }]),
      text("child done")
    ])
    const child = agent("child").model(childModel).tools({ echo }).asTool({ name: "child" })
    const call = (id: string) => toolCalls([{ id, name: "child", arguments: { input: "go" } }])
    const parentModel = scriptedModel([call("c1"), call("c2"), text("never")])
    // The parent's call of the child and the child's first echo use the parent's limit of 2: the
    // child's second echo is refused (the parent's model is told), and so is the parent's next call.
    const parent = agent("parent").model(parentModel).tools({ child }).budget({ maxToolCalls: 2 })
    const exit = await runExit(parent.runEffect("go"))
    expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded", reason: "toolCalls", limit: 2, used: 2, agent: "parent" })
    expect(echoes).toBe(1)
    expect(parentModel.requests[1]?.messages.at(-1)?.content).toMatch(/toolCalls budget of "parent"/)
  })

  it("bounds the tokens of a parallel fan-out by the composite's maxTokens, naming it", async () => {
    const events: Array<AgentEvent> = []
    const worker = (name: string) =>
      agent(name).model(scriptedModel([
        toolCalls([{ id: `${name}-1`, name: "noop", arguments: {} }], undefined),
        text("done", usage(10))
      ].map((step, i) => (i === 0 ? { ...step, usage: usage(30) } : step)))).tools({
        noop: tool("noop", { args: Schema.Struct({}), run: () => "ok" })
      }).onEvent((e) => void events.push(e))
    const fan = parallel("fan", [worker("w1"), worker("w2")]).budget({ maxTokens: 50 })
    const error = failureOf(await runExit(fan.runEffect("q")))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "tokens", limit: 50, scope: "fan" })
    expect((error as { used: number }).used).toBeGreaterThan(50)
    expect(events.some((e) => e._tag === "BudgetExceeded" && e.scope === "fan")).toBe(true)
  })

  it("still applies a child's own budget under a parent's", async () => {
    const noop = toolCalls([{ id: "x", name: "noop", arguments: {} }])
    const child = agent("child").model(scriptedModel([noop, noop, text("ok")]))
      .tools({ noop: tool("noop", { args: Schema.Struct({}), run: () => "ok" }) })
      .budget({ maxToolCalls: 1 })
    const error = failureOf(await runExit(pipeline("p", child, agent("next").model(scriptedModel(text("n")))).budget({ maxToolCalls: 10 }).runEffect("q")))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "toolCalls", agent: "child", limit: 1 })
    expect((error as { scope?: string }).scope).toBeUndefined()
  })

  it("refuses limits that are not positive numbers", () => {
    const p = pipeline("p", agent("a").model(scriptedModel(text("x"))), agent("b").model(scriptedModel(text("y"))))
    expect(() => p.budget({ maxTokens: -1 })).toThrow(/maxTokens must be a positive whole number/)
    expect(() => p.budget({ maxToolCalls: 1.5 })).toThrow(AgentConfigError)
    expect(() => p.budget({ maxDuration: Number.NaN })).toThrow(AgentConfigError)
  })
})

describe("composites are not thenables", () => {
  it("can be returned from an async function and awaited without running", async () => {
    const p = pipeline("p", agent("a").model(scriptedModel(text("x"))), agent("b").model(scriptedModel(text("y"))))
    const made = await (async () => p)()
    expect(made).toBe(p)
  })
})

describe("deterministic agents", () => {
  it("run without a model when every skill is implemented by a function, and compose", async () => {
    const parse = agent("parse", { output: Schema.Struct({ n: Schema.Finite }) })
      .skills(() => [skill("parse").implementedBy((input: string) => ({ n: Number(input) }))])
    const double = agent("double", { input: Schema.Struct({ n: Schema.Finite }), output: Schema.Finite })
      .skills(() => [skill("double").implementedBy(({ n }: { readonly n: number }) => n * 2)])
    expect(await parse.run("21")).toEqual({ n: 21 })
    expect(await pipeline("calc", parse, double).run("21")).toBe(42)
    expectTypeOf(double.runEffect).returns.toEqualTypeOf<Effect.Effect<number, AgentError, never>>()
  })

  it("routes by predicates without a model, and explains when only a model could choose", async () => {
    const routed = agent("routed").skills(() => [
      skill("upper").when((s) => s.startsWith("!")).implementedBy((s: string) => s.toUpperCase()),
      skill("echo").implementedBy((s: string) => s)
    ])
    expect(await routed.run("!hi")).toBe("!HI")
    expect(await routed.run("hi")).toBe("hi")
    const ambiguous = agent("ambiguous").skills(() => [skill("a").implementedBy((s: string) => s), skill("b").implementedBy((s: string) => s)])
    await expect(ambiguous.run("x")).rejects.toMatchObject({ _tag: "ModelError", reason: expect.stringMatching(/has no model/) })
  })

  it("still needs a model when a skill talks to one", async () => {
    const mixed = agent("mixed").tools({ noop: tool("noop", { args: Schema.Struct({}), run: () => "ok" }) })
      .skills(({ noop }) => [skill("a").implementedBy((s: string) => s), skill("b").tools(noop)])
    // @ts-expect-error call .model(...) before .run(...)
    const pending: Promise<unknown> = mixed.run("x")
    await expect(pending).rejects.toThrow(AgentConfigError)
    expectTypeOf(mixed.runEffect).returns.toEqualTypeOf<Effect.Effect<string, AgentError, ModelClientService>>()
  })
})
