/** The calculator on this library (built `dist/` by default, see `../ours-lib.ts`), over `ModelClient.fromFunction`. */
import { Schema } from "effect"
import { ours } from "../ours-lib.ts"
import { callUsage, type MakeRunner, maxTurns, question, runTool, systemPrompt } from "./script.ts"

const { agent, ModelClient, skill, tool } = ours

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })

export const makeRunner: MakeRunner = (scenario, { counters, park }) => {
  const add = tool("add", { description: "Add two numbers", args: Operands, run: runTool(scenario, counters, "add") })
  const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, run: runTool(scenario, counters, "multiply") })
  let ids = 0
  const model = ModelClient.fromFunction(async (request) => {
    let toolResults = 0
    for (const message of request.messages) if (message.role === "tool") toolResults++
    if (park !== undefined) await park(toolResults)
    counters.modelCalls++
    const step = scenario.step(toolResults)
    return step === undefined
      ? { _tag: "Text", content: scenario.finalAnswer, usage: callUsage }
      : { _tag: "ToolCalls", calls: [{ id: `call_${ids++}`, name: step.tool, arguments: JSON.stringify(step.args) }], usage: callUsage }
  })
  const calculator = agent("calculator")
    .prompt(systemPrompt)
    .model(model)
    .budget({ maxTurns: maxTurns(scenario), maxToolCalls: maxTurns(scenario) })
    .tools({ add, multiply })
    .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  return () => calculator.run(question)
}
