/**
 * The floor: a hand-written agent loop doing the same observable work as our agent, with nothing else.
 * Same async mock (the function our `ModelClient.fromFunction` wraps), same Effect Schema decode of the
 * arguments (`JSON.parse` + our strict object decoder, `strictResultDecoder`), the same messages appended
 * (system, user, assistant with its calls, one tool message per call), usage summed, the allowlist and the
 * turn/tool-call budget checked in plain JS, and a structural check of every response. No fibers, spans,
 * events, hooks or snapshots. "ours ÷ floor" in `npm run bench` is what our loop costs above this.
 */
import { Result, Schema } from "effect"
import { strictResultDecoder } from "../src/internal/strict-decode.ts"
import { callUsage, type Harness, type MakeRunner, maxTurns, mockModel, question, runTool, type Scenario, systemPrompt } from "./calculator/script.ts"

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
interface Call {
  readonly id: string
  readonly name: string
  readonly arguments: string
}
/** The transcript's messages, as ours appends them. */
export type Message =
  | { readonly role: "system" | "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string; readonly toolCalls?: ReadonlyArray<Call> }
  | { readonly role: "tool"; readonly toolCallId: string; readonly name: string; readonly content: string }
type Reply =
  | { readonly _tag: "Text"; readonly content: string; readonly usage: typeof callUsage }
  | { readonly _tag: "ToolCalls"; readonly calls: ReadonlyArray<Call>; readonly usage: typeof callUsage }

/** The structural check of a response. */
export const isReply = (value: unknown): value is Reply => {
  if (typeof value !== "object" || value === null) return false
  const reply = value as { _tag?: unknown; content?: unknown; calls?: unknown }
  return reply._tag === "Text" ? typeof reply.content === "string" : reply._tag === "ToolCalls" && Array.isArray(reply.calls)
}

/** A call's arguments: `JSON.parse` + the strict object decoder (our fast path), or the tool result that says why not. */
export const decodeArguments = (
  decode: ReturnType<typeof floorSetup>["decode"],
  text: string
): Result.Result<{ readonly a: number; readonly b: number }, string> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return Result.mapError(decode(parsed), (error) => `invalid arguments: ${error.message}`)
}

/** What both floors set up once per runner: the decoder, the tools by name, their definitions, the turn limit, the mock. */
export const floorSetup = (scenario: Scenario, harness: Harness) => {
  const { counters } = harness
  const tools = new Map([
    ["add", runTool(scenario, counters, "add")],
    ["multiply", runTool(scenario, counters, "multiply")]
  ])
  return {
    decode: strictResultDecoder(Schema.toCodecJson(Operands)),
    tools,
    definitions: [...tools.keys()].map((name) => ({
      type: "function" as const,
      name,
      parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"], additionalProperties: false }
    })),
    limit: maxTurns(scenario),
    // The same mock body as ours' `fromFunction` model.
    model: mockModel(scenario, harness)
  }
}

export const makeRunner: MakeRunner = (scenario, harness) => {
  const { decode, tools, definitions, limit, model } = floorSetup(scenario, harness)
  return async () => {
    const messages: Array<Message> = [{ role: "system", content: systemPrompt }, { role: "user", content: question }]
    let turns = 0
    let toolCalls = 0
    let inputTokens = 0
    let outputTokens = 0
    for (;;) {
      if (turns >= limit) throw new Error(`budget exceeded: ${turns} turns`)
      turns++
      const reply = await model({ messages: messages.slice(), tools: definitions } as { messages: ReadonlyArray<Message> })
      if (!isReply(reply)) throw new Error("invalid response")
      inputTokens += reply.usage.inputTokens
      outputTokens += reply.usage.outputTokens
      if (reply._tag === "Text") return reply.content
      messages.push({ role: "assistant", content: "", toolCalls: reply.calls })
      for (const call of reply.calls) {
        const run = tools.get(call.name)
        if (run === undefined) throw new Error(`tool not allowed: ${call.name}`)
        if (++toolCalls > 1000) throw new Error("budget exceeded: tool calls")
        const args = decodeArguments(decode, call.arguments)
        const content = Result.isFailure(args) ? args.failure : String(await run(args.success))
        messages.push({ role: "tool", toolCallId: call.id, name: call.name, content })
      }
    }
  }
}
