/**
 * Agents for the studio, on a scripted model (offline, no key):
 *   npm run studio                     # = effect-agent-studio examples/studio.ts
 * `calculator` adds and multiplies (its answer streams in small chunks), `teller` sends money and waits
 * for a human above 100 (approve, deny or edit it in the Approvals page), `research` is a pipeline of
 * two agents. `sessions` gives the Sessions page a store to browse (one conversation is seeded).
 * With AI_PROVIDER set, the agents use the provider from the environment instead.
 */
import { Effect, Schema } from "effect"
import { agent, fromEnv, inMemorySessionStore, type ModelClient, pipeline, skill, text, tool, toolCalls } from "effect-agent-dsl"
import { trackedSessionStore } from "effect-agent-dsl/studio"
import { scriptedModel } from "effect-agent-dsl/testing"

const numbers = /(-?\d+(?:\.\d+)?)/g

/** A model that reads the numbers of the question, calls the tool for its operator, then says the result. */
const calculatorModel = (): ModelClient =>
  scriptedModel((request) => {
    const last = request.messages.at(-1)
    if (last?.role === "user") {
      const [a = 2, b = 3] = (last.content.match(numbers) ?? []).map(Number)
      const name = /\*|times|multiply/.test(last.content) ? "multiply" : "add"
      return { ...toolCalls([{ name, arguments: { a, b } }]), usage: { inputTokens: 60, outputTokens: 12 } }
    }
    return { ...text(last?.role === "tool" ? `The result is ${last.content}.` : "Ask me to add or multiply two numbers."), usage: { inputTokens: 90, outputTokens: 8 } }
  }, { chunk: 4 })

const add = tool("add", {
  description: "Add two numbers",
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  effect: "readOnly",
  run: ({ a, b }) => a + b
})
const multiply = tool("multiply", {
  description: "Multiply two numbers",
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  effect: "readOnly",
  run: ({ a, b }) => Effect.as(Effect.sleep("300 millis"), a * b)
})

const model = (scripted: () => ModelClient): ModelClient => ((process.env.AI_PROVIDER ?? "").trim() === "" ? scripted() : fromEnv().client)

export const calculator = agent("calculator")
  .prompt("You are a calculator. Use the tools, then give the result in one sentence.")
  .model(model(calculatorModel))
  .budget({ maxTurns: 4, maxToolCalls: 4 })
  .tools({ add, multiply })
  .skills(({ add, multiply }) => [
    // One skill: the allowlist the studio shows, and the tools each model call is offered.
    skill("compute", "Add and multiply").tools(add, multiply)
  ])

const transfer = tool("transfer", {
  description: "Send money to someone (a human approves amounts above 100)",
  args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }),
  needsApproval: ({ amount }) => amount > 100,
  run: ({ to, amount }) => `sent ${amount} to ${to}`
})

export const teller = agent("teller")
  .prompt("You move money for the user. Transfers above 100 wait for a human.")
  .model(model(() =>
    scriptedModel((request) => {
      const last = request.messages.at(-1)
      if (last?.role === "user") {
        const [, to = "bob", amount = "500"] = /pay (\w+) (\d+)/.exec(last.content) ?? []
        return toolCalls([{ name: "transfer", arguments: { to, amount: Number(amount) } }])
      }
      return text(last?.role === "tool" ? `Done: ${last.content}.` : "Say: pay <name> <amount>.")
    })
  ))
  .tools({ transfer })

const researcher = agent("researcher")
  .prompt("Find three facts about the topic.")
  .model(model(() => scriptedModel((request) => text(`Facts about ${String(request.messages.at(-1)?.content ?? "it")}: one, two, three.`), { chunk: 6 })))
const writer = agent("writer")
  .prompt("Write one paragraph from the facts.")
  .model(model(() => scriptedModel((request) => text(`A paragraph built on: ${String(request.messages.at(-1)?.content ?? "")}`), { chunk: 6 })))

export const research = pipeline("research", researcher, writer)

/** The Sessions page browses this store; one conversation is seeded. */
export const sessions = trackedSessionStore(inMemorySessionStore())
await Effect.runPromise(sessions.append("demo-user", [
  { role: "user", content: "What is 2 + 3?" },
  { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "add", arguments: "{\"a\":2,\"b\":3}" }] },
  { role: "tool", toolCallId: "c1", name: "add", content: "5" },
  { role: "assistant", content: "The result is 5." }
]))
