/**
 * `d.follow`: a durable run's events with journal ids (1, 2, … without a gap), live, ending with the
 * run's end; a re-attach from the last id seen; a runner stopped in the middle and a fresh one
 * replaying the run (its replayed events are not journalled twice); a wait for decisions in between.
 */
import { Deferred, Effect, Exit, Fiber, Layer, Schema, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { agent, Decision, type ModelClient, text, tool, toolCalls } from "../../src/index.ts"
import { durable, type DurableEvent, followResponse, memoryEngine, Reconciled, RunJournal } from "../../src/durable/index.ts"
import { encodeJournalEvent } from "../../src/durable/journal-events.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { engineKinds, sharedStorage, sharedStores, startRunner } from "./harness.ts"

const collect = <E, R>(stream: Stream.Stream<DurableEvent, E, R>): Effect.Effect<ReadonlyArray<DurableEvent>, E, R> => Stream.runCollect(stream)

const ids = (events: ReadonlyArray<DurableEvent>) => events.map((e) => e.id)
const tags = (events: ReadonlyArray<DurableEvent>) => events.map((e) => e.event._tag)

const shopper = (gate?: Deferred.Deferred<void>) => {
  let pays = 0
  const lookup = tool("lookup", { args: Schema.Struct({}), effect: "readOnly", run: () => "30 EUR" })
  const pay = tool("pay", {
    args: Schema.Struct({}),
    run: () =>
      Effect.gen(function*() {
        pays += 1
        if (gate !== undefined && pays === 1) yield* Deferred.await(gate)
        return "paid"
      })
  })
  const model = scriptedModel([
    toolCalls([{ id: "c1", name: "lookup", arguments: {} }]),
    toolCalls([{ id: "c2", name: "pay", arguments: {} }]),
    text("bought")
  ])
  // The payment provider, asked after a crash, says it was paid.
  const reconcile = () => Effect.succeed(Reconciled.result("paid"))
  return { d: durable(agent("shopper").model(model).tools({ lookup, pay }), { reconcile }), pays: () => pays }
}

describe.each(engineKinds)("d.follow (%s engine)", (engine) => {
  it("gives every event once with ids 1, 2, … and ends with the run's end; a re-attach from an id gives the rest", async () => {
    const { d } = shopper()
    const runner = d.layer.pipe(Layer.provideMerge(memoryEngine))
    const { all, tail } = await Effect.gen(function*() {
      const following = yield* Effect.forkChild(collect(d.follow("r1")))
      yield* d.run("buy", { runId: "r1" })
      const all = yield* Fiber.join(following)
      const tail = yield* collect(d.follow("r1", { after: 4 }))
      return { all, tail }
    }).pipe(Effect.provide(runner), Effect.timeout("10 seconds"), Effect.runPromise)
    expect(ids(all)).toEqual(all.map((_, i) => i + 1))
    expect(tags(all)).toEqual(["RunStart", "SkillChosen", "Turn", "ModelResponse", "ToolUse", "Turn", "ModelResponse", "ToolUse", "Turn", "ModelResponse", "RunEnd"])
    expect(all.at(-1)!.event).toMatchObject({ _tag: "RunEnd", runId: "r1", outcome: { _tag: "Success", output: "bought" } })
    expect(tail).toEqual(all.slice(4))
  })

  it("a run that waits for decisions: the wait is seen (RunEnd Suspended), then the decision and the rest", async () => {
    const transfer = tool("transfer", { args: Schema.Struct({}), effect: "idempotent", needsApproval: true, run: () => "sent" })
    const model = scriptedModel([toolCalls([{ id: "t1", name: "transfer", arguments: {} }]), text("done")])
    const d = durable(agent("banker").model(model).tools({ transfer }))
    const events = await Effect.gen(function*() {
      const following = yield* Effect.forkChild(collect(d.follow("b1")))
      const waiting = yield* d.run("send", { runId: "b1" })
      expect(waiting._tag).toBe("Suspended")
      yield* d.decide("b1", { t1: Decision.approve })
      return yield* Fiber.join(following)
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("10 seconds"), Effect.runPromise)
    expect(ids(events)).toEqual(events.map((_, i) => i + 1))
    const t = tags(events)
    expect(t.filter((x) => x === "RunStart")).toHaveLength(1)
    expect(t.indexOf("ApprovalRequested")).toBeLessThan(t.indexOf("ApprovalDecided"))
    expect(events.find((e) => e.event._tag === "RunEnd")!.event).toMatchObject({ outcome: { _tag: "Suspended" } })
    expect(events.at(-1)!.event).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Success", output: "done" } })
    // The replay after the decision emitted the run's first events again: none is journalled twice.
    expect(t.filter((x) => x === "ToolUse")).toHaveLength(1)
  })

  it("a cancelled run ends its stream with RunEnd Failure(Cancelled)", async () => {
    const transfer = tool("transfer", { args: Schema.Struct({}), needsApproval: true, run: () => "sent" })
    const model = scriptedModel([toolCalls([{ id: "t1", name: "transfer", arguments: {} }]), text("done")])
    const d = durable(agent("banker").model(model).tools({ transfer }))
    const events = await Effect.gen(function*() {
      const following = yield* Effect.forkChild(collect(d.follow("c1")))
      yield* d.run("send", { runId: "c1" })
      yield* d.cancel("c1", "changed my mind")
      return yield* Fiber.join(following)
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("10 seconds"), Effect.runPromise)
    const end = events.at(-1)!.event
    expect(end).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Failure", error: { _tag: "Cancelled", reason: "changed my mind" } } })
    expect(ids(events)).toEqual(events.map((_, i) => i + 1))
  })

  it("a runner stopped inside a mutating tool and a fresh one replaying the run: the follower sees every event once, in order", async () => {
    const gate = Deferred.makeUnsafe<void>()
    const { d, pays } = shopper(gate)
    const seen: Array<DurableEvent> = []
    await Effect.gen(function*() {
      const driver = yield* sharedStorage(engine)
      const stores = yield* sharedStores()
      const runner = () => d.layer.pipe(Layer.provideMerge(driver.engine()), Layer.provideMerge(Layer.succeedContext(stores)))
      const first = yield* startRunner(runner())
      const following = yield* Effect.forkChild(Stream.runForEach(d.follow("r2"), (e) => Effect.sync(() => seen.push(e))).pipe(Effect.provide(first.context)))
      yield* d.start("buy", { runId: "r2" }).pipe(Effect.provide(first.context))
      // Inside `pay` (the gate is closed): the run's first five events are journalled.
      while (!seen.some((e) => e.event._tag === "Turn" && seen.filter((x) => x.event._tag === "Turn").length === 2)) yield* Effect.sleep("20 millis")
      yield* first.stop
      yield* Deferred.succeed(gate, undefined)
      const second = yield* startRunner(runner())
      yield* d.result("r2").pipe(Effect.provide(second.context))
      yield* Fiber.join(following).pipe(Effect.timeout("5 seconds"), Effect.ignore)
      // The follower lost its engine with the first runner: a fresh follower from the last id seen.
      const last = seen.at(-1)?.id ?? 0
      if (!(seen.at(-1)?.event._tag === "RunEnd")) {
        yield* Stream.runForEach(d.follow("r2", { after: last }), (e) => Effect.sync(() => seen.push(e))).pipe(Effect.provide(second.context))
      }
      yield* second.stop
    }).pipe(Effect.timeout("20 seconds"), Effect.runPromise)
    expect(ids(seen)).toEqual(seen.map((_, i) => i + 1))
    expect(tags(seen)).toEqual(["RunStart", "SkillChosen", "Turn", "ModelResponse", "ToolUse", "Turn", "ModelResponse", "ToolUse", "Turn", "ModelResponse", "RunEnd"])
    expect(pays()).toBe(1)
  })

  it("an event keyed again (a replay) is kept once; keys of their own are all kept", async () => {
    const out = await Effect.gen(function*() {
      const journal = yield* RunJournal
      yield* journal.append("x", "a#1", { n: 1 })
      yield* journal.append("x", "a#1", { n: 2 })
      yield* journal.append("x", "b#1", { n: 3 })
      return yield* journal.read("x", 0, 10)
    }).pipe(Effect.provide(RunJournal.memory), Effect.runPromise)
    expect(out).toEqual([{ id: 1, event: { n: 1 } }, { id: 2, event: { n: 3 } }])
  })

  it("refuses a negative or fractional `after` with InputInvalid naming it", async () => {
    const { d } = shopper()
    for (const after of [-1, 1.5, Number.NaN]) {
      const error = await Effect.runPromise(Effect.flip(collect(d.follow("r", { after }))).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine)))))
      expect(error).toMatchObject({ _tag: "InputInvalid", issues: expect.stringMatching(/after must be a non-negative integer/) })
    }
  })

  it("asks the model for whole answers (chat, not stream): its journal takes no deltas", async () => {
    const scripted = scriptedModel([toolCalls([{ id: "c1", name: "lookup", arguments: {} }]), text("found")])
    let streams = 0
    const model: ModelClient = { chat: scripted.chat, stream: (request) => (streams++, scripted.stream!(request)) }
    const lookup = tool("lookup", { args: Schema.Struct({}), effect: "readOnly", run: () => "30 EUR" })
    const d = durable(agent("finder").model(model).tools({ lookup }))
    const events = await Effect.gen(function*() {
      const following = yield* Effect.forkChild(collect(d.follow("f1")))
      yield* d.run("find", { runId: "f1" })
      return yield* Fiber.join(following)
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("10 seconds"), Effect.runPromise)
    expect(streams).toBe(0)
    expect(scripted.requests).toHaveLength(2)
    expect(events.at(-1)!.event).toMatchObject({ _tag: "RunEnd", outcome: { _tag: "Success", output: "found" } })
  })

  it("journals a failure as its AgentError and an error in a tool event as tag and message", () => {
    const json = encodeJournalEvent({ _tag: "ToolError", agent: "a", runId: "r", tool: "t", toolCallId: "c", args: {}, error: new Error("boom"), recovery: "Feedback", validated: true } as never)
    expect(json).toMatchObject({ error: { _tag: "Error", message: "boom" } })
  })
})

describe("followResponse (SSE with Last-Event-ID)", () => {
  const parse = (body: string) =>
    body.split("\n\n").filter((f) => f.trim() !== "").map((f) => Object.fromEntries(f.split("\n").map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 2)])))

  it("sends each event with its id; a reconnect with Last-Event-ID gets the rest; a bad id is a 400", async () => {
    const { d } = shopper()
    const { first, again, bad } = await Effect.gen(function*() {
      yield* d.run("buy", { runId: "s1" })
      const all = yield* followResponse(d, "s1")
      const again = yield* followResponse(d, "s1", { request: new Request("http://x/", { headers: { "last-event-id": "7" } }) })
      const bad = yield* followResponse(d, "s1", { lastEventId: "seven" })
      return { first: yield* Effect.promise(() => all.text()), again: yield* Effect.promise(() => again.text()), bad }
    }).pipe(Effect.provide(d.layer.pipe(Layer.provideMerge(memoryEngine))), Effect.timeout("10 seconds"), Effect.runPromise)
    const frames = parse(first)
    expect(frames.map((f) => Number(f.id))).toEqual(frames.map((_, i) => i + 1))
    expect(frames.at(-1)).toMatchObject({ event: "RunEnd" })
    expect(parse(again)).toEqual(frames.slice(7))
    expect(bad.status).toBe(400)
  })
})
