/**
 * An AG-UI client that goes away stops the run and its model request, also where only the request's
 * signal tells (runtimes that abort it but never cancel the response body).
 */
import { describe, expect, it } from "vitest"
import { agent } from "effect-agent-dsl"
import { abortMidStream, endlessModel, settle } from "../../support/client-gone.ts"
import { agUiHandler } from "./fixture.ts"

const input = JSON.stringify({ threadId: "t", runId: "r", messages: [{ id: "u1", role: "user", content: "talk" }] })
const post = (signal: AbortSignal) => new Request("http://localhost/ag-ui", { method: "POST", headers: { "content-type": "application/json" }, body: input, signal })

describe("an AG-UI client that goes away", () => {
  it("stops the run and its model request when only the request's signal aborts", async () => {
    const { model, closed } = endlessModel()
    const abort = new AbortController()
    await abortMidStream(await agUiHandler(agent("talker").model(model))(post(abort.signal)), abort)
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
