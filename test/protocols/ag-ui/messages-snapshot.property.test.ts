/**
 * The closing `MESSAGES_SNAPSHOT` repeats the client's messages, which are read leniently (`content:
 * null`, tool calls without `type`, a part of an unknown type, an activity message without its
 * content, a `name` that is not a string). Whatever input the handler accepts, the snapshot must be
 * one `@ag-ui/core`'s schema accepts: the protocol's client checks every event, and one message that
 * does not fit fails the whole run there. Checked with generated conversations, and once by hand.
 */
import { EventSchemas } from "@ag-ui/core/schemas"
import { fc, test } from "@fast-check/vitest"
import { describe, expect, it } from "vitest"
import { agent, text } from "effect-agent-dsl"
import { agUiHandler } from "effect-agent-dsl/ag-ui"
import { scriptedModel } from "effect-agent-dsl/testing"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 60)

const handler = agUiHandler(agent("echo").model(scriptedModel(() => text("ok"))))

/** The events of one run of the handler on `messages`, and its HTTP status. */
const run = async (messages: ReadonlyArray<unknown>) => {
  const response = await handler(new Request("http://localhost/", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ threadId: "t", runId: "r", tools: [], context: [], messages })
  }))
  const body = await response.text()
  const events = response.status !== 200
    ? []
    : body.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => JSON.parse(f.slice(6)) as { readonly type: string; readonly messages?: ReadonlyArray<{ readonly id: string }> })
  return { status: response.status, body, events }
}

/** A field AG-UI types, with what a lenient client may put there. */
const optional = <A>(value: fc.Arbitrary<A>) => fc.option(fc.oneof(value, fc.constant(null), fc.constant(5), fc.constant("x")), { nil: undefined })
const extras = fc.record({ name: optional(fc.string()), metadata: optional(fc.constant({ source: "ui" })), custom: optional(fc.constant([1])) }, { requiredKeys: [] })
/** The optional fields AG-UI types on a tool call, a content part and a source, each maybe mistyped or null. */
const callExtras = fc.record({ encryptedValue: optional(fc.string()), metadata: optional(fc.constant({ source: "ui" })), custom: optional(fc.constant([1])) }, { requiredKeys: [] })
const partExtras = fc.record({ id: optional(fc.string()), metadata: optional(fc.constant({ alt: "a" })) }, { requiredKeys: [] })
const part = fc.oneof(
  fc.tuple(fc.record({ type: fc.constant("text"), text: fc.string() }), partExtras).map(([p, extra]) => ({ ...p, ...extra })),
  fc.record({ type: fc.constant("text") }),
  fc.record({ type: fc.constantFrom("weird", "image"), text: fc.string() }),
  fc.tuple(fc.record({ type: fc.constantFrom("image", "document"), source: fc.oneof(
    fc.record({ type: fc.constant("url"), value: fc.string(), mimeType: optional(fc.constant("image/png")) }, { requiredKeys: ["type", "value"] }),
    fc.record({ type: fc.constant("file"), value: fc.string(), provider: optional(fc.constant("openai")), mimeType: optional(fc.constant("application/pdf")) }, { requiredKeys: ["type", "value"] }),
    fc.record({ type: fc.constant("data"), value: fc.string() }),
    fc.record({ type: fc.constant("data"), value: fc.string(), mimeType: fc.constant("image/png") }),
    fc.constant(null)
  ) }), partExtras).map(([p, extra]) => ({ ...p, ...extra }))
)
const userContent = fc.oneof(fc.string(), fc.array(part, { minLength: 1, maxLength: 3 }))

/** One exchange: an assistant message whose calls (if any) are each answered by a tool message, between front-end messages. */
const exchange = (n: number) =>
  fc.tuple(
    fc.integer({ min: 0, max: 2 }),
    fc.option(fc.string(), { nil: undefined }).chain((content) => fc.constantFrom(content, null as unknown as string)),
    fc.boolean(),
    extras,
    fc.array(fc.oneof(
      fc.record({ role: fc.constant("activity"), activityType: fc.option(fc.string(), { nil: undefined }), content: fc.option(fc.constant({ step: 1 }), { nil: undefined }) }, { requiredKeys: ["role"] }),
      fc.record({ role: fc.constant("reasoning"), content: fc.option(fc.string(), { nil: undefined }) }, { requiredKeys: ["role"] })
    ), { maxLength: 2 }),
    fc.constantFrom(null, undefined, "failed"),
    fc.array(callExtras, { minLength: 2, maxLength: 2 }),
    fc.option(fc.array(part, { minLength: 1, maxLength: 2 }), { nil: undefined })
  ).map(([calls, content, typed, extra, frontEnd, error, callExtra, resultParts]) => {
    const ids = Array.from({ length: calls }, (_, i) => `c${n}-${i}`)
    const assistant = {
      id: `a${n}`,
      role: "assistant",
      ...extra,
      ...(content === undefined ? {} : { content }),
      ...(calls === 0 ? (typed ? { toolCalls: null } : {}) : { toolCalls: ids.map((id, i) => ({ id, ...(typed ? { type: "function" } : {}), function: { name: "f", arguments: "{}" }, ...callExtra[i] })) })
    }
    const results = ids.map((id, i) => ({ id: `t${n}-${i}`, role: "tool", toolCallId: id, content: resultParts ?? "done", ...(error === undefined ? {} : { error }) }))
    return [assistant, ...results, ...frontEnd.map((m, i) => ({ id: `f${n}-${i}`, ...m }))]
  })

const conversation = fc.array(fc.tuple(userContent, extras), { minLength: 1, maxLength: 3 }).chain((users) =>
  fc.tuple(...users.map((_, n) => exchange(n))).map((exchanges) =>
    users.flatMap(([content, extra], n) => [{ id: `u${n}`, role: "user", content, ...extra }, ...(n < users.length - 1 ? exchanges[n]! : [])])
  )
)

describe("the closing MESSAGES_SNAPSHOT", () => {
  test.prop([conversation], { numRuns })("is one @ag-ui/core's schema accepts, for any lenient input (the handler reads them all)", async (messages) => {
    const { status, body, events } = await run(messages)
    expect(status, body).toBe(200)
    const snapshot = events.find((e) => e.type === "MESSAGES_SNAPSHOT")
    expect(snapshot).toBeDefined()
    const checked = EventSchemas.safeParse(snapshot)
    expect(checked.success, checked.success ? "" : `${JSON.stringify(snapshot)}\n${checked.error.message}`).toBe(true)
    // Every user, assistant and tool message the client sent keeps its place.
    const sent = messages.filter((m) => ["user", "assistant", "tool"].includes(m.role)).map((m) => m.id)
    expect(snapshot!.messages!.map((m) => m.id).filter((id) => sent.includes(id))).toEqual(sent)
  })

  it("repeats a lenient client's messages in AG-UI's shapes", async () => {
    const { events } = await run([
      { id: "u0", role: "user", content: [{ type: "text", text: "hi" }, { type: "text" }, { type: "sticker", text: "x" }], name: 7 },
      { id: "a0", role: "assistant", content: null, toolCalls: [{ id: "c0", function: { name: "f", arguments: "{}" } }], metadata: "x" },
      { id: "t0", role: "tool", toolCallId: "c0", content: "done", error: null },
      { id: "x0", role: "activity" },
      { id: "r0", role: "reasoning", content: "thinking" },
      { id: "u1", role: "user", content: "again" }
    ])
    const snapshot = events.find((e) => e.type === "MESSAGES_SNAPSHOT")!
    expect(snapshot.messages!.slice(0, 5)).toEqual([
      { id: "u0", role: "user", content: [{ type: "text", text: "hi" }] },
      { id: "a0", role: "assistant", toolCalls: [{ id: "c0", type: "function", function: { name: "f", arguments: "{}" } }] },
      { id: "t0", role: "tool", toolCallId: "c0", content: "done" },
      { id: "r0", role: "reasoning", content: "thinking" },
      { id: "u1", role: "user", content: "again" }
    ])
    expect(EventSchemas.safeParse(snapshot).success).toBe(true)
  })

  it("leaves out the mistyped fields inside a tool call, a content part and its source, keeping the call and the part", async () => {
    const call = (id: string, extra: object) => ({ id, type: "function", function: { name: "weather", arguments: "{}" }, ...extra })
    const { events } = await run([
      { id: "u0", role: "user", content: [{ type: "text", text: "q", id: 5, metadata: null }, { type: "image", source: { type: "url", value: "https://x/y.png", mimeType: 5 }, metadata: null }] },
      { id: "a0", role: "assistant", toolCalls: [call("c0", { metadata: null }), call("c1", { encryptedValue: 5, metadata: "x" }), call("c2", { encryptedValue: "e", metadata: { k: null }, custom: 1 })] },
      { id: "t0", role: "tool", toolCallId: "c0", content: "ok" },
      { id: "t1", role: "tool", toolCallId: "c1", content: [{ type: "document", source: { type: "file", value: "file-1", provider: null }, id: null }] },
      { id: "t2", role: "tool", toolCallId: "c2", content: "ok" },
      { id: "u1", role: "user", content: "hi" }
    ])
    const snapshot = events.find((e) => e.type === "MESSAGES_SNAPSHOT")!
    const checked = EventSchemas.safeParse(snapshot)
    expect(checked.success, checked.success ? "" : checked.error.message).toBe(true)
    expect(snapshot.messages!.slice(0, 4)).toEqual([
      { id: "u0", role: "user", content: [{ type: "text", text: "q" }, { type: "image", source: { type: "url", value: "https://x/y.png" } }] },
      { id: "a0", role: "assistant", toolCalls: [call("c0", {}), call("c1", {}), call("c2", { encryptedValue: "e", metadata: { k: null }, custom: 1 })] },
      { id: "t0", role: "tool", toolCallId: "c0", content: "ok" },
      { id: "t1", role: "tool", toolCallId: "c1", content: [{ type: "document", source: { type: "file", value: "file-1" } }] }
    ])
  })
})
