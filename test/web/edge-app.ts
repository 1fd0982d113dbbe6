/**
 * A chat endpoint as an edge function would hold it: the web entry's `chatHandler` over an agent with a
 * tool and a streaming scripted model. test/web/edge-entry.test.ts bundles this file for a neutral
 * platform and runs it in a V8 context with only Web globals (no `process`, no `require`).
 */
import * as Schema from "effect/Schema"
import { agent, text, tool, toolCalls } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"
import { chatHandler } from "effect-agent-dsl/web"

const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => a + b })
const model = scriptedModel((request) => {
  const last = request.messages.at(-1)
  return last?.role === "user" ? toolCalls([{ id: "c1", name: "add", arguments: { a: 2, b: 3 } }]) : text(`The sum is ${last?.content ?? "?"}.`)
}, { chunk: 4 })

export const handle = chatHandler(agent("edge").model(model).tools({ add }))
