/**
 * The calculator from the Kotlin DSL docs: "What is (3 + 5) * 2?" → add, then multiply, then answer.
 *
 * Without AI_PROVIDER it runs on a scripted model (no network, no key) and says so. With it, the
 * provider comes from the environment:
 *   AI_PROVIDER=ollama AI_MODEL=qwen2.5:7b npm start
 *   AI_PROVIDER=openai AI_MODEL=gpt-4o-mini OPENAI_API_KEY=sk-... npm start
 */
import { Schema } from "effect"
import { agent, fromEnv, type ModelClient, skill, text, tool, toolCalls } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"

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

const chooseModel = (): { readonly client: ModelClient; readonly label: string; readonly maxTurns: number } => {
  if ((process.env.AI_PROVIDER ?? "").trim() !== "") {
    const env = fromEnv()
    return { client: env.client, label: `${env.provider} ${env.model} (${env.endpoint ?? "default endpoint"})`, maxTurns: env.budget.maxTurns ?? 5 }
  }
  const scripted = scriptedModel([
    toolCalls([{ id: "call_1", name: "add", arguments: '{"a":3,"b":5}' }]),
    toolCalls([{ id: "call_2", name: "multiply", arguments: { a: 8, b: 2 } }]),
    text("(3 + 5) * 2 = 16")
  ])
  return { client: scripted, label: "scripted (a deterministic mock; no LLM is called; set AI_PROVIDER to use one)", maxTurns: 5 }
}

const model = chooseModel()

const calculator = agent("calculator")
  .prompt("You are a calculator. Use the tools for every arithmetic step.")
  .model(model.client)
  .budget({ maxTurns: model.maxTurns })
  .tools({ add, multiply })
  .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
  .onToolUse(({ tool, args, result }) => console.log(`  tool ${tool}(${JSON.stringify(args)}) = ${result}`))

console.log(`model: ${model.label}`)
const question = "What is (3 + 5) * 2?"
console.log(`question: ${question}`)
try {
  console.log(`answer: ${await calculator.run(question)}`)
} catch (error) {
  console.error(`failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
}
