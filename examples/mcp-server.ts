/**
 * An MCP server offering two tools (one from an Effect Schema, one from a JSON Schema) and an agent,
 * over stdio (default) or streamable HTTP:
 *   npx tsx examples/mcp-server.ts              # stdio: point any MCP client at this command
 *   npx tsx examples/mcp-server.ts --http 3001  # http://127.0.0.1:3001/mcp
 *
 * Without AI_PROVIDER the agent answers with a deterministic model (it calls `add` and reports the
 * sum), so the example runs without network or keys; with it, the model comes from the environment.
 */
import { Effect, Schema } from "effect"
import { agent, fromEnv, ModelClient, text, tool, toolCalls } from "effect-agent-dsl"
import { mcpServer, serveHttp, serveStdio } from "effect-agent-dsl/mcp"

const add = tool("add", {
  description: "Add two numbers",
  args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }),
  run: ({ a, b }) => a + b
})

const shout = tool("shout", {
  description: "Upper-cases a text",
  parameters: { type: "object", properties: { text: { type: "string", minLength: 1 } }, required: ["text"], additionalProperties: false },
  run: (args: { readonly text: string }) => args.text.toUpperCase()
})

/** Sums the first two numbers of the question with `add`, then reports the tool's result. */
const offlineModel = ModelClient.fromFunction((request) => {
  const last = request.messages.at(-1)
  if (last?.role === "tool") return text(`The sum is ${last.content}.`)
  const [a = 0, b = 0] = (request.messages.find((m) => m.role === "user")?.content.match(/-?\d+(\.\d+)?/g) ?? []).map(Number)
  return toolCalls([{ id: "call_1", name: "add", arguments: { a, b } }])
})

const adder = agent("adder")
  .prompt("Add the numbers in the question with the add tool, then answer in one sentence.")
  .model((process.env.AI_PROVIDER ?? "").trim() === "" ? offlineModel : fromEnv().client)
  .tools({ add })

const server = mcpServer({ name: "example", tools: { add, shout }, agents: [{ agent: adder, description: "Adds the numbers in a question" }] })

const httpAt = process.argv.indexOf("--http")
const program = httpAt === -1
  ? Effect.andThen(serveStdio(server), Effect.never)
  : Effect.gen(function*() {
    const { url } = yield* serveHttp(server, { port: Number(process.argv[httpAt + 1] ?? 3001) })
    console.error(`MCP server listening at ${url}`)
    return yield* Effect.never
  })

Effect.runFork(Effect.scoped(program))
