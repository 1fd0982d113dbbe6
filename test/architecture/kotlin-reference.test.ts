/**
 * The Kotlin reference (Agents.KT), scenario by scenario. Each test names what the reference documents
 * (its wiki page "Model and Tool Calling", its README and its own tests) and checks that our DSL
 * expresses it and behaves so; where we differ on purpose, the test pins our behaviour and the
 * difference is listed in docs/guide/migration.md ("From Agents.KT: what behaves differently").
 * Everything runs on scripted models: no network, no clock.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  AgentConfigError,
  agent,
  branch,
  defaultBudget,
  forum,
  inMemoryStore,
  loop,
  type MemoryEntry,
  type MemoryStore,
  ModelClient,
  ModelError,
  parallel,
  pipeline,
  Recovery,
  skill,
  text,
  tool,
  toolCalls
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const add = tool("add", { description: "Add two numbers: a + b", args: Operands, run: ({ a, b }) => a + b })
const multiply = tool("multiply", { description: "Multiply two numbers: a * b", args: Operands, run: ({ a, b }) => a * b })
const lookup = tool("lookup", { description: "Look something up", args: Schema.Struct({ query: Schema.String }), run: () => "data" })
const failure = (promise: Promise<unknown>) => promise.then((value) => expect.fail(`expected a failure, got ${JSON.stringify(value)}`), (error: unknown) => error)
/** The content of every tool message of a request. */
const toolMessages = (request: { readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }> } | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => m.content)
const systemOf = (request: { readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }> } | undefined) =>
  request?.messages.find((m) => m.role === "system")?.content ?? ""
const chooseSkill = (name: string) => toolCalls([{ id: "r1", name: "choose_skill", arguments: { skill: name } }])

describe("Kotlin: agent definition and the agentic loop", () => {
  it("the calculator: the model calls add, then multiply, then answers; onToolUse sees each call with its args and result", async () => {
    const model = scriptedModel([
      toolCalls([{ id: "c1", name: "add", arguments: { a: 3, b: 5 } }]),
      toolCalls([{ id: "c2", name: "multiply", arguments: { a: 8, b: 2 } }]),
      text("The result of (3 + 5) * 2 is 16.")
    ])
    const uses: Array<unknown> = []
    const calculator = agent("calculator")
      .prompt("You are a calculator. Use the provided tools to compute the answer.")
      .model(model)
      .budget({ maxTurns: 5 })
      .tools({ add, multiply })
      .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
      .onToolUse(({ tool, args, result }) => void uses.push([tool, args, result]))
    expect(await calculator.run("What is (3 + 5) * 2?")).toBe("The result of (3 + 5) * 2 is 16.")
    expect(uses).toEqual([["add", { a: 3, b: 5 }, 8], ["multiply", { a: 8, b: 2 }, 16]])
    expect(model.requests).toHaveLength(3) // two turns with tools, one final answer
  })

  it("ModelClient is a one-method interface: a lambda answering Text(\"42\") is the whole mock", async () => {
    const mock = ModelClient.fromFunction(() => text("42"))
    const literal: ModelClient = { chat: () => Effect.succeed(text("42")) }
    for (const client of [mock, literal]) {
      const a = agent("test-agent").model(client).tools({ lookup }).skills(({ lookup }) => [skill("answer", "Give an answer").tools(lookup)])
      expect(await a.run("question")).toBe("42")
    }
  })

  it("the first request has the system prompt (agent prompt, skill, each tool's name and description) and the input verbatim as the user message", async () => {
    const model = scriptedModel(text("done"))
    const a = agent("a").prompt("You are a helpful assistant.").model(model).tools({ lookup })
      .skills(({ lookup }) => [skill("answer", "Give an answer").tools(lookup)])
    await a.run("user task")
    const [system, user] = model.requests[0]!.messages
    expect(system?.role).toBe("system")
    expect(system?.content).toContain("You are a helpful assistant.")
    expect(system?.content).toContain("lookup")
    expect(system?.content).toContain("Look something up")
    expect(user).toEqual({ role: "user", content: "user task" })
  })

  it("a tool's result goes back to the model as a 'tool' message on the next turn", async () => {
    const reverse = tool("reverse", { args: Schema.Struct({ text: Schema.String }), run: ({ text }) => [...text].reverse().join("") })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "reverse", arguments: { text: "hello" } }]), text("olleh")])
    const a = agent("a").model(model).tools({ reverse }).skills(({ reverse }) => [skill("s", "s").tools(reverse)])
    expect(await a.run("hello")).toBe("olleh")
    expect(toolMessages(model.requests[1])).toEqual(["olleh"])
  })

  it("a skill without tools is deterministic: implementedBy runs and the model is never called, even when the agent has one", async () => {
    const model = scriptedModel([])
    const a = agent("a").model(model).skills(() => [skill("s", "s").implementedBy((input: string) => `lambda: ${input}`)])
    expect(await a.run("hello")).toBe("lambda: hello")
    expect(model.requests).toHaveLength(0)
  })
})

describe("Kotlin: per-skill tool allowlists", () => {
  const destroy = tool("delete_all", { description: "Delete every record", args: Schema.Struct({}), run: () => "deleted" })

  it("a tool of the agent that the skill does not list is refused: the error names the skill and lists only the allowed tools", async () => {
    let deleted = false
    const spied = tool("delete_all", { args: Schema.Struct({}), run: () => ((deleted = true), "deleted") })
    const model = scriptedModel(toolCalls([{ id: "c1", name: "delete_all", arguments: {} }]))
    const a = agent("a").model(model).tools({ lookup, delete_all: spied })
      .skills(({ lookup }) => [skill("answer", "Answer").tools(lookup)])
    const error = await failure(a.run("please use delete_all"))
    expect(error).toMatchObject({ _tag: "ToolNotAllowed", skill: "answer", tool: "delete_all", allowed: ["lookup"] })
    expect(String((error as Error).message)).toMatch(/answer[\s\S]*Allowed: lookup$/)
    expect(deleted).toBe(false)
  })

  it("cross-skill access: two skills with disjoint tools on one agent cannot reach each other's", async () => {
    const model = scriptedModel(toolCalls([{ id: "c1", name: "delete_all", arguments: {} }]))
    const a = agent("a").model(model).tools({ lookup, delete_all: destroy })
      .skills(({ lookup, delete_all }) => [
        skill("admin", "Administer").when((input) => input.startsWith("admin:")).tools(delete_all),
        skill("read", "Read").tools(lookup)
      ])
    expect(await failure(a.run("look it up"))).toMatchObject({ _tag: "ToolNotAllowed", skill: "read", allowed: ["lookup"] })
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(["lookup"])
  })

  it("tools(...) is typo-safe: an unregistered tool does not compile, and untyped callers are refused at construction", () => {
    expect(() =>
      agent("a").tools({ add })
        // @ts-expect-error `multiply` is not registered: it has no handle
        .skills(({ multiply }) => [skill("s").tools(multiply)])
    ).toThrow(AgentConfigError)
    expect(() => agent("a").tools({ add }).skills(() => [(skill("s").tools as (...h: Array<unknown>) => any)(multiply)])).toThrow(AgentConfigError)
  })

  it("escalate and throwException are on every agent but reach the model only in skills that list them", async () => {
    const model = scriptedModel([text("a"), text("b")])
    const plain = agent("plain").model(model).tools({ lookup }).skills(({ lookup }) => [skill("s").tools(lookup)])
    const fixer = agent("fixer").model(model).skills(({ escalate, throwException }) => [skill("fix", "Fix JSON").tools(escalate, throwException)])
    await plain.run("x")
    await fixer.run("y")
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(["lookup"])
    expect(model.requests[1]?.tools.map((t) => t.name).sort()).toEqual(["escalate", "throwException"])
  })
})

describe("Kotlin: skill selection and routing", () => {
  it("predicate routing (skillSelection { if (input.startsWith(\"UP:\")) \"upper\" else \"lower\" }) is .when on a skill plus a fallback", async () => {
    const chosen: Array<string> = []
    const a = agent("assistant")
      .skills(() => [
        skill("upper", "Convert text to uppercase").when((input) => input.startsWith("UP:")).implementedBy((input: string) => input.toUpperCase()),
        skill("lower", "Convert text to lowercase").implementedBy((input: string) => input.toLowerCase())
      ])
      .onSkillChosen(({ skill }) => void chosen.push(skill))
    expect(await a.run("UP:hello")).toBe("UP:HELLO")
    expect(await a.run("HELLO")).toBe("hello")
    expect(chosen).toEqual(["upper", "lower"])
  })

  it("LLM routing: one routing call whose prompt has every candidate's name and description, then the chosen skill runs; onSkillChosen names it", async () => {
    const model = scriptedModel([chooseSkill("upper"), text("HELLO WORLD")])
    const chosen: Array<unknown> = []
    const a = agent("a").model(model)
      .skills(() => [skill("upper", "Convert text to uppercase").chat(), skill("lower", "Convert text to lowercase").chat()])
      .onSkillChosen(({ skill, how }) => void chosen.push([skill, how]))
    expect(await a.run("Make this uppercase: hello world")).toBe("HELLO WORLD")
    expect(chosen).toEqual([["upper", "model"]])
    const routing = systemOf(model.requests[0])
    for (const fragment of ["upper", "Convert text to uppercase", "lower", "Convert text to lowercase"]) expect(routing).toContain(fragment)
    // Difference: the choice is a forced `choose_skill` call with an enum of the names, not free text.
    expect(model.requests[0]?.toolChoice).toEqual({ tool: "choose_skill" })
  })

  it("LLM routing is skipped when there is one skill, and when a predicate decides", async () => {
    const single = scriptedModel(text("done"))
    await agent("a").model(single).skills(() => [skill("only-skill", "desc").chat()]).run("input")
    expect(single.requests).toHaveLength(1)
    const decided = scriptedModel(text("done"))
    await agent("b").model(decided)
      .skills(() => [skill("upper", "uppercase").when(() => true).chat(), skill("lower", "lowercase").chat()])
      .run("input")
    expect(decided.requests).toHaveLength(1)
  })

  it("a routing answer naming no skill fails the run (there IllegalStateException, here SkillRoutingFailed), text included", async () => {
    const twoSkills = (model: ModelClient) => agent("a").model(model).skills(() => [skill("upper", "uppercase").chat(), skill("lower", "lowercase").chat()])
    expect(await failure(twoSkills(scriptedModel(chooseSkill("nonexistent"))).run("input"))).toMatchObject({ _tag: "SkillRoutingFailed" })
    // Difference: the reference's router reads a Text answer ("upper"); here a text answer is refused.
    expect(await failure(twoSkills(scriptedModel(text("upper"))).run("input"))).toMatchObject({ _tag: "SkillRoutingFailed" })
  })

  it("difference: several deterministic skills, no predicate, no model — the reference takes the first, here the run fails saying to add predicates", async () => {
    const undecided = agent("a").skills(() => [
      skill("first", "first skill").implementedBy((input: string) => `first: ${input}`),
      skill("second", "second skill").implementedBy((input: string) => `second: ${input}`)
    ])
    expect(await failure(undecided.run("hello"))).toBeInstanceOf(ModelError)
    // The reference's first-match, stated: a predicate on every skill but the last.
    const firstMatch = agent("a").skills(() => [
      skill("first", "first skill").when(() => true).implementedBy((input: string) => `first: ${input}`),
      skill("second", "second skill").implementedBy((input: string) => `second: ${input}`)
    ])
    expect(await firstMatch.run("hello")).toBe("first: hello")
  })

  it("difference: the routing call is a turn of the budget here (the reference runs it before the loop, uncounted)", async () => {
    const a = (maxTurns: number) => agent("a").model(scriptedModel([chooseSkill("upper"), text("HELLO")])).budget({ maxTurns })
      .skills(() => [skill("upper", "uppercase").chat(), skill("lower", "lowercase").chat()])
    expect(await failure(a(1).run("hello"))).toMatchObject({ _tag: "BudgetExceeded" })
    expect(await a(2).run("hello")).toBe("HELLO")
  })
})

describe("Kotlin: knowledge", () => {
  it("knowledge is a tool the model calls, loaded lazily: its name is in the system prompt, its text only in the tool message", async () => {
    let loads = 0
    const model = scriptedModel([toolCalls([{ id: "k1", name: "style-guide", arguments: {} }]), text("done")])
    const a = agent("a").model(model)
      .skills(() => [skill("s", "desc").knowledge("style-guide", "Coding style rules", () => ((loads += 1), "Prefer val over var."))])
    expect(loads).toBe(0)
    await a.run("task")
    expect(loads).toBe(1)
    expect(systemOf(model.requests[0])).toContain("style-guide")
    expect(systemOf(model.requests[0])).not.toContain("Prefer val over var.")
    expect(model.requests[0]?.tools.map((t) => [t.name, t.description])).toEqual([["style-guide", "Coding style rules"]])
    expect(toolMessages(model.requests[1])).toEqual(["Prefer val over var."])
  })

  it("difference: onKnowledgeUsed fires with the knowledge's name (and its length; the text is the ToolUse result), and knowledge calls fire onToolUse too", async () => {
    const greet = tool("greet", { args: Schema.Struct({ name: Schema.String }), run: () => "Hi!" })
    const model = scriptedModel([
      toolCalls([{ id: "k1", name: "style-guide", arguments: {} }]),
      toolCalls([{ id: "c1", name: "greet", arguments: { name: "world" } }]),
      text("done")
    ])
    const knowledge: Array<unknown> = []
    const uses: Array<unknown> = []
    const knowledgeNames = new Set(["style-guide"])
    await agent("a").model(model).tools({ greet })
      .skills(({ greet }) => [skill("s", "desc").tools(greet).knowledge("style-guide", "Rules", () => "Use val.")])
      .onKnowledgeUsed(({ knowledge: name, characters }) => void knowledge.push([name, characters]))
      .onToolUse(({ tool, result }) => void uses.push([tool, result]))
      .run("task")
    expect(knowledge).toEqual([["style-guide", "Use val.".length]])
    expect(uses).toEqual([["style-guide", "Use val."], ["greet", "Hi!"]])
    // The reference's onToolUse (action tools only): skip the knowledge names.
    expect(uses.filter((u) => !knowledgeNames.has((u as [string])[0]))).toEqual([["greet", "Hi!"]])
  })

  it("difference: knowledge on a deterministic skill (the reference's toLlmContext) is refused; the implementation reads its data itself", () => {
    expect(() =>
      agent("coder").skills(() => [
        skill("write-code", "Writes code").knowledge("style-guide", "Style", () => "Prefer val.").implementedBy((spec: string) => `code for ${spec}`)
      ])
    ).toThrow(/knowledge needs an agentic skill/)
  })

  it("shared knowledge: loaders close over shared state, so every run (and every agent) sees the latest", async () => {
    const catalog = new Map([["products", "P01 Kotlin In Action"]])
    const reads = () => toolCalls([{ id: "k1", name: "products", arguments: {} }])
    const model = scriptedModel([reads(), text("first"), reads(), text("second")])
    const recommender = agent("recommender").model(model)
      .skills(() => [skill("recommend", "Recommend products").knowledge("products", "The catalog", () => catalog.get("products")!)])
    await recommender.run("electronics")
    catalog.set("products", "P04 USB-C Hub")
    await recommender.run("electronics")
    expect(toolMessages(model.requests[1])).toEqual(["P01 Kotlin In Action"])
    expect(toolMessages(model.requests[3])).toEqual(["P04 USB-C Hub"])
  })
})

describe("Kotlin: memory", () => {
  it("memory(bank) with a skill declared tools(): memory_read/write/search are available and fire onToolUse", async () => {
    const store = inMemoryStore()
    await store.write("preferences", "Known: user prefers dark mode")
    const model = scriptedModel([
      toolCalls([{ id: "m1", name: "memory_read", arguments: { key: "preferences" } }]),
      toolCalls([{ id: "m2", name: "memory_write", arguments: { key: "preferences", value: "Known: user prefers dark mode\nKnown: user uses Kotlin" } }]),
      text("done")
    ])
    const uses: Array<string> = []
    const memo = agent("memo-agent").memory(store).model(model)
      // The reference's `skill("work", "do work") { tools() }`: an agentic skill with no tools of its own.
      .skills(() => [skill("work", "do work").tools()])
      .onToolUse(({ tool }) => void uses.push(tool))
    expect(await memo.run("do something")).toBe("done")
    expect(uses).toEqual(["memory_read", "memory_write"])
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(["memory_read", "memory_write", "memory_search"])
    expect(toolMessages(model.requests[1])).toEqual(["Known: user prefers dark mode"])
    expect(await store.read("preferences")).toContain("user uses Kotlin")
    // A skill given nothing at all is still refused as a forgotten list.
    expect(() => agent("memo-agent").memory(store).skills(() => [skill("work", "do work")])).toThrow(/neither tools nor an implementation/)
  })

  it("memory persists across runs: what one run writes (or the bank was seeded with), the next run reads", async () => {
    const store = inMemoryStore()
    await store.write("fibonacci", "21|34")
    const model = scriptedModel([
      toolCalls([{ id: "m1", name: "memory_read", arguments: { key: "fibonacci" } }]),
      toolCalls([{ id: "m2", name: "memory_write", arguments: { key: "fibonacci", value: "34|55" } }]),
      text("55"),
      toolCalls([{ id: "m3", name: "memory_read", arguments: { key: "fibonacci" } }]),
      text("89")
    ])
    const fib = agent("fibonacci", { output: Schema.Finite }).memory(store).model(model).skills(() => [skill("fib", "Generate next Fibonacci number").tools()])
    expect(await fib.run("do it")).toBe(55)
    expect(await fib.run("do it")).toBe(89)
    expect(toolMessages(model.requests[4])).toEqual(["34|55"])
  })

  it("difference: a MemoryBank is keyed by agent name, so agents sharing it are isolated; a shared MemoryStore is shared, and a key prefix isolates", async () => {
    const shared = inMemoryStore()
    const scoped = (store: MemoryStore, agentName: string): MemoryStore => ({
      read: (key) => store.read(`${agentName}/${key}`),
      write: (key, value) => store.write(`${agentName}/${key}`, value),
      // inMemoryStore answers synchronously; a store answering with Effects would map them instead.
      search: (query, limit) => (store.search(query, limit) as ReadonlyArray<MemoryEntry>).filter((e) => e.key.startsWith(`${agentName}/`))
    })
    const writer = (name: string, store: MemoryStore, value: string) =>
      agent(name).memory(store).model(scriptedModel([toolCalls([{ id: "w", name: "memory_write", arguments: { key: "notes", value } }]), text("ok")]))
        .skills(() => [skill("s", "s").tools()])
    await writer("agent-a", shared, "from-a").run("x")
    await writer("agent-b", shared, "from-b").run("x")
    expect(await shared.read("notes")).toBe("from-b") // one key space
    const bank = inMemoryStore()
    await writer("agent-a", scoped(bank, "agent-a"), "from-a").run("x")
    await writer("agent-b", scoped(bank, "agent-b"), "from-b").run("x")
    expect([await bank.read("agent-a/notes"), await bank.read("agent-b/notes")]).toEqual(["from-a", "from-b"])
  })
})

describe("Kotlin: tool error routing", () => {
  it("arguments that do not decode never reach the tool: onError { invalidArgs { raw, error -> } } gets both, and by default the model is told", async () => {
    let ran = false
    const typed = tool("add", { args: Operands, run: ({ a, b }) => ((ran = true), a + b) })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "add", arguments: { a: "three", b: 2 } }]), text("sorry")])
    const seen: Array<unknown> = []
    const a = agent("a").model(model).tools({ add: typed }).skills(({ add }) => [skill("s").tools(add)])
      .recover({ invalidArgs: ({ raw, error }) => ((seen.push([raw, String(error)])), Recovery.feedback) })
    expect(await a.run("x")).toBe("sorry")
    expect(ran).toBe(false)
    expect(seen).toHaveLength(1)
    expect(seen[0]).toEqual([{ a: "three", b: 2 }, expect.stringContaining("Expected number")])
    expect(toolMessages(model.requests[1])[0]).toMatch(/Invalid arguments for tool "add"/)
  })

  it("executionError { retry(maxAttempts = 3) }: a flaky tool is run again and succeeds; onToolUse fires once, with the recovered result", async () => {
    let calls = 0
    const flaky = tool("flaky", { args: Schema.Struct({}), run: () => { calls += 1; if (calls === 1) throw new Error("Network error"); return "recovered" } })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "flaky", arguments: {} }]), text("done")])
    const uses: Array<string> = []
    const a = agent("a").model(model).tools({ flaky }).skills(({ flaky }) => [skill("s").tools(flaky)])
      .recoverTool("flaky", { executionError: () => Recovery.retry(3) })
      .onToolUse(({ tool, result }) => void uses.push(`${tool}=${String(result)}`))
    expect(await a.run("input")).toBe("done")
    expect(calls).toBe(2)
    expect(uses).toEqual(["flaky=recovered"])
  })

  it("priority: the tool's own onError > the agent's onToolError(name) > the defaults", async () => {
    const boom = () => { throw new Error("boom") }
    const own = tool("own", { args: Schema.Struct({}), run: boom, recover: { executionError: () => Recovery.substitute("tool level") } })
    const named = tool("named", { args: Schema.Struct({}), run: boom })
    const bare = tool("bare", { args: Schema.Struct({}), run: boom })
    const model = scriptedModel([
      toolCalls([{ id: "c1", name: "own", arguments: {} }, { id: "c2", name: "named", arguments: {} }, { id: "c3", name: "bare", arguments: {} }]),
      text("done")
    ])
    await agent("a").model(model).tools({ own, named, bare })
      .skills(({ own, named, bare }) => [skill("s").tools(own, named, bare)])
      .recoverTool("own", { executionError: () => Recovery.substitute("agent level") })
      .recoverTool("named", { executionError: () => Recovery.substitute("agent level") })
      .recover({ executionError: () => Recovery.substitute("defaults") })
      .run("x")
    expect(toolMessages(model.requests[1])).toEqual(["tool level", "agent level", "defaults"])
  })

  it("difference: with no handler the reference rethrows the tool's exception; here the model is told, and Recovery.fail gives the reference's behaviour", async () => {
    const broken = tool("broken", { args: Schema.Struct({}), run: () => { throw new Error("Boom") } })
    const build = (model: ModelClient) => agent("a").model(model).tools({ broken }).skills(({ broken }) => [skill("s").tools(broken)])
    const told = scriptedModel([toolCalls([{ id: "c1", name: "broken", arguments: {} }]), text("it failed")])
    expect(await build(told).run("input")).toBe("it failed")
    expect(toolMessages(told.requests[1])[0]).toContain("Boom")
    const strict = build(scriptedModel(toolCalls([{ id: "c1", name: "broken", arguments: {} }]))).recover({ executionError: () => Recovery.fail })
    expect(await failure(strict.run("input"))).toMatchObject({ _tag: "ToolFailed", tool: "broken" })
  })

  it("difference: when retries run out the reference throws ToolExecutionException; here the error goes to the model, and a handler reading `attempt` fails instead", async () => {
    let calls = 0
    const alwaysFail = tool("always-fail", { args: Schema.Struct({}), run: () => { calls += 1; throw new Error("Fail") } })
    const build = (model: ModelClient) => agent("a").model(model).tools({ "always-fail": alwaysFail }).skills((h) => [skill("s").tools(h["always-fail"])])
    const told = scriptedModel([toolCalls([{ id: "c1", name: "always-fail", arguments: {} }]), text("gave up")])
    expect(await build(told).recoverTool("always-fail", { executionError: () => Recovery.retry(2) }).run("input")).toBe("gave up")
    expect(calls).toBe(3) // the first run and two retries
    calls = 0
    const strict = build(scriptedModel(toolCalls([{ id: "c1", name: "always-fail", arguments: {} }])))
      .recoverTool("always-fail", { executionError: ({ attempt }) => (attempt <= 2 ? Recovery.retry(2) : Recovery.fail) })
    expect(await failure(strict.run("input"))).toMatchObject({ _tag: "ToolFailed", tool: "always-fail" })
    expect(calls).toBe(3)
  })

  it("escalation from a fixer is fed back to the model as the tool result, with its reason and severity", async () => {
    const strict = tool("strict", { args: Schema.Struct({}), run: () => { throw new Error("Bad args") } })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "strict", arguments: {} }]), text("handled")])
    const a = agent("a").model(model).tools({ strict }).skills(({ strict }) => [skill("s").tools(strict)])
      .recoverTool("strict", { executionError: () => Recovery.escalate("Cannot fix schema", "CRITICAL") })
    expect(await a.run("input")).toBe("handled")
    const [result] = toolMessages(model.requests[1])
    expect(result).toContain("Cannot fix schema")
    expect(result).toContain("CRITICAL")
  })

  it("fix(agent = jsonFixer): the fixer is an agent, called from the handler; the tool runs with what it returns", async () => {
    const jsonFixer = agent("json-fixer").skills(() => [
      skill("cleanup", "Fixes common JSON issues").implementedBy((input: string) => input.replace(",}", "}").replace(",]", "]"))
    ])
    const parse = tool("parse", { args: Schema.Struct({ json: Schema.String }), run: ({ json }) => Object.keys(JSON.parse(json)).length })
    const model = scriptedModel([toolCalls([{ id: "c1", name: "parse", arguments: '{"json": "{\\"a\\":1,}"}' }]), text("1 key")])
    const uses: Array<unknown> = []
    const a = agent("a").model(model).tools({ parse }).skills(({ parse }) => [skill("s").tools(parse)])
      .recoverTool("parse", {
        executionError: async ({ args }) => Recovery.fixed({ json: await jsonFixer.run((args as { json: string }).json) })
      })
      .onToolUse(({ args, result }) => void uses.push([args, result]))
    expect(await a.run("count")).toBe("1 key")
    expect(uses).toEqual([[{ json: '{"a":1}' }, 1]])
  })

  it("the JSON key counter: the tool fails, a model-driven fixer calls escalate with corrected JSON, the model reads it and retries", async () => {
    const fixerModel = scriptedModel(toolCalls([{ id: "e1", name: "escalate", arguments: { reason: 'Unquoted keys. Corrected: {"name":"world","age":30}' } }]))
    const fixer = agent("json-fixer").prompt("Call escalate with the corrected JSON.").model(fixerModel).budget({ maxTurns: 3 })
      .skills(({ escalate }) => [skill("fix", "Analyze and escalate JSON errors").tools(escalate)])
    const countKeys = tool("calculateNumberOfKeys", {
      description: "Count top-level keys in a JSON object",
      args: Schema.Struct({ json: Schema.String }),
      run: ({ json }) => {
        const keys = [...json.matchAll(/"([^"]+)"\s*:/g)]
        if (keys.length === 0) throw new Error("No valid keys — unquoted keys?")
        return keys.length
      }
    })
    const model = scriptedModel([
      toolCalls([{ id: "c1", name: "calculateNumberOfKeys", arguments: { json: "{name: world, age: 30}" } }]),
      toolCalls([{ id: "c2", name: "calculateNumberOfKeys", arguments: { json: '{"name":"world","age":30}' } }]),
      text("2")
    ])
    const analyst = agent("json-analyst").model(model).budget({ maxTurns: 10 }).tools({ calculateNumberOfKeys: countKeys })
      .skills(({ calculateNumberOfKeys }) => [skill("solve", "Analyze JSON using tools").tools(calculateNumberOfKeys)])
      .recoverTool("calculateNumberOfKeys", {
        // fix(agent = fixer): the fixer's `escalate` ends its run with Escalated, which becomes the escalation.
        executionError: ({ args, cause }) =>
          fixer.runEffect(`${JSON.stringify(args)} failed: ${String(cause)}`).pipe(
            Effect.map(() => Recovery.feedback),
            Effect.catchTag("Escalated", (e) => Effect.succeed(Recovery.escalate(e.reason, e.severity))),
            Effect.orElseSucceed(() => Recovery.feedback)
          )
      })
    expect(await analyst.run("How many keys? {name: world, age: 30}")).toBe("2")
    expect(toolMessages(model.requests[1])[0]).toContain('Corrected: {\\"name\\":\\"world\\",\\"age\\":30}')
    expect(toolMessages(model.requests[1])[0]).toContain("HIGH") // escalate's default severity
    expect(toolMessages(model.requests[2])[1]).toBe("2")
  })

  it("throwException ends the run at once and does not fire onToolUse", async () => {
    const model = scriptedModel([toolCalls([{ id: "t1", name: "throwException", arguments: { reason: "binary garbage" } }]), text("never")])
    const uses: Array<string> = []
    const fixer = agent("json-fixer").model(model).skills(({ throwException }) => [skill("fix", "Fix JSON").tools(throwException)])
      .onToolUse(({ tool }) => void uses.push(tool))
    expect(await failure(fixer.run("\u0000\u0001"))).toMatchObject({ _tag: "ExceptionThrown", reason: "binary garbage" })
    expect(uses).toEqual([])
    expect(model.requests).toHaveLength(1)
  })
})

describe("Kotlin: budgets", () => {
  const noop = tool("noop", { args: Schema.Struct({}), run: () => "ok" })
  const looping = () => scriptedModel(() => toolCalls([{ name: "noop", arguments: {} }]))

  it("budget { maxTurns = 3 }: a model that never stops calling tools ends with BudgetExceeded after three model calls", async () => {
    const model = looping()
    const a = agent("a").model(model).budget({ maxTurns: 3 }).tools({ noop }).skills(({ noop }) => [skill("s").tools(noop)])
    expect(await failure(a.run("input"))).toMatchObject({ _tag: "BudgetExceeded" })
    expect(model.requests).toHaveLength(3)
  })

  it("the default caps runaway loops at 8 turns", async () => {
    expect(defaultBudget.maxTurns).toBe(8)
    const model = looping()
    const a = agent("a").model(model).tools({ noop }).skills(({ noop }) => [skill("s").tools(noop)])
    expect(await failure(a.run("input"))).toMatchObject({ _tag: "BudgetExceeded" })
    expect(model.requests).toHaveLength(8)
  })
})

describe("Kotlin: typed input and output", () => {
  it("agent<String, Int> (transformOutput { it.trim().toInt() }): an output Schema decodes the final text", async () => {
    const compute = agent("calculator", { output: Schema.Finite }).model(scriptedModel(text(" 1024 "))).skills(() => [skill("solve", "Evaluate").chat()])
    const result: number = await compute.run("Calculate 2^10")
    expect(result).toBe(1024)
  })

  it("compute then asInt: a deterministic stage turns prose into a number", async () => {
    const compute = agent("calculator").model(scriptedModel(text("The result is 625.")))
    const asInt = agent("as-int", { output: Schema.Finite }).skills(() => [
      skill("parse", "Parse integer from text").implementedBy((input: string) => Number(/-?\d+/.exec(input)![0]))
    ])
    expect(await pipeline("p", compute, asInt).run("Calculate ((15 + 35) / 2)^2")).toBe(625)
  })
})

describe("Kotlin: composition", () => {
  const RawText = Schema.Struct({ text: Schema.String })
  const Specification = Schema.Struct({ endpoints: Schema.Array(Schema.String) })
  const CodeBundle = Schema.Struct({ source: Schema.String })
  const ReviewResult = Schema.Struct({ approved: Schema.Boolean })

  it("parse then generate then review: each typed output is the next typed input", async () => {
    const parse = agent("parse", { input: RawText, output: Specification }).skills(() => [
      skill("parse-spec", "Splits raw text").implementedBy((input: typeof RawText.Type) => ({ endpoints: input.text.split(",").map((s) => s.trim()) }))
    ])
    const generate = agent("generate", { input: Specification, output: CodeBundle }).skills(() => [
      skill("gen-code", "Generates stubs").implementedBy((spec: typeof Specification.Type) => ({ source: spec.endpoints.map((e) => `fun ${e}() {}`).join("\n") }))
    ])
    const review = agent("review", { input: CodeBundle, output: ReviewResult }).skills(() => [
      skill("review-code", "Approves non-empty code").implementedBy((code: typeof CodeBundle.Type) => ({ approved: code.source.trim() !== "" }))
    ])
    expect(await pipeline("p", parse, generate, review).run({ text: "getUsers, createUser, deleteUser" })).toEqual({ approved: true })
  })

  it("quick / deep then synthesizer: every member gets the same input, the next stage gets the list of outputs", async () => {
    const seen: Array<string> = []
    const reviewer = (name: string) => agent(name).skills(() => [skill(name, name).implementedBy((code: string) => (seen.push(`${name}:${code}`), `${name} ok`))])
    const synthesizer = agent("synthesizer", { input: Schema.Tuple([Schema.String, Schema.String]) }).skills(() => [
      skill("merge", "Merges all reviews").implementedBy((reviews: readonly [string, string]) => reviews.join("; "))
    ])
    expect(await pipeline("p", parallel("reviews", [reviewer("quick"), reviewer("deep")]), synthesizer).run("code")).toBe("quick ok; deep ok")
    expect(seen.sort()).toEqual(["deep:code", "quick:code"])
  })

  it("initiator * analyst * captain: participants answer the same input, the captain delivers the verdict", async () => {
    const participant = (name: string, answer: string) => agent(name).model(scriptedModel(text(answer)))
    const captainModel = scriptedModel(text("4"))
    const captain = agent("captain").model(captainModel)
    const math = forum("math", [participant("initiator", "2+2=4"), participant("analyst", "four")], captain)
    expect(await math.run("What is 2+2?")).toBe("4")
    const brief = captainModel.requests[0]?.messages.at(-1)?.content ?? ""
    expect(brief).toContain("2+2=4") // here the captain also sees the answers
    expect(brief).toContain("four")
  })

  it("refine.loop { r -> if (r.score >= 90) null else r }: loop with until (and a cap, which the reference does not have)", async () => {
    const Draft = Schema.Struct({ score: Schema.Finite })
    const refine = agent("refine", { input: Draft, output: Draft }).skills(() => [
      skill("refine", "Improve").implementedBy((d: typeof Draft.Type) => ({ score: d.score + 30 }))
    ])
    expect(await loop("refine-loop", refine, { until: (r) => r.score >= 90, maxIterations: 10 }).run({ score: 0 })).toEqual({ score: 90 })
    expect(await failure(loop("capped", refine, { until: () => false, maxIterations: 2 }).run({ score: 0 }))).toMatchObject({ _tag: "LoopLimitExceeded" })
  })

  it("reviewer.branch { on<Passed>() then deployer; on<Failed>() then failReporter; on<NeedsRevision>() then (reviser then …) }", async () => {
    const Review = Schema.Union([
      Schema.TaggedStruct("Passed", { score: Schema.Finite }),
      Schema.TaggedStruct("Failed", { issues: Schema.Array(Schema.String) }),
      Schema.TaggedStruct("NeedsRevision", { feedback: Schema.String })
    ])
    const Passed = Schema.TaggedStruct("Passed", { score: Schema.Finite })
    const NeedsRevision = Schema.TaggedStruct("NeedsRevision", { feedback: Schema.String })
    const reviewer = agent("reviewer", { output: Review }).skills(() => [
      skill("review", "Review").implementedBy((code: string): typeof Review.Type =>
        code === "good" ? { _tag: "Passed", score: 0.9 } : code === "bad" ? { _tag: "Failed", issues: ["npe"] } : { _tag: "NeedsRevision", feedback: "rename" })
    ])
    const deployer = agent("deployer", { input: Passed }).skills(() => [skill("deploy", "Deploy").implementedBy((p: typeof Passed.Type) => `deployed (${p.score})`)])
    const reviser = agent("reviser", { input: NeedsRevision }).skills(() => [skill("revise", "Revise").implementedBy((n: typeof NeedsRevision.Type) => `revised: ${n.feedback}`)])
    const announce = agent("announce").skills(() => [skill("announce", "Announce").implementedBy((s: string) => s.toUpperCase())])
    const afterReview = branch("after-review", reviewer, {
      Passed: deployer,
      Failed: (f) => `failed: ${f.issues.join(", ")}`,
      NeedsRevision: pipeline("revise", reviser, announce)
    })
    expect(await afterReview.run("good")).toBe("deployed (0.9)")
    expect(await afterReview.run("bad")).toBe("failed: npe")
    expect(await afterReview.run("meh")).toBe("REVISED: RENAME")
  })

  it("onSkillChosen fires for the agents inside a composite, at each loop iteration", async () => {
    const chosen: Array<string> = []
    const counter = agent("counter", { input: Schema.Finite, output: Schema.Finite })
      .skills(() => [skill("increment", "Add one").implementedBy((n: number) => n + 1)])
      .onSkillChosen(({ agent, skill }) => void chosen.push(`${agent}/${skill}`))
    expect(await loop("count", counter, { until: (n) => n >= 3, maxIterations: 5 }).run(0)).toBe(3)
    expect(chosen).toEqual(["counter/increment", "counter/increment", "counter/increment"])
  })

  it("an unhandled variant fails at invocation in the reference; here a missing case does not compile, and for untyped callers fails with BranchNotRouted", async () => {
    const Verdict = Schema.Union([Schema.TaggedStruct("Yes", {}), Schema.TaggedStruct("No", {})])
    const judge = agent("judge", { output: Verdict }).skills(() => [skill("judge", "Judge").implementedBy((): typeof Verdict.Type => ({ _tag: "No" }))])
    // @ts-expect-error Property 'No' is missing: every variant needs a case
    const partial = branch("partial", judge, { Yes: () => "yes" })
    expect(await failure((partial as unknown as { run(input: string): Promise<unknown> }).run("x"))).toMatchObject({ _tag: "BranchNotRouted" })
  })

  it("difference: the reference places an agent instance in one structure only; here agents are immutable values, reusable across composites, refused only twice in one fan-out", () => {
    const a = agent("a").model(scriptedModel(text("x")))
    const b = agent("b").model(scriptedModel(text("y")))
    expect(() => [pipeline("one", a, b), pipeline("two", b, a)]).not.toThrow()
    expect(() => parallel("twice", [a, a])).toThrow(AgentConfigError)
  })
})

describe("Kotlin: agents as tools", () => {
  it("an agent is a tool of another: its input is the tool's arguments, its output the tool's result", async () => {
    const researcher = agent("researcher").skills(() => [skill("find", "Find facts").implementedBy((topic: string) => `facts about ${topic}`)])
    const model = scriptedModel([toolCalls([{ id: "c1", name: "research", arguments: { input: "Effect" } }]), text("written")])
    const writer = agent("writer").model(model).tools({ research: researcher.asTool({ name: "research", description: "Find facts" }) })
    expect(await writer.run("write about Effect")).toBe("written")
    expect(toolMessages(model.requests[1])).toEqual(["facts about Effect"])
  })
})
