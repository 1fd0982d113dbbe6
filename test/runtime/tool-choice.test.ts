import { Effect, Schema, Stream } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { agent, AgentConfigError, DefinitionChanged, outputToolName, resume, runUntil, skill, text, toolCalls } from "../../src/index.ts"
import { arbHostileValueKind, hostileValue } from "../../src/testing/hostile.ts"
import { definitionOf } from "../../src/dsl/agent-definition.ts"
import { compile } from "../../src/runtime/plan.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"

const call = (name: string, args: unknown, id = `call_${name}`) => ({ id, name, arguments: args })
const Answer = Schema.Struct({ n: Schema.Finite })

describe("skill(...).toolChoice(...)", () => {
  it('"output" forces the typed-answer tool on every request, the skill\'s tools still offered', async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([toolCalls([call("add", { a: 1, b: 2 })]), toolCalls([call("submit", { n: 3 })])])
    const a = agent("calc", { output: Answer }).model(model).tools({ add })
      .skills(({ add }) => [skill("sum").tools(add).toolChoice("output")])
    expect(await a.run("1+2")).toEqual({ n: 3 })
    expect(model.requests.map((r) => r.toolChoice)).toEqual([{ tool: "submit" }, { tool: "submit" }])
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["add", "submit"])
  })

  it("a handle of the skill forces that tool; the keywords pass through", async () => {
    const { add } = makeCalculatorTools()
    for (const [policy, expected] of [["none", "none"], ["required", "required"], ["auto", "auto"]] as const) {
      const model = scriptedModel([text("done")])
      const a = agent("calc").model(model).tools({ add }).skills(() => [skill("sum").chat().toolChoice(policy)])
      expect(await a.run("x")).toBe("done")
      expect(model.requests[0]!.toolChoice).toBe(expected)
    }
    const model = scriptedModel([toolCalls([call("add", { a: 1, b: 2 })]), text("3")])
    const a = agent("calc").model(model).tools({ add }).skills(({ add }) => [skill("sum").tools(add).toolChoice(add)])
    expect(await a.run("1+2")).toBe("3")
    expect(model.requests.map((r) => r.toolChoice)).toEqual([{ tool: "add" }, { tool: "add" }])
  })

  it("{ lastTurn, otherTurns } forces the answer only on the last turn maxTurns allows", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([
      toolCalls([call("add", { a: 1, b: 2 }, "c1")]),
      toolCalls([call("add", { a: 3, b: 4 }, "c2")]),
      toolCalls([call("submit", { n: 7 })])
    ])
    const a = agent("calc", { output: Answer }).model(model).budget({ maxTurns: 3 }).tools({ add })
      .skills(({ add }) => [skill("sum").tools(add).toolChoice({ lastTurn: "output", otherTurns: "auto" })])
    expect(await a.run("x")).toEqual({ n: 7 })
    expect(model.requests.map((r) => r.toolChoice)).toEqual(["auto", "auto", { tool: "submit" }])
  })

  it("without otherTurns the other turns keep the default (a tool required when typed)", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([toolCalls([call("add", { a: 1, b: 2 })]), toolCalls([call("submit", { n: 3 })])])
    const a = agent("calc", { output: Answer }).model(model).budget({ maxTurns: 2 }).tools({ add })
      .skills(({ add }) => [skill("sum").tools(add).toolChoice({ lastTurn: "output" })])
    await a.run("x")
    expect(model.requests.map((r) => r.toolChoice)).toEqual(["required", { tool: "submit" }])
  })

  it("a forced tool that pickTools did not offer becomes \"required\" (a provider refuses a choice naming no offered tool)", async () => {
    const { add, multiply } = makeCalculatorTools()
    const model = scriptedModel([text("done")])
    const a = agent("calc").model(model).tools({ add, multiply }).pickTools({ maxCandidates: 1, scorer: (_, t) => (t.name === "multiply" ? 1 : 0) })
      .skills(({ add, multiply }) => [skill("s").tools(add, multiply).toolChoice(add)])
    await a.run("x")
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["multiply"])
    expect(model.requests[0]!.toolChoice).toBe("required")
  })

  it("the streaming path sends the same choice", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([toolCalls([call("submit", { n: 3 })])])
    const a = agent("calc", { output: Answer }).model(model).tools({ add })
      .skills(({ add }) => [skill("sum").tools(add).toolChoice("output")])
    await Effect.runPromise(Stream.runDrain(a.runStream("x")))
    expect(model.requests[0]!.toolChoice).toEqual({ tool: "submit" })
  })
})

describe("agent(...).toolChoice(...) (no skills)", () => {
  it("reaches the implicit skill: a tool by name, or the typed answer", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([toolCalls([call("add", { a: 1, b: 2 })]), text("3")])
    expect(await agent("calc").model(model).tools({ add }).toolChoice({ tool: "add" }).run("x")).toBe("3")
    expect(model.requests[0]!.toolChoice).toEqual({ tool: "add" })
    const typed = scriptedModel([toolCalls([call("submit", { n: 3 })])])
    expect(await agent("calc", { output: Answer }).model(typed).tools({ add }).toolChoice("output").run("x")).toEqual({ n: 3 })
    expect(typed.requests[0]!.toolChoice).toEqual({ tool: "submit" })
  })
})

describe("outputToolName(schema, name)", () => {
  it("renames the typed-answer tool: offered, forced and accepted under the new name", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([toolCalls([call("submit_slots", { n: 3 })])])
    const a = agent("calc", { output: outputToolName(Answer, "submit_slots") }).model(model).tools({ add })
      .skills(({ add }) => [skill("sum").tools(add).toolChoice("output")])
    expect(await a.run("x")).toEqual({ n: 3 })
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["add", "submit_slots"])
    expect(model.requests[0]!.toolChoice).toEqual({ tool: "submit_slots" })
    expect(model.requests[0]!.messages[0]!.content).toContain('call the tool "submit_slots"')
  })

  it("refuses names outside the tool-name rules, reserved names, and collisions", () => {
    for (const bad of ["", "has space", "x".repeat(65), "memory_x", "escalate", 7]) {
      expect(() => outputToolName(Answer, bad as string)).toThrow(AgentConfigError)
    }
    const { add } = makeCalculatorTools()
    expect(() => agent("calc", { output: outputToolName(Answer, "add") }).tools({ add })).toThrow(/"add" is the tool through which/)
    // "submit" is an ordinary name once the answer tool is renamed
    const submit = makeCalculatorTools().add
    expect(() => agent("calc", { output: outputToolName(Answer, "answer") }).tools({ add: submit })).not.toThrow()
  })
})

describe("tool-choice validation for untyped callers", () => {
  const { add, multiply } = makeCalculatorTools()
  const base = () => agent("calc").tools({ add, multiply })
  it.each([
    ["a handle of another skill's tool", (h: any) => skill("s").tools(h.add).toolChoice(h.multiply), /"multiply" is not one of this skill's tools/],
    ['"output" without an output Schema', (h: any) => skill("s").tools(h.add).toolChoice("output"), /no output Schema/],
    ["an unknown keyword", (h: any) => skill("s").tools(h.add).toolChoice("always" as never), /"always" is not a choice/],
    ["a bad per-turn policy", (h: any) => skill("s").tools(h.add).toolChoice({ last: "auto" } as never), /lastTurn/],
    ["null", (h: any) => skill("s").tools(h.add).toolChoice(null as never), /tool handle/],
    ["a deterministic skill", () => skill("s").implementedBy((i: string) => i).toolChoice("none"), /deterministic/]
  ])("refuses %s", (_, make, message) => {
    expect(() => base().skills((h) => [make(h)] as never)).toThrow(AgentConfigError)
    expect(() => base().skills((h) => [make(h)] as never)).toThrow(message)
  })

  it("refuses a handle of another agent", () => {
    let foreign: unknown
    agent("other").tools({ add }).skills((h) => ((foreign = h.add), [skill("s").tools(h.add)]))
    expect(() => base().skills((h) => [skill("s").tools(h.add).toolChoice(foreign as never)])).toThrow(/"add" is not one of this skill's tools/)
  })

  it("refuses an agent-level policy naming no registered tool, or mixed with skills", () => {
    expect(() => base().toolChoice({ tool: "nope" } as never)).toThrow(AgentConfigError)
    expect(() => base().toolChoice({ tool: "escalate" } as never)).toThrow(AgentConfigError)
    expect(() => base().toolChoice("output")).toThrow(/no output Schema/)
    expect(() => base().toolChoice("auto").skills((h) => [skill("s").tools(h.add)])).toThrow(/without skills/)
    expect(() => base().skills((h) => [skill("s").tools(h.add)]).toolChoice("auto")).toThrow(/without skills/)
  })
})

describe("the plan fingerprint", () => {
  const fp = (a: object) => compile(definitionOf(a as never)).fingerprint()
  it("changes with the policy and the answer tool's name, and not without them", () => {
    const { add } = makeCalculatorTools()
    const typed = (choice?: "output" | "auto", output: typeof Answer = Answer) =>
      agent("calc", { output }).tools({ add }).skills(({ add }) => [choice === undefined ? skill("s").tools(add) : skill("s").tools(add).toolChoice(choice)])
    const plain = fp(typed())
    expect(fp(typed())).toBe(plain)
    expect(fp(typed("output"))).not.toBe(plain)
    expect(fp(typed("auto"))).not.toBe(fp(typed("output")))
    expect(fp(typed(undefined, outputToolName(Answer, "submit_slots")))).not.toBe(plain)
    expect(fp(agent("calc").tools({ add }).toolChoice("required"))).not.toBe(fp(agent("calc").tools({ add })))
  })
})

describe("durable runs", () => {
  it("a snapshot resumes under the same policy (the forced choice still sent) and not under another", async () => {
    const { add } = makeCalculatorTools()
    const build = (model: ReturnType<typeof scriptedModel>, choice: "output" | "auto") =>
      agent("calc", { output: Answer }).model(model).budget({ maxTurns: 4 }).tools({ add })
        .skills(({ add }) => [skill("s").tools(add).toolChoice({ lastTurn: "output", otherTurns: choice })])
    const script = () => scriptedModel([toolCalls([call("add", { a: 1, b: 2 })]), toolCalls([call("submit", { n: 3 })])])
    const first = script()
    const suspended = await Effect.runPromise(runUntil(build(first, "auto"), "x", { suspendAfter: 1 }) as Effect.Effect<any, any>)
    expect(suspended._tag).toBe("Suspended")
    const changed = failureOf(await runExit(resume(build(script(), "output"), suspended.snapshot) as Effect.Effect<any, any>))
    expect(changed).toBeInstanceOf(DefinitionChanged)
    const second = scriptedModel([toolCalls([call("submit", { n: 3 })])])
    const rest = await Effect.runPromise(resume(build(second, "auto"), suspended.snapshot) as Effect.Effect<any, any>)
    expect(rest).toEqual({ _tag: "Done", output: { n: 3 } })
    expect([...first.requests, ...second.requests].map((r) => r.toolChoice)).toEqual(["auto", "auto"])
  })
})

describe("property: any value handed to .toolChoice(...) is accepted or refused with AgentConfigError", () => {
  it("never crashes on hostile or arbitrary policies", () => {
    const { add } = makeCalculatorTools()
    const arbPolicy = fc.oneof(
      fc.anything({ withBigInt: true, withMap: true, withSet: true, withNullPrototype: true }),
      arbHostileValueKind.map(hostileValue),
      fc.record({ lastTurn: fc.anything(), otherTurns: fc.anything() }, { requiredKeys: [] }),
      fc.record({ tool: fc.oneof(fc.string(), fc.anything({ withBigInt: true }), arbHostileValueKind.map(hostileValue)) }),
      fc.constantFrom("auto", "required", "none", "output", "AUTO", "submit", "")
    )
    const typedBase = () => agent("calc", { output: Answer }).tools({ add })
    fc.assert(
      fc.property(arbPolicy, fc.boolean(), (policy, typed) => {
        // The untyped agent is seen through the typed one's type: only the runtime checks matter here.
        const base = () => (typed ? typedBase() : agent("calc").tools({ add }) as unknown as ReturnType<typeof typedBase>)
        for (const build of [
          () => base().skills((h) => [skill("s").tools(h.add).toolChoice(policy as never)] as never),
          () => base().toolChoice(policy as never)
        ]) {
          try {
            build()
          } catch (error) {
            expect(error).toBeInstanceOf(AgentConfigError)
          }
        }
      }),
      { numRuns: 300 }
    )
  })
})

describe("property: the forced choice appears exactly on the turns the policy says", () => {
  it("for any maxTurns and script, { lastTurn: output } forces submit on turn maxTurns only; a constant setting on every turn", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 8 }),
        fc.constantFrom("auto", "required", "none"),
        fc.boolean(),
        async (maxTurns, investigations, other, perTurn) => {
          const { add } = makeCalculatorTools()
          const script = [
            ...Array.from({ length: investigations }, (_, i) => toolCalls([call("add", { a: i, b: 1 }, `c${i}`)])),
            toolCalls([call("submit", { n: 1 })])
          ]
          const model = scriptedModel(script)
          const policy = perTurn ? { lastTurn: "output" as const, otherTurns: other } : other
          const a = agent("calc", { output: Answer }).model(model).budget({ maxTurns }).tools({ add })
            .skills(({ add }) => [skill("s").tools(add).toolChoice(policy)])
          await Effect.runPromise(Effect.exit(a.runEffect("x")))
          expect(model.requests).toHaveLength(Math.min(investigations + 1, maxTurns))
          model.requests.forEach((r, i) => {
            const forced = perTurn && i + 1 === maxTurns
            expect(r.toolChoice).toEqual(forced ? { tool: "submit" } : other)
          })
        }
      ),
      { numRuns: 60 }
    )
  })
})
