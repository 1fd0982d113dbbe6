/**
 * The Effect floor: the floor's loop (`bench/floor.ts`) written as one Effect: one `Effect.gen` per run,
 * the model call and each tool as `Effect.promise`, the rest the same plain JS, run with
 * `Effect.runPromise`. It measures what running the same work on Effect's fiber runtime costs at the
 * least: "ours ÷ Effect floor" is what our loop's design costs above Effect itself, "Effect floor ÷
 * floor" what Effect costs above plain async JS.
 */
import { Effect, Result } from "effect"
import { type MakeRunner, question, systemPrompt } from "./calculator/script.ts"
import { decodeArguments, floorSetup, isReply, type Message } from "./floor.ts"

export const makeRunner: MakeRunner = (scenario, harness) => {
  const { decode, tools, definitions, limit, model } = floorSetup(scenario, harness)
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
        const args = decodeArguments(decode, call.arguments)
        const content = Result.isFailure(args) ? args.failure : String(yield* Effect.promise(() => run(args.success)))
        messages.push({ role: "tool", toolCallId: call.id, name: call.name, content })
      }
    }
  })
  return () => Effect.runPromise(loop)
}
