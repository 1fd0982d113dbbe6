import { mkdtemp, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeFileSystem from "@effect/platform-node-shared/NodeFileSystem"
import { Effect, type FileSystem, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, fileKnowledge, inMemoryStore, type MemoryStore, skill, text, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const call = (name: string, args: unknown, id = `call_${name}`) => ({ id, name, arguments: args })

describe("model-routed skill selection", () => {
  const routedAgent = (script: Parameters<typeof scriptedModel>[0], maxTurns = 8) => {
    const { add, multiply } = makeCalculatorTools()
    const model = scriptedModel(script)
    const chosen: Array<string> = []
    const a = agent("router")
      .model(model)
      .budget({ maxTurns })
      .tools({ add, multiply })
      .skills(({ add, multiply }) => [
        skill("adding", "Adds numbers").tools(add),
        skill("multiplying", "Multiplies numbers").tools(multiply),
        skill("greeting", "Says hello").implementedBy((input: string) => `hello, ${input}`).when((i) => i.startsWith("hi"))
      ])
      .onSkillChosen((e) => {
        chosen.push(`${e.skill}/${e.how}`)
      })
    return { a, model, chosen }
  }

  it("asks the model to choose among skills without predicates through a forced tool call", async () => {
    const { a, model, chosen } = routedAgent([
      toolCalls([call("choose_skill", { skill: "multiplying" })]),
      toolCalls([call("multiply", { a: 6, b: 7 })]),
      text("42")
    ])
    expect(await a.run("six times seven")).toBe("42")
    expect(chosen).toEqual(["multiplying/model"])
    const routing = model.requests[0]!
    expect(routing.toolChoice).toEqual({ tool: "choose_skill" })
    expect(routing.tools).toHaveLength(1)
    expect(routing.tools[0]!.parameters).toMatchObject({ properties: { skill: { enum: ["adding", "multiplying"] } } })
    expect(routing.messages[0]!.content).toContain("- adding: Adds numbers")
    expect(routing.messages[0]!.content).not.toContain("greeting")
    expect(model.requests[1]!.tools.map((t) => t.name)).toEqual(["multiply"])
  })

  it("prefers a matching predicate and makes no routing call", async () => {
    const { a, model, chosen } = routedAgent([])
    expect(await a.run("hi there")).toBe("hello, hi there")
    expect(chosen).toEqual(["greeting/predicate"])
    expect(model.requests).toHaveLength(0)
  })

  it("fails with SkillRoutingFailed on an invalid pick instead of guessing", async () => {
    for (const reply of [
      toolCalls([call("choose_skill", { skill: "dividing" })]),
      toolCalls([call("add", { a: 1, b: 2 })]),
      text("adding")
    ]) {
      const { a } = routedAgent([reply])
      const error = failureOf(await runExit(a.runEffect("1 + 2")))
      expect(error).toMatchObject({ _tag: "SkillRoutingFailed", candidates: ["adding", "multiplying"] })
    }
  })

  it("treats a throwing predicate as no match, and reports it", async () => {
    const { add } = makeCalculatorTools()
    const failures: Array<string> = []
    const a = agent("picky")
      .model(scriptedModel([text("fallback answer")]))
      .tools({ add })
      .skills(({ add }) => [
        skill("broken").implementedBy((i: string) => i).when(() => {
          throw new Error("predicate bug")
        }),
        skill("compute").tools(add)
      ])
      .onHookFailed((e) => {
        failures.push(`${e.hook}: ${(e.error as Error).message}`)
      })
    expect(await a.run("x")).toBe("fallback answer")
    expect(failures).toEqual(["SkillChosen: predicate bug"])
  })

  it("counts the routing call against the turn budget", async () => {
    const { a, model } = routedAgent([toolCalls([call("choose_skill", { skill: "adding" })]), toolCalls([call("add", { a: 1, b: 2 })])], 2)
    const error = failureOf(await runExit(a.runEffect("1 + 2")))
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "turns", limit: 2, used: 2 })
    expect(model.requests).toHaveLength(2)
  })
})

describe("knowledge", () => {
  const withKnowledge = (script: Parameters<typeof scriptedModel>[0], load: () => unknown) => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel(script)
    const used: Array<{ knowledge: string; cached: boolean; characters: number }> = []
    const a = agent("support")
      .model(model)
      .tools({ add })
      .skills(({ add }) => [
        skill("answer", "Answer questions").tools(add).knowledge("faq", "The product FAQ", load as () => string),
        skill("other", "Other").tools(add).when(() => false)
      ])
      .onKnowledgeUsed(({ knowledge, cached, characters }) => {
        used.push({ knowledge, cached, characters })
      })
    return { a, model, used }
  }

  it("is a tool on its skill's allowlist, loaded lazily on first use and cached for the run", async () => {
    let loads = 0
    const { a, model, used } = withKnowledge(
      [toolCalls([call("faq", {}, "k1")]), toolCalls([call("faq", "", "k2")]), text("Returns take 30 days.")],
      () => {
        loads += 1
        return "Q: returns? A: 30 days."
      }
    )
    expect(loads).toBe(0)
    expect(await a.run("How long do returns take?")).toBe("Returns take 30 days.")
    expect(loads).toBe(1)
    expect(used).toEqual([
      { knowledge: "faq", cached: false, characters: 23 },
      { knowledge: "faq", cached: true, characters: 23 }
    ])
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["add", "faq"])
    expect(model.requests[0]!.tools[1]).toMatchObject({ description: "The product FAQ" })
    expect(model.requests[2]!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "Q: returns? A: 30 days.",
      "Q: returns? A: 30 days."
    ])
  })

  it("is loaded again in the next run", async () => {
    let loads = 0
    const { a } = withKnowledge((request) => request.messages.some((m) => m.role === "tool") ? text("ok") : toolCalls([call("faq", {})]), () => {
      loads += 1
      return "faq text"
    })
    await a.run("q1")
    await a.run("q2")
    expect(loads).toBe(2)
  })

  it("reports a failing loader to the model like a failing tool", async () => {
    const { a, model } = withKnowledge([toolCalls([call("faq", {})]), text("sorry")], () => Promise.reject(new Error("faq.md missing")))
    expect(await a.run("q")).toBe("sorry")
    expect(model.requests[1]!.messages.at(-1)!.content).toBe('Error: tool "faq" failed: faq.md missing')
  })

  it("is not on other skills' allowlists", async () => {
    const { add } = makeCalculatorTools()
    const a = agent("support")
      .model(scriptedModel([toolCalls([call("choose_skill", { skill: "plain" })]), toolCalls([call("faq", {})])]))
      .tools({ add })
      .skills(({ add }) => [skill("answer").tools(add).knowledge("faq", "FAQ", () => "x"), skill("plain").tools(add)])
    const error = failureOf(await runExit(a.runEffect("q")))
    expect(error).toMatchObject({ _tag: "ToolNotAllowed", skill: "plain", tool: "faq", allowed: ["add"] })
  })

  it("reads files through Effect's FileSystem with fileKnowledge", async () => {
    const dir = await mkdtemp(join(tmpdir(), "knowledge-"))
    const path = join(dir, "faq.md")
    await writeFile(path, "# FAQ\nShipping is free.")
    const read = (file: string) =>
      Effect.exit(Effect.suspend(() => fileKnowledge(file)({ signal: new AbortController().signal }) as Effect.Effect<string, unknown, FileSystem.FileSystem>))
        .pipe(Effect.provide(NodeFileSystem.layer))
    const text1 = await Effect.runPromise(read(path))
    expect(text1).toMatchObject({ _tag: "Success", value: "# FAQ\nShipping is free." })
    const missing = await Effect.runPromise(read(join(dir, "nope.md")))
    expect(missing._tag).toBe("Failure")
  })
})

describe("memory", () => {
  const remembering = (store?: MemoryStore) => {
    const model = scriptedModel((request) => {
      const user = request.messages.find((m) => m.role === "user")!.content
      const toolResults = request.messages.filter((m) => m.role === "tool")
      if (toolResults.length > 0) return text(toolResults.at(-1)!.content)
      if (user.startsWith("remember ")) return toolCalls([call("memory_write", { key: "fact", value: user.slice(9) })])
      if (user === "search") return toolCalls([call("memory_search", { query: "color" })])
      return toolCalls([call("memory_read", { key: "fact" })])
    })
    const a = agent("assistant").model(model).memory(store)
    return { a, model }
  }

  it("adds memory_read, memory_write and memory_search to every skill's allowlist", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([text("ok")])
    await agent("a").model(model).memory().tools({ add }).skills(({ add }) => [skill("s").tools(add)]).run("x")
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["add", "memory_read", "memory_write", "memory_search"])
  })

  it("survives across runs of the same agent, and is isolated between agents", async () => {
    const first = remembering()
    const second = remembering()
    expect(await first.a.run("remember my favourite color is teal")).toBe("stored")
    expect(await first.a.run("what is it?")).toBe("my favourite color is teal")
    expect(await first.a.run("search")).toBe('[{"key":"fact","value":"my favourite color is teal"}]')
    expect(await second.a.run("what is it?")).toBe("null")
  })

  it("works with any store, including an effectful one", async () => {
    const entries = new Map<string, string>()
    const store: MemoryStore = {
      read: (key) => Effect.succeed(entries.get(key)),
      write: (key, value) => Effect.sync(() => void entries.set(key, value)),
      search: () => Effect.succeed([])
    }
    const { a } = remembering(store)
    await a.run("remember 42")
    expect(entries.get("fact")).toBe("42")
    expect(await a.run("recall")).toBe("42")
  })

  it("validates memory tool arguments like any tool", async () => {
    const model = scriptedModel([toolCalls([call("memory_write", { key: "", value: 3 })]), text("gave up")])
    const store = inMemoryStore()
    expect(await agent("a").model(model).memory(store).run("x")).toBe("gave up")
    expect(model.requests[1]!.messages.at(-1)!.content).toContain("Invalid arguments")
    expect(await store.search("anything", 5)).toEqual([])
  })
})

describe("structured output through submit", () => {
  const Slots = Schema.Struct({ city: Schema.String, nights: Schema.Int })

  it("ends the run with the decoded arguments of submit, after the skill's tools", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel([
      toolCalls([call("add", { a: 1, b: 2 })]),
      toolCalls([call("submit", '{"city":"Lyon","nights":3}')])
    ])
    const a = agent("booking", { output: Slots }).model(model).tools({ add })
    expect(await a.run("Book Lyon for 3 nights")).toEqual({ city: "Lyon", nights: 3 })
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["add", "submit"])
    expect(model.requests[0]!.toolChoice).toBe("required")
  })

  it("feeds an invalid submission back within the budget, then fails with OutputInvalid", async () => {
    const model = scriptedModel([toolCalls([call("submit", { city: "Lyon" })]), toolCalls([call("submit", { city: "Lyon", nights: "three" })])])
    const a = agent("booking", { output: Slots }).model(model).budget({ maxTurns: 2 })
    const error = failureOf(await runExit(a.runEffect("Book Lyon")))
    expect(error).toMatchObject({ _tag: "OutputInvalid", raw: '{"city":"Lyon","nights":"three"}' })
    const feedback = model.requests[1]!.messages.at(-1)!
    expect(feedback).toMatchObject({ role: "tool", name: "submit" })
    expect(feedback.content).toContain('["nights"]')
  })

  it("takes a skill-level output Schema over the agent's", async () => {
    const Number_ = Schema.Struct({ n: Schema.Finite })
    const model = scriptedModel([toolCalls([call("submit", { n: 7 })])])
    const a = agent("typed", { output: Number_ })
      .model(model)
      .skills(() => [skill("count").knowledge("facts", "facts", () => "").output(Number_)])
    expect(await a.run("x")).toEqual({ n: 7 })
  })

  it("also accepts a final text that decodes into the output Schema", async () => {
    const model = scriptedModel([text('{"city":"Paris","nights":1}')])
    expect(await agent("booking", { output: Slots }).model(model).run("Paris one night")).toEqual({ city: "Paris", nights: 1 })
  })
})
