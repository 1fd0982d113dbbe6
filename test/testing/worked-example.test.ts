/**
 * A worked example to copy: property-testing your own agent with effect-agent-dsl/testing.
 *
 * The agent is defined as usual, without a model: `runScript` plays an arbitrary model script against
 * it. fast-check generates the scripts from your tools' Schemas: valid calls, invalid arguments, calls to
 * tools outside the skill, text answers, empty replies, model errors. `runInvariants` checks what must
 * hold whatever the model does; add your own expectations beside it.
 */
import { test } from "@fast-check/vitest"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { agent, skill, text, tool, toolCalls } from "../../src/index.ts"
import { runInvariants, runScript } from "../../src/testing/index.ts"
import { arbModelScript } from "../../src/testing/arbitraries.ts"

// 1. Your tools and agent, as in your application.
const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const add = tool("add", { description: "Add two numbers", args: Operands, run: ({ a, b }) => a + b })
const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, run: ({ a, b }) => a * b })
const wipe = tool("wipe", { description: "Delete everything", args: Schema.Struct({}), safe: false, run: () => "wiped" })

const calculator = agent("calculator")
  .prompt("You are a calculator.")
  .budget({ maxTurns: 4 })
  .tools({ add, multiply, wipe })
  .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])

describe("my calculator agent", () => {
  // 2. One example run, to see the shape of what runScript returns.
  it("adds then answers", async () => {
    const run = await runScript(calculator, [toolCalls([{ id: "1", name: "add", arguments: '{"a":3,"b":5}' }]), text("8")], "3 + 5?")
    expect(run.outcome).toEqual({ _tag: "Success", output: "8" })
    expect(run.executed).toEqual([{ tool: "add", args: { a: 3, b: 5 } }])
    expect(run.requests).toHaveLength(2)
  })

  // 3. The property: whatever the model does, the invariants hold.
  const scripts = arbModelScript([add, multiply], { invalidRate: 0.3, foreignNames: ["wipe"], maxLength: 6 })
  test.prop([scripts], { numRuns: Number(process.env.PROPERTY_RUNS ?? 300) })("holds its invariants for any model behaviour", async (script) => {
    const run = await runScript(calculator, script, "What is (3 + 5) * 2?")
    expect(runInvariants(run, { allowed: [add, multiply], maxTurns: 4 })).toEqual([])
    expect(run.executed.map((e) => e.tool)).not.toContain("wipe")
  })
})
