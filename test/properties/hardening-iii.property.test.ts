/**
 * Issue #28: properties over what found items 8, 9 and 11. Parallel handoffs (several in one response,
 * or beside ordinary calls, after any script of ordinary turns): every call of every assistant message
 * a model is sent has exactly one result. Unknown options and non-function listeners from untyped
 * callers: refused at construction with an `AgentConfigError` naming them. (Hung listeners of every kind
 * are in `hostile.property.test.ts`, whose bound is `maxDuration` plus one hook timeout.)
 */
import { fc, test } from "@fast-check/vitest"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { agent, AgentConfigError, isAgentError, type LlmResponse, type ModelRequest, skill, text, tool } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { arbModelScript, arbParallelHandoffs, arbUnknownOption } from "../../src/testing/arbitraries.ts"
import {
  agentOptionKeys,
  asToolOptionKeys,
  budgetOptionKeys,
  pickToolsOptionKeys,
  recoveryKeys,
  toolOptionKeys,
  toolOptionRenamed
} from "../../src/dsl/builder-validation.ts"
import { unansweredCalls } from "../hardening/transcript-check.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 100)

const noop = tool("noop", { args: Schema.Struct({}), run: () => "ok" })
const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })

describe("parallel handoffs", () => {
  const arbScript = fc.tuple(
    arbModelScript([noop, add], { maxLength: 3, textRate: 0, emptyRate: 0, modelErrorRate: 0, unknownRate: 0 }),
    arbParallelHandoffs(["b", "c"], [noop, add])
  )
  test.prop([arbScript], { numRuns })("every call of every assistant message a model sees has exactly one result", async ([before, handoff]) => {
    const requests: Array<ModelRequest> = []
    const recording = (answer: ReadonlyArray<LlmResponse | unknown>) => {
      const model = scriptedModel([...answer, text("done")] as never)
      return { chat: (request: ModelRequest) => (requests.push(request), model.chat(request)) }
    }
    const b = agent("b").model(recording([text("from b")]))
    const c = agent("c").model(recording([text("from c")]))
    const front = agent("front")
      .model(recording([...before, handoff]))
      .tools({ noop, add })
      .budget({ maxTurns: 10 })
      .skills(({ noop, add }) => [skill("front").tools(noop, add).handoffs(b, c)])
    const outcome = await front.run("go").then((output) => ({ output }), (error: unknown) => ({ error }))
    if ("error" in outcome) expect(isAgentError(outcome.error), String(outcome.error)).toBe(true)
    for (const request of requests) expect(unansweredCalls(request.messages)).toEqual([])
  })
})

describe("unknown options and non-function listeners from untyped callers", () => {
  const thrown = (f: () => unknown): unknown => {
    try {
      f()
      return undefined
    } catch (error) {
      return error
    }
  }
  const expectRefused = (error: unknown, name: string) => {
    expect(error).toBeInstanceOf(AgentConfigError)
    expect((error as Error).message).toContain(`\`${name}\``)
  }
  const base = agent("a") as any

  const places = [
    { where: "agent(name, options)", known: agentOptionKeys, make: (o: object) => (agent as any)("a", o) },
    { where: ".budget", known: budgetOptionKeys, make: (o: object) => base.budget(o) },
    { where: ".recover", known: [...recoveryKeys, "maxRepairSteps"], make: (o: object) => base.recover(o) },
    { where: ".recoverTool", known: recoveryKeys, make: (o: object) => base.recoverTool("noop", o) },
    { where: ".pickTools", known: pickToolsOptionKeys, make: (o: object) => base.pickTools(o) },
    { where: ".asTool", known: asToolOptionKeys, make: (o: object) => base.asTool({ name: "x", ...o }) },
    { where: "tool(...)", known: toolOptionKeys, make: (o: object) => tool("t", { args: Schema.Struct({}), run: () => 1, ...o } as any) }
  ] as const
  for (const place of places) {
    const old = place.where === "tool(...)" ? Object.keys(toolOptionRenamed) : ["onError", "toolFailed"]
    test.prop([arbUnknownOption(place.known, old), fc.anything()], { numRuns })(`${place.where}: an unknown option is refused, by name`, (name, value) => {
      expectRefused(thrown(() => place.make(Object.fromEntries([[name, value]]))), name)
    })
  }

  const listeners = ["onEvent", "onRunStart", "onRunEnd", "onToolUse", "onToolError", "onInvalidArgs", "onHookFailed", "onBudgetExceeded", "onHandoff", "onError"]
  test.prop([fc.constantFrom(...listeners), fc.anything().filter((v) => typeof v !== "function")], { numRuns })(
    "a listener that is not a function is refused, naming the method",
    (method, value) => {
      const error = thrown(() => base[method](value))
      expect(error).toBeInstanceOf(AgentConfigError)
      expect((error as Error).message).toContain(`.${method}(`)
    }
  )
})
