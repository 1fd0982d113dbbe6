/**
 * The value every composition operator returns: itself a runnable agent-like value with `run`,
 * `runEffect`, `andThen`, a budget over the whole tree, and start/end hooks (bounded as an agent's are,
 * `composite-hooks.ts`). Its run is a span (`agent.compose`) under which its children's `agent.run`
 * spans nest, and it has its own run id, which its children see as their parent (`ParentRun`).
 */
import { newRunId } from "../internal/run-id.ts"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Stream from "effect/Stream"
import { identity } from "effect/Function"
import type { AgentTypeError } from "../dsl/agent-type-error.ts"
import { AgentConfigError, BudgetExceeded, type DefinitionChanged, SnapshotInvalid, type SnapshotRejected } from "../errors.ts"
import type { Decisions } from "../dsl/decision.ts"
import type { Completed } from "../dsl/run-outcome.ts"
import type { ModelClientService } from "../model/model-client.ts"
import {
  checkCompositeSnapshot,
  type CompositeSnapshot,
  type CompositeSuspended,
  CompositeSuspension,
  checkMemberResume,
  fingerprintOf,
  memberMayNeedApproval,
  memberSecret,
  memberShape,
  signCompositeSnapshot,
  type SuspensionInfo
} from "./composite-snapshot.ts"
import type { MaybeEffect } from "../internal/from-maybe-effect.ts"
import { defaultBudget } from "../dsl/budget.ts"
import { budgetOptionKeys, checkFunction, checkOptions } from "../dsl/builder-validation.ts"
import { type CompositeHooks, notifyEnd, notifyStart } from "./composite-hooks.ts"
import { gateResume } from "./resume-gate.ts"
import { noStackTrace } from "../internal/span-options.ts"
import { withGuardedSpan } from "../internal/guarded-span.ts"
import { BudgetScope, CurrentBudgetScope, ParentRun } from "../dsl/lineage.ts"
import type { RunStreamEvent } from "../dsl/events.ts"
import { type AnyRunnable, type ErrorOf, type InputOf, isRunnable, type OutputOf, type RequirementsOf, type Runnable, type Same } from "./runnable.ts"
import { sinkStream } from "../dsl/sink-stream.ts"
import { shownValue } from "../internal/shown-value.ts"
import { durationMillis } from "../internal/duration-millis.ts"


export type { CompositeEnd, CompositeHookFailed, CompositeKind, CompositeStart, CompositeStreamEvent } from "../dsl/composite-events.ts"
import type { CompositeEnd, CompositeHookFailed, CompositeKind, CompositeStart, CompositeStreamEvent } from "../dsl/composite-events.ts"

/** The shape of a run that waits for decisions (an agent's `Suspended` or a composite's). */
type Suspension = { readonly _tag: "Suspended"; readonly pending: ReadonlyArray<unknown>; readonly snapshot: unknown }

/** True when a run's result `O` may be `Suspended` (a member with a tool that may need approval). */
export type MaySuspend<O> = [Extract<O, Suspension>] extends [never] ? false : true

/** The value a result carries on to the next member: `X` of `Completed<X> | Suspended`, else the result itself. */
export type ValueOf<O> = MaySuspend<O> extends true ? (O extends Completed<infer X> ? X : never) : O

/** A composite's result: `Completed<V> | CompositeSuspended` when one of its members' results `All` may suspend, else `V`. */
export type Outcome<All, V> = MaySuspend<All> extends true ? Completed<V> | CompositeSuspended : V

/** What `.andThen(next)` accepts: a runnable whose input type is exactly `Out` (the completed value, when `Out` may suspend). */
export type NextStage<Out, Next> = Same<ValueOf<Out>, InputOf<Next>> extends true ? Next
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
    : [R] extends [ModelClientService] ? AgentTypeError<"a member has no model: call .model(...) on every member agent (or implement its skills with .implementedBy(...)), or use .runEffect(...) and provide ModelClient.layer(...)">
    : AgentTypeError<"this composite's members need services: .provide(layer) them on the members, or use .runEffect(...) and provide them", R>
  /**
   * A pipeline of this composite, then `next` (whose input type must equal this output type). Named
   * `andThen`, as in Effect, and not `then`: a `then` method would make every composite a thenable that
   * `await` and `async` functions returning it would call, and hang.
   */
  andThen<const Next extends AnyRunnable>(
    next: NextStage<Out, Next>
  ): Composite<In, Outcome<Out | OutputOf<Next>, ValueOf<OutputOf<Next>>>, E | ErrorOf<Next>, R | RequirementsOf<Next>>
  /**
   * Continues a run that suspended (a member waits for a human decision) from its snapshot (the
   * snapshot, its parsed JSON or its JSON text), in this process or another: the snapshot is checked
   * (signature when the composite signs, name, kind, fingerprint), then the member that waited resumes
   * with `decisions` (checked against its own snapshot before anything runs), then the rest of the
   * composite runs. When several members wait at once (a parallel, a forum's participants), their
   * calls are named `<member index>/<call id>` and every member's decisions are checked before any
   * member resumes. With a `ResumeLedger`, the resume consumes the snapshot once (after every check,
   * before any member continues): a second resume of it, even one running at the same time, fails
   * with `SnapshotAlreadyResumed` before anything runs.
   *
   * @example
   * ```ts
   * const first = await flow.run("pay bob 500")
   * if (first._tag === "Suspended") await Effect.runPromise(flow.resume(JSON.stringify(first.snapshot), { k1: Decision.approve }))
   * ```
   */
  resume(snapshot: unknown, decisions: Decisions): Effect.Effect<Out, E | SnapshotInvalid | SnapshotRejected | DefinitionChanged, R>
  /**
   * `resume` as a Stream of its events, as `runStream` is `runEffect`'s: the events of every run that
   * continues under it, and last its own `CompositeEnd` (whose outcome carries the result, a
   * `CompositeSuspended` again included); the stream fails with the resume's error.
   *
   * @example
   * ```ts
   * const events = flow.resumeStream(stored, { "0/k1": Decision.approve })
   * ```
   */
  resumeStream(snapshot: unknown, decisions: Decisions): Stream.Stream<CompositeStreamEvent, E | SnapshotInvalid | SnapshotRejected | DefinitionChanged, R>
  /**
   * Signs the snapshots this composite takes (HMAC-SHA256 with `secret`) and resumes only snapshots
   * signed so. Without it, a composite signs with the secret of its first member that signs.
   */
  signSnapshots(secret: string): Composite<In, Out, E, R>
  /**
   * Bounds the whole tree, every run under it included (agents called as tools too): past
   * `maxDuration` milliseconds every child still running is interrupted and the run fails with
   * `BudgetExceeded("duration")`; `maxTokens` and `maxToolCalls` are charged by every agent run under
   * it, which fails with `BudgetExceeded` (its `scope` naming this composite) once the tree has none
   * left. Each child's own budget still applies. Limits not given keep their current value. What the
   * tree spent before a suspension is kept in the snapshot (`state.spent`) and counted again by `resume`,
   * so the limits bound the whole run; the wait for the decision is not counted. `hookTimeout` bounds
   * each of this composite's own hooks, as an agent's does its own. An agent's own limits (`maxTurns`,
   * `perToolTimeout`, …) are refused here (`AgentConfigError`): set them on each agent.
   */
  budget(limits: CompositeBudget): Composite<In, Out, E | BudgetExceeded, R>
  /** At the start of every run of this composite, inside the run (bounded by `hookTimeout` and `maxDuration`). */
  onRunStart(listener: (event: CompositeStart) => MaybeEffect<unknown>): Composite<In, Out, E, R>
  /** At the end of every run of this composite, whatever its outcome; never holds the caller (bounded by `hookTimeout`). */
  onRunEnd(listener: (event: CompositeEnd) => MaybeEffect<unknown>): Composite<In, Out, E, R>
  /** When one of this composite's hooks failed or timed out (the `CompositeHookFailed` event). */
  onHookFailed(listener: (event: CompositeHookFailed) => MaybeEffect<unknown>): Composite<In, Out, E, R>
}

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
  /** Wall time each of this composite's own hooks may take ("2 seconds", or milliseconds). Default 5 seconds. */
  readonly hookTimeout?: Duration.Input
}

/** How an operator's body suspends and completes (given to it by the composite it runs in). */
export interface Settle {
  /** True when some member may suspend: results are then `Completed | Suspended`. */
  readonly mayNeedApproval: boolean
  /** The composite's result for a member's `Suspended` at `stage`. */
  readonly suspend: (
    stage: number,
    member: { readonly pending: ReadonlyArray<unknown>; readonly snapshot: unknown },
    extra?: Omit<CompositeSnapshot["state"], "stage" | "member">
  ) => CompositeSuspended
  /** The composite's result for its final value. */
  readonly complete: (value: unknown) => unknown
}

/** An operator's body: runs from an input; continues from a snapshot when the operator can suspend. */
export interface CompositeBody {
  readonly run: (input: unknown, settle: Settle) => Effect.Effect<unknown, unknown, unknown>
  readonly resume?: (snapshot: CompositeSnapshot, decisions: Decisions, settle: Settle) => Effect.Effect<unknown, unknown, unknown>
  /**
   * Validates a resume from `snapshot` (already checked as this composite's) with `decisions`, running
   * nothing. Default: the member at `state.stage` checks its own snapshot with the decisions.
   */
  readonly check?: (snapshot: CompositeSnapshot, decisions: Decisions) => Effect.Effect<void, unknown>
  /** What else the composite's fingerprint covers (a loop's cap and `until`), beside its kind, name and members. */
  readonly shape?: unknown
  /** The members whose suspension it carries (default: all its children). */
  readonly carries?: ReadonlyArray<AnyRunnable>
}

interface CompositeDef {
  readonly name: string
  readonly kind: CompositeKind
  readonly children: ReadonlyArray<AnyRunnable>
  readonly body: CompositeBody
  readonly secret: string | undefined
  readonly maxDuration: number
  readonly maxTokens: number
  readonly maxToolCalls: number
  readonly hooks: CompositeHooks
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
  body: ((input: unknown) => Effect.Effect<unknown, unknown, unknown>) | CompositeBody
): AnyComposite => build({ name, kind, children, body: typeof body === "function" ? { run: (input) => body(input) } : body, secret: undefined, maxDuration: Infinity, maxTokens: Infinity, maxToolCalls: Infinity,
  hooks: { onStart: [], onEnd: [], onFailed: [], hookTimeout: defaultBudget.hookTimeout } })

const build = (def: CompositeDef): AnyComposite => {
  const next = (patch: Partial<CompositeDef>) => build(Object.freeze({ ...def, ...patch }))
  const shape = { kind: def.kind, name: def.name, members: def.children.map(memberShape), ...(def.body.shape === undefined ? {} : { options: def.body.shape }) }
  const resumeBody = def.body.resume
  const mayNeedApproval = resumeBody !== undefined && (def.body.carries ?? def.children).some(memberMayNeedApproval)
  const secret = def.secret ?? def.children.map(memberSecret).find((s) => s !== undefined)
  let fingerprint: string | undefined
  const fingerprintNow = () => (fingerprint ??= fingerprintOf(shape))
  const settle: Settle = {
    mayNeedApproval,
    // Signed by `execute`, once it added what the run spent.
    suspend: (stage, member, extra) =>
      ({ _tag: "Suspended", pending: member.pending as CompositeSuspended["pending"], snapshot: {
        version: 1,
        composite: def.name,
        kind: def.kind,
        fingerprint: fingerprintNow(),
        state: { ...extra, stage, member: member.snapshot as CompositeSnapshot["state"]["member"] }
      } }),
    complete: (value) => (mayNeedApproval ? { _tag: "Completed", output: value } : value)
  }
  const runEffect = (input: unknown) => execute(input, def.body.run(input, settle))
  const checkBody = def.body.check ??
    ((snapshot: CompositeSnapshot, decisions: Decisions) =>
      Effect.flatMap(memberAt(def.name, def.children, snapshot), (member) => checkMemberResume(member, snapshot.state.member, decisions)))
  const check = (snapshot: unknown, decisions: Decisions): Effect.Effect<void, unknown> =>
    resumeBody === undefined
      ? Effect.fail(new AgentConfigError({ subject: `${def.kind} "${def.name}"`, reason: `a ${def.kind} does not suspend: it has nothing to resume` }))
      : Effect.flatMap(checkCompositeSnapshot({ name: def.name, kind: def.kind, fingerprint: fingerprintNow(), secret }, snapshot), (checked) => checkBody(checked, decisions))
  const resume = (snapshot: unknown, decisions: Decisions) =>
    resumeBody === undefined
      ? Effect.fail(new AgentConfigError({ subject: `${def.kind} "${def.name}"`, reason: `a ${def.kind} does not suspend yet: it has nothing to resume` }))
      : Effect.flatMap(
        checkCompositeSnapshot({ name: def.name, kind: def.kind, fingerprint: fingerprintNow(), secret }, snapshot),
        // Every decision of every waiting member checked, then the whole snapshot consumed once (with a
        // ledger), before any member continues: a second resume fails having run nothing.
        (checked) => Effect.andThen(gateResume(def.name, checked, checkBody(checked, decisions)), execute(checked, resumeBody(checked, decisions, settle), checked.state.spent))
      )
  /** Runs a body under this composite (its run id, budget and hooks); `spent`: what a resumed run spent before. */
  const execute = (input: unknown, run: Effect.Effect<unknown, unknown, unknown>, spent?: Spent) =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const runId = yield* newRunId(started)
      const parentRunId = yield* ParentRun
      const scope = { name: def.name, kind: def.kind, runId, parentRunId }
      yield* Effect.annotateCurrentSpan("agent.run_id", runId)
      const bounds = Number.isFinite(def.maxTokens) || Number.isFinite(def.maxToolCalls)
      const budgetScope = bounds
        ? new BudgetScope(def.name, { tokens: def.maxTokens, toolCalls: def.maxToolCalls }, yield* CurrentBudgetScope, spent === undefined ? undefined : { tokens: spent.tokens, toolCalls: spent.toolCalls })
        : undefined
      const elapsedBefore = spent?.elapsedMs ?? 0
      // The start hooks run inside the run, so `maxDuration` and an interruption bound them too.
      const body = Effect.andThen(notifyStart(def.hooks, { _tag: "CompositeStart" as const, ...scope, input }), run).pipe(
        Effect.provideService(ParentRun, runId),
        budgetScope === undefined ? identity : Effect.provideService(CurrentBudgetScope, budgetScope)
      )
      const bounded = Number.isFinite(def.maxDuration)
        ? body.pipe(Effect.timeoutOrElse({
          duration: Duration.millis(Math.max(0, def.maxDuration - elapsedBefore)),
          orElse: () =>
            Effect.fail(new BudgetExceeded({ agent: def.name, reason: "duration", limit: def.maxDuration, used: def.maxDuration, transcript: [] }))
        }))
        : body
      // A suspension's snapshot keeps what the run spent (when it has a budget), then is signed.
      const sealed = Effect.flatMap(bounded, (result) =>
        !mayNeedApproval || !isSuspension(result)
          ? Effect.succeed(result)
          : Effect.map(Clock.currentTimeMillis, (now) => {
            const suspended = result as CompositeSuspended
            const state = bounds || Number.isFinite(def.maxDuration)
              ? {
                ...suspended.snapshot.state,
                spent: { tokens: budgetScope?.used("tokens") ?? 0, toolCalls: budgetScope?.used("toolCalls") ?? 0, elapsedMs: Math.max(0, elapsedBefore + now - started) }
              }
              : suspended.snapshot.state
            return { ...suspended, snapshot: signCompositeSnapshot({ ...suspended.snapshot, state }, secret) }
          }))
      return yield* sealed.pipe(Effect.onExit((exit) =>
        Effect.gen(function*() {
          const durationMs = (yield* Clock.currentTimeMillis) - started
          const outcome: CompositeEnd["outcome"] = Exit.isSuccess(exit)
            ? { _tag: "Success", output: exit.value }
            : Cause.hasInterruptsOnly(exit.cause)
            ? { _tag: "Interrupted" }
            : { _tag: "Failure", error: Cause.squash(exit.cause) }
          yield* Effect.annotateCurrentSpan("agent.outcome", outcome._tag)
          // The outcome is sealed: the end hooks run detached, never holding the caller.
          yield* notifyEnd(def.hooks, { _tag: "CompositeEnd" as const, ...scope, outcome, durationMs })
        })
      ))
    }).pipe((run) => withGuardedSpan(run, "agent.compose", { attributes: { "agent.name": def.name, "agent.compose": def.kind }, ...noStackTrace }))

  const info: SuspensionInfo = { mayNeedApproval, secret, shape, check }
  const composite: AnyComposite = Object.freeze({
    [CompositeSuspension]: info,
    _tag: "Composite" as const,
    name: def.name,
    kind: def.kind,
    children: def.children,
    runEffect,
    resume,
    signSnapshots: (key: string) => {
      if (typeof key !== "string" || key.length < 16) {
        throw new AgentConfigError({ subject: `${def.kind} "${def.name}"`, reason: "a snapshot secret must be a string of at least 16 characters" })
      }
      return next({ secret: key })
    },
    run: ((input: unknown) => Effect.runPromise(runEffect(input) as Effect.Effect<unknown, unknown>)) as any,
    runStream: (input: unknown) => sinkStream<CompositeStreamEvent, unknown, unknown>(runEffect(input)),
    resumeStream: (snapshot: unknown, decisions: Decisions) => sinkStream<CompositeStreamEvent, unknown, unknown>(resume(snapshot, decisions)),
    andThen: ((nextStage: AnyRunnable) => {
      // A plain JavaScript caller's function, tool or nothing is refused here, as `pipeline(...)` refuses it.
      if (!isRunnable(nextStage)) throw new AgentConfigError({ subject: `${def.kind} "${def.name}"`, reason: `.andThen(...) takes an agent or a composite, got ${shownValue(nextStage)}` })
      return pipelineOf(`${def.name} → ${nextStage.name}`, [composite, nextStage])
    }) as AnyComposite["andThen"],
    budget: (limits: CompositeBudget) => next(checkBudget(def, limits)),
    onRunStart: (listener: (event: CompositeStart) => MaybeEffect<unknown>) => next({ hooks: { ...def.hooks, onStart: [...def.hooks.onStart, hookOf(def, "onRunStart", listener)] } }),
    onRunEnd: (listener: (event: CompositeEnd) => MaybeEffect<unknown>) => next({ hooks: { ...def.hooks, onEnd: [...def.hooks.onEnd, hookOf(def, "onRunEnd", listener)] } }),
    onHookFailed: (listener: (event: CompositeHookFailed) => MaybeEffect<unknown>) =>
      next({ hooks: { ...def.hooks, onFailed: [...def.hooks.onFailed, hookOf(def, "onHookFailed", listener)] } })
  })
  return composite
}

/** What a composite's run spent before it suspended (`state.spent`). */
type Spent = NonNullable<CompositeSnapshot["state"]["spent"]>

/** Refuses a hook that is not a function, as an agent's builder does. */
const hookOf = <L>(def: CompositeDef, method: string, listener: L): L => {
  checkFunction(`${def.kind} "${def.name}"`, `.${method}(...)`, listener)
  return listener
}

/** The limits a composite's budget holds; an agent's others are per agent. */
const compositeBudgetKeys: ReadonlyArray<string> = ["maxDuration", "maxTokens", "maxToolCalls", "hookTimeout"]
const agentOnlyBudgetKeys: Readonly<Record<string, string>> = Object.fromEntries(
  budgetOptionKeys.filter((key) => !compositeBudgetKeys.includes(key)).map((key) => [
    key,
    `${key} is an agent's own limit: set it on each agent's .budget(...); a composite's budget bounds its whole tree's maxDuration, maxTokens and maxToolCalls, and its own hooks' hookTimeout`
  ])
)

/**
 * Refuses unknown limits (a near miss or an agent's own limit named, as an agent's `.budget` does) and
 * limits that are not positive numbers (or a positive whole number, for counts), naming the composite.
 */
const checkBudget = (def: CompositeDef, limits: CompositeBudget): Partial<CompositeDef> => {
  const subject = `${def.kind} "${def.name}"`
  if (typeof limits !== "object" || limits === null) throw new AgentConfigError({ subject, reason: "budget(...) takes an object of limits" })
  checkOptions(subject, ".budget(...)", limits, compositeBudgetKeys, agentOnlyBudgetKeys)
  const patch: { -readonly [K in "maxDuration" | "maxTokens" | "maxToolCalls"]?: number } & { hooks?: CompositeHooks } = {}
  for (const key of ["maxDuration", "maxTokens", "maxToolCalls"] as const) {
    const value: unknown = limits[key]
    if (value === undefined) continue
    const whole = key !== "maxDuration"
    if (typeof value !== "number" || !(value > 0) || (whole && Number.isFinite(value) && !Number.isInteger(value))) {
      throw new AgentConfigError({
        subject,
        reason: `${key} must be a positive ${whole ? "whole number" : "number of milliseconds"} (or Infinity), got ${shownValue(value)}`
      })
    }
    patch[key] = value
  }
  if (limits.hookTimeout !== undefined) {
    const millis = durationMillis(limits.hookTimeout)
    if (!(millis > 0)) throw new AgentConfigError({ subject, reason: `hookTimeout must be a positive duration, got ${shownValue(limits.hookTimeout)}` })
    patch.hooks = { ...def.hooks, hookTimeout: millis }
  }
  return patch
}

/**
 * The stages run one after the other, each output the next input. Shared by `pipeline` and `.andThen`.
 * A stage that may suspend passes on its `Completed` output; its `Suspended` suspends the pipeline
 * there, and the pipeline's resume continues that stage, then the stages after it.
 */
export const pipelineOf = (name: string, stages: ReadonlyArray<AnyRunnable>): AnyComposite =>
  makeComposite(name, "pipeline", stages, {
    run: (input, settle) => stages.length === 0 ? Effect.succeed(settle.complete(input)) : continueFrom(stages, settle, 0, stages[0]!.runEffect(input)),
    resume: (snapshot, decisions, settle) =>
      Effect.flatMap(memberAt(name, stages, snapshot), (stage) => continueFrom(stages, settle, snapshot.state.stage, stage.resume(snapshot.state.member, decisions)))
  })

/** A member that can continue from its snapshot (an agent or a composite). */
export interface Resumable extends AnyRunnable {
  resume(snapshot: unknown, decisions: Decisions): Effect.Effect<unknown, unknown, unknown>
}

/** The member a snapshot says suspended, when it is one that can; else `SnapshotInvalid`. */
export const memberAt = (composite: string, members: ReadonlyArray<AnyRunnable>, snapshot: CompositeSnapshot): Effect.Effect<Resumable, SnapshotInvalid> => {
  const index = snapshot.state.stage
  const member = members[index]
  return member === undefined || !memberMayNeedApproval(member) || typeof (member as { resume?: unknown }).resume !== "function"
    ? Effect.fail(new SnapshotInvalid({ issues: `member ${index} of ${snapshot.kind} "${composite}" cannot have suspended` }))
    : Effect.succeed(member as Resumable)
}

/**
 * A member's result seen by its composite: `{ value }` to go on with (a `Completed` unwrapped, when the
 * member may suspend), or `{ suspended }`, the composite's own suspension at `stage` (with what else its
 * snapshot keeps, made only then).
 */
export const settleMember = (
  settle: Settle,
  stage: number,
  member: AnyRunnable,
  result: unknown,
  extra?: () => Omit<CompositeSnapshot["state"], "stage" | "member">
): { readonly value: unknown } | { readonly suspended: CompositeSuspended } => {
  if (!memberMayNeedApproval(member)) return { value: result }
  if (isSuspension(result)) return { suspended: settle.suspend(stage, result, extra?.()) }
  return { value: (result as Completed<unknown>).output }
}

/** True for a member's `Suspended` result. */
const isSuspension = (u: unknown): u is { readonly pending: ReadonlyArray<unknown>; readonly snapshot: unknown } =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "Suspended" && "snapshot" in u &&
  Array.isArray((u as { pending?: unknown }).pending)

/** Runs the stages from `start`, whose run is `first`, to the end, or to the first one that suspends. */
const continueFrom = (stages: ReadonlyArray<AnyRunnable>, settle: Settle, start: number, first: Effect.Effect<unknown, unknown, unknown>) =>
  Effect.gen(function*() {
    let result = yield* first
    for (let i = start;; i++) {
      const settled = settleMember(settle, i, stages[i]!, result)
      if ("suspended" in settled) return settled.suspended
      result = settled.value
      const following = stages[i + 1]
      if (following === undefined) return settle.complete(result)
      result = yield* following.runEffect(result)
    }
  })
