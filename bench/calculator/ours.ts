/** The calculator on this library, over `ModelClient.fromFunction`. */
import { Schema } from "effect"
import { agent, ModelClient, skill, text, tool, toolCalls } from "../../src/index.ts"
import { finalAnswer, type MakeRunner, nextTick, question, steps } from "./script.ts"

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })

export const makeRunner: MakeRunner = ({ concurrentMode, counters }) => {
  const add = tool("add", { description: "Add two numbers", args: Operands, run: ({ a, b }) => (counters.toolRuns++, a + b) })
  const multiply = tool("multiply", { description: "Multiply two numbers", args: Operands, run: ({ a, b }) => (counters.toolRuns++, a * b) })
  const reply = (toolResults: number) => {
    counters.modelCalls++
    const step = steps[toolResults]
    return step === undefined ? text(finalAnswer) : toolCalls([{ id: `call_${toolResults}`, name: step.tool, arguments: JSON.stringify(step.args) }])
  }
  const model = ModelClient.fromFunction(async (request) => {
    if (concurrentMode) await nextTick()
    return reply(request.messages.filter((m) => m.role === "tool").length)
  })
  const instant = ModelClient.fromFunction((request) => reply(request.messages.filter((m) => m.role === "tool").length))
  const calculator = agent("calculator")
    .prompt("You are a calculator. Use the tools.")
    .model(concurrentMode ? model : instant)
    .tools({ add, multiply })
    .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  return () => calculator.run(question)
}
