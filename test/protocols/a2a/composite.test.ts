/**
 * Serving a composite (any runnable) over A2A, and two tasks of one context at once: the events of
 * each run reach its own task (one run of a context at a time, in order).
 */
import { TaskState } from "@a2a-js/sdk"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent } from "../../../src/index.ts"
import { pipeline } from "../../../src/compose/index.ts"
import { serveA2a, type A2aServer } from "../../../src/protocols/a2a/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import { asTask, outputText, request, sdkClient, text, userMessage } from "./helpers.ts"

const upper = agent("upper").model(scriptedModel((req) => ({ _tag: "Text", content: String(req.messages.at(-1)?.content).toUpperCase(), usage: { inputTokens: 3, outputTokens: 2 } })))
const exclaim = agent("exclaim").model(scriptedModel((req) => ({ _tag: "Text", content: `${String(req.messages.at(-1)?.content)}!`, usage: { inputTokens: 5, outputTokens: 1 } })))
const slowEcho = agent("slow-echo").model(scriptedModel((req) =>
  Effect.as(Effect.sleep(40), { _tag: "Text" as const, content: `${String(req.messages.at(-1)?.content)} (${req.messages.length})`, usage: { inputTokens: 7, outputTokens: 1 } })
))

let composite: A2aServer
let slow: A2aServer
beforeAll(async () => {
  composite = await serveA2a(pipeline("shout", upper, exclaim), { description: "Shouts" })
  slow = await serveA2a(slowEcho)
})
afterAll(async () => {
  await Promise.all([composite?.close(), slow?.close()])
})

describe("a composite served over A2A", () => {
  it("runs the pipeline per task; its card names it; the usage of its members is reported", async () => {
    const card: any = await (await fetch(`${composite.url}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } })).json()
    expect(card.name).toBe("shout")
    expect(card.description).toBe("Shouts")
    const client = await sdkClient(composite.url)
    const task = asTask(await client.sendMessage(request(userMessage([text("hello")]))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(outputText(task)).toBe("HELLO!")
    let usage: unknown
    for await (const event of client.sendMessageStream(request(userMessage([text("again")])))) {
      if (event.payload?.$case === "statusUpdate" && event.payload.value.status?.state === TaskState.TASK_STATE_COMPLETED) usage = event.payload.value.metadata?.["usage"]
    }
    expect(usage).toEqual({ inputTokens: 8, outputTokens: 3 })
  })
})

describe("two tasks of one context at once", () => {
  it("run one after the other, each with its own events and output", async () => {
    const client = await sdkClient(slow.url)
    const contextId = crypto.randomUUID()
    const [a, b] = await Promise.all([
      client.sendMessage(request(userMessage([text("first")], { contextId }))),
      client.sendMessage(request(userMessage([text("second")], { contextId })))
    ])
    const outputs = [outputText(asTask(a)), outputText(asTask(b))]
    // Streamed at once: each task's final usage is its own run's, never the other's or none.
    const usageOf = async (words: string) => {
      let usage: unknown
      for await (const event of client.sendMessageStream(request(userMessage([text(words)], { contextId })))) {
        if (event.payload?.$case === "statusUpdate" && event.payload.value.status?.state === TaskState.TASK_STATE_COMPLETED) usage = event.payload.value.metadata?.["usage"]
      }
      return usage
    }
    const usages = await Promise.all([usageOf("third"), usageOf("fourth"), usageOf("fifth")])
    expect(usages).toEqual([{ inputTokens: 7, outputTokens: 1 }, { inputTokens: 7, outputTokens: 1 }, { inputTokens: 7, outputTokens: 1 }])
    expect(outputs[0]!.startsWith("first (")).toBe(true)
    expect(outputs[1]!.startsWith("second (")).toBe(true)
    // One ran with the other's exchange in its history: two messages, then four.
    expect(outputs.map((o) => o.replace(/^\w+ /, "")).sort()).toEqual(["(2)", "(4)"])
  })
})
