/** A tool's own recovery handlers may require services, which join the tool's and the agent's requirements. */
import { Context, Effect, Layer, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { agent, Recovery, type Tool, tool } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

class Audit extends Context.Service<Audit, { readonly log: (s: string) => Effect.Effect<void> }>()("Audit") {}

describe("a tool's own recover handlers", () => {
  it("add the services they require to the tool and the agent", () => {
    const audited = tool("audited", {
      args: Schema.Struct({ a: Schema.Finite }),
      run: ({ a }) => a,
      recover: {
        executionError: () =>
          Effect.gen(function*() {
            yield* (yield* Audit).log("failed")
            return Recovery.feedback
          })
      }
    })
    expectTypeOf(audited).toEqualTypeOf<Tool<"audited", { readonly a: number }, number, Audit>>()
    const base = agent("a").model(scriptedModel([])).tools({ audited })
    const unprovided = () => {
      // @ts-expect-error provide the missing services with .provide(layer) before .run(...)
      void base.run("x")
    }
    void unprovided
    const provided = base.provide(Layer.succeed(Audit, { log: () => Effect.void }))
    expectTypeOf(provided.run).toBeFunction()
  })
})
