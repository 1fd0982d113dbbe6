import { Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { agent, latentTool, Recovery, text, type Tool, toolCalls, type ToolUseEvent } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const Category = Schema.Struct({ category: Schema.Literals(["billing", "bug", "other"]), urgent: Schema.Boolean })
const classify = latentTool("classify", { description: "Classify a support ticket", args: Schema.Struct({ ticket: Schema.String }), output: Category })

const call = (args: unknown) => toolCalls([{ id: "c1", name: "classify", arguments: args }])

describe("latent tools", () => {
  it("are pure schemas: the model writes args and output, and the definition says so", () => {
    expectTypeOf(classify).toEqualTypeOf<
      Tool<"classify", { readonly args: { readonly ticket: string }; readonly output: typeof Category.Type }, typeof Category.Type>
    >()
    expect(classify.definition.parameters).toMatchObject({ type: "object", required: ["args", "output"], additionalProperties: false })
    expect(classify.definition.parameters.properties).toMatchObject({ output: { properties: { category: { enum: ["billing", "bug", "other"] } } } })
    expect(classify.description).toMatch(/^Classify a support ticket\. You perform this step yourself/)
    expect(classify.tags).toContain("latent")
  })

  it("the decoded output is the tool's result, seen by hooks and by the model", async () => {
    const uses: Array<ToolUseEvent> = []
    const model = scriptedModel([call({ args: { ticket: "I was charged twice" }, output: { category: "billing", urgent: true } }), text("routed")])
    await agent("a").model(model).tools({ classify }).onToolUse((e) => void uses.push(e)).run("ticket")
    expect(uses[0]!.result).toEqual({ category: "billing", urgent: true })
    expect(uses[0]!.args).toEqual({ args: { ticket: "I was charged twice" }, output: { category: "billing", urgent: true } })
    expect(model.requests[1]!.messages.at(-1)!.content).toBe(JSON.stringify({ category: "billing", urgent: true }))
  })

  it("routes an output that does not decode with the output Schema like invalid arguments", async () => {
    const model = scriptedModel([call({ args: { ticket: "x" }, output: { category: "refund", urgent: "yes" } }), text("done")])
    await agent("a").model(model).tools({ classify }).run("ticket")
    const feedback = model.requests[1]!.messages.at(-1)!.content
    expect(feedback).toContain(`["output"]["category"]`)
    expect(feedback).toContain(`["output"]["urgent"]`)
    const error = failureOf(await runExit(agent("a").model(scriptedModel([call({ args: { ticket: "x" } })])).tools({ classify }).recover({ invalidArgs: () => Recovery.fail }).runEffect("t")))
    expect(error._tag).toBe("InvalidToolArgs")
  })

  it("takes recovery handlers as recover (onError is refused naming it)", async () => {
    const fixing = latentTool("classify", {
      args: Schema.Struct({ ticket: Schema.String }),
      output: Category,
      recover: { invalidArgs: () => Recovery.fixed({ args: { ticket: "x" }, output: { category: "other", urgent: false } }) }
    })
    const uses: Array<ToolUseEvent> = []
    await agent("a").model(scriptedModel([call({ args: { ticket: "x" }, output: { category: "refund" } }), text("done")])).tools({ classify: fixing }).onToolUse((e) => void uses.push(e)).run("t")
    expect(uses[0]!.result).toEqual({ category: "other", urgent: false })
    const untyped = latentTool as unknown as (name: string, options: object) => unknown
    expect(() => untyped("classify", { args: Schema.Struct({}), output: Category, onError: {} })).toThrow(/recover/)
  })
})

