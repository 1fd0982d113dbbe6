/**
 * A transcript read as exchanges gives back every message, in order; results follow only an assistant
 * message that calls tools, and every tool message right after one is among its results.
 */
import { fc, test } from "@fast-check/vitest"
import { describe, expect } from "vitest"
import { exchangesOf } from "../../src/model/exchanges.ts"
import type { LlmMessage } from "../../src/model/messages.ts"

const arbId = fc.constantFrom("a", "b", "c", "")
const arbMessage: fc.Arbitrary<LlmMessage> = fc.oneof(
  fc.record({ role: fc.constantFrom("system" as const, "user" as const), content: fc.string() }),
  fc.record({ role: fc.constant("assistant" as const), content: fc.string() }),
  fc.record({ role: fc.constant("assistant" as const), content: fc.string(), toolCalls: fc.array(fc.record({ id: arbId, name: fc.constant("t"), arguments: fc.constant("{}") }), { maxLength: 3 }) }),
  fc.record({ role: fc.constant("tool" as const), toolCallId: arbId, name: fc.constant("t"), content: fc.string() })
)

describe("exchangesOf", () => {
  test.prop([fc.array(arbMessage, { maxLength: 20 })])("gives back the transcript, results after the calls that precede them", (messages) => {
    const exchanges = [...exchangesOf(messages)]
    expect(exchanges.flatMap(({ message, results }) => [message, ...results])).toEqual(messages)
    exchanges.forEach(({ message, results }, at) => {
      const calls = message.role === "assistant" && message.toolCalls !== undefined
      if (!calls) expect(results).toEqual([])
      // A run of results is never split: the next exchange does not start with a result of this one.
      if (calls) expect(exchanges[at + 1]?.message.role).not.toBe("tool")
    })
  })
})
