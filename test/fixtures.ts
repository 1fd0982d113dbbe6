/** Tools and helpers shared by the suites. */
import { Effect, Exit, Schema, Tracer } from "effect"
import { tool } from "../src/index.ts"

const Operands = Schema.Struct({ a: Schema.Finite.annotate({ description: "left operand" }), b: Schema.Finite })

/** Counts how often a tool's `run` was entered, and with what. */
export const spy = () => {
  const calls: Array<unknown> = []
  return { calls, record: (args: unknown) => calls.push(args) }
}

export const makeCalculatorTools = () => {
  const addSpy = spy()
  const multiplySpy = spy()
  const add = tool("add", {
    description: "Add two numbers",
    args: Operands,
    run: (args) => {
      addSpy.record(args)
      return args.a + args.b
    }
  })
  const multiply = tool("multiply", {
    description: "Multiply two numbers",
    args: Operands,
    run: async (args) => {
      multiplySpy.record(args)
      return args.a * args.b
    }
  })
  const deleteAll = tool("delete_all", {
    description: "Delete every record",
    args: Schema.Struct({}),
    safe: false,
    run: () => {
      deleteSpy.record({})
      return "deleted"
    }
  })
  const deleteSpy = spy()
  return { add, multiply, deleteAll, addSpy, multiplySpy, deleteSpy }
}

/** Runs an Effect and returns its Exit, for assertions on failures. */
export const runExit = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.exit(effect))

/** The typed failure of an Exit, or a test failure. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got success: ${JSON.stringify(exit.value)}`)
  const error = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (error === undefined || error._tag !== "Fail") throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return error.error
}

/** A tracer that keeps every span it starts, for assertions on the span tree. */
export const captureSpans = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { spans, tracer }
}
