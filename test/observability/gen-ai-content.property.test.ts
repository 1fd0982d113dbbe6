/**
 * Laws of the captured content: for any conversation (hostile text included: lone surrogates, quotes,
 * control characters, JSON-looking strings, arguments that are not JSON), the content attributes are
 * JSON text that gives back every message's content exactly, in order, system prompts apart, and
 * every tool call and response with its id.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect } from "vitest"
import type { LlmMessage, LlmResponse, ToolCall } from "../../src/model/messages.ts"
import { inputContent, outputContent } from "../../src/runtime/gen-ai-content.ts"

const arbText = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.constantFrom('"', "\\", "\u0000", "\ud800", "}", '{"a":1}', "null", "</script>"),
  fc.json()
)
const arbId = fc.string({ minLength: 1, maxLength: 8, unit: "binary" })
const arbCall: fc.Arbitrary<ToolCall> = fc.record({
  id: arbId,
  name: fc.stringMatching(/^[a-z_]{1,10}$/),
  arguments: fc.oneof(fc.json(), arbText)
})
const arbMessage: fc.Arbitrary<LlmMessage> = fc.oneof(
  fc.record({ role: fc.constantFrom("system" as const, "user" as const), content: arbText }),
  fc.record({ role: fc.constant("assistant" as const), content: arbText, toolCalls: fc.array(arbCall, { maxLength: 3 }) }),
  fc.record({ role: fc.constant("tool" as const), toolCallId: arbId, name: fc.constant("t"), content: arbText })
)

const parsedArguments = (raw: string): unknown => {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

describe("captured content", () => {
  test.prop([fc.array(arbMessage, { maxLength: 8 })])("gives back every message, in order, as JSON", (messages) => {
    const attributes = inputContent(messages)
    const system = attributes["gen_ai.system_instructions"] === undefined ? [] : JSON.parse(attributes["gen_ai.system_instructions"])
    const input = JSON.parse(attributes["gen_ai.input.messages"]!)
    expect(system).toEqual(messages.filter((m) => m.role === "system").map((m) => ({ type: "text", content: m.content })))
    const rest = messages.filter((m) => m.role !== "system")
    expect(input.map((m: { role: string }) => m.role)).toEqual(rest.map((m) => m.role))
    rest.forEach((message, i) => {
      const parts = input[i].parts
      switch (message.role) {
        case "user":
          expect(parts).toEqual([{ type: "text", content: message.content }])
          break
        case "tool":
          expect(parts).toEqual([{ type: "tool_call_response", id: message.toolCallId, response: message.content }])
          break
        case "assistant":
          expect(parts).toEqual([
            ...(message.content === "" ? [] : [{ type: "text", content: message.content }]),
            ...(message.toolCalls ?? []).map((c) => ({ type: "tool_call", id: c.id, name: c.name, arguments: parsedArguments(c.arguments) }))
          ])
      }
    })
  })

  test.prop([fc.oneof(
    fc.record({ _tag: fc.constant("Text" as const), content: arbText }),
    fc.record({ _tag: fc.constant("ToolCalls" as const), calls: fc.array(arbCall, { minLength: 1, maxLength: 3 }) })
  )])("gives back the answer with a finish reason", (response: LlmResponse) => {
    const [message] = JSON.parse(outputContent(response)["gen_ai.output.messages"]!)
    expect(message.role).toBe("assistant")
    expect(message.finish_reason).toBe(response._tag === "Text" ? "stop" : "tool_call")
    if (response._tag === "ToolCalls") expect(message.parts.map((p: { id: string }) => p.id)).toEqual(response.calls.map((c) => c.id))
    else expect(message.parts).toEqual(response.content === "" ? [] : [{ type: "text", content: response.content }])
  })
})
