/**
 * A run provides its `ModelRetryListener` (turning a provider's announced wait into a `Retrying`
 * event) only when something can hear it: a hook, a stream, or a listener around the run, which the
 * run's own must shadow. Whichever way, a wait is heard by the run it happened in and never by another.
 */
import { Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, type AgentEvent, ModelClient, type RunStreamEvent, text } from "../../src/index.ts"
import { announceRetry, ModelRetryListener, type RetryNotice, retryLine } from "../../src/model/model-retry.ts"
import { quietLogs } from "../support/quiet-logs.ts"

quietLogs()

/** A client that announces one wait, then answers. */
const retryingClient = (answer: string): ModelClient => ({
  chat: () => announceRetry({ provider: "test", attempt: 1, maxAttempts: 2, waitMs: 0, reason: "HTTP 503" }).pipe(Effect.as(text(answer)))
})

describe("the retry listener of a run", () => {
  it("a run nobody listens to inside a listener's scope does not leak its waits to that listener", async () => {
    const outer: Array<RetryNotice> = []
    const quiet = agent("quiet").model(retryingClient("ok"))
    const output = await Effect.runPromise(
      quiet.runEffect("hi").pipe(Effect.provideService(ModelRetryListener, (notice) => Effect.sync(() => outer.push(notice))))
    )
    expect(output).toBe("ok")
    expect(outer).toEqual([])
  })

  it("a hook hears the wait as Retrying, between ModelCall and ModelResponse", async () => {
    const events: Array<AgentEvent["_tag"]> = []
    const heard = agent("heard").model(retryingClient("ok")).onEvent((event) => {
      events.push(event._tag)
    })
    expect(await heard.run("hi")).toBe("ok")
    expect(events.filter((tag) => tag === "ModelCall" || tag === "Retrying" || tag === "ModelResponse")).toEqual(["ModelCall", "Retrying", "ModelResponse"])
  })

  it("a stream hears the wait without any hook", async () => {
    const streamed = agent("streamed").model(retryingClient("ok"))
    const events: Array<RunStreamEvent> = [...await Effect.runPromise(Stream.runCollect(streamed.runStream("hi")))]
    expect(events.filter((event) => event._tag === "Retrying")).toMatchObject([{ _tag: "Retrying", agent: "streamed", attempt: 1, reason: "HTTP 503" }])
  })

  it("a plain run without listeners still answers (the wait is only logged)", async () => {
    expect(await agent("plain").model(retryingClient("fine")).run("hi")).toBe("fine")
  })
})

describe("the retry's log line", () => {
  it("hides a URL's credentials in the reason (a baseURL with user:password@ in a connection error); the rest stays", () => {
    const line = retryLine({ provider: "openai", attempt: 2, maxAttempts: 4, waitMs: 500, reason: "connection failed: http://gwuser:GWPASSWORD123@127.0.0.1:4000/v1 and https://host/x?y=1" })
    expect(line).not.toContain("GWPASSWORD123")
    expect(line).not.toContain("gwuser")
    expect(line).toContain("http://***@127.0.0.1:4000/v1 and https://host/x?y=1")
  })
})
