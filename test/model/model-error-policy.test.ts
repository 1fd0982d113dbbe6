/** Model-error policies (#19): a fixed answer, retries on a Schedule, fallback models through an ExecutionPlan. */
import { Effect, Schedule } from "effect"
import { describe, expect, it } from "vitest"
import { agent, ModelError, ModelErrorPolicy, text, withModelErrorPolicy } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const busy = (retryable = true) => new ModelError({ provider: "scripted", reason: "HTTP 503", status: 503, retryable })

describe("model-error policies", () => {
  it("respond: a fixed answer instead of the failure", async () => {
    const model = withModelErrorPolicy(scriptedModel([busy()]), ModelErrorPolicy.respond({ _tag: "Text", content: "busy, try later" }))
    expect(await agent("a").model(model).run("x")).toBe("busy, try later")
  })

  it("retry: again on the schedule while the error is retryable", async () => {
    const primary = scriptedModel([busy(), busy(), text("third time")])
    const model = withModelErrorPolicy(primary, ModelErrorPolicy.retry(Schedule.recurs(3)))
    expect(await agent("a").model(model).run("x")).toBe("third time")
    expect(primary.requests).toHaveLength(3)
  })

  it("retry: not for errors that are not retryable, nor past the schedule", async () => {
    const once = scriptedModel([busy(false), text("never")])
    const error = await agent("a").model(withModelErrorPolicy(once, ModelErrorPolicy.retry(Schedule.recurs(3)))).run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "ModelError", status: 503 })
    expect(once.requests).toHaveLength(1)
    const always = scriptedModel(busy())
    await agent("a").model(withModelErrorPolicy(always, ModelErrorPolicy.retry(Schedule.recurs(2)))).run("x").catch(() => undefined)
    expect(always.requests).toHaveLength(3)
  })

  it("fallback: the other models in order, each tried `attempts` times", async () => {
    const primary = scriptedModel(busy())
    const second = scriptedModel(busy())
    const third = scriptedModel(text("from the third"))
    const model = withModelErrorPolicy(primary, ModelErrorPolicy.fallback([second, third], { attempts: 2 }))
    expect(await agent("a").model(model).run("x")).toBe("from the third")
    expect([primary.requests.length, second.requests.length, third.requests.length]).toEqual([2, 2, 1])
  })

  it("fallback: the last model's error ends the call", async () => {
    const model = withModelErrorPolicy(scriptedModel(busy()), ModelErrorPolicy.fallback([scriptedModel(new ModelError({ provider: "b", reason: "down" }))]))
    expect(await agent("a").model(model).run("x").catch((e) => e)).toMatchObject({ _tag: "ModelError", provider: "b" })
  })

  it("interruption is never retried", async () => {
    let calls = 0
    const hanging = { chat: () => Effect.suspend(() => (calls++, Effect.never)) }
    const model = withModelErrorPolicy(hanging, ModelErrorPolicy.retry(Schedule.recurs(5)))
    const exit = await Effect.runPromise(Effect.exit(agent("a").model(model).runEffect("x").pipe(Effect.timeout("20 millis"))))
    expect(exit._tag).toBe("Failure")
    expect(calls).toBe(1)
  })
})
