/**
 * What plain JavaScript (or `any`) can hand the builders that the types refuse: each mistake is an
 * `AgentConfigError` at construction naming the method or option and what to pass instead, never a
 * `TypeError` from inside the library, an option silently dropped, or a failure at run time.
 */
import { Effect, Layer, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, AgentConfigError, BudgetPolicy, skill, text, tool, unsafeNoSchema } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { definitionOf } from "../../src/dsl/agent.ts"

const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const js = (value: unknown): any => value

/** The AgentConfigError `f` throws; fails the test on any other outcome. */
const configError = (f: () => unknown): AgentConfigError => {
  let thrown: unknown
  try {
    f()
  } catch (error) {
    thrown = error
  }
  expect(thrown).toBeInstanceOf(AgentConfigError)
  return thrown as AgentConfigError
}

describe(".tools(...) takes a record keyed by tool names", () => {
  const cases: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ["an array", [add], /\.tools\(\.\.\.\) takes a record of tools keyed by their names.*got an array/],
    ["a Map", new Map([["add", add]]), /got a Map/],
    ["a single tool", add, /got the tool "add": write \.tools\(\{ add \}\)/],
    ["undefined", undefined, /got an undefined/],
    ["null", null, /got null/]
  ]
  for (const [what, value, message] of cases) {
    it(`refuses ${what}`, () => {
      expect(configError(() => js(agent("a")).tools(value)).message).toMatch(message)
    })
  }

  it("a record still registers (and an empty one registers nothing)", () => {
    expect(definitionOf(agent("a").tools({ add })).tools.map((t) => t.name)).toContain("add")
    expect(definitionOf(agent("a").tools({})).tools).toEqual(definitionOf(agent("a")).tools)
  })
})

describe(".skills(...) returns a non-empty array of skills", () => {
  const calc = () => js(agent("calc").tools({ add }))
  it("refuses a single skill, naming the array to return", () => {
    expect(configError(() => calc().skills(({ add }: any) => skill("s").tools(add))).message).toMatch(
      /\.skills\(\.\.\.\) must return an array of skills.*got a skill/
    )
  })

  it("refuses a Promise (the callback is synchronous)", () => {
    expect(configError(() => calc().skills(async ({ add }: any) => [skill("s").tools(add)])).message).toMatch(/got a Promise/)
  })

  it("refuses undefined (a callback that forgot to return)", () => {
    expect(configError(() => calc().skills(() => undefined)).message).toMatch(/got an undefined/)
  })

  it("refuses an empty array: it would leave the implicit skill, which may use every tool", () => {
    expect(configError(() => calc().skills(() => [])).message).toMatch(/returned no skills.*leave \.skills\(\.\.\.\) out/)
  })
})

describe("skill(...) and its methods", () => {
  it("refuses a skill without a name, or a name that is not a string", () => {
    expect(configError(() => js(skill)()).message).toMatch(/skill\(name, description\?\) needs a non-empty name/)
    expect(configError(() => js(skill)(" ")).message).toMatch(/non-empty name/)
    expect(configError(() => js(skill)(42)).message).toMatch(/non-empty name/)
  })

  it("refuses a description that is not a string", () => {
    expect(configError(() => js(skill)("s", 42)).message).toMatch(/description.*takes a string, got a number/)
  })

  it("refuses .when, .implementedBy, .output and .memory arguments of the wrong kind", () => {
    expect(configError(() => js(skill("s")).when("refund")).message).toMatch(/\.when\(\.\.\.\) takes a function, got a string/)
    expect(configError(() => js(skill("s")).implementedBy("x")).message).toMatch(/\.implementedBy\(\.\.\.\) takes a function/)
    expect(configError(() => js(skill("s")).output("string")).message).toMatch(/\.output\(\.\.\.\)'s argument must be an Effect Schema/)
    expect(configError(() => js(skill("s")).memory("x")).message).toMatch(/MemoryStore/)
  })
})

describe("agent(name, { input, output }) takes Schemas", () => {
  it("refuses an input or output that is not an Effect Schema, instead of a TypeError at run", () => {
    expect(configError(() => js(agent)("a", { output: { answer: "number" } })).message).toMatch(/`output` must be an Effect Schema/)
    expect(configError(() => js(agent)("a", { input: "string" })).message).toMatch(/`input` must be an Effect Schema/)
  })
})

describe("tool(name, options)", () => {
  const base = { args: Schema.Struct({}), run: () => 1 }
  it("refuses flags that are not booleans instead of reading them as truthy", () => {
    expect(configError(() => tool("t", js({ ...base, safe: "false" }))).message).toMatch(/`safe` must be true or false, got a string/)
    expect(configError(() => tool("t", js({ ...base, untrustedOutput: "yes" }))).message).toMatch(/`untrustedOutput` must be true or false/)
    expect(configError(() => tool("t", js({ ...base, strict: 1 }))).message).toMatch(/`strict` must be true or false/)
    expect(configError(() => tool("t", js({ ...base, repair: "yes" }))).message).toMatch(/`repair` must be true, false or/)
  })

  it("refuses a description that is not a string and tags that are not a list of strings", () => {
    expect(configError(() => tool("t", js({ ...base, description: 5 }))).message).toMatch(/`description` must be a string/)
    expect(configError(() => tool("t", js({ ...base, tags: "math" }))).message).toMatch(/`tags` must be an array of strings/)
  })

  it("checks its recover handlers as .recoverTool does (a misspelt handler is not dropped)", () => {
    expect(configError(() => tool("t", js({ ...base, recover: { executionErorr: () => undefined } }))).message).toMatch(
      /did you mean `executionError`/
    )
    expect(configError(() => tool("t", js({ ...base, recover: 5 }))).message).toMatch(/recover/)
  })

  it("refuses args and parameters together: one of them would be ignored", () => {
    expect(configError(() => tool("t", js({ ...base, parameters: { type: "object" } }))).message).toMatch(/either `args`.*or `parameters`/)
  })

  it("refuses a success that is not a Schema", () => {
    expect(configError(() => tool("t", js({ args: Schema.Struct({}), success: "string" }))).message).toMatch(/`success` must be an Effect Schema/)
  })

  it("refuses unsafeNoSchema without a known mode", () => {
    expect(configError(() => js(unsafeNoSchema)()).message).toMatch(/mode.*"read-only", "human-approval" or "full"/)
    expect(configError(() => js(unsafeNoSchema)({ mode: "readonly" })).message).toMatch(/got "readonly"/)
  })

  it("a tool from a JSON Schema takes its recovery handlers as `recover`, as its type says", () => {
    const t = tool("j", { parameters: { type: "object" }, recover: { executionError: () => ({ _tag: "Fail" }) }, run: () => 1 })
    expect(t.recover).toBeDefined()
  })
})

describe("agent builder methods", () => {
  it(".budget() without options is refused, not a TypeError", () => {
    expect(configError(() => js(agent("a")).budget()).message).toMatch(/\.budget\(\.\.\.\) takes an object of options, got an undefined/)
  })

  it(".budget with a number given as text shows it quoted, so \"5\" is told from 5", () => {
    expect(configError(() => js(agent("a")).budget({ maxTurns: "5" })).message).toMatch(/budget maxTurns must be .*, got "5"$/)
    expect(configError(() => js(agent("a")).budget({ maxTurns: 0 })).message).toMatch(/got 0$/)
  })

  it("run() without an input is refused (InputInvalid), not sent to the model as an empty message", async () => {
    const model = scriptedModel([text("hi")])
    await expect(js(agent("a").model(model)).run()).rejects.toMatchObject({ _tag: "InputInvalid", issues: expect.stringContaining("no input was given") })
    expect(model.requests).toHaveLength(0)
  })

  it(".onBudgetThreshold with a threshold that is not a number is refused", () => {
    expect(configError(() => js(agent("a")).onBudgetThreshold({ threshold: "0.5" }, () => undefined)).message).toMatch(
      /threshold must be a number in \(0, 1\], got "0.5"/
    )
  })

  it(".pickTools with a scorer or debug that is not a function, or a non-boolean allowUnsafe, is refused", () => {
    expect(configError(() => js(agent("a")).pickTools({ scorer: 5 })).message).toMatch(/scorer.*takes a function/)
    expect(configError(() => js(agent("a")).pickTools({ debug: "yes" })).message).toMatch(/debug.*takes a function/)
    expect(configError(() => js(agent("a")).pickTools({ allowUnsafe: "yes" })).message).toMatch(/allowUnsafe must be true or false/)
  })

  it(".memory(store) with something that is not a MemoryStore is refused", () => {
    expect(configError(() => js(agent("a")).memory("notes")).message).toMatch(/\.memory\(\.\.\.\) takes a MemoryStore/)
    expect(configError(() => js(agent("a")).memory({ read: () => undefined })).message).toMatch(/write, search/)
  })

  it(".recoverTool for a tool that is not registered is refused (its handlers would never run)", () => {
    expect(configError(() => js(agent("a").tools({ add })).recoverTool("ad", { executionError: () => undefined })).message).toMatch(
      /no tool named "ad" is registered.*did you mean `add`/
    )
  })

  it("the valid forms still build and run", async () => {
    const a = agent("a")
      .model(scriptedModel([text("ok")]))
      .tools({ add })
      .recoverTool("add", { executionError: () => ({ _tag: "Fail" }) })
      .memory()
      .pickTools({ allowUnsafe: false, scorer: () => 1, debug: () => undefined })
      .onBudgetThreshold({ threshold: 0.5 }, () => undefined)
      .budgetPolicy(() => BudgetPolicy.fail)
      .provide(Layer.empty)
      .skills(({ add }) => [skill("s", "adds").when(() => true).tools(add).memory()])
    expect(await a.run("x")).toBe("ok")
    expect(await Effect.runPromise(agent("d").skills(() => [skill("d").implementedBy((i: string) => i.toUpperCase())]).runEffect("x"))).toBe("X")
  })
})

describe("Schemas whose values cannot come from JSON (the model sends JSON)", () => {
  const Fn = Schema.declare((u: unknown): u is (...args: ReadonlyArray<unknown>) => unknown => typeof u === "function")
  it("a tool whose arguments hold one is refused, naming the field (every call was refused at run time with \"Expected <Declaration>\")", () => {
    expect(() => tool("t", { args: Schema.Struct({ callback: Fn }), run: () => 1 })).toThrow(/\["callback"\] cannot come from JSON/)
    expect(() => tool("t", { args: Schema.Struct({ items: Schema.Array(Schema.Struct({ f: Fn })) }), run: () => 1 })).toThrow(/\["items"\]\[\*\]\["f"\]/)
    expect(() => tool("t", { args: Schema.Struct({ o: Schema.Option(Fn) }), run: () => 1 })).toThrow(/\["o"\]/)
  })
  it("one JSON can give is accepted: Date, Option, ReadonlyMap, Json, a Class, a union with a readable member", () => {
    class Point extends Schema.Class<Point>("Point")({ x: Schema.Finite }) {}
    const args = Schema.Struct({
      at: Schema.Date,
      o: Schema.Option(Schema.String),
      m: Schema.ReadonlyMap(Schema.String, Schema.Finite),
      j: Schema.Json,
      p: Point,
      u: Schema.Union([Fn, Schema.String])
    })
    expect(() => tool("t", { args, run: () => 1 })).not.toThrow()
  })
  it("a Class encodes to what it holds: one holding such a field is refused too", () => {
    class Holder extends Schema.Class<Holder>("Holder")({ f: Schema.instanceOf(Map) }) {}
    expect(() => tool("t", { args: Schema.Struct({ h: Holder }), run: () => 1 })).toThrow(/\["h"\]\["f"\] cannot come from JSON/)
  })
  it("an agent whose output holds one is refused", () => {
    expect(() => agent("a", { output: Schema.Struct({ f: Fn }) })).toThrow(/output's value at \["f"\] cannot come from JSON/)
    expect(() => agent("a", { output: Schema.Struct({ at: Schema.Date }) })).not.toThrow()
  })
})

describe("what takes an agent, given something else", () => {
  it.each([
    ["a name", "bot", /expected an agent built with agent\(\.\.\.\), got "bot"/],
    ["undefined", undefined, /expected an agent built with agent\(\.\.\.\), got undefined/],
    ["a tool", add, /expected an agent built with agent\(\.\.\.\)/]
  ] as const)("session, chatHandler, agUiHandler and durable refuse %s at once", async (_name, value, reason) => {
    const { session } = await import("../../src/index.ts")
    const { chatHandler } = await import("../../src/web/index.ts")
    const { agUiHandler } = await import("../../src/protocols/ag-ui/index.ts")
    const { durable } = await import("../../src/durable/index.ts")
    for (const build of [() => session(js(value), "s"), () => chatHandler(js(value)), () => agUiHandler(js(value)), () => durable(js(value))]) {
      expect(configError(build).message).toMatch(reason)
    }
  })
})

describe("durable(agent, options) checks its options", () => {
  const bot = agent("bot").model(scriptedModel([text("ok")]))
  it.each([
    ["a misspelt option", { reconcle: () => Effect.die("x") }, /reconcle/],
    ["reconcile that is not a function", { reconcile: "yes" }, /reconcile is a function.*got "yes"/],
    ["a name that is not a string", { name: 42 }, /name is the workflow's name, a non-empty string, got 42/],
    ["options that are not an object", "fast", /takes an object of options/]
  ] as const)("%s is an AgentConfigError", async (_name, options, reason) => {
    const { durable } = await import("../../src/durable/index.ts")
    expect(configError(() => durable(bot, js(options))).message).toMatch(reason)
  })
})

describe("composite.andThen(...) takes an agent or a composite", () => {
  it.each([["a function", () => "x"], ["a string", "x"], ["a tool", add], ["undefined", undefined]] as const)("%s is refused when built, as pipeline(...) refuses it", async (_name, value) => {
    const { pipeline } = await import("../../src/index.ts")
    const a = agent("a").model(scriptedModel([text("ok")]))
    const b = agent("b").model(scriptedModel([text("ok")]))
    expect(configError(() => pipeline("p", a, b).andThen(js(value))).message).toMatch(/\.andThen\(\.\.\.\) takes an agent or a composite/)
  })
})
