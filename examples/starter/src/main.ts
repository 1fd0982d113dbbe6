/**
 * A chat in the terminal: each line you type is sent to the assistant with the conversation so far (a
 * session). When the assistant wants to refund an order, the run suspends and you decide: `y` approves
 * that call, anything else denies it (the model is told, and answers without it).
 *
 *   npm start                                                       # scripted model, no key needed
 *   AI_PROVIDER=openai AI_MODEL=gpt-4o-mini OPENAI_API_KEY=sk-... npm start
 *
 * Lines may also be piped in: `printf 'Where is order A-1001?\nIt arrived broken, refund it\ny\n' | npm start`.
 */
import { createInterface } from "node:readline"
import { Decision, inMemorySessionStore, session } from "effect-agent-dsl"
import { makeAssistant } from "./agent.ts"
import { type ChosenModel, chooseModel } from "./model.ts"

let model: ChosenModel
try {
  model = chooseModel()
} catch (error) {
  // fromEnv() names the variable that is missing or invalid (an AgentConfigError).
  console.error(`failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
}
const assistant = makeAssistant(model.client, model.maxTurns)
const store = inMemorySessionStore()
const chat = session(assistant, "terminal", { store, window: { lastTurns: 20 } })

const terminal = process.stdin.isTTY === true
const readline = createInterface({ input: process.stdin, terminal })
const lines = readline[Symbol.asyncIterator]()
/** Prints `prompt` and reads one line; undefined at the end of the input. Piped lines are echoed. */
const ask = async (prompt: string): Promise<string | undefined> => {
  process.stdout.write(prompt)
  const next = await lines.next()
  if (!terminal) process.stdout.write(`${next.done === true ? "" : next.value}\n`)
  return next.done === true ? undefined : next.value
}

/**
 * One exchange: send the line; while the run waits for approvals, ask for them and resume it through
 * the session (which takes its waiting run once and records the whole exchange when it completes).
 */
const exchange = async (input: string): Promise<string> => {
  let result = await chat.send(input)
  while (result._tag === "Suspended") {
    const decisions: Record<string, Decision> = {}
    for (const call of result.pending) {
      const answer = await ask(`approve ${call.tool} ${JSON.stringify(call.args)}? [y/N] `)
      decisions[call.id] = answer?.trim().toLowerCase().startsWith("y") === true ? Decision.approve : Decision.deny("the reviewer said no")
    }
    result = await chat.resume(decisions)
  }
  return result.output
}

console.log(`model: ${model.label}`)
console.log("Ask about an order (try: Where is order A-1001?) or for a refund. An empty line or Ctrl-D ends.")
for (let line = await ask("you> "); line !== undefined && line.trim() !== ""; line = await ask("you> ")) {
  try {
    console.log(`assistant> ${await exchange(line)}`)
  } catch (error) {
    console.error(`failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  }
}
console.log("bye")
readline.close()
