/**
 * An application that reports its runs to a running studio: the two lines of "Studio" in docs/guide/observability.md.
 *   npm run studio                                               # in one terminal; it prints its URL
 *   EFFECT_AGENT_STUDIO_URL='<that URL>' npx tsx examples/studio-connect.ts   # in another
 * The runs appear in the studio's Runs page with source "ingest". With the studio down, the app runs
 * the same and says how many events it could not send.
 */
import { Schema } from "effect"
import { agent, text, tool, toolCalls } from "effect-agent-dsl"
import { studioHooks } from "effect-agent-dsl/studio"
import { scriptedModel } from "effect-agent-dsl/testing"

const lookup_order = tool("lookup_order", {
  description: "Find an order by id",
  args: Schema.Struct({ id: Schema.String }),
  effect: "readOnly",
  run: ({ id }) => ({ id, status: "shipped", eta: "tomorrow" })
})

const support = agent("support")
  .prompt("Answer questions about orders. Look them up first.")
  .model(scriptedModel((request) => {
    const last = request.messages.at(-1)
    if (last?.role === "user") return toolCalls([{ name: "lookup_order", arguments: { id: /\d+/.exec(last.content)?.[0] ?? "0" } }])
    return text(`Your order is on its way: ${last?.content}`)
  }, { chunk: 5 }))
  .tools({ lookup_order })

// The two lines: the hooks, and the agent that uses them.
const hooks = studioHooks()
const watched = support.onEvent(hooks)

for (const question of ["Where is order 1042?", "And order 77?", "Status of 5?"]) {
  process.stdout.write(`${await watched.run(question)}\n`)
}
await hooks.flush()
process.stdout.write(hooks.dropped === 0 ? "sent every event to the studio\n" : `${hooks.dropped} events could not be sent (is the studio running, and EFFECT_AGENT_STUDIO_URL set?)\n`)
