/**
 * The value every composition operator returns: itself a runnable agent-like value with `run`,
 * `runEffect`, `andThen`, a budget budget over the whole tree, and start/end hooks. Its run is a span
 * (`agent.compose`) under which its children's `agent.run` spans nest, and it has its own run id, which
 * its children see as their parent (`ParentRun`).
 */
import { newRunId } from "../internal/run-id.ts"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Queue from "effect/Queue"
import type * as Stream from "effect/Stream"
import { identity } from "effect/Function"
import type { AgentTypeError } from "../dsl/agent-type-error.ts"
import { AgentConfigError, BudgetExceeded } from "../errors.ts"
import { catchUnlessInterrupted, fromMaybeEffect, type MaybeEffect } from "../internal/from-maybe-effect.ts"
import { noStackTrace } from "../internal/span-options.ts"
import { BudgetScope, CurrentBudgetScope, ParentRun, StreamSink } from "../dsl/lineage.ts"
import type { RunStreamEvent } from "../dsl/events.ts"
import type { AnyRunnable, ErrorOf, InputOf, OutputOf, RequirementsOf, Runnable, Same } from "./runnable.ts"
import { effectStream as stream, effectQueue } from "../internal/lazy-effect.ts"


/** The operator a composite was built with. */
export type CompositeKind = "pipeline" | "parallel" | "forum" | "loop" | "branch"

/** A composite run began. */
export interface CompositeStart {
  readonly _tag: "CompositeStart"
  readonly name: string
  readonly kind: CompositeKind
  readonly runId: string
  readonly parentRunId: string | undefined
  readonly input: unknown
}
/** A composite run ended (success, failure or interruption). */
export interface CompositeEnd {
  readonly _tag: "CompositeEnd"
  readonly name: string
  readonly kind: CompositeKind
  readonly runId: string
  readonly parentRunId: string | undefined
  readonly outcome:
    | { readonly _tag: "Success"; readonly output: unknown }
    | { readonly _tag: "Failure"; readonly error: unknown }
    | { readonly _tag: "Interrupted" }
  readonly durationMs: number
}

/** What `.andThen(next)` accepts: a runnable whose input type is exactly `Out`. */
export type NextStage<Out, Next> = Same<Out, InputOf<Next>> extends true ? Next
  : AgentTypeError<"the next stage's input type must equal this stage's output type: give it an input Schema of that type, agent(name, { input })">

/**
 * A composed run from `In` to `Out`. Build one with `pipeline`, `parallel`, `forum`, `loop` or `branch`.
 *
 * @example
 * ```ts
 * const research = pipeline("research", planner, writer).budget({ maxDuration: 60_000 })
 * const report = await research.run("What changed in Effect 4?")
 * ```
 */
export interface Composite<In, Out, E, R> extends Runnable<In, Out, E, R> {
  readonly _tag: "Composite"
  readonly name: string
  readonly kind: CompositeKind
  /** The runnables it is made of, in order. */
  readonly children: ReadonlyArray<AnyRunnable>
  /** Runs it as an Effect with a typed error channel. */
  runEffect(input: In): Effect.Effect<Out, E, R>
  /**
   * Runs it as a Stream: its `CompositeStart`, every event and delta of every agent run under it (each
   * with its `runId` and `parentRunId`, so interleaved children can be told apart), the start and end of
   * nested composites, and last its own `CompositeEnd` (whose outcome carries the output); the stream
   * fails with the run's error. Stopping the stream stops the run.
   */
  runStream(input: In): Stream.Stream<CompositeStreamEvent, E, R>
  /** Runs it and resolves with its output; rejects with the tagged error. Needs no services. */
  run: [R] extends [never] ? (input: In) => Promise<Out>
    : AgentTypeError<"this composite needs services: use .runEffect(...) and provide them">
  /**
   * A pipeline of this composite, then `next` (whose input type must equal this output type). Named
   * `andThen`, as in Effect, and not `then`: a `then` method would make every composite a thenable that
   * `await` and `async` functions returning it would call, and hang.
   */
  andThen<const Next extends AnyRunnable>(
    next: NextStage<Out, Next>
  ): Composite<In, OutputOf<Next>, E | ErrorOf<Next>, R | RequirementsOf<Next>>
  /**
   * Bounds the whole tree, every run under it included (agents called as tools too): past
   * `maxDuration` milliseconds every child still running is interrupted and the run fails with
   * `BudgetExceeded("duration")`; `maxTokens` and `maxToolCalls` are charged by every agent run under
   * it, which fails with `BudgetExceeded` (its `scope` naming this composite) once the tree has none
   * left. Each child's own budget still applies. Limits not given keep their current value.
   */
  budget(limits: CompositeBudget): Composite<In, Out, E | BudgetExceeded, R>
  /** At the start of every run of this composite. */
  onRunStart(listener: (event: CompositeStart) => MaybeEffect<unknown>): Composite<In, Out, E, R>
  /** At the end of every run of this composite, whatever its outcome. */
  onRunEnd(listener: (event: CompositeEnd) => MaybeEffect<unknown>): Composite<In, Out, E, R>
}

/** What `composite.runStream` emits: the agents' events and deltas, and the composites' starts and ends. */
export type CompositeStreamEvent = RunStreamEvent | CompositeStart | CompositeEnd

/** Any composite. */
export type AnyComposite = Composite<any, any, any, any>

/** Limits over a whole composite tree (see `Composite.budget`). */
export interface CompositeBudget {
  /** Wall time of the whole run, in milliseconds. */
  readonly maxDuration?: number
  /** Input and output tokens of every model call under this composite. */
  readonly maxTokens?: number
  /** Tool executions under this composite. */
  readonly maxToolCalls?: number
}

interface CompositeDef {
  readonly name: string
  readonly kind: CompositeKind
  readonly children: ReadonlyArray<AnyRunnable>
  readonly body: (input: unknown) => Effect.Effect<unknown, unknown, unknown>
  readonly maxDuration: number
  readonly maxTokens: number
  readonly maxToolCalls: number
  readonly onStart: ReadonlyArray<(event: CompositeStart) => MaybeEffect<unknown>>
  readonly onEnd: ReadonlyArray<(event: CompositeEnd) => MaybeEffect<unknown>>
}

/** Refuses a name that is not a non-empty string: composites are named like agents. */
export const checkName = (kind: CompositeKind, name: unknown): string => {
  if (typeof name !== "string" || name.trim() === "") {
    throw new AgentConfigError({ subject: kind, reason: "a composite needs a non-empty name as its first argument" })
  }
  return name
}

/** Builds a composite from its operator's body. Internal to the operators. */
export const makeComposite = (
  name: string,
  kind: CompositeKind,
  children: ReadonlyArray<AnyRunnable>,
  body: (input: unknown) => Effect.Effect<unknown, unknown, unknown>
): AnyComposite => build({ name, kind, children, body, maxDuration: Infinity, maxTokens: Infinity, maxToolCalls: Infinity, onStart: [], onEnd: [] })

/** Runs the composite's hooks, then hands the event to a streaming composite around it, if any. */
const notify = <Ev extends CompositeStart | CompositeEnd>(listeners: ReadonlyArray<(event: Ev) => MaybeEffect<unknown>>, event: Ev) =>
  Effect.forEach(listeners, (listener) =>
    fromMaybeEffect(() => listener(event)).pipe(
      catchUnlessInterrupted((error) => Effect.logWarning(`composite hook failed: ${String(error)}`))
    ), { discard: true }).pipe(
      Effect.andThen(Effect.flatMap(StreamSink, (sink) => (sink === undefined ? Effect.void : sink(event as unknown as RunStreamEvent))))
    )

const build = (def: CompositeDef): AnyComposite => {
  const next = (patch: Partial<CompositeDef>) => build(Object.freeze({ ...def, ...patch }))
  const runEffect = (input: unknown) =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const runId = yield* newRunId(started)
      const parentRunId = yield* ParentRun
      const scope = { name: def.name, kind: def.kind, runId, parentRunId }
      yield* Effect.annotateCurrentSpan("agent.run_id", runId)
      yield* notify(def.onStart, { _tag: "CompositeStart" as const, ...scope, input })
      const bounds = Number.isFinite(def.maxTokens) || Number.isFinite(def.maxToolCalls)
      const budgetScope = bounds
        ? new BudgetScope(def.name, { tokens: def.maxTokens, toolCalls: def.maxToolCalls }, yield* CurrentBudgetScope)
        : undefined
      const body = def.body(input).pipe(
        Effect.provideService(ParentRun, runId),
        budgetScope === undefined ? identity : Effect.provideService(CurrentBudgetScope, budgetScope)
      )
      const bounded = Number.isFinite(def.maxDuration)
        ? body.pipe(Effect.timeoutOrElse({
          duration: Duration.millis(def.maxDuration),
          orElse: () =>
            Effect.fail(new BudgetExceeded({ agent: def.name, reason: "duration", limit: def.maxDuration, used: def.maxDuration, transcript: [] }))
        }))
        : body
      return yield* bounded.pipe(Effect.onExit((exit) =>
        Effect.gen(function*() {
          const durationMs = (yield* Clock.currentTimeMillis) - started
          const outcome: CompositeEnd["outcome"] = Exit.isSuccess(exit)
            ? { _tag: "Success", output: exit.value }
            : Cause.hasInterruptsOnly(exit.cause)
            ? { _tag: "Interrupted" }
            : { _tag: "Failure", error: Cause.squash(exit.cause) }
          yield* Effect.annotateCurrentSpan("agent.outcome", outcome._tag)
          yield* notify(def.onEnd, { _tag: "CompositeEnd" as const, ...scope, outcome, durationMs })
        })
      ))
    }).pipe(Effect.withSpan("agent.compose", { attributes: { "agent.name": def.name, "agent.compose": def.kind } }, noStackTrace))

  const composite: AnyComposite = Object.freeze({
    _tag: "Composite" as const,
    name: def.name,
    kind: def.kind,
    children: def.children,
    runEffect,
    run: ((input: unknown) => Effect.runPromise(runEffect(input) as Effect.Effect<unknown, unknown>)) as any,
    runStream: (input: unknown) =>
      stream().callback<CompositeStreamEvent, unknown, unknown>((queue) =>
        runEffect(input).pipe(
          Effect.provideService(StreamSink, (event: RunStreamEvent) => Effect.asVoid(effectQueue().offer(queue, event))),
          Effect.andThen(effectQueue().end(queue))
        ), { bufferSize: 256, strategy: "suspend" }),
    andThen: ((nextStage: AnyRunnable) => pipelineOf(`${def.name} → ${nextStage.name}`, [composite, nextStage])) as AnyComposite["andThen"],
    budget: (limits: CompositeBudget) => next(checkBudget(def, limits)),
    onRunStart: (listener: (event: CompositeStart) => MaybeEffect<unknown>) => next({ onStart: [...def.onStart, listener] }),
    onRunEnd: (listener: (event: CompositeEnd) => MaybeEffect<unknown>) => next({ onEnd: [...def.onEnd, listener] })
  })
  return composite
}

/** Refuses limits that are not positive numbers (or a positive whole number, for counts), naming the composite. */
const checkBudget = (def: CompositeDef, limits: CompositeBudget): Partial<CompositeDef> => {
  const subject = `${def.kind} "${def.name}"`
  if (typeof limits !== "object" || limits === null) throw new AgentConfigError({ subject, reason: "budget(...) takes an object of limits" })
  const patch: Record<string, number> = {}
  for (const key of ["maxDuration", "maxTokens", "maxToolCalls"] as const) {
    const value: unknown = limits[key]
    if (value === undefined) continue
    const whole = key !== "maxDuration"
    if (typeof value !== "number" || !(value > 0) || (whole && Number.isFinite(value) && !Number.isInteger(value))) {
      throw new AgentConfigError({
        subject,
        reason: `${key} must be a positive ${whole ? "whole number" : "number of milliseconds"} (or Infinity), got ${String(value)}`
      })
    }
    patch[key] = value
  }
  return patch
}

/** The stages run one after the other, each output the next input. Shared by `pipeline` and `.andThen`. */
export const pipelineOf = (name: string, stages: ReadonlyArray<AnyRunnable>): AnyComposite =>
  makeComposite(name, "pipeline", stages, (input) =>
    stages.reduce<Effect.Effect<unknown, unknown, unknown>>(
      (previous, stage) => Effect.flatMap(previous, (value) => stage.runEffect(value)),
      Effect.succeed(input)
    ))
