/**
 * Runs as values: for arbitrary scripts, running to step k, snapshotting, encoding to JSON, decoding
 * and continuing (with a freshly built agent of the same shape) gives the same outcome, the same model
 * requests (hence transcript) and the same tool executions as the uninterrupted run.
 */
import { fc, test } from "@fast-check/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { describe, expect } from "vitest"
import {
  agent,
  decodeSnapshot,
  encodeSnapshot,
  ModelClientService,
  Recovery,
  resume,
  type RunResult,
  runUntil,
  skill,
  tool
} from "../../src/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"
import { arbModelScript } from "../../src/testing/arbitraries.ts"
import type { ModelScript } from "../../src/testing/index.ts"

// Each case runs the agent three times (straight, to step k, resumed): 150 cases by default.
const numRuns = Number(process.env.PROPERTY_RUNS ?? 150)
const timeout = Number(process.env.PROPERTY_RUNS ?? 0) > 1000 ? 600_000 : 60_000

const Operands = Schema.Struct({ a: Schema.Finite, b: Schema.Finite })
const Answer = Schema.Struct({ value: Schema.Finite })

interface Options {
  readonly maxTurns: number
  readonly maxToolCalls: number
  readonly typed: boolean
  readonly retry: boolean
  readonly feedbackOnDisallowed: boolean
}

/** A fresh agent of one shape, recording what its tools and knowledge did into `log`. */
const makeAgent = (options: Options, log: Array<string>) => {
  const add = tool("add", { args: Operands, run: ({ a, b }) => {
    log.push(`add ${a} ${b}`)
    return a + b
  } })
  const multiply = tool("multiply", { args: Operands, run: ({ a, b }) => {
    log.push(`multiply ${a} ${b}`)
    if (a < 0) throw new Error("negative")
    return a * b
  } })
  // One builder type for both (a union of builders has no callable generic methods).
  const base = options.typed ? agent("snap", { output: Answer as unknown as Schema.Codec<string, string> }) : agent("snap")
  const built = base
    .tools({ add, multiply })
    .skills(({ add, multiply, escalate }) => [
      skill("calc", "Calculates").tools(add, multiply, escalate).knowledge("faq", "Facts", () => {
        log.push("load faq")
        return "the answer is 42"
      })
    ])
    .budget({ maxTurns: options.maxTurns, maxToolCalls: options.maxToolCalls })
    .recover(options.retry ? { invalidArgs: () => Recovery.retry(1), executionError: () => Recovery.retry(1) } : {})
    .disallowedToolPolicy(options.feedbackOnDisallowed ? "feedback" : "fail")
  return built
}

const tools = [
  tool("add", { args: Operands, run: () => 0 }),
  tool("multiply", { args: Operands, run: () => 0 })
]

const arbCase = fc.record({
  script: arbModelScript(tools, { foreignNames: ["faq", "escalate", "submit"], maxLength: 10, invalidRate: 0.25, textRate: 0.15 }),
  k: fc.integer({ min: 1, max: 12 }),
  options: fc.record({
    maxTurns: fc.integer({ min: 1, max: 8 }),
    maxToolCalls: fc.integer({ min: 1, max: 12 }),
    typed: fc.boolean(),
    retry: fc.boolean(),
    feedbackOnDisallowed: fc.boolean()
  })
})

/** What an outcome looks like for comparison: the output, or the error's tag, message and transcript. */
const outcomeOf = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return { _tag: "Success", output: exit.value }
  const error = Cause.squash(exit.cause) as { readonly _tag?: string; readonly message?: string; readonly transcript?: unknown }
  return { _tag: "Failure", error: error._tag, message: error.message, transcript: error.transcript }
}

const withModel = (subject: ReturnType<typeof makeAgent>, model: ReturnType<typeof scriptedModel>) => subject.model(model)
const provided = <A, E>(effect: Effect.Effect<A, E, ModelClientService>, model: ReturnType<typeof scriptedModel>) =>
  Effect.exit(Effect.provideService(effect, ModelClientService, model))

const runCase = async (script: ModelScript, k: number, options: Options) => {
  // Uninterrupted.
  const straightLog: Array<string> = []
  const straightModel = scriptedModel(script)
  const straight = await Effect.runPromise(Effect.exit(withModel(makeAgent(options, straightLog), straightModel).runEffect("compute")))

  // To step k, through JSON, then a fresh agent of the same shape continues.
  const splitLog: Array<string> = []
  const splitModel = scriptedModel(script)
  const first = await Effect.runPromise(provided(runUntil(withModel(makeAgent(options, splitLog), splitModel), "compute", { suspendAfter: k }), splitModel))
  let split: Exit.Exit<unknown, unknown>
  let suspended = false
  if (Exit.isSuccess(first) && first.value._tag === "Suspended") {
    suspended = true
    const json = encodeSnapshot(first.value.snapshot)
    const decoded = await Effect.runPromise(decodeSnapshot(JSON.parse(JSON.stringify(json))))
    const rest = await Effect.runPromise(provided(resume(withModel(makeAgent(options, splitLog), splitModel), decoded), splitModel))
    split = Exit.map(rest, (r: RunResult) => (r._tag === "Done" ? r.output : "suspended again"))
  } else {
    split = Exit.map(first, (r: RunResult) => (r._tag === "Done" ? r.output : "suspended"))
  }
  return { straight, straightLog, straightModel, split, splitLog, splitModel, suspended }
}

describe("run snapshots", () => {
  test.prop([arbCase], { numRuns })(
    "continuing from a JSON snapshot at step k is the uninterrupted run",
    async ({ script, k, options }) => {
      const run = await runCase(script, k, options)
      expect(outcomeOf(run.split)).toEqual(outcomeOf(run.straight))
      expect(run.splitModel.requests).toEqual(run.straightModel.requests)
      expect(run.splitLog).toEqual(run.straightLog)
    },
    timeout
  )

  test.prop([arbCase.filter(({ k }) => k <= 3)], { numRuns: Math.min(numRuns, 100) })(
    "suspends where the run had not ended (the property above is not vacuous)",
    async ({ script, k, options }) => {
      const run = await runCase(script, k, options)
      const straightSteps = run.straightModel.requests.length + run.straightLog.filter((l) => l !== "load faq").length
      if (straightSteps > k + 2 && Exit.isSuccess(run.straight)) expect(run.suspended).toBe(true)
    },
    timeout
  )
})
