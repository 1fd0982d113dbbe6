import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, Intercept, InvalidToolArgs, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, runExit } from "../fixtures.ts"

const setup = () => {
  const ran: Array<unknown> = []
  const send = tool("send", {
    args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
    run: (args) => {
      ran.push(args)
      return `sent ${args.amount}`
    }
  })
  const pay = tool("pay", {
    args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
    needsApproval: false as boolean,
    run: (args) => {
      ran.push(args)
      return `paid ${args.amount}`
    }
  })
  const model = scriptedModel([toolCalls([{ id: "s", name: "send", arguments: { to: "bob", amount: 10 } }]), text("done")])
  return { ran, model, base: agent("desk").model(model).tools({ send, pay }) }
}

const toolResult = (model: ReturnType<typeof scriptedModel>, id: string) =>
  model.requests.at(-1)?.messages.find((m) => m.role === "tool" && m.toolCallId === id)?.content

describe("an interceptor", () => {
  it("proceed: the tool runs with the model's arguments", async () => {
    const { ran, base } = setup()
    const seen: Array<unknown> = []
    await base.intercept("send", (args) => {
      seen.push(args)
      return Intercept.proceed
    }).run("go")
    expect(seen).toEqual([{ to: "bob", amount: 10 }])
    expect(ran).toEqual([{ to: "bob", amount: 10 }])
  })

  it("proceedWith: the tool runs with the new arguments, decoded again; invalid ones end the run with InvalidToolArgs", async () => {
    const { ran, base, model } = setup()
    await base.intercept("send", ({ to }) => Intercept.proceedWith({ to, amount: 5 })).run("go")
    expect(ran).toEqual([{ to: "bob", amount: 5 }])
    expect(toolResult(model, "s")).toBe("sent 5")
    const second = setup()
    const exit = await runExit(second.base.intercept("send", () => Intercept.proceedWith({ to: "bob", amount: "five" })).runEffect("go"))
    const error = failureOf(exit)
    expect(error).toBeInstanceOf(InvalidToolArgs)
    expect(error.message).toContain("proceedWith")
    expect(second.ran).toEqual([])
  })

  it("deny: the tool does not run and the model is told why", async () => {
    const { ran, base, model } = setup()
    expect(await base.intercept("send", () => Intercept.deny("payee blocked")).run("go")).toEqual({ _tag: "Completed", output: "done" })
    expect(ran).toEqual([])
    expect(toolResult(model, "s")).toContain("payee blocked")
  })

  it("substitute: the tool does not run and the model gets the result", async () => {
    const { ran, base, model } = setup()
    await base.intercept("send", () => Intercept.substitute({ cached: true })).run("go")
    expect(ran).toEqual([])
    expect(toolResult(model, "s")).toBe('{"cached":true}')
  })

  it("that throws denies the call", async () => {
    const { ran, base, model } = setup()
    await base.intercept("send", () => {
      throw new Error("policy down")
    }).run("go")
    expect(ran).toEqual([])
    expect(toolResult(model, "s")).toContain("policy down")
  })

  it("suspend: the run waits with the reason, and an approve runs the call without asking the interceptor again", async () => {
    const ran: Array<unknown> = []
    const pay = tool("pay", {
      args: Schema.Struct({ amount: Schema.Finite }),
      needsApproval: () => false,
      run: (args) => {
        ran.push(args)
        return "paid"
      }
    })
    const model = scriptedModel([toolCalls([{ id: "p", name: "pay", arguments: { amount: 900 } }]), text("ok")])
    let asked = 0
    const desk = agent("desk").model(model).tools({ pay }).intercept("pay", ({ amount }) => {
      asked++
      return amount > 500 ? Intercept.suspend("large payment") : Intercept.proceed
    })
    const first = await desk.run("pay")
    if (first._tag !== "Suspended") throw new Error("expected a suspension")
    expect(first.pending).toEqual([{ id: "p", tool: "pay", args: { amount: 900 }, reason: "large payment" }])
    expect(ran).toEqual([])
    expect(await Effect.runPromise(desk.resume(JSON.stringify(first.snapshot), { p: Decision.approve }))).toEqual({ _tag: "Completed", output: "ok" })
    expect(ran).toEqual([{ amount: 900 }])
    expect(asked).toBe(1)
  })

  it("is typed per tool, and offers suspend only for tools that may need approval", () => {
    const { base } = setup()
    // @ts-expect-error amount is a number
    base.intercept("send", ({ amount }) => (amount.toUpperCase() ? Intercept.proceed : Intercept.proceed))
    // @ts-expect-error send never needs approval, so an interceptor cannot suspend it
    base.intercept("send", () => Intercept.suspend("no"))
    base.intercept("pay", () => Intercept.suspend("fine: pay may need approval"))
    // @ts-expect-error no tool "nope" is registered
    expect(() => base.intercept("nope", () => Intercept.proceed)).toThrow("no tool of that name")
  })
})
