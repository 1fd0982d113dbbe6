/**
 * Issue #19: hostile input and misbehaving user code. Each case was first reproduced failing on the
 * code before the fix; every run must end within its budget, in success or a documented tagged error.
 */
import { type Duration, Effect, Exit, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { agent, isAgentError, ModelClient, Recovery, renderTrace, text, tool, toolCalls } from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { failureOf, makeCalculatorTools, runExit } from "../fixtures.ts"
import { quietLogs } from "../support/quiet-logs.ts"

// Retries and failing hooks here are on purpose: their log lines are held back (test/support/quiet-logs.ts).
quietLogs()

const call = (name: string, args: unknown, id = `call_${name}`) => ({ id, name, arguments: args })

/** Runs `effect` under a TestClock, advancing it by `by` in small steps once the run is waiting. */
const withTestClock = <A, E>(effect: Effect.Effect<A, E>, by: Duration.Input, interruptAfter = false) =>
  runExit(
    Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(effect)
      yield* TestClock.adjust(by)
      if (interruptAfter) yield* Fiber.interrupt(fiber)
      return yield* Fiber.join(fiber)
    }).pipe(Effect.provide(TestClock.layer()))
  )

const never = () => new Promise<never>(() => {})

describe("hooks that never settle (item 1)", () => {
  for (const hook of ["onRunEnd", "onEvent", "onBudgetExceeded", "onError"] as const) {
    it(`${hook}: maxDuration still ends the run`, async () => {
      const hanging = ModelClient.fromFunction(() => Effect.never)
      const base = agent("a").model(hanging).budget({ maxDuration: "1 minute" })
      const a = (base as any)[hook](never) as typeof base
      const exit = await withTestClock(a.runEffect("x"), "2 minutes")
      expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded", reason: "duration" })
    })
  }

  it("interrupting a run whose onRunEnd hangs completes", async () => {
    const a = agent("a").model(scriptedModel(text("done"))).onRunEnd(never)
    const exit = await withTestClock(
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(a.runEffect("x"))
        yield* Effect.yieldNow
        yield* Fiber.interrupt(fiber)
        return "interrupted"
      }),
      "1 minute"
    )
    expect(Exit.isSuccess(exit)).toBe(true)
  })

  it("a hook timeout (budget hookTimeout) ends a hanging hook and reports HookFailed", async () => {
    const failed: Array<unknown> = []
    const a = agent("a").model(scriptedModel(text("done"))).budget({ hookTimeout: "2 seconds" } as any)
      .onRunStart(never).onHookFailed((e) => void failed.push(e.error))
    const exit = await withTestClock(a.runEffect("x"), "3 seconds")
    expect(exit).toEqual(Exit.succeed("done"))
    expect(String(failed[0])).toMatch(/did not settle within 2000 ms/)
  })
})

describe("a tool's signal read after an await (item 2)", () => {
  const lateReader = () => {
    const seen: Array<AbortSignal> = []
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const slow = tool("slow", {
      args: Schema.Struct({}),
      run: async (_, context) => {
        await gate
        seen.push(context.signal)
        return "late"
      }
    })
    return { slow, seen, release }
  }

  it("is aborted when perToolTimeout interrupted the tool", async () => {
    const { slow, seen, release } = lateReader()
    const a = agent("a").model(scriptedModel([toolCalls([call("slow", {})]), text("ok")])).tools({ slow }).budget({ perToolTimeout: "1 second" })
    const exit = await withTestClock(a.runEffect("x"), "2 seconds")
    expect(failureOf(exit)).toMatchObject({ _tag: "BudgetExceeded", reason: "perToolTimeout" })
    release()
    await new Promise((r) => setTimeout(r, 10))
    expect(seen[0]?.aborted).toBe(true)
  })

  it("is aborted when the caller interrupted the run", async () => {
    const { slow, seen, release } = lateReader()
    const a = agent("a").model(scriptedModel([toolCalls([call("slow", {})]), text("ok")])).tools({ slow })
    await runExit(Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(a.runEffect("x"))
      yield* Effect.sleep("20 millis")
      yield* Fiber.interrupt(fiber)
    }))
    release()
    await new Promise((r) => setTimeout(r, 10))
    expect(seen[0]?.aborted).toBe(true)
  })

  it("is aborted when maxDuration ended the run", async () => {
    const { slow, seen, release } = lateReader()
    const a = agent("a").model(scriptedModel([toolCalls([call("slow", {})]), text("ok")])).tools({ slow }).budget({ maxDuration: "1 minute" })
    expect(failureOf(await withTestClock(a.runEffect("x"), "2 minutes"))).toMatchObject({ reason: "duration" })
    release()
    await new Promise((r) => setTimeout(r, 10))
    expect(seen[0]?.aborted).toBe(true)
  })
})

describe("crashes become documented errors (item 3)", () => {
  const cyclicNullProto = () => {
    const o: Record<string, unknown> = Object.create(null)
    o["self"] = o
    return o
  }

  it("a tool throwing a cyclic null-prototype object is reported to the model", async () => {
    const bad = tool("bad", { args: Schema.Struct({}), run: () => { throw cyclicNullProto() } })
    const model = scriptedModel([toolCalls([call("bad", {})]), text("recovered")])
    expect(await agent("a").model(model).tools({ bad }).run("x")).toBe("recovered")
  })

  it("a raw ModelClient that throws synchronously fails with ModelError in run() and RunEnd alike", async () => {
    const client = { chat: () => { throw new Error("sync boom") } } as any
    let outcome: unknown
    const a = agent("a").model(client).onRunEnd((e) => void (outcome = e.outcome))
    const error = await a.run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "ModelError" })
    expect(outcome).toMatchObject({ _tag: "Failure", error: { _tag: "ModelError" } })
  })

  it("a raw ModelClient returning a non-Effect fails with ModelError", async () => {
    const client = { chat: () => ({ _tag: "Text", content: "not an effect" }) } as any
    const error = await agent("a").model(client).run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "ModelError" })
  })

  it("a response whose getters throw fails with ModelError", async () => {
    const response = { _tag: "Text", get content(): string { throw new Error("getter") } }
    const client = { chat: () => Effect.succeed(response) } as any
    const error = await agent("a").model(client).run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "ModelError" })
  })

  it("BigInt and cyclic input from an untyped caller fail with InputInvalid", async () => {
    const a = agent("a").model(scriptedModel(text("ok")))
    const cyclic: Record<string, unknown> = {}
    cyclic["self"] = cyclic
    for (const input of [10n, cyclic]) {
      const error = await a.run(input as any).catch((e) => e)
      expect(isAgentError(error)).toBe(true)
      expect(error).toMatchObject({ _tag: "InputInvalid" })
    }
  })

  it("submit with BigInt, cyclic or very deep arguments from a raw client ends in a documented error", async () => {
    const cyclic: Record<string, unknown> = {}
    cyclic["self"] = cyclic
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = [deep]
    for (const args of [{ value: 10n }, cyclic, deep]) {
      const client = { chat: () => Effect.succeed({ _tag: "ToolCalls", calls: [{ id: "1", name: "submit", arguments: args }] }) } as any
      const a = agent("a", { output: Schema.Struct({ value: Schema.Number }) }).model(client)
      const error = await a.run("x").catch((e) => e)
      expect(isAgentError(error)).toBe(true)
    }
  })
})

describe("token budget (item 4)", () => {
  it("negative usage counts are refused", async () => {
    const model = scriptedModel({ _tag: "Text", content: "hi", usage: { inputTokens: -1000, outputTokens: 0 } })
    const error = await agent("a").model(model).budget({ maxTokens: 10 }).run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "ModelError" })
  })

  it("the routing call's tokens are counted", async () => {
    const model = scriptedModel([
      { _tag: "ToolCalls", calls: [{ id: "r", name: "choose_skill", arguments: { skill: "one" } }], usage: { inputTokens: 60, outputTokens: 0 } },
      { _tag: "Text", content: "hi", usage: { inputTokens: 50, outputTokens: 0 } }
    ])
    const { add } = makeCalculatorTools()
    const { skill } = await import("../../src/index.ts")
    const a = agent("a").model(model).tools({ add }).budget({ maxTokens: 100 })
      .skills(({ add }) => [skill("one", "first").tools(add), skill("two", "second").tools(add)])
    const error = await a.run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "tokens", used: 110 })
  })
})

describe("numeric options are validated at construction (item 5)", () => {
  for (const value of [Number.NaN, Number.POSITIVE_INFINITY, -1, 0, 1.5]) {
    it(`maxRepairSteps ${value} is refused`, () => {
      expect(() => agent("a").recover({ maxRepairSteps: value })).toThrow(/maxRepairSteps/)
    })
  }
})

describe("Effect.interrupt from user code (item 6)", () => {
  it("a hook returning Effect.interrupt does not interrupt the run", async () => {
    const a = agent("a").model(scriptedModel(text("done"))).onRunStart(() => Effect.interrupt)
    expect(await a.run("x")).toBe("done")
  })

  it("a client returning Effect.interrupt fails with ModelError", async () => {
    const client = { chat: () => Effect.interrupt } as any
    const error = await agent("a").model(client).run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "ModelError" })
  })

  it("a deterministic skill returning Effect.interrupt fails with SkillFailed", async () => {
    const { skill } = await import("../../src/index.ts")
    const a = agent("a").model(scriptedModel(text("unused"))).skills(() => [skill("echo").implementedBy(() => Effect.interrupt)])
    const error = await a.run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "SkillFailed" })
  })

  it("a tool returning Effect.interrupt is a failed execution, reported to the model", async () => {
    const stop = tool("stop", { args: Schema.Struct({}), run: () => Effect.interrupt })
    const model = scriptedModel([toolCalls([call("stop", {})]), text("ok")])
    expect(await agent("a").model(model).tools({ stop }).run("x")).toBe("ok")
  })
})

describe("run ids (item 7)", () => {
  it("do not collide under a frozen clock", async () => {
    const a = agent("a").model(scriptedModel(text("ok")))
    const ids = new Set<string>()
    const runs = 20_000
    await runExit(
      Effect.forEach(Array.from({ length: runs }), () => Effect.asVoid(a.onRunStart((e) => void ids.add(e.runId)).runEffect("x")), { discard: true })
        .pipe(Effect.provide(TestClock.layer()))
    )
    expect(ids.size).toBe(runs)
  }, 60_000)
})

describe("traces and responses (item 8)", () => {
  it("renderTrace skips incomplete lines instead of throwing", () => {
    const lines = ['{"v":1,"run":"r","event":"RunStart","ts":1}', '{"v":1,"run":"r","event":"Tu', '{"v":1,"run":"r","event":"ModelCall","ts":2}', '{"v":1,"run":"r","event":"ModelResponse","ts":3,"response":"ToolCalls"}']
    const rendered = renderTrace(lines.join("\n"))
    expect(rendered).toMatch(/ModelCall \(incomplete line\)/)
    expect(rendered).toMatch(/1 line skipped/)
  })

  it("a tool call without an id from a raw client gets one instead of failing the response", async () => {
    const { add, addSpy } = makeCalculatorTools()
    let n = 0
    const client = {
      chat: () => Effect.succeed(n++ === 0 ? { _tag: "ToolCalls", calls: [{ name: "add", arguments: '{"a":1,"b":2}' }] } : { _tag: "Text", content: "3" })
    } as any
    expect(await agent("a").model(client).tools({ add }).run("x")).toBe("3")
    expect(addSpy.calls).toHaveLength(1)
  })
})

describe("the Kotlin reference's behaviours", () => {
  it("escalate: severity optional (default HIGH) and in any case (item 10)", async () => {
    const { skill } = await import("../../src/index.ts")
    const run = (args: unknown) =>
      agent("a").model(scriptedModel([toolCalls([call("escalate", args)]), text("unused")]))
        .skills(({ escalate }) => [skill("s", "s").tools(escalate)]).run("x").catch((e) => e)
    expect(await run({ reason: "stuck" })).toMatchObject({ _tag: "Escalated", severity: "HIGH", reason: "stuck" })
    expect(await run({ reason: "stuck", severity: "critical" })).toMatchObject({ _tag: "Escalated", severity: "CRITICAL" })
    // An unknown severity is invalid arguments, reported to the model (the script then answers "unused").
    expect(await run({ reason: "stuck", severity: "urgent" })).toBe("unused")
  })

  it("BudgetExceeded names the tool for perToolTimeout and consecutiveTool (item 11)", async () => {
    const { add } = makeCalculatorTools()
    const model = scriptedModel(toolCalls([call("add", { a: 1, b: 1 })]))
    const error = await agent("a").model(model).tools({ add }).budget({ maxConsecutiveSameTool: 2 }).run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "BudgetExceeded", reason: "consecutiveTool", tool: "add" })
    expect(error.message).toMatch(/tool "add"/)
    const slow = tool("slow", { args: Schema.Struct({}), run: () => Effect.never })
    let event: unknown
    const timed = agent("a").model(scriptedModel(toolCalls([call("slow", {})]))).tools({ slow }).budget({ perToolTimeout: "1 second" })
      .onBudgetExceeded((e) => void (event = e))
    expect(failureOf(await withTestClock(timed.runEffect("x"), "2 seconds"))).toMatchObject({ reason: "perToolTimeout", tool: "slow" })
    expect(event).toMatchObject({ reason: "perToolTimeout", tool: "slow" })
  })

  it("the hallucinated-tool event carries the arguments the model sent (item 16)", async () => {
    let args: unknown
    const a = agent("a").model(scriptedModel([toolCalls([call("rm_rf", { path: "/" })]), text("ok")]))
      .disallowedToolPolicy("feedback").onToolHallucinated((e) => void (args = e.args))
    expect(await a.run("x")).toBe("ok")
    expect(args).toEqual({ path: "/" })
  })
})

describe("maxToolArgsBytes", () => {
  it("arguments over the cap are never parsed: the model is told, the tool never runs", async () => {
    const { add, addSpy } = makeCalculatorTools()
    const huge = JSON.stringify({ a: 1, b: 2, pad: "x".repeat(2000) })
    let invalid: unknown
    const model = scriptedModel([toolCalls([{ id: "1", name: "add", arguments: huge }]), text("ok")])
    const a = agent("a").model(model).tools({ add }).budget({ maxToolArgsBytes: 1000 }).onInvalidArgs((e) => void (invalid = e))
    expect(await a.run("x")).toBe("ok")
    expect(addSpy.calls).toHaveLength(0)
    expect(invalid).toMatchObject({ raw: expect.stringMatching(/^\(\d+ bytes of arguments, not parsed\)$/) })
    expect(String(model.requests[1]!.messages.at(-1)!.content)).toMatch(/over the limit of 1000 bytes/)
  })

  it("counts UTF-8 bytes, not characters", async () => {
    const { add, addSpy } = makeCalculatorTools()
    const args = JSON.stringify({ a: 1, b: 2, pad: "é".repeat(400) }) // ~820 bytes, ~420 characters
    const model = scriptedModel([toolCalls([{ id: "1", name: "add", arguments: args }]), text("ok")])
    await agent("a").model(model).tools({ add }).budget({ maxToolArgsBytes: 600 }).run("x")
    expect(addSpy.calls).toHaveLength(0)
  })

  it("is validated at construction", () => {
    expect(() => agent("a").budget({ maxToolArgsBytes: 0 })).toThrow(/maxToolArgsBytes/)
  })
})

describe("lenient typed answers (item 12)", () => {
  const Answer = Schema.Struct({ value: Schema.Number })
  const typed = (answer: string) => agent("a", { output: Answer }).model(scriptedModel([text(answer), text("unused")])).budget({ maxTurns: 1 })

  it("extracts the JSON value from prose around it", async () => {
    expect(await typed('Sure! Here it is: {"value": 4}. Hope that helps.').run("x")).toEqual({ value: 4 })
  })

  it("tolerates trailing commas, never inside strings", async () => {
    expect(await typed('{"value": 4,}').run("x")).toEqual({ value: 4 })
    expect(await typed('```json\n{"value": 4, }\n```').run("x")).toEqual({ value: 4 })
  })

  it("is always followed by the Schema decode", async () => {
    const error = await typed('The answer: {"value": "four",}').run("x").catch((e) => e)
    expect(error).toMatchObject({ _tag: "OutputInvalid" })
  })
})

describe("a recovery handler ends the run with its own reason (item 9)", () => {
  const boom = tool("boom", { args: Schema.Struct({}), run: () => { throw new Error("original") } })
  const run = (recovery: ReturnType<typeof Recovery.failWith>) =>
    agent("a").model(scriptedModel([toolCalls([call("boom", {})]), text("unused")])).tools({ boom })
      .recover({ executionError: () => recovery }).run("x").catch((e) => e)

  it("throwException(reason) ends it with ExceptionThrown { reason }", async () => {
    expect(await run(Recovery.throwException("the ledger is locked"))).toMatchObject({ _tag: "ExceptionThrown", reason: "the ledger is locked" })
  })

  it("failWith(reason) ends it with ToolFailed carrying that reason", async () => {
    const error = await run(Recovery.failWith("quota reached"))
    expect(error).toMatchObject({ _tag: "ToolFailed", cause: "quota reached" })
    expect(error.message).toMatch(/quota reached/)
  })
})

describe("skills the Kotlin reference allows", () => {
  it("a pure chat skill talks to the model without tools (item 13)", async () => {
    const { skill } = await import("../../src/index.ts")
    const model = scriptedModel(text("hello there"))
    const a = agent("a").model(model).skills(() => [skill("smalltalk", "Chit-chat").chat()])
    expect(await a.run("hi")).toBe("hello there")
    expect(model.requests[0]!.tools).toEqual([])
  })

  it("routes between pure chat skills", async () => {
    const { skill } = await import("../../src/index.ts")
    const model = scriptedModel([toolCalls([call("choose_skill", { skill: "jokes" })]), text("a joke")])
    const a = agent("a").model(model).skills(() => [skill("smalltalk", "Chit-chat").chat(), skill("jokes", "Tell jokes").chat()])
    expect(await a.run("tell me a joke")).toBe("a joke")
  })

  it("a skill without tools, chat or implementation is still refused as a mistake", async () => {
    const { skill } = await import("../../src/index.ts")
    expect(() => agent("a").skills(() => [skill("empty", "nothing")])).toThrow(/\.chat\(\)/)
    expect(() => agent("a").skills(() => [skill("both").chat().implementedBy(() => "x")])).toThrow(/never calls a model/)
  })

  it("memory for some skills only (item 14)", async () => {
    const { skill } = await import("../../src/index.ts")
    const { add } = makeCalculatorTools()
    const model = scriptedModel([toolCalls([call("choose_skill", { skill: "notes" })]), toolCalls([call("memory_write", { key: "k", value: "v" })]), text("saved")])
    const a = agent("a").model(model).tools({ add })
      .skills(({ add }) => [skill("compute", "math").tools(add), skill("notes", "remember things").memory()])
    expect(await a.run("remember k")).toBe("saved")
    expect(model.requests[1]!.tools.map((t) => t.name)).toEqual(["memory_read", "memory_write", "memory_search"])
    const computeOnly = scriptedModel([toolCalls([call("choose_skill", { skill: "compute" })]), toolCalls([call("memory_read", { key: "k" })]), text("x")])
    const error = await a.model(computeOnly).run("2+2").catch((e) => e)
    expect(error).toMatchObject({ _tag: "ToolNotAllowed", tool: "memory_read", allowed: ["add"] })
  })
})

describe("knowledge loaded up front (item 15)", () => {
  it("goes into the skill's system prompt instead of a tool, loaded once at the start", async () => {
    const { skill } = await import("../../src/index.ts")
    let loads = 0
    const model = scriptedModel(text("Opening hours are 9-17"))
    const a = agent("a").model(model).skills(() => [
      skill("faq", "Answer questions").knowledge("hours", "opening hours", () => (loads++, "Mon-Fri 9-17"), { preload: true })
    ])
    expect(await a.run("when are you open?")).toBe("Opening hours are 9-17")
    expect(loads).toBe(1)
    expect(model.requests[0]!.tools).toEqual([])
    expect(model.requests[0]!.messages[0]!.content).toMatch(/Knowledge "hours" \(opening hours\):\nMon-Fri 9-17/)
  })

  it("a failing preload ends the run with ToolFailed naming the source", async () => {
    const { skill } = await import("../../src/index.ts")
    const a = agent("a").model(scriptedModel(text("x"))).skills(() => [
      skill("faq", "Answer").knowledge("hours", "opening hours", () => Promise.reject(new Error("db down")), { preload: true })
    ])
    expect(await a.run("x").catch((e) => e)).toMatchObject({ _tag: "ToolFailed", tool: "hours" })
  })
})

describe("numeric options of pickTools are validated at construction (item 5)", () => {
  for (const options of [{ maxCandidates: Number.NaN }, { maxCandidates: 0 }, { minScore: Number.NaN }, { timeoutMs: Number.NaN }, { timeoutMs: -1 }]) {
    it(`refuses ${JSON.stringify(options, (_, v) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v))}`, () => {
      expect(() => agent("a").pickTools(options)).toThrow(/pickTools/)
    })
  }
})
