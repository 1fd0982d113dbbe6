/**
 * Properties of `fromUIMessages` over generated `useChat` bodies:
 * - valid chats (any mix of text, reasoning, step, file, data and tool parts in every state, AI SDK
 *   5/6/7 shapes, as an array or inside `{ id, messages, trigger }`) always decode, and the transcript
 *   keeps the loop's law: every call of an assistant message gets exactly one tool result, right after
 *   it, before anything else; no system message; `input` is the last user message's text;
 * - any body at all (arbitrary JSON, valid chats with one field broken, hostile values such as cycles,
 *   BigInts, throwing getters, prototype keys) gives a `ChatInput` or throws `UIMessagesInvalid`:
 *   never another exception, and Object.prototype is never touched.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { arbHostileValueKind, hostileValue } from "effect-agent-dsl/testing/arbitraries"
import { fromUIMessages, UIMessagesInvalid } from "effect-agent-dsl/web"
import type { LlmMessage } from "effect-agent-dsl"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 200)

const arbId = fc.string({ minLength: 1, maxLength: 12 })
const arbJson = fc.jsonValue({ maxDepth: 3 })
const arbState = fc.constantFrom("input-streaming", "input-available", "approval-requested", "approval-responded", "output-available", "output-error", "output-denied")

const arbToolPart = fc.record({ name: fc.stringMatching(/^[a-z_]{1,10}$/), dynamic: fc.boolean(), toolCallId: arbId, state: arbState, input: arbJson, output: arbJson, errorText: fc.string(), approvalId: arbId, approved: fc.boolean(), reason: fc.option(fc.string(), { nil: undefined }) })
  .map(({ name, dynamic, toolCallId, state, input, output, errorText, approvalId, approved, reason }) => {
    const head = dynamic ? { type: "dynamic-tool", toolName: name } : { type: `tool-${name}` }
    const base = { ...head, toolCallId, state, input }
    switch (state) {
      case "output-available":
        return { ...base, output }
      case "output-error":
        return { ...base, errorText }
      case "approval-requested":
        return { ...base, approval: { id: approvalId } }
      case "approval-responded":
        return { ...base, approval: { id: approvalId, approved, ...(reason === undefined ? {} : { reason }) } }
      case "output-denied":
        return { ...base, approval: { id: approvalId, approved: false, ...(reason === undefined ? {} : { reason }) } }
      default:
        return base
    }
  })

const arbOtherPart = fc.oneof(
  fc.string().map((text) => ({ type: "text", text, state: "done" })),
  fc.string().map((text) => ({ type: "reasoning", text })),
  fc.constant({ type: "step-start" }),
  fc.record({ type: fc.constant("file"), mediaType: fc.constantFrom("image/png", "text/plain"), url: fc.webUrl() }),
  fc.record({ type: fc.constant("source-url"), sourceId: arbId, url: fc.webUrl() }),
  arbJson.map((data) => ({ type: "data-note", data }))
)

const arbMessage = fc.oneof(
  fc.record({ id: arbId, role: fc.constant("user"), parts: fc.array(arbOtherPart, { maxLength: 4 }) }),
  fc.record({ id: arbId, role: fc.constant("assistant"), parts: fc.array(fc.oneof(arbOtherPart, arbToolPart), { maxLength: 6 }), metadata: fc.option(arbJson, { nil: undefined }) })
)
const arbChat = fc.array(arbMessage, { maxLength: 8 })
const arbBody = fc.oneof(arbChat, arbChat.map((messages) => ({ id: "chat", messages, trigger: "submit-message" })))

/** The loop's law: each assistant call answered exactly once, right after its message. */
const wellFormed = (transcript: ReadonlyArray<LlmMessage>) => {
  for (let i = 0; i < transcript.length; i++) {
    const m = transcript[i]!
    expect(m.role).not.toBe("system")
    if (m.role === "tool") {
      // A tool result belongs to the nearest assistant message before it.
      let j = i - 1
      while (transcript[j]?.role === "tool") j--
      const owner = transcript[j]
      expect(owner?.role).toBe("assistant")
    }
    if (m.role !== "assistant" || m.toolCalls === undefined) continue
    const results = transcript.slice(i + 1, i + 1 + m.toolCalls.length)
    expect(results.map((r) => (r.role === "tool" ? r.toolCallId : `not a result: ${r.role}`))).toEqual(m.toolCalls.map((c) => c.id))
    for (const call of m.toolCalls) expect(() => JSON.parse(call.arguments)).not.toThrow()
  }
}

/** Throws only UIMessagesInvalid. */
const decodeOrRefuse = (body: unknown) => {
  try {
    return fromUIMessages(body)
  } catch (error) {
    if (!(error instanceof UIMessagesInvalid)) throw error
    return error
  }
}

describe("fromUIMessages, for any chat", () => {
  it("decodes every valid chat into a well-formed transcript and the last user text", () => {
    fc.assert(fc.property(arbBody, (body) => {
      const messages = Array.isArray(body) ? body : body.messages
      const chat = fromUIMessages(body)
      wellFormed(chat.transcript)
      const last = messages.at(-1)
      if (last?.role === "user") {
        expect(chat.input).toBe(last.parts.flatMap((p) => (p.type === "text" ? [(p as { text: string }).text] : [])).join("\n"))
      } else {
        expect(chat.input).toBeUndefined()
      }
      const settled = messages.flatMap((m) => m.role === "assistant" ? m.parts.filter((p) => "toolCallId" in p && String(p.state).startsWith("output-")) : [])
      // Every settled call of the history (before the last user message) is in the transcript.
      const history = last?.role === "user" ? messages.slice(0, -1) : messages
      const settledInHistory = history.flatMap((m) => m.role === "assistant" ? m.parts.filter((p) => "toolCallId" in p && String(p.state).startsWith("output-")) : [])
      expect(chat.transcript.filter((m) => m.role === "tool")).toHaveLength(settledInHistory.length)
      expect(settled.length).toBeGreaterThanOrEqual(settledInHistory.length)
    }), { numRuns })
  })
})

describe("fromUIMessages, for any body", () => {
  const breakOne = (chat: Array<Record<string, unknown>>, path: ReadonlyArray<string | number>, value: unknown) => {
    const copy = structuredClone(chat) as Array<Record<string, unknown>>
    let at: Record<string | number, unknown> = copy as unknown as Record<number, unknown>
    for (const key of path.slice(0, -1)) {
      const next = at[key]
      if (typeof next !== "object" || next === null) return copy
      at = next as Record<string | number, unknown>
    }
    at[path.at(-1)!] = value
    return copy
  }
  const arbHostile = fc.oneof(
    arbHostileValueKind.map((kind) => hostileValue(kind)),
    fc.constantFrom("__proto__", "constructor", "prototype").map((key) => JSON.parse(`{"${key}":{"polluted":true},"role":"user","parts":[]}`)),
    fc.string({ minLength: 0, maxLength: 3 }),
    fc.constant(null)
  )

  it("gives a ChatInput or UIMessagesInvalid, never another exception, and never pollutes Object.prototype", () => {
    fc.assert(fc.property(
      fc.oneof(
        fc.anything(),
        fc.jsonValue(),
        fc.tuple(arbChat, fc.array(fc.oneof(fc.nat(8), fc.constantFrom("parts", "role", "type", "toolCallId", "state", "input", "output", "approval", "text"))), arbHostile)
          .map(([chat, path, value]) => breakOne(chat as Array<Record<string, unknown>>, path.length === 0 ? [0] : path, value)),
        arbHostile.map((value) => [value]),
        arbHostile
      ),
      (body) => {
        const result = decodeOrRefuse(body)
        if (!(result instanceof UIMessagesInvalid)) wellFormed(result.transcript)
        expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
      }
    ), { numRuns })
  })
})
