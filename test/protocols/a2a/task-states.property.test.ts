/**
 * Property: over scripted runs (valid, invalid and unknown tool calls, model errors, a tool that
 * needs approval, a failing tool, budgets running out), every A2A task reaches exactly one settled
 * state (terminal or input-required), it is the last status published, and it is the state the one
 * table gives for the outcome of the same run made directly. With a cancel at a random moment, the
 * task still settles exactly once: canceled, or the run's own outcome when it ended first.
 */
import { type Message, Role, TaskState } from "@a2a-js/sdk"
import { DefaultExecutionEventBus, RequestContext, type AgentExecutionEvent } from "@a2a-js/sdk/server"
import { Effect, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { agent, tool } from "../../../src/index.ts"
import { definitionOf } from "../../../src/dsl/agent-definition.ts"
import { agentExecutor, isSettledState, outcomeOfExit, taskStateOf } from "../../../src/protocols/a2a/index.ts"
import { arbModelScript } from "../../../src/testing/arbitraries.ts"
import { scriptedModel } from "../../../src/testing/index.ts"
import type { ScriptStep } from "../../../src/testing/index.ts"
import { ModelError } from "../../../src/errors.ts"
import type { LlmResponseInit } from "../../../src/model/messages.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 60)

// A tool that takes a little time, so that a cancel can land while a run is in flight.
const add = tool("add", { args: Schema.Struct({ a: Schema.Finite, b: Schema.Finite }), run: ({ a, b }) => Effect.as(Effect.sleep("2 millis"), a + b) })
const transfer = tool("transfer", { args: Schema.Struct({ to: Schema.String, amount: Schema.Finite }), needsApproval: ({ amount }) => amount > 0, run: ({ amount }) => amount })
const broken = tool("broken", { args: Schema.Struct({}), run: (): string => { throw new Error("boom") } })
const tools = [add, transfer, broken]

/** Each model answer takes a millisecond, so that cancels meet runs in flight. */
const slowly = (step: ScriptStep): ScriptStep => () =>
  Effect.delay(step instanceof ModelError ? Effect.fail(step) : Effect.succeed(step as LlmResponseInit), "1 millis")

const build = (script: ReadonlyArray<ScriptStep>, maxTurns: number) =>
  agent("prop").model(scriptedModel(script.map(slowly))).budget({ maxTurns }).tools({ add, transfer, broken })

const message = (text: string): Message => ({
  messageId: crypto.randomUUID(), contextId: "", taskId: "", role: Role.ROLE_USER,
  parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
  metadata: undefined, extensions: [], referenceTaskIds: []
})

/** Runs one task through the executor with the SDK's event bus; the states it published, in order. */
let cancelsInFlight = 0
const runTask = async (builder: ReturnType<typeof build>, cancelAfterMs?: number) => {
  const executor = agentExecutor(definitionOf(builder))
  const bus = new DefaultExecutionEventBus()
  const events: Array<AgentExecutionEvent> = []
  bus.on("event", (event) => events.push(event))
  let finished = 0
  bus.on("finished", () => (finished += 1))
  const taskId = crypto.randomUUID()
  const contextId = crypto.randomUUID()
  const context = new RequestContext({ tenant: "", message: { ...message("go"), taskId, contextId }, configuration: undefined, metadata: undefined }, taskId, contextId, {} as never)
  const done = executor.execute(context, bus)
  if (cancelAfterMs !== undefined) {
    await new Promise((r) => setTimeout(r, cancelAfterMs))
    if (executor.running() > 0) {
      cancelsInFlight += 1
      await executor.cancelTask(taskId, bus)
    }
  }
  await done
  const states = events.flatMap((e) => (e.kind === "statusUpdate" ? [e.data.status!.state] : e.kind === "task" ? [e.data.status!.state] : []))
  return { states, finished }
}

/** The protocol's states for our outcomes, written out here so that the table in src is checked, not copied. */
const expected: Readonly<Record<string, TaskState>> = {
  Success: TaskState.TASK_STATE_COMPLETED,
  Failure: TaskState.TASK_STATE_FAILED,
  Interrupted: TaskState.TASK_STATE_CANCELED,
  Suspended: TaskState.TASK_STATE_INPUT_REQUIRED
}

const directState = async (builder: ReturnType<typeof build>) => {
  const outcome = outcomeOfExit("prop", await Effect.runPromiseExit(builder.runEffect("go") as Effect.Effect<unknown, never>))
  expect(taskStateOf(outcome)).toBe(expected[outcome._tag])
  return expected[outcome._tag]
}

const arbCase = fc.record({
  script: arbModelScript(tools, { maxLength: 6, invalidRate: 0.2, unknownRate: 0.1, modelErrorRate: 0.05 }),
  maxTurns: fc.integer({ min: 1, max: 6 })
})

describe("every task settles exactly once, as the run's outcome says", () => {
  it("without cancellation: one settled state, last, equal to the table's state for the direct run", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async ({ script, maxTurns }) => {
        const { states, finished } = await runTask(build(script, maxTurns))
        const settled = states.filter(isSettledState)
        expect(settled.length).toBe(1)
        expect(isSettledState(states.at(-1))).toBe(true)
        expect(finished).toBe(1)
        expect(settled[0]).toBe(await directState(build(script, maxTurns)))
        expect(settled[0]).not.toBe(TaskState.TASK_STATE_CANCELED)
      }),
      { numRuns }
    )
  })

  it("with a cancel at a random moment: one settled state, canceled or the run's own", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, fc.integer({ min: 0, max: 6 }), async ({ script, maxTurns }, delay) => {
        const { states, finished } = await runTask(build(script, maxTurns), delay)
        const settled = states.filter(isSettledState)
        expect(settled.length).toBe(1)
        expect(finished).toBe(1)
        const own = await directState(build(script, maxTurns))
        expect([TaskState.TASK_STATE_CANCELED, own]).toContain(settled[0])
      }),
      { numRuns: Math.max(30, Math.floor(numRuns / 2)) }
    )
    // The cancels must have met runs in flight, or this property says nothing about cancellation.
    expect(cancelsInFlight).toBeGreaterThan(0)
  })
})
