import { Cause, Effect, Exit, Fiber, Stream } from "effect"
import { describe, expect, it } from "vitest"
import {
  agent,
  type AgentEvent,
  BudgetExceeded,
  ModelClient,
  type ModelRequest,
  type ResponsePart,
  type RunStreamEvent,
  skill,
  text,
  toolCalls
} from "../../src/index.ts"
import { scriptedModel, streamed } from "../../src/testing/index.ts"
import { makeCalculatorTools } from "../fixtures.ts"

const calculatorWith = (model: ModelClient, budget: { maxTokens?: number; maxDuration?: number } = {}) => {
  const tools = makeCalculatorTools()
  const hooked: Array<AgentEvent> = []
  const calculator = agent("calculator")
    .prompt("You are a calculator.")
    .model(model)
    .budget(budget)
    .tools({ add: tools.add, multiply: tools.multiply })
    .skills(({ add, multiply }) => [skill("compute", "Perform calculations").tools(add, multiply)])
    .onEvent((event) => {
      hooked.push(event)
    })
  return { ...tools, calculator, hooked }
}

const collect = (stream: Stream.Stream<RunStreamEvent, unknown>) => Effect.runPromiseExit(Stream.runCollect(stream))

const script = () => [
  streamed(toolCalls([{ id: "c1", name: "add", arguments: { a: 3, b: 5 } }]), 3),
  streamed(toolCalls([{ id: "c2", name: "multiply", arguments: { a: 8, b: 2 } }]), 1),
  streamed(text("The answer is 16."), 4)
]

describe("agent.runStream", () => {
  it("streams every hook event in the same order, with deltas between ModelCall and ModelResponse, ending with RunEnd", async () => {
    const { calculator, hooked, addSpy } = calculatorWith(scriptedModel(script()))
    const exit = await collect(calculator.runStream("What is (3 + 5) * 2?"))
    expect(Exit.isSuccess(exit)).toBe(true)
    const events = Exit.isSuccess(exit) ? exit.value : []
    const deltaTags = new Set(["TextDelta", "ReasoningDelta", "ToolCallStart", "ToolCallDelta"])
    expect(events.filter((e) => !deltaTags.has(e._tag))).toEqual(hooked)
    expect(events.at(-1)?._tag).toBe("RunEnd")
    expect(addSpy.calls).toEqual([{ a: 3, b: 5 }])
    const textDeltas = events.flatMap((e) => (e._tag === "TextDelta" ? [e.delta] : []))
    expect(textDeltas).toEqual(["The ", "answ", "er i", "s 16", "."])
    const firstArgs = events.flatMap((e) => (e._tag === "ToolCallDelta" && e.turn === 1 ? [e.delta] : []))
    expect(firstArgs).toEqual(['{"a', '":3', ',"b', '":5', "}"])
    expect(events.find((e) => e._tag === "ToolCallStart")).toMatchObject({ tool: "add", toolCallId: "c1", index: 0, turn: 1, skill: "compute" })
    // Deltas sit inside their turn: after its ModelCall, before its ModelResponse.
    const i = events.findIndex((e) => e._tag === "TextDelta")
    expect(events.slice(0, i).filter((e) => e._tag === "ModelCall" || e._tag === "ModelResponse").at(-1)?._tag).toBe("ModelCall")
  })

  it("streams the events of an agent that has no hooks at all", async () => {
    const tools = makeCalculatorTools()
    const bare = agent("bare").model(scriptedModel(script())).tools({ add: tools.add, multiply: tools.multiply })
    const exit = await collect(bare.runStream("q"))
    const tags = Exit.isSuccess(exit) ? exit.value.map((e) => e._tag).filter((t) => !t.endsWith("Delta") && t !== "ToolCallStart") : []
    expect(tags).toEqual([
      "RunStart", "SkillChosen",
      "Turn", "ModelCall", "ModelResponse", "ToolUse",
      "Turn", "ModelCall", "ModelResponse", "ToolUse",
      "Turn", "ModelCall", "ModelResponse",
      "RunEnd"
    ])
  })

  it("gives the same output as run()", async () => {
    const streamedRun = calculatorWith(scriptedModel(script()))
    const plainRun = calculatorWith(scriptedModel(script()))
    const exit = await collect(streamedRun.calculator.runStream("q"))
    const end = Exit.isSuccess(exit) ? exit.value.at(-1) : undefined
    expect(end?._tag === "RunEnd" && end.outcome).toEqual({ _tag: "Success", output: await plainRun.calculator.run("q") })
  })

  it("adapts a client without `stream`: one delta per text", async () => {
    const model = ModelClient.fromFunction(() => text("sixteen"))
    const { calculator } = calculatorWith(model)
    const exit = await collect(calculator.runStream("q"))
    const events = Exit.isSuccess(exit) ? exit.value : []
    expect(events.filter((e) => e._tag === "TextDelta").map((e) => (e as { delta: string }).delta)).toEqual(["sixteen"])
  })

  it("fails with the run's AgentError after emitting RunEnd", async () => {
    const { calculator } = calculatorWith(scriptedModel([toolCalls([{ name: "nope", arguments: {} }])]))
    const seen: Array<string> = []
    const exit = await Effect.runPromiseExit(calculator.runStream("q").pipe(Stream.runForEach((e) => Effect.sync(() => seen.push(e._tag)))))
    expect(seen.at(-1)).toBe("RunEnd")
    expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toMatchObject({ _tag: "ToolNotAllowed" })
  })

  it("a consumer slower than the model gets every delta in order past the stream's buffer, each a whole event", async () => {
    // 600 deltas against a buffer of 256: the run waits for room (the offer that cannot be made at once).
    const parts: Array<ResponsePart> = Array.from({ length: 600 }, (_, i) => ({ _tag: "TextDelta", delta: `d${i} ` }))
    const client: ModelClient = { chat: () => Effect.die("not used"), stream: () => Stream.fromIterable([...parts, { _tag: "Finish", reason: "stop" }]) }
    const writer = agent("writer").prompt("Write.").model(client)
    const deltas: Array<RunStreamEvent> = []
    let answer: unknown
    await Effect.runPromise(writer.runStream("go").pipe(Stream.runForEach((event) => {
      if (event._tag === "TextDelta") deltas.push(event)
      if (event._tag === "RunEnd" && event.outcome._tag === "Success") answer = event.outcome.output
      return deltas.length % 100 === 0 ? Effect.sleep(5) : Effect.void
    })))
    expect(deltas.map((e) => (e._tag === "TextDelta" ? e.delta : ""))).toEqual(parts.map((p) => (p._tag === "TextDelta" ? p.delta : "")))
    expect(answer).toBe(parts.map((p) => (p._tag === "TextDelta" ? p.delta : "")).join(""))
    const first = deltas[0]!
    expect(Object.keys(first)).toEqual(["_tag", "delta", "agent", "runId", "skill", "turn"])
    expect(first).toMatchObject({ _tag: "TextDelta", delta: "d0 ", agent: "writer", turn: 1 })
    expect(new Set(deltas).size).toBe(600)
  })

  it("works as an async iterable for Promise code", async () => {
    const { calculator } = calculatorWith(scriptedModel(script()))
    const tags: Array<string> = []
    for await (const event of Stream.toAsyncIterable(calculator.runStream("q"))) tags.push(event._tag)
    expect(tags[0]).toBe("RunStart")
    expect(tags.at(-1)).toBe("RunEnd")
  })
})

/** A client whose stream is given by parts, then (optionally) hangs; records whether its stream was closed. */
const partsClient = (parts: ReadonlyArray<ResponsePart>, then: "end" | "hang") => {
  const state = { closed: 0, requests: [] as Array<ModelRequest> }
  const client: ModelClient = {
    chat: () => Effect.die("not used"),
    stream: (request) => {
      state.requests.push(request)
      const body = Stream.fromIterable(parts)
      return (then === "hang" ? Stream.concat(body, Stream.never) : body).pipe(Stream.ensuring(Effect.sync(() => state.closed++)))
    }
  }
  return { client, state }
}

describe("budgets and interruption mid-stream", () => {
  it("maxTokens ends a streaming answer as soon as its usage crosses the limit, and closes the stream", async () => {
    const { client, state } = partsClient([
      { _tag: "TextDelta", delta: "one " },
      { _tag: "Usage", usage: { inputTokens: 10, outputTokens: 5 } },
      { _tag: "TextDelta", delta: "two " },
      { _tag: "Usage", usage: { inputTokens: 10, outputTokens: 200 } },
      { _tag: "TextDelta", delta: "never seen" }
    ], "hang")
    const { calculator } = calculatorWith(client, { maxTokens: 100 })
    const seen: Array<RunStreamEvent> = []
    const exit = await Effect.runPromiseExit(calculator.runStream("q").pipe(Stream.runForEach((e) => Effect.sync(() => seen.push(e)))))
    const error = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
    expect(error).toBeInstanceOf(BudgetExceeded)
    expect(error).toMatchObject({ reason: "tokens", limit: 100, used: 210 })
    expect(seen.flatMap((e) => (e._tag === "TextDelta" ? [e.delta] : []))).toEqual(["one ", "two "])
    expect(state.closed).toBe(1)
  })

  it("maxDuration stops a stalled stream and closes it", async () => {
    const { client, state } = partsClient([{ _tag: "TextDelta", delta: "thinking..." }], "hang")
    const { calculator } = calculatorWith(client, { maxDuration: 100 })
    const started = Date.now()
    const exit = await collect(calculator.runStream("q"))
    expect(Date.now() - started).toBeLessThan(2000)
    expect(Exit.isFailure(exit) && Cause.squash(exit.cause)).toMatchObject({ _tag: "BudgetExceeded", reason: "duration" })
    expect(state.closed).toBe(1)
  })

  it("a consumer that stops reading does not hold the run past maxDuration: its hooks hear BudgetExceeded and RunEnd on time, the stream keeps them for when it reads again", async () => {
    // More deltas than the stream's buffer (256), then the model hangs: the run waits for room, the reader waits.
    const parts: Array<ResponsePart> = Array.from({ length: 2000 }, (_, i) => ({ _tag: "TextDelta", delta: `d${i} ` }))
    const { client, state } = partsClient(parts, "hang")
    const { calculator, hooked } = calculatorWith(client, { maxDuration: 150 })
    const reader = Stream.toAsyncIterable(calculator.runStream("q"))[Symbol.asyncIterator]()
    const first = await reader.next()
    expect(first.value?._tag).toBe("RunStart")
    const runEndHeard = Date.now()
    while (!hooked.some((e) => e._tag === "RunEnd") && Date.now() - runEndHeard < 3000) await new Promise((r) => setTimeout(r, 10))
    expect(hooked.map((e) => e._tag).slice(-2)).toEqual(["BudgetExceeded", "RunEnd"])
    expect(hooked.at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Failure", error: { _tag: "BudgetExceeded", reason: "duration" } } })
    expect(state.closed).toBe(1)
    // Reading again: every delta the run sent, then BudgetExceeded and RunEnd, then the run's error.
    const rest: Array<RunStreamEvent> = []
    let failure: unknown
    try {
      for (let next = await reader.next(); !next.done; next = await reader.next()) rest.push(next.value)
    } catch (error) {
      failure = error
    }
    expect(rest.map((e) => e._tag).slice(-2)).toEqual(["BudgetExceeded", "RunEnd"])
    expect(rest.filter((e) => e._tag === "TextDelta").length).toBeGreaterThan(256)
    expect(failure).toMatchObject({ _tag: "BudgetExceeded", reason: "duration" })
  })

  it("stopping the consumer interrupts the run and closes the model stream", async () => {
    const { client, state } = partsClient([{ _tag: "TextDelta", delta: "a" }, { _tag: "TextDelta", delta: "b" }], "hang")
    const { calculator, hooked } = calculatorWith(client)
    const exit = await collect(calculator.runStream("q").pipe(Stream.takeUntil((e) => e._tag === "TextDelta" && e.delta === "b")))
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(state.closed).toBe(1)
    expect(hooked.at(-1)).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Interrupted" } })
  })

  it("interrupting the fiber consuming the stream interrupts the run", async () => {
    const { client, state } = partsClient([{ _tag: "TextDelta", delta: "a" }], "hang")
    const { calculator } = calculatorWith(client)
    await Effect.runPromise(Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(Stream.runDrain(calculator.runStream("q")))
      yield* Effect.sleep("20 millis")
      yield* Fiber.interrupt(fiber)
    }))
    expect(state.closed).toBe(1)
  })
})
