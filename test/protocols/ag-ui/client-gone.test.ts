/**
 * An AG-UI client that goes away stops the run and its model request, also where only the request's
 * signal tells (runtimes that abort it but never cancel the response body).
 */
import { Effect, Schedule, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type ModelClient } from "effect-agent-dsl"
import { agUiHandler } from "./fixture.ts"

const endlessModel = () => {
  const closed: Array<string> = []
  const calls: Array<unknown> = []
  const model: ModelClient = {
    chat: () => Effect.die("streaming only"),
    stream: (request) => {
      calls.push(request)
      return Stream.fromSchedule(Schedule.spaced("20 millis")).pipe(
        Stream.map((n) => ({ _tag: "TextDelta" as const, delta: `word${n} ` })),
        Stream.ensuring(Effect.sync(() => void closed.push("model request closed")))
      )
    }
  }
  return { model, closed, calls }
}
const input = JSON.stringify({ threadId: "t", runId: "r", messages: [{ id: "u1", role: "user", content: "talk" }] })
const post = (signal: AbortSignal) => new Request("http://localhost/ag-ui", { method: "POST", headers: { "content-type": "application/json" }, body: input, signal })
const settle = () => new Promise((resolve) => setTimeout(resolve, 200))

describe("an AG-UI client that goes away", () => {
  it("stops the run and its model request when only the request's signal aborts", async () => {
    const { model, closed } = endlessModel()
    const abort = new AbortController()
    const response = await agUiHandler(agent("talker").model(model))(post(abort.signal))
    const reader = response.body!.getReader()
    await reader.read()
    await reader.read()
    abort.abort()
    await settle()
    expect(closed).toEqual(["model request closed"])
  })

  it("a request aborted before it is answered runs nothing", async () => {
    const { model, closed, calls } = endlessModel()
    const abort = new AbortController()
    abort.abort()
    const response = await agUiHandler(agent("talker").model(model))(post(abort.signal))
    await response.body?.cancel().catch(() => {})
    await settle()
    expect(calls).toEqual([])
    expect(closed).toEqual([])
  })
})
