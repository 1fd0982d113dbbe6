/**
 * The Effect floor: the floor's loop (`bench/floor.ts`) written as one Effect: one `Effect.gen` per run,
 * the model call and each tool as `Effect.promise`, the rest the same plain JS, run with
 * `Effect.runPromise`. It measures what running the same work on Effect's fiber runtime costs at the
 * least: "ours ÷ Effect floor" is what our loop's design costs above Effect itself, "Effect floor ÷
 * floor" what Effect costs above plain async JS.
 */
import { Effect, Result, Schema } from "effect"
import { callUsage, type MakeRunner, maxTurns, mockModel, question, runTool, systemPrompt } from "./calculator/script.ts"

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const decodeOptions = { errors: "all", onExcessProperty: "error" } as const

interface Call {
  readonly id: string
  readonly name: string
  readonly arguments: string
}
type Message =
  | { readonly role: "system" | "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls?: ReadonlyArray<Call> }
  | { readonly role: "tool"; readonly toolCallId: string; readonly name: string; readonly content: string }
type Reply =
  | { readonly _tag: "Text"; readonly content: string; readonly usage: typeof callUsage }
  | { readonly _tag: "ToolCalls"; readonly calls: ReadonlyArray<Call>; readonly usage: typeof callUsage }

const isReply = (value: unknown): value is Reply => {
  if (typeof value !== "object" || value === null) return false
  const reply = value as { _tag?: unknown; content?: unknown; calls?: unknown }
  return reply._tag === "Text" ? typeof reply.content === "string" : reply._tag === "ToolCalls" && Array.isArray(reply.calls)
}

export const makeRunner: MakeRunner = (scenario, harness) => {
  const { counters } = harness
  const decode = Schema.decodeUnknownResult(Schema.toCodecJson(Operands))
  const tools = new Map([
    ["add", runTool(scenario, counters, "add")],
    ["multiply", runTool(scenario, counters, "multiply")]
  ])
  const definitions = [...tools.keys()].map((name) => ({
    type: "function" as const,
    name,
    parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"], additionalProperties: false }
  }))
  const limit = maxTurns(scenario)
  const model = mockModel(scenario, harness)
  const loop = Effect.gen(function*() {
    const messages: Array<Message> = [{ role: "system", content: systemPrompt }, { role: "user", content: question }]
    let turns = 0
    let toolCalls = 0
    let inputTokens = 0
    let outputTokens = 0
    for (;;) {
      if (turns >= limit) return yield* Effect.fail(new Error(`budget exceeded: ${turns} turns`))
      turns++
      const reply: unknown = yield* Effect.promise(() => model({ messages: messages.slice(), tools: definitions } as { messages: ReadonlyArray<Message> }))
      if (!isReply(reply)) return yield* Effect.fail(new Error("invalid response"))
      inputTokens += reply.usage.inputTokens
      outputTokens += reply.usage.outputTokens
      if (reply._tag === "Text") return reply.content
      messages.push({ role: "assistant", content: "", toolCalls: reply.calls })
      for (const call of reply.calls) {
        const run = tools.get(call.name)
        if (run === undefined) return yield* Effect.fail(new Error(`tool not allowed: ${call.name}`))
        if (++toolCalls > 1000) return yield* Effect.fail(new Error("budget exceeded: tool calls"))
        let content: string
        let parsed: unknown
        try {
          parsed = JSON.parse(call.arguments)
        } catch {
          parsed = undefined
        }
        const args = decode(parsed, decodeOptions)
        if (Result.isFailure(args)) content = `invalid arguments: ${args.failure.message}`
        else content = String(yield* Effect.promise(() => run(args.success)))
        messages.push({ role: "tool", toolCallId: call.id, name: call.name, content })
      }
    }
  })
  return () => Effect.runPromise(loop)
}
