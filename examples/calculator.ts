/**
 * The calculator from the Kotlin DSL docs: "What is (3 + 5) * 2?" → add, then multiply, then answer.
 *
 * Runs on a scripted model (no network, no API key) and says so in its output.
 * Run: npm start
 */
import { Schema } from "effect"
import { agent, skill, text, tool, toolCalls } from "../src/index.ts"
import { scriptedModel } from "../src/testing/index.ts"

const add = tool("add", {
  description: "Add two numbers",
  args: Schema.Struct({ a: Schema.Finite.annotate({ description: "left operand" }), b: Schema.Finite }),
  run: ({ a, b }) => a + b
})

const multiply = tool("multiply", {
  description: "Multiply two numbers",
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  run: ({ a, b }) => a * b
})

const scripted = scriptedModel([
  toolCalls([{ id: "call_1", name: "add", arguments: '{"a":3,"b":5}' }]),
  toolCalls([{ id: "call_2", name: "multiply", arguments: { a: 8, b: 2 } }]),
  text("(3 + 5) * 2 = 16")
])

const calculator = agent("calculator")
  .prompt("You are a calculator. Use the tools for every arithmetic step.")
  .model(scripted)
  .budget({ maxTurns: 5 })
  .tools({ add, multiply })
  .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  .onToolUse(({ tool, args, result }) => console.log(`  tool ${tool}(${JSON.stringify(args)}) = ${result}`))

console.log("model: scripted (a deterministic mock; no LLM is called)")
const question = "What is (3 + 5) * 2?"
console.log(`question: ${question}`)
const answer = await calculator.run(question)
console.log(`answer: ${answer}`)
console.log(`model calls: ${scripted.requests.length}`)
