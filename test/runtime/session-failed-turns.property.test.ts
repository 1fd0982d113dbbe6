/**
 * The law of a session's failed and interrupted turns, over generated scripts: calls that run, fail (the
 * run, or with feedback), never return (the send or resume is interrupted then), wait for approval or
 * are outside the allowlist (one at a time or concurrently); model calls that fail; budgets that run
 * out; and a sequence of sends and resumes (approved, denied, or with the resume ledger down) after
 * each of which the stored history is a sound conversation (every call paired with one result, no
 * result without its call), every call that ran is in it exactly once (or in the run that still waits,
 * not yet recorded), a call cut short by the interruption is in it only as interrupted, and no call
 * ever ran twice.
 */
import { fc, test } from "@fast-check/vitest"
import { Effect, Fiber, Schema } from "effect"
import { describe, expect } from "vitest"
import {
  agent,
  Decision,
  inMemorySessionStore,
  type LlmMessage,
  type LlmResponseInit,
  ModelError,
  Recovery,
  ResumeLedger,
  ResumeLedgerFailed,
  type RunSnapshot,
  session,
  text,
  tool,
  toolCalls
} from "../../src/index.ts"
import { interruptedContent } from "../../src/runtime/turn-trail.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { unansweredCalls } from "../hardening/transcript-check.ts"

const numRuns = Number(process.env.PROPERTY_RUNS ?? 100)

type Step =
  | { readonly _tag: "Calls"; readonly calls: ReadonlyArray<{ readonly tool: "work" | "guarded" | "ghost"; readonly fails: boolean; readonly hangs: boolean }> }
  | { readonly _tag: "Text" }
  | { readonly _tag: "ModelError" }
type Op = "send" | "approve" | "deny" | "ledgerDown"

const arbStep: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.array(
      fc.record({ tool: fc.constantFrom("work", "work", "guarded", "ghost"), outcome: fc.integer({ min: 0, max: 5 }) }).map(({ tool, outcome }) => ({
        tool,
        fails: outcome === 0,
        hangs: outcome === 1
      })),
      { minLength: 1, maxLength: 3 }
    ).map((calls): Step => ({ _tag: "Calls", calls }))
  },
  { weight: 2, arbitrary: fc.constant<Step>({ _tag: "Text" }) },
  { weight: 2, arbitrary: fc.constant<Step>({ _tag: "ModelError" }) }
)
const arbOp: fc.Arbitrary<Op> = fc.constantFrom("send", "approve", "approve", "deny", "ledgerDown")

/** The model's answers, each call with an id of its own. */
const scriptOf = (steps: ReadonlyArray<Step>): Array<LlmResponseInit | ModelError> => {
  let n = 0
  return steps.map((step) =>
    step._tag === "Text"
      ? text("done")
      : step._tag === "ModelError"
      ? new ModelError({ provider: "scripted", reason: "overloaded", retryable: false })
      : toolCalls(step.calls.map((call) => ({ id: `c${++n}`, name: call.tool, arguments: call.tool === "work" ? { fails: call.fails, hangs: call.hangs } : {} })))
  )
}

type Budget = { readonly maxToolCalls: number; readonly maxTurns: number; readonly toolConcurrency: number }

const makeWorker = (steps: ReadonlyArray<Step>, budget: Budget, fails: "fail" | "feedback") => {
  const entered: Array<string> = []
  const completed: Array<string> = []
  const hung: Array<string> = []
  // Told when a call that never returns started: the test interrupts the send or resume then.
  const hang = { started: (): void => {} }
  const work = tool("work", {
    args: Schema.Struct({ fails: Schema.Boolean, hangs: Schema.Boolean }),
    run: ({ fails, hangs }, context: { readonly toolCallId: string }) => {
      entered.push(context.toolCallId)
      if (hangs) {
        hung.push(context.toolCallId)
        hang.started()
        return new Promise<string>(() => {})
      }
      if (fails) throw new Error("broken")
      completed.push(context.toolCallId)
      return `worked ${context.toolCallId}`
    }
  })
  const guarded = tool("guarded", {
    args: Schema.Struct({}),
    needsApproval: () => true,
    run: (_, context: { readonly toolCallId: string }) => {
      entered.push(context.toolCallId)
      completed.push(context.toolCallId)
      return `guarded ${context.toolCallId}`
    }
  })
  const worker = agent("worker").model(scriptedModel(scriptOf(steps))).tools({ work, guarded })
    .recoverTool("work", { executionError: () => (fails === "fail" ? Recovery.fail : Recovery.feedback) })
    .budget(budget)
  return { worker, entered, completed, hung, hang }
}

/** Runs `turn`, interrupting it when a call of it that never returns started. */
const runInterrupting = async (turn: Effect.Effect<unknown, unknown>, hang: { started: () => void }) => {
  const hung = new Promise<true>((resolve) => (hang.started = () => resolve(true)))
  const fiber = Effect.runFork(turn)
  if (await Promise.race([Effect.runPromise(Fiber.await(fiber)).then(() => false), hung])) await Effect.runPromise(Fiber.interrupt(fiber))
}

/** Tool results that answer no call of the assistant message before them, or answer one twice. */
const strayResults = (messages: ReadonlyArray<LlmMessage>): Array<string> => {
  const stray: Array<string> = []
  let calls: ReadonlySet<string> = new Set()
  const answered = new Set<string>()
  for (const message of messages) {
    if (message.role === "tool") {
      if (!calls.has(message.toolCallId) || answered.has(message.toolCallId)) stray.push(message.toolCallId)
      answered.add(message.toolCallId)
      continue
    }
    calls = new Set(message.role === "assistant" ? (message.toolCalls ?? []).map((call) => call.id) : [])
    answered.clear()
  }
  return stray
}

const resultIds = (messages: ReadonlyArray<LlmMessage>) => messages.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : []))

const downLedger = { consume: (key: string) => Effect.fail(new ResumeLedgerFailed({ key, reason: "connection refused" })) }

describe("a session's turns that fail", () => {
  test.prop(
    [
      fc.array(arbStep, { minLength: 1, maxLength: 8 }),
      fc.array(arbOp, { minLength: 1, maxLength: 5 }),
      fc.record({ maxToolCalls: fc.constantFrom(2, 3, 5, 32), maxTurns: fc.constantFrom(2, 3, 8), toolConcurrency: fc.constantFrom(1, 1, 3) }),
      fc.constantFrom<"fail" | "feedback">("fail", "feedback")
    ],
    { numRuns }
  )("leave a sound history holding every call that ran exactly once, and no call runs twice", async (steps, ops, budget, fails) => {
    const { worker, entered, completed, hung, hang } = makeWorker(steps, budget, fails)
    const store = inMemorySessionStore()
    const chat = session(worker, "s", { store })
    for (const op of [...ops, "send" as const]) {
      if (op === "send") {
        await runInterrupting(chat.sendEffect("go"), hang)
      } else {
        const pending = (await Effect.runPromise(chat.waiting()))?.pending ?? []
        const decisions = Object.fromEntries(pending.map((call) => [call.id, op === "deny" ? Decision.deny("no") : Decision.approve]))
        const resume = chat.resumeEffect(decisions)
        await runInterrupting(op === "ledgerDown" ? resume.pipe(Effect.provideService(ResumeLedger, downLedger)) : resume, hang)
      }
      const history = await Effect.runPromise(store.load("s"))
      expect(unansweredCalls(history)).toEqual([])
      expect(strayResults(history)).toEqual([])
      // A run that still waits has not been recorded: what ran of it is in its snapshot.
      const waiting = await Effect.runPromise(chat.waiting())
      const waitingTurn = waiting === undefined ? [] : (waiting.snapshot as RunSnapshot).state.transcript.slice(1 + waiting.historyLength)
      const recorded = [...resultIds(history), ...resultIds(waitingTurn)]
      for (const id of completed) expect([id, recorded.filter((r) => r === id).length]).toEqual([id, 1])
      // A call that never returned is recorded as interrupted, or not at all (nothing of its turn completed).
      for (const message of history) {
        if (message.role === "tool" && hung.includes(message.toolCallId)) expect(message.content).toBe(interruptedContent("work"))
      }
      expect(new Set(entered).size).toBe(entered.length)
    }
  })
})
