// A user's agents module in TypeScript (type annotations Node 20 cannot strip), for the studio bin:
// `npx effect-agent-studio studio-agents.ts` loads it through the project's tsx.
import { Schema } from "effect"
import { agent, text, tool } from "effect-agent-dsl"
import { scriptedModel } from "effect-agent-dsl/testing"

const add = tool("add", {
  description: "Add two numbers",
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  run: ({ a, b }: { readonly a: number; readonly b: number }): number => a + b
})

export const calculator = agent("calculator").model(scriptedModel(text("3"))).tools({ add })
