/**
 * The composition operators on scripted models: values flow typed, failures end in tagged errors,
 * fan-out interrupts or collects as documented, the loop cap holds, and spans nest.
 */
import { Effect, Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { AgentConfigError, agent, ModelError, text, type ModelClient } from "../../src/index.ts"
import { branch, forum, loop, parallel, pipeline } from "../../src/compose/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { captureSpans, failureOf, runExit } from "../fixtures.ts"

const answering = (name: string, reply: string) => agent(name).model(scriptedModel(text(reply)))

/** A model that never answers and records when it is interrupted. */
const hanging = (interrupted: Array<string>, name: string): ModelClient => ({
  chat: () => Effect.never.pipe(Effect.onInterrupt(() => Effect.sync(() => interrupted.push(name))))
})

describe("pipeline", () => {
  it("passes a typed output on as the typed value", async () => {
    const plannerModel = scriptedModel(text('{"topic":"effect","depth":2}'))
    const planner = agent("planner", { output: Schema.Struct({ topic: Schema.String, depth: Schema.Finite }) }).model(plannerModel)
    const writerModel = scriptedModel(text("a report on effect"))
    const writer = agent("writer", { input: Schema.Struct({ topic: Schema.String, depth: Schema.Finite }) }).model(writerModel)
    const research = pipeline("research", planner, writer)
    expect(await research.run("write about effect")).toBe("a report on effect")
    expect(writerModel.requests[0]?.messages.at(-1)).toEqual({ role: "user", content: '{"topic":"effect","depth":2}' })
  })

  it("chains with .andThen and ends on the first failure", async () => {
    const failing = agent("failing").model(scriptedModel(new ModelError({ provider: "test", reason: "down" })))
    const lastModel = scriptedModel(text("never"))
    const chained = pipeline("p", answering("a", "x"), failing).andThen(agent("last").model(lastModel))
    expect(failureOf(await runExit(chained.runEffect("go")))).toMatchObject({ _tag: "ModelError", reason: "down" })
    expect(lastModel.requests).toHaveLength(0)
  })

  it("refuses fewer than two stages or a non-runnable at construction", () => {
    expect(() => (pipeline as any)("p", answering("a", "x"))).toThrow(AgentConfigError)
    expect(() => (pipeline as any)("p", answering("a", "x"), { name: "fake" })).toThrow(/stage 1 is not an agent/)
  })
})

describe("parallel", () => {
  it("gives the outputs as a tuple in the order given", async () => {
    const both = parallel("both", [answering("a", "A"), answering("b", "B")])
    expect(await both.run("q")).toEqual(["A", "B"])
  })

  it("fails fast and interrupts the others", async () => {
    const interrupted: Array<string> = []
    const slow = agent("slow").model(hanging(interrupted, "slow"))
    const failing = agent("failing").model(scriptedModel(new ModelError({ provider: "test", reason: "down" })))
    const fan = parallel("fan", [slow, failing])
    expect(failureOf(await runExit(fan.runEffect("q")))).toMatchObject({ _tag: "ModelError" })
    expect(interrupted).toEqual(["slow"])
  })

  it("collects each result or error when asked", async () => {
    const failing = agent("failing").model(scriptedModel(new ModelError({ provider: "test", reason: "down" })))
    const settled = await parallel("fan", [answering("a", "A"), failing], { onFailure: "collect" }).run("q")
    expect(Result.isSuccess(settled[0]) && settled[0].success).toBe("A")
    expect(Result.isFailure(settled[1]) && settled[1].failure._tag).toBe("ModelError")
  })

  it("runs at most `concurrency` at once", async () => {
    let inFlight = 0
    let peak = 0
    const counted = (name: string) =>
      agent(name).model({
        chat: () =>
          Effect.gen(function*() {
            inFlight++
            peak = Math.max(peak, inFlight)
            yield* Effect.sleep("5 millis")
            inFlight--
            return { _tag: "Text" as const, content: name }
          })
      })
    const four = parallel("four", [counted("a"), counted("b"), counted("c"), counted("d")], { concurrency: 2 })
    expect(await four.run("q")).toEqual(["a", "b", "c", "d"])
    expect(peak).toBe(2)
  })

  it("refuses the same agent twice, and a bad concurrency, at construction", () => {
    const a = answering("a", "A")
    expect(() => parallel("dup", [a, a])).toThrow(/"a" is placed twice/)
    expect(() => parallel("c", [a, answering("b", "B")], { concurrency: 0 })).toThrow(/concurrency/)
    expect(() => parallel("c", [a, answering("b", "B")], { concurrency: Number.NaN })).toThrow(/concurrency/)
  })
})

describe("forum", () => {
  it("shows a function captain the input and every answer", async () => {
    const decided = await forum("panel", [answering("optimist", "yes"), answering("pessimist", "no")], (brief) => brief).run("ship it?")
    expect(decided).toEqual({
      input: "ship it?",
      answers: [{ participant: "optimist", answer: "yes" }, { participant: "pessimist", answer: "no" }]
    })
  })

  it("gives a text captain the brief rendered as text", async () => {
    const judgeModel = scriptedModel(text("ship"))
    const verdict = await forum("panel", [answering("optimist", "yes"), answering("pessimist", "no")], agent("judge").model(judgeModel)).run("ship it?")
    expect(verdict).toBe("ship")
    const brief = String(judgeModel.requests[0]?.messages.at(-1)?.content)
    expect(brief).toContain("ship it?")
    expect(brief).toContain("optimist:\nyes")
    expect(brief).toContain("pessimist:\nno")
  })

  it("ends with StepFailed when a captain function throws, and refuses a captain among the participants", async () => {
    const thrown = failureOf(await runExit(forum("f", [answering("a", "A")], () => {
      throw new Error("captain broke")
    }).runEffect("q")))
    expect(thrown).toMatchObject({ _tag: "StepFailed", step: "captain" })
    const a = answering("a", "A")
    expect(() => forum("f", [a], a as any)).toThrow(/both a participant and the captain/)
  })
})

describe("loop", () => {
  const counter = (replies: ReadonlyArray<string>) => agent("counter").model(scriptedModel(replies.map((r) => text(r))))

  it("feeds the output back until the predicate accepts", async () => {
    const seen: Array<[string, number]> = []
    const looped = loop("count", counter(["1", "2", "3", "4"]), {
      until: (output, iteration) => {
        seen.push([output, iteration])
        return output === "3"
      },
      maxIterations: 10
    })
    expect(await looped.run("0")).toBe("3")
    expect(seen).toEqual([["1", 1], ["2", 2], ["3", 3]])
  })

  it("fails with LoopLimitExceeded carrying every iteration at the cap", async () => {
    const looped = loop("count", counter(["1", "2", "3"]), { until: () => false, maxIterations: 2 })
    expect(failureOf(await runExit(looped.runEffect("0")))).toMatchObject({ _tag: "LoopLimitExceeded", maxIterations: 2, iterations: ["1", "2"] })
  })

  it("requires a whole-number cap", () => {
    for (const maxIterations of [0, -1, 1.5, Number.NaN, Infinity, undefined]) {
      expect(() => loop("l", counter([]), { until: () => true, maxIterations: maxIterations as number })).toThrow(/maxIterations/)
    }
  })
})

describe("branch", () => {
  const Ticket = Schema.Union([
    Schema.TaggedStruct("Refund", { orderId: Schema.String }),
    Schema.TaggedStruct("Question", { topic: Schema.String })
  ])
  const triage = (reply: string) => agent("triage", { output: Ticket }).model(scriptedModel(text(reply)))

  it("routes each tag to its case: an agent taking that member, or a function", async () => {
    const refundsModel = scriptedModel(text("refunded"))
    const refunds = agent("refunds", { input: Schema.TaggedStruct("Refund", { orderId: Schema.String }) }).model(refundsModel)
    const cases = { Refund: refunds, Question: (q: { readonly topic: string }) => `see the FAQ on ${q.topic}` }
    expect(await branch("support", triage('{"_tag":"Refund","orderId":"o-1"}'), cases).run("money back")).toBe("refunded")
    expect(refundsModel.requests[0]?.messages.at(-1)?.content).toBe('{"_tag":"Refund","orderId":"o-1"}')
    expect(await branch("support", triage('{"_tag":"Question","topic":"billing"}'), cases).run("how?")).toBe("see the FAQ on billing")
  })

  it("fails with BranchNotRouted for a tag without a case (untyped callers)", async () => {
    const partial = branch("support", triage('{"_tag":"Question","topic":"x"}'), { Refund: () => "r" } as any)
    expect(failureOf(await runExit(partial.runEffect("q") as Effect.Effect<unknown, unknown>))).toMatchObject({ _tag: "BranchNotRouted", tag: "Question", cases: ["Refund"] })
  })
})

describe("composites are agents", () => {
  it("compose further, fire their hooks, and nest the children's spans under their own", async () => {
    const { spans, tracer } = captureSpans()
    const events: Array<string> = []
    const inner = parallel("inner", [answering("a", "A"), answering("b", "B")])
    const outer = pipeline("outer", inner, agent("join", { input: Schema.Tuple([Schema.String, Schema.String]) }).model(scriptedModel(text("AB"))))
      .onRunStart((e) => void events.push(`start ${e.name}`))
      .onRunEnd((e) => void events.push(`end ${e.name} ${e.outcome._tag}`))
    expect(await Effect.runPromise(outer.runEffect("q").pipe(Effect.withTracer(tracer)))).toBe("AB")
    expect(events).toEqual(["start outer", "end outer Success"])
    const byName = (name: string) => spans.filter((s) => s.attributes.get("agent.name") === name)
    const outerSpan = byName("outer")[0]!
    const innerSpan = byName("inner")[0]!
    const agentA = spans.find((s) => s.name === "invoke_agent a" && s.attributes.get("agent.name") === "a")!
    expect(innerSpan.parent._tag === "Some" && innerSpan.parent.value.spanId).toBe(outerSpan.spanId)
    expect(agentA.parent._tag === "Some" && agentA.parent.value.spanId).toBe(innerSpan.spanId)
  })

  it("bounds the whole tree's wall time", async () => {
    const interrupted: Array<string> = []
    const slow = pipeline("slow", answering("a", "A"), agent("b").model(hanging(interrupted, "b"))).budget({ maxDuration: 30 })
    expect(failureOf(await runExit(slow.runEffect("q")))).toMatchObject({ _tag: "BudgetExceeded", reason: "duration", agent: "slow" })
    expect(interrupted).toEqual(["b"])
  })
})
