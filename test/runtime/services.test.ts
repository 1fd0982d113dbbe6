/**
 * Services at run time: tools, hooks, knowledge loaders, memory stores, scorers and recovery handlers
 * get what `.provide(layer)` (or `Effect.provide` around `runEffect`) supplies; tools declared without
 * `run` are implemented by swappable Layers; a Layer that fails to build is an `AgentConfigError`.
 */
import { Context, Effect, FileSystem, Layer, Ref, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { AgentConfigError, agent, fileKnowledge, ModelClient, Recovery, skill, text, tool, toolCalls, toolLayer } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

class Orders extends Context.Service<Orders, { readonly status: (id: string) => Effect.Effect<string> }>()("test/Orders") {}
class Audit extends Context.Service<Audit, Ref.Ref<ReadonlyArray<string>>>()("test/Audit") {}

const OrdersLive = Layer.succeed(Orders, { status: (id) => Effect.succeed(`order ${id} shipped`) })
const audit = () => Effect.runSync(Ref.make<ReadonlyArray<string>>([]))
const note = (line: string) => Effect.flatMap(Effect.service(Audit), (log) => Ref.update(log, (lines) => [...lines, line]))

const status = tool("status", {
  args: Schema.Struct({ id: Schema.String }),
  run: ({ id }) => Effect.flatMap(Effect.service(Orders), (orders) => orders.status(id))
})
const call = (name: string, args: unknown, id = `call_${name}`) => ({ id, name, arguments: args })

/** A model that calls `name` once, then answers with the tool's result. */
const callsOnce = (name: string, args: unknown) =>
  scriptedModel((request) => {
    const result = [...request.messages].reverse().find((m) => m.role === "tool")
    return result === undefined ? toolCalls([call(name, args)]) : text(result.content)
  })

describe("tools that require services", () => {
  it("get them from .provide(layer), and .run is then available", async () => {
    const support = agent("support").model(callsOnce("status", { id: "7" })).tools({ status }).provide(OrdersLive)
    expect(await support.run("where is order 7?")).toBe("order 7 shipped")
  })

  it("get them from Effect.provide around runEffect just as well", async () => {
    const support = agent("support").model(callsOnce("status", { id: "8" })).tools({ status })
    expect(await Effect.runPromise(support.runEffect("q").pipe(Effect.provide(OrdersLive)))).toBe("order 8 shipped")
  })

  it("leave the builder they were provided to unchanged", async () => {
    const support = agent("support").model(callsOnce("status", { id: "9" })).tools({ status })
    const provided = support.provide(OrdersLive)
    expect(provided).not.toBe(support)
    expect(await provided.run("q")).toBe("order 9 shipped")
    // Forced past the type: without Orders the tool fails, and the model is told so (default recovery).
    const unprovided = await Effect.runPromise(support.runEffect("q") as Effect.Effect<string, unknown>)
    expect(unprovided).not.toBe("order 9 shipped")
    expect(unprovided).toContain("test/Orders")
  })

  it("a provider Layer stands in for .model(...)", async () => {
    const model = ModelClient.layer(ModelClient.fromFunction(() => text("from the layer")))
    expect(await agent("a").provide(model).run("hi")).toBe("from the layer")
  })
})

describe("tools implemented by a Layer", () => {
  const find = tool("find", { description: "Find an order", args: Schema.Struct({ id: Schema.String }), success: Schema.String })
  const support = agent("support").model(callsOnce("find", { id: "42" })).tools({ find })

  it("swaps implementations without rebuilding the agent", async () => {
    const live = toolLayer(find, ({ id }) => Effect.flatMap(Effect.service(Orders), (orders) => orders.status(id)))
    const fake = toolLayer(find, ({ id }) => `fake ${id}`)
    expect(await support.provide(Layer.provide(live, OrdersLive)).run("q")).toBe("order 42 shipped")
    expect(await support.provide(fake).run("q")).toBe("fake 42")
    expect(await support.provide(toolLayer(find, async ({ id }) => `async ${id}`)).run("q")).toBe("async 42")
  })

  it("sends the declared tool to the model like any other", async () => {
    const model = callsOnce("find", { id: "1" })
    await agent("support").model(model).tools({ find }).provide(toolLayer(find, () => "x")).run("q")
    expect(model.requests[0]!.tools.map((t) => t.name)).toContain("find")
    expect(model.requests[0]!.tools.find((t) => t.name === "find")!.description).toBe("Find an order")
  })

  it("a failing implementation is a failed tool, routed by recovery", async () => {
    const broken = toolLayer(find, () => Effect.fail("database down"))
    const failing = agent("support").model(callsOnce("find", { id: "1" })).tools({ find }).recover({ executionError: () => Recovery.fail })
    const error = failureOf(await runExit(failing.provide(broken).runEffect("q")))
    expect(error).toMatchObject({ _tag: "ToolFailed", tool: "find" })
  })
})

describe("hooks, knowledge, memory, scorers and recovery handlers with services", () => {
  it("run hooks' Effects with the provided services", async () => {
    const log = audit()
    const support = agent("support")
      .model(callsOnce("status", { id: "1" }))
      .tools({ status })
      .onToolUse((event) => note(`used ${event.tool}`))
      .onRunEnd((event) => note(`end ${event.outcome._tag}`))
      .provide(Layer.merge(OrdersLive, Layer.succeed(Audit, log)))
    await support.run("q")
    expect(Effect.runSync(Ref.get(log))).toEqual(["used status", "end Success"])
  })

  it("loads fileKnowledge through the provided FileSystem", async () => {
    const files = FileSystem.layerNoop({ readFileString: (path) => Effect.succeed(`contents of ${path}`) })
    const support = agent("support")
      .model(callsOnce("faq", {}))
      .skills(() => [skill("faq", "Answer questions").knowledge("faq", "The FAQ", fileKnowledge("docs/faq.md"))])
      .provide(files)
    expect(await support.run("q")).toBe("contents of docs/faq.md")
  })

  it("uses a memory store whose methods are Effects requiring a service", async () => {
    const log = audit()
    const store = {
      read: (key: string) => Effect.as(note(`read ${key}`), "remembered"),
      write: () => undefined,
      search: () => []
    }
    const support = agent("support").model(callsOnce("memory_read", { key: "name" })).memory(store).provide(Layer.succeed(Audit, log))
    expect(await support.run("q")).toBe("remembered")
    expect(Effect.runSync(Ref.get(log))).toEqual(["read name"])
  })

  it("asks a recovery handler that requires a service", async () => {
    const log = audit()
    const failing = tool("failing", { args: Schema.Struct({}), run: () => Effect.fail("no") })
    const support = agent("support")
      .model(callsOnce("failing", {}))
      .tools({ failing })
      .recoverTool("failing", { executionError: ({ tool }) => Effect.as(note(`recover ${tool}`), Recovery.substitute("substituted")) })
      .provide(Layer.succeed(Audit, log))
    expect(await support.run("q")).toBe("substituted")
    expect(Effect.runSync(Ref.get(log))).toEqual(["recover failing"])
  })

  it("scores tools with a scorer that requires a service", async () => {
    const log = audit()
    const model = callsOnce("status", { id: "3" })
    const support = agent("support")
      .model(model)
      .tools({ status })
      .pickTools({ scorer: (_, t) => Effect.as(note(`score ${t.name}`), t.name === "status" ? 1 : 0) })
      .provide(Layer.mergeAll(OrdersLive, Layer.succeed(Audit, log)))
    expect(await support.run("q")).toBe("order 3 shipped")
    expect(Effect.runSync(Ref.get(log))).toContain("score status")
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["status"])
  })
})

describe("agents as tools", () => {
  it("a child agent's services come from its own .provide or from the caller's", async () => {
    const child = agent("child").tools({ status }).model(callsOnce("status", { id: "5" }))
    const parentModel = () => callsOnce("research", { input: "order 5?" })
    const viaCaller = agent("parent").model(parentModel()).tools({ research: child.asTool({ name: "research" }) }).provide(OrdersLive)
    expect(await viaCaller.run("q")).toBe("order 5 shipped")
    const viaChild = agent("parent").model(parentModel()).tools({ research: child.provide(OrdersLive).asTool({ name: "research" }) })
    expect(await viaChild.run("q")).toBe("order 5 shipped")
  })
})

describe("a Layer that fails to build", () => {
  it("fails the run with AgentConfigError naming the cause, and never crashes", async () => {
    const broken = Layer.effect(Orders, Effect.fail(new Error("no database URL")))
    const support = agent("support").model(callsOnce("status", { id: "1" })).tools({ status }).provide(broken)
    const error = failureOf(await runExit(support.runEffect("q")))
    expect(error).toBeInstanceOf(AgentConfigError)
    expect(error.message).toContain("no database URL")
    await expect(support.run("q")).rejects.toBeInstanceOf(AgentConfigError)
  })

  it("refuses a value that is not a Layer", () => {
    expect(() => agent("a").provide({} as never)).toThrow(AgentConfigError)
  })
})
