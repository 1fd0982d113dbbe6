/**
 * The agent behind every web test: `add` as its tool, a scripted model that calls it for the latest
 * question and then answers with the sum (streamed 3 characters at a time), and a record of the
 * requests the model received (to check the transcript a body became).
 */
import * as Schema from "effect/Schema"
import type { UIMessage } from "ai"
import { agent, type ModelRequest, text, tool, toolCalls } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"

export const makeAssistant = () => {
  const requests: Array<ModelRequest> = []
  const add = tool("add", { description: "Add two numbers", args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
  const model = scriptedModel((request) => {
    requests.push(request)
    const last = request.messages.at(-1)
    if (last?.role === "user") return toolCalls([{ id: `call-${requests.length}`, name: "add", arguments: { a: 2, b: 3 } }])
    return text(`The sum is ${last?.content ?? "?"}.`)
  }, { chunk: 3 })
  const assistant = agent("assistant").prompt("You add numbers.").model(model).tools({ add })
  return { assistant, requests }
}

/** A second turn of a chat, as `useChat` holds it: a question, the assistant's answer with its tool call, a new question. */
export const secondTurn: Array<UIMessage> = [
  { id: "u1", role: "user", parts: [{ type: "text", text: "What is 1 + 1?" }] },
  {
    id: "a1",
    role: "assistant",
    parts: [
      { type: "step-start" },
      { type: "tool-add", toolCallId: "c1", state: "output-available", input: { a: 1, b: 1 }, output: 2 },
      { type: "step-start" },
      { type: "text", text: "It is 2.", state: "done" }
    ]
  },
  { id: "u2", role: "user", parts: [{ type: "text", text: "And 2 + 3?" }] }
]
