/**
 * Compile-time guarantees for services: what tools, hooks, loaders, stores, scorers and recovery
 * handlers require accumulates in the agent's type; `.provide(layer)` removes it; `run` is a function
 * only when nothing is missing, and otherwise a type error that names what is.
 */
import { Context, Effect, FileSystem, Layer, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import {
  agent,
  type AgentError,
  type AgentTypeError,
  fileKnowledge,
  type ModelClientService,
  openaiLayer,
  Recovery,
  skill,
  type Tool,
  tool,
  type ToolImplementation,
  toolLayer
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

class Database extends Context.Service<Database, { readonly find: (id: string) => Effect.Effect<string> }>()("test/Database") {}
class Audit extends Context.Service<Audit, { readonly log: (line: string) => Effect.Effect<void> }>()("test/Audit") {}
const DatabaseLive = Layer.succeed(Database, { find: (id) => Effect.succeed(`order ${id}`) })
const AuditLive = Layer.succeed(Audit, { log: () => Effect.void })

const lookup = tool("lookup", {
  args: Schema.Struct({ id: Schema.String }),
  run: ({ id }) => Effect.flatMap(Effect.service(Database), (db) => db.find(id))
})
const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const model = scriptedModel([])

type MissingServices<R> = AgentTypeError<"provide the missing services with .provide(layer) before .run(...), or use .runEffect(...) and provide them", R>

describe("tools record what they require", () => {
  it("infers a tool's requirements from the Effect its run returns", () => {
    expectTypeOf(lookup).toEqualTypeOf<Tool<"lookup", { readonly id: string }, string, Database>>()
    expectTypeOf<Tool.Requirements<typeof add>>().toEqualTypeOf<never>()
  })

  it("infers nothing from the builder's context for a tool written inline", () => {
    const inline = agent("i").model(model).tools({ echo: tool("echo", { args: Schema.Struct({ t: Schema.String }), run: ({ t }) => t }) })
    expectTypeOf(inline.runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
    const skills = agent("i").model(model).skills(() => [skill("echo").implementedBy((input: string) => input)])
    expectTypeOf(skills.runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
  })

  it("adds them to runEffect's requirements, and run names the missing service", () => {
    const support = agent("support").model(model).tools({ lookup, add })
    expectTypeOf(support.runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, Database>>()
    expectTypeOf(support.run).toEqualTypeOf<MissingServices<Database>>()
    // @ts-expect-error Database is missing: provide it with .provide(layer)
    void (() => support.run("x"))
  })

  it("removes what .provide(layer) provides, and adds what the layer needs", () => {
    const support = agent("support").model(model).tools({ lookup })
    const provided = support.provide(DatabaseLive)
    expectTypeOf(provided.runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
    expectTypeOf(provided.run).toEqualTypeOf<(input: string) => Promise<string>>()
    const needsAudit = Layer.effect(Database, Effect.as(Effect.service(Audit), { find: (id: string) => Effect.succeed(id) }))
    expectTypeOf(support.provide(needsAudit).runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, Audit>>()
    expectTypeOf(support.provide(needsAudit).provide(AuditLive).runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
  })

  it("names both a missing model and a missing service", () => {
    const noModel = agent("support").tools({ lookup })
    expectTypeOf(noModel.runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, ModelClientService | Database>>()
    expectTypeOf(noModel.run).toEqualTypeOf<
      AgentTypeError<"call .model(...) and .provide(layer) the missing services before .run(...), or use .runEffect(...)", Database>
    >()
    // a provider Layer stands for .model(...)
    expectTypeOf(noModel.provide(openaiLayer("gpt-4o-mini", { apiKey: "sk-test" })).provide(DatabaseLive).runEffect("x"))
      .toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
  })
})

describe("hooks, loaders, stores, scorers and recovery handlers", () => {
  const base = agent("a").model(model)
  it("hooks returning a value or a Promise require nothing; an Effect its services", () => {
    expectTypeOf(base.onToolUse(() => undefined).runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
    expectTypeOf(base.onRunEnd(async () => 1).runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, never>>()
    expectTypeOf(base.onToolUse((e) => Effect.flatMap(Effect.service(Audit), (a) => a.log(e.tool))).runEffect("x"))
      .toEqualTypeOf<Effect.Effect<string, AgentError, Audit>>()
    expectTypeOf(base.onError(() => Effect.service(Audit)).runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, Audit>>()
  })

  it("knowledge loaders: fileKnowledge requires FileSystem", () => {
    const faq = base.skills(() => [skill("faq", "FAQ").knowledge("faq", "The FAQ", fileKnowledge("faq.md"))])
    expectTypeOf(faq.runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, FileSystem.FileSystem>>()
  })

  it("several skills require the union of their services", () => {
    const both = base.tools({ add }).skills(({ add }) => [
      skill("math").tools(add),
      skill("faq").knowledge("faq", "The FAQ", fileKnowledge("faq.md")),
      skill("orders").implementedBy((id: string) => Effect.flatMap(Effect.service(Database), (db) => db.find(id)))
    ])
    expectTypeOf(both.runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, FileSystem.FileSystem | Database>>()
  })

  it("memory stores, scorers and recovery handlers", () => {
    const store = {
      read: (key: string) => Effect.flatMap(Effect.service(Database), (db) => db.find(key)),
      write: () => undefined,
      search: () => []
    }
    expectTypeOf(base.memory(store).runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, Database>>()
    expectTypeOf(base.pickTools({ scorer: () => Effect.as(Effect.service(Audit), 1) }).runEffect("x"))
      .toEqualTypeOf<Effect.Effect<string, AgentError, Audit>>()
    expectTypeOf(base.recover({ executionError: () => Effect.as(Effect.service(Audit), Recovery.fail) }).runEffect("x"))
      .toEqualTypeOf<Effect.Effect<string, AgentError, Audit>>()
    expectTypeOf(base.tools({ add }).recoverTool("add", { invalidArgs: () => Effect.as(Effect.service(Audit), Recovery.feedback) }).runEffect("x"))
      .toEqualTypeOf<Effect.Effect<string, AgentError, Audit>>()
  })
})

describe("tools implemented by a Layer", () => {
  const find = tool("find", { args: Schema.Struct({ id: Schema.String }), success: Schema.String })
  it("a tool declared without run requires its implementation", () => {
    expectTypeOf(find).toEqualTypeOf<Tool<"find", { readonly id: string }, string, ToolImplementation<"find">>>()
    const support = agent("support").model(model).tools({ find })
    expectTypeOf(support.run).toEqualTypeOf<MissingServices<ToolImplementation<"find">>>()
    expectTypeOf(support.provide(toolLayer(find, ({ id }) => id)).run).toEqualTypeOf<(input: string) => Promise<string>>()
  })

  it("an implementation's own services become the Layer's requirements", () => {
    const live = toolLayer(find, ({ id }) => Effect.flatMap(Effect.service(Database), (db) => db.find(id)))
    expectTypeOf(live).toEqualTypeOf<Layer.Layer<ToolImplementation<"find">, never, Database>>()
    // @ts-expect-error the implementation must return the declared success type
    toolLayer(find, () => 42)
  })
})

describe("with deterministic skills and agents as tools (merged from main)", () => {
  it("an agent of deterministic skills needs no model, but still the services they require", () => {
    const orders = agent("orders").skills(() => [
      skill("status").implementedBy((id: string) => Effect.flatMap(Effect.service(Database), (db) => db.find(id)))
    ])
    expectTypeOf(orders.runEffect("7")).toEqualTypeOf<Effect.Effect<string, AgentError, Database>>()
    expectTypeOf(orders.provide(DatabaseLive).run).toEqualTypeOf<(input: string) => Promise<string>>()
  })

  it("an agent as a tool requires what the agent requires, except the model it takes from its caller", () => {
    const child = agent("child").tools({ lookup })
    const research = child.asTool({ name: "research" })
    expectTypeOf<Tool.Requirements<typeof research>>().toEqualTypeOf<Database>()
    const parent = agent("parent").model(model).tools({ research })
    expectTypeOf(parent.runEffect("x")).toEqualTypeOf<Effect.Effect<string, AgentError, Database>>()
  })
})
