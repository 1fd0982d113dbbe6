/**
 * A real v0.3 client: the official SDK's 0.3.14 `A2AClient` (installed in this repo as a dependency
 * of a dev tool) against our server, through the 1.x SDK's compatibility layer: card, message/send,
 * message/stream, tasks/get, tasks/cancel, input-required then resumed on the same task. Skipped
 * when that copy of the SDK is not installed.
 */
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Effect, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { agent, tool } from "../../../src/index.ts"
import { serveA2a, type A2aServer } from "../../../src/protocols/a2a/index.ts"
import { scriptedModel } from "../../../src/testing/index.ts"

const legacyEntry = resolve("node_modules/@dwmkerr/mock-llm/node_modules/@a2a-js/sdk/dist/client/index.js")
const available = existsSync(legacyEntry)

let paid = 0
const pay = tool("pay", { args: Schema.Struct({ to: Schema.String }), needsApproval: true, run: ({ to }) => (paid += 1, `paid ${to}`) })
const bank = agent("bank").model(scriptedModel((req) =>
  req.messages.at(-1)?.role === "tool"
    ? { _tag: "Text", content: `ok: ${String(req.messages.at(-1)?.content)}` }
    : { _tag: "ToolCalls", calls: [{ id: `p${req.messages.length}`, name: "pay", arguments: { to: "ann" } }] }
)).tools({ pay })
const wait = tool("wait", { args: Schema.Struct({}), run: () => Effect.never })
const waiter = agent("waiter").model(scriptedModel({ _tag: "ToolCalls", calls: [{ id: "w", name: "wait", arguments: {} }] })).tools({ wait })

let bankServer: A2aServer
let waitServer: A2aServer
beforeAll(async () => {
  bankServer = await serveA2a(bank)
  waitServer = await serveA2a(waiter)
})
afterAll(async () => {
  await Promise.all([bankServer?.close(), waitServer?.close()])
})

const message = (text: string, ids: { taskId?: string; contextId?: string } = {}) => ({
  message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text }], ...ids }
})

describe.skipIf(!available)("the SDK's v0.3 A2AClient against our server", () => {
  it("reads the v0.3 card, pays after approval on the same task, gets the task", async () => {
    const { A2AClient } = await import(pathToFileURL(legacyEntry).href)
    const client = await A2AClient.fromCardUrl(`${bankServer.url}/.well-known/agent-card.json`)
    const first = await client.sendMessage(message("pay ann"))
    expect(first.result.kind).toBe("task")
    expect(first.result.status.state).toBe("input-required")
    expect(paid).toBe(0)
    const done = await client.sendMessage(message("approve", { taskId: first.result.id, contextId: first.result.contextId }))
    expect(done.result.status.state).toBe("completed")
    expect(JSON.stringify(done.result.artifacts)).toContain("ok: paid ann")
    expect(paid).toBe(1)
    const got = await client.getTask({ id: first.result.id })
    expect(got.result.status.state).toBe("completed")
    const refused = await client.sendMessage(message("maybe", { taskId: (await client.sendMessage(message("pay ann again"))).result.id }))
    expect(refused.error.code).toBe(-32602)
  })

  it("streams with message/stream and cancels with tasks/cancel", async () => {
    const { A2AClient } = await import(pathToFileURL(legacyEntry).href)
    const client = await A2AClient.fromCardUrl(`${waitServer.url}/.well-known/agent-card.json`)
    const stream = client.sendMessageStream(message("go"))
    const first = (await stream.next()).value
    expect(first.kind).toBe("task")
    while (waitServer.running() === 0) await new Promise((r) => setTimeout(r, 5))
    const canceled = await client.cancelTask({ id: first.id })
    expect(canceled.result.status.state).toBe("canceled")
    const states: Array<string> = []
    for await (const event of stream) if (event.kind === "status-update") states.push(event.status.state)
    expect(states.at(-1)).toBe("canceled")
    expect(waitServer.running()).toBe(0)
  })
})
