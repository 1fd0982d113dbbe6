/** The calculator on this library (built `dist/` by default, see `../ours-lib.ts`), over `ModelClient.fromFunction`. */
import { Schema } from "effect"
import { ours } from "../ours-lib.ts"
import { type MakeRunner, maxTurns, mockModel, question, runTool, systemPrompt } from "./script.ts"

const { agent, ModelClient, skill, tool } = ours

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })

export const makeRunner: MakeRunner = (scenario, harness) => {
  const { counters } = harness
  const add = tool("add", { description: "Add two numbers", args: Operands, run: runTool(scenario, counters, "add") })
  const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, run: runTool(scenario, counters, "multiply") })
  const model = ModelClient.fromFunction(mockModel(scenario, harness))

  const calculator = agent("calculator")
    .prompt(systemPrompt)
    .model(model)
    .budget({ maxTurns: maxTurns(scenario), maxToolCalls: maxTurns(scenario) })
    .tools({ add, multiply })
    .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  return () => calculator.run(question)
}
