/**
 * Running an agent: compile its definition into a plan (once), choose the skill, and drive the
 * stepper to the end (`runAgent`), to a suspension (`runUntil`), or from a snapshot (`resumeRun`). All
 * three share one body: the `agent.run` span, the `duration` budget, and `RunEnd` (emitted once when a
 * run ends, never on a suspension). Every run, turn, model call and tool call is a span (`agent.run`,
 * `agent.turn`, `agent.model`, `agent.tool`).
 */
import { newRunId, runIdOf } from "../internal/run-id.ts"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Queue from "effect/Queue"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import { effectQueue, effectStream } from "../internal/lazy-effect.ts"
import { type AgentDefinition, mayNeedApproval } from "../dsl/agent-definition.ts"
import type { Decisions } from "../dsl/decision.ts"
import { withDefinitionServices } from "../dsl/agent.ts"
import { type BudgetScope, CurrentBudgetScope, ParentRun, StreamSink } from "../dsl/lineage.ts"
import { pickTools } from "../dsl/pick-tools.ts"
import type { RunEndEvent, RunStreamEvent } from "../dsl/events.ts"
import { type AgentError, DecisionsInvalid, InputInvalid, isAgentError, RuntimeDefect, SkillFailed, SnapshotAlreadyResumed, SnapshotInvalid, ToolFailed } from "../errors.ts"
import type { KnowledgeSource } from "../dsl/knowledge.ts"
import { catchUnlessInterrupted, fromMaybeEffect } from "../internal/from-maybe-effect.ts"
import type { Steps } from "../internal/steps.ts"
import { withTracing } from "../internal/tracing.ts"
import { describeCause } from "../internal/describe-cause.ts"
import type { LlmMessage } from "../model/messages.ts"
import { ModelClientService } from "../model/model-client.ts"
import { ModelRetryListener } from "../model/model-retry.ts"
import { chooseSkill, obviousSkill } from "./choose-skill.ts"
import { handedOutput, skillOutput } from "./final-answer.ts"
import { emit, emitEnd, type EventSink, holdSink, queueSink } from "./emit.ts"
import { type AgentPlan, compile, type SkillPlan } from "./plan.ts"
import { systemPrompt } from "./prompt.ts"
import { budgetExceeded, RunContext, type RunEnv } from "./run-context.ts"
import { readDecisions, resolveDecisions } from "./approval.ts"
import { armChildResumes, type ChildResume, childResumes } from "./child-runs.ts"
import { RunSnapshotSchema } from "../dsl/run-snapshot.ts"
import type { ResolvedDecision } from "./run-context.ts"
import { checkSnapshot, decodeSnapshot, decodeSnapshotValue, type RunSnapshot, snapshotOf, stateOf } from "./snapshot.ts"
import { signSnapshot, verifySnapshot } from "./snapshot-signature.ts"
import { ResumeLedger, type ResumeLedgerStore, resumeKey } from "./resume-ledger.ts"
import { drive, type DriveControl, type Driven } from "./step.ts"
import { armDeadline, claimOwnedFiber, disarmDeadline, type OwnedFiber, withDeadline } from "./deadline.ts"
import { Durability } from "./durability.ts"
import { agentSpan, CurrentConversation, GenAi, withErrorType } from "./gen-ai-spans.ts"
import { withGuardedSpan } from "../internal/guarded-span.ts"

/**
 * Runs `definition` on `input` to the end. Needs a `ModelClientService` unless the definition has a
 * model (the builder's `runEffect` provides it then).
 *
 * @example
 * ```ts
 * const output = yield* runAgent(definition, "What is 2 + 2?").pipe(Effect.provide(ModelClient.layer(client)))
 * ```
 */
export const runAgent = (definition: AgentDefinition, input: unknown): Effect.Effect<unknown, AgentError, ModelClientService> =>
  execute(definition, { _tag: "Fresh", input }, {}, undefined).pipe(Effect.flatMap((result) => builderResult(definition, result)))

/**
 * Runs `definition` on `input` as a stream of its events: the same run as `runAgent` (the same loop,
 * hooks and budgets), with every event in order and the deltas of each model answer as they arrive
 * (read from the client's `stream`); `RunEnd` comes last, then the stream ends or fails with the run's
 * `AgentError`. Stopping the stream (interruption, `Stream.take`, a closed HTTP response) interrupts
 * the run and the model request in flight.
 *
 * @example
 * ```ts
 * yield* streamAgent(definition, "2 + 2?").pipe(Stream.runForEach((e) => Effect.log(e._tag)), Effect.provide(ModelClient.layer(client)))
 * ```
 */
export const streamAgent = (definition: AgentDefinition, input: unknown): Stream.Stream<RunStreamEvent, AgentError, ModelClientService> =>
  effectStream().callback<RunStreamEvent, AgentError, ModelClientService>((queue: Queue.Queue<RunStreamEvent, AgentError | Cause.Done>) =>
    execute(definition, { _tag: "Fresh", input }, {}, queueSink(queue)).pipe(
      Effect.andThen(effectQueue().end(queue))
    ), { bufferSize: 256, strategy: "suspend" })

  
/**
 * Continues a run of `definition` from a snapshot (a `RunSnapshot`, its parsed JSON, or its JSON text)
 * with the decisions on the calls it waits for: what the builder's `resume` returns.
 *
 * @example
 * ```ts
 * const result = yield* resumeAgent(definition, JSON.parse(text), { call_1: Decision.approve })
 * ```
 */
export const resumeAgent = (
  definition: AgentDefinition,
  snapshot: unknown,
  decisions: Decisions
): Effect.Effect<unknown, AgentError, ModelClientService> =>
  decodeAnySnapshot(snapshot).pipe(
    Effect.flatMap((decoded) => execute(definition, { _tag: "Resume", snapshot: decoded, decisions }, {}, undefined)),
    Effect.flatMap((result) => builderResult(definition, result))
  )

/** A snapshot given as a `RunSnapshot`, its parsed JSON or its JSON text, decoded. */
const decodeAnySnapshot = (snapshot: unknown) => (typeof snapshot === "string" ? decodeSnapshot(snapshot) : decodeSnapshotValue(snapshot))

/**
 * `resumeAgent` as a stream of its events, as `streamAgent` is `runAgent`'s (the runs of agents called
 * as tools are not part of it; a handoff target's are): `ApprovalDecided`, the calls, the deltas, and
 * `RunEnd` last, whose outcome may be `Suspended` again; a refused decision fails the stream before
 * anything runs. What the builder's `resumeStream` returns.
 *
 * @example
 * ```ts
 * yield* streamResumeAgent(definition, JSON.parse(text), { call_1: Decision.approve }).pipe(Stream.runForEach((e) => Effect.log(e._tag)))
 * ```
 */
export const streamResumeAgent = (
  definition: AgentDefinition,
  snapshot: unknown,
  decisions: Decisions
): Stream.Stream<RunStreamEvent, AgentError, ModelClientService> =>
  effectStream().callback<RunStreamEvent, AgentError, ModelClientService>((queue: Queue.Queue<RunStreamEvent, AgentError | Cause.Done>) =>
    decodeAnySnapshot(snapshot).pipe(
      Effect.flatMap((decoded) => execute(definition, { _tag: "Resume", snapshot: decoded, decisions }, {}, queueSink(queue))),
      Effect.andThen(effectQueue().end(queue))
    ), { bufferSize: 256, strategy: "suspend" })

/**
 * Checks a resume of `definition` from `snapshot` with `decisions` and runs nothing: the snapshot
 * decodes, its signature holds when the agent signs, it fits the definition, and every decision binds
 * to its exact pending call (edits decoded by the tool's Schema), in suspended children and handoff
 * targets too. What a composite resuming several members at once checks for each before any continues.
 *
 * @example
 * ```ts
 * yield* checkResumeAgent(definition, JSON.parse(text), { call_1: Decision.approve })
 * ```
 */
export const checkResumeAgent = (definition: AgentDefinition, snapshot: unknown, decisions: Decisions): Effect.Effect<void, AgentError> =>
  decodeAnySnapshot(snapshot).pipe(
    Effect.flatMap((decoded) => checkDecisions(definition, decoded, decisions)),
    Effect.asVoid
  )

/**
 * One run of a session: `history` (earlier messages, without a system prompt) between the system
 * prompt and the new input. Gives what the builder's `run` gives, and the messages this run added
 * (from the new user message on, those of the agents it handed off to included) when it completed,
 * for the session store. `follow` sees each of those runs' contexts once made (a turn that fails or
 * is interrupted reads what it got to from the last one).
 *
 * @example
 * ```ts
 * const { result, added } = yield* runSessionTurn(definition, "and in euros?", history)
 * ```
 */
export const runSessionTurn = (
  definition: AgentDefinition,
  input: unknown,
  history: ReadonlyArray<LlmMessage>,
  follow?: (ctx: RunContext) => void
): Effect.Effect<{ readonly result: unknown; readonly added: ReadonlyArray<LlmMessage> | undefined }, AgentError, ModelClientService> =>
  Effect.gen(() => runSessionTurnSteps(definition, input, history, follow))

function* runSessionTurnSteps(definition: AgentDefinition, input: unknown, history: ReadonlyArray<LlmMessage>, follow: ((ctx: RunContext) => void) | undefined): Steps<{ readonly result: unknown; readonly added: ReadonlyArray<LlmMessage> | undefined }, AgentError, ModelClientService> {
  const chain = handoffChain(follow)
  const result = yield* execute(definition, { _tag: "Fresh", input, history }, {}, undefined, chain.observe)
  const added = result._tag !== "Done" ? undefined : turnAdded(chain.contexts, history.length, result.output)
  return { result: yield* builderResult(definition, result), added }
}

/**
 * The contexts of a session's run, in order: the run's own, then each handoff target's (`handOff` and
 * `resumeHandoff` observe a target with the observer of the context that hands off); each also to `follow`.
 */
const handoffChain = (follow?: (ctx: RunContext) => void) => {
  const contexts: Array<RunContext> = []
  const observe = (ctx: RunContext) => {
    contexts.push(ctx)
    follow?.(ctx)
    handoffObservers.set(ctx, observe)
  }
  return { contexts, observe }
}

/** The observer of a session's run, by context, inherited by the targets it hands off to. */
const handoffObservers = new WeakMap<RunContext, (ctx: RunContext) => void>()

/**
 * The messages a session's turn added, from its user message on: the run's own (after the system
 * prompt and the `historyLength` earlier messages), then what each handoff target added after the
 * conversation it was handed (which is the handing-off run's transcript without system messages). A
 * deterministic skill has no transcript: its part is its output as text (after the input, when it is
 * the turn's own skill).
 */
const turnAdded = (contexts: ReadonlyArray<RunContext>, historyLength: number, output: unknown): ReadonlyArray<LlmMessage> => {
  const answer = { role: "assistant" as const, content: typeof output === "string" ? output : JSON.stringify(output) }
  const added: Array<LlmMessage> = []
  let handed = historyLength
  for (const [i, ctx] of contexts.entries()) {
    if (ctx.transcript.length === 0) {
      if (i === 0) added.push({ role: "user", content: ctx.input })
      added.push(answer)
      break
    }
    added.push(...ctx.transcript.slice(1 + handed))
    handed = ctx.transcript.filter((message) => message.role !== "system").length
  }
  return added
}

/**
 * Resumes a run of a session from its snapshot: what the builder's `resume` gives, and the messages
 * the run added from the session's new user message on (`historyLength` earlier messages were given
 * to it; a handoff target's included) when it completed, for the session store; `follow` as for
 * `runSessionTurn`.
 *
 * @example
 * ```ts
 * const { result, added } = yield* resumeSessionTurn(definition, waiting.snapshot, decisions, waiting.historyLength)
 * ```
 */
export const resumeSessionTurn = (
  definition: AgentDefinition,
  snapshot: unknown,
  decisions: Decisions,
  historyLength: number,
  follow?: (ctx: RunContext) => void
): Effect.Effect<{ readonly result: unknown; readonly added: ReadonlyArray<LlmMessage> | undefined }, AgentError, ModelClientService> =>
  Effect.gen(() => resumeSessionTurnSteps(definition, snapshot, decisions, historyLength, follow))

function* resumeSessionTurnSteps(definition: AgentDefinition, snapshot: unknown, decisions: Decisions, historyLength: number, follow: ((ctx: RunContext) => void) | undefined): Steps<{ readonly result: unknown; readonly added: ReadonlyArray<LlmMessage> | undefined }, AgentError, ModelClientService> {
  const decoded = yield* decodeSnapshotValue(snapshot)
  const chain = handoffChain(follow)
  const result = yield* execute(definition, { _tag: "Resume", snapshot: decoded, decisions }, {}, undefined, chain.observe)
  const added = result._tag === "Done" && chain.contexts.length > 0 ? turnAdded(chain.contexts, historyLength, result.output) : undefined
  return { result: yield* builderResult(definition, result), added }
}

/** `Out` for an agent without approvals; `Completed | Suspended` for one with a tool that may need approval. */
const builderResult = (definition: AgentDefinition, result: RunResult): Effect.Effect<unknown> => {
  if (result._tag === "Done") return Effect.succeed(mayNeedApproval(definition) ? { _tag: "Completed", output: result.output } : result.output)
  if (result.pending.length === 0) return Effect.die(new Error("internal: a run to the end suspended without waiting calls"))
  return Effect.succeed({ _tag: "Suspended", pending: result.pending, snapshot: result.snapshot })
}

/**
 * How a run driven by `runUntil` or `resumeRun` stopped: finished, or suspended with its snapshot;
 * `pending` lists the calls waiting for a human decision (empty when it stopped after `suspendAfter` steps).
 */
export type RunResult =
  | { readonly _tag: "Done"; readonly output: unknown }
  | {
    readonly _tag: "Suspended"
    readonly snapshot: RunSnapshot
    readonly pending: ReadonlyArray<{ readonly id: string; readonly tool: string; readonly args: unknown; readonly reason?: string }>
  }

/**
 * Runs `definition` on `input`, suspending after `suspendAfter` steps (a model call or a tool call
 * each) with a snapshot of the run; without `suspendAfter`, to the end.
 *
 * @example
 * ```ts
 * const first = yield* runUntil(definition, "2 + 2?", { suspendAfter: 1 })
 * ```
 */
export const runUntil = (
  definition: AgentDefinition,
  input: unknown,
  control: DriveControl = {}
): Effect.Effect<RunResult, AgentError, ModelClientService> => execute(definition, { _tag: "Fresh", input }, control, undefined)

/**
 * Continues a run from a snapshot taken between two steps. Fails with `DefinitionChanged` when the
 * snapshot was taken with a definition of another shape (tools, parameters, skills, budget).
 *
 * @example
 * ```ts
 * const rest = yield* resumeRun(definition, decodeSnapshot(json))
 * ```
 */
export const resumeRun = (
  definition: AgentDefinition,
  snapshot: RunSnapshot,
  control: DriveControl & { readonly decisions?: Decisions | undefined } = {}
): Effect.Effect<RunResult, AgentError, ModelClientService> => execute(definition, { _tag: "Resume", snapshot, decisions: control.decisions }, control, undefined)

type Start =
  | { readonly _tag: "Fresh"; readonly input: unknown; readonly history?: ReadonlyArray<LlmMessage> }
  | { readonly _tag: "Resume"; readonly snapshot: RunSnapshot; readonly decisions: Decisions | undefined }
  /** A handoff: the conversation so far (system prompts left out), and the run's input as value and text. */
  | { readonly _tag: "Handoff"; readonly input: unknown; readonly text: string; readonly transcript: ReadonlyArray<LlmMessage> }

/**
 * The one body of every run; `sink` (a streaming run's, else a streaming composite's around it)
 * receives every event and delta; `observe` sees the context once made.
 */
const execute = (
  definition: AgentDefinition,
  start: Start,
  control: DriveControl,
  given: EventSink | undefined,
  observe?: (ctx: RunContext) => void
): Effect.Effect<RunResult, AgentError, ModelClientService> =>
  withTracing((traced, fiber) => {
    const env: RunEnv = {
      traced,
      clock: fiber.getRef(Clock.Clock),
      client: Context.getOrUndefined(fiber.context, ModelClientService),
      parentRunId: fiber.getRef(ParentRun),
      context: fiber.context,
      // Heard from outside: a listener around the run (a parent's) that the run's own must shadow.
      retryHeard: fiber.getRef(ModelRetryListener) !== undefined
    }
    // The run's references, read from the fiber it starts on rather than asked for one by one.
    // Made here, as the run starts (`withTracing` runs this when the Effect is evaluated).
    const sink = given ?? fiber.getRef(StreamSink)
    const durability = fiber.getRef(Durability)
    const run = runOf({
      definition,
      start,
      control,
      sink,
      observe,
      env,
      references: {
        durability,
        parentScope: fiber.getRef(CurrentBudgetScope),
        resumeLedger: fiber.getRef(ResumeLedger),
        random: fiber.getRef(Random.Random)
      },
      // `agent.run`'s fiber, for its deadline to interrupt directly: a plain run (no span, stream or
      // durable record sees how its body ends).
      owned: claimOwnedFiber(fiber, !traced && sink === undefined && durability === undefined && start._tag === "Fresh")
    })
    if (!traced) return run
    const span = agentSpan(definition.name, env.client?.metadata, fiber.getRef(CurrentConversation))
    return withGuardedSpan(withErrorType(run), span.name, span.options)
  })

/** The references a run reads from the fiber it starts on. */
interface RunReferences {
  readonly durability: Durability | undefined
  readonly parentScope: BudgetScope | undefined
  readonly resumeLedger: ResumeLedgerStore | undefined
  /** Where a fresh run's id is drawn from (a seeded Random in tests). */
  readonly random: Random.Random
}

/** What `execute` hands the body of a run. */
interface RunSetup {
  readonly definition: AgentDefinition
  readonly start: Start
  readonly control: DriveControl
  readonly sink: EventSink | undefined
  readonly observe: ((ctx: RunContext) => void) | undefined
  readonly env: RunEnv
  readonly references: RunReferences
  /** The fiber `agent.run` started for this run alone, when the run claimed it for its deadline. */
  readonly owned: OwnedFiber | undefined
}

/** A run once its id and start are known; `ctx` is set when its context is made (read by the deadline and `RunEnd`). */
interface Running {
  readonly setup: RunSetup
  readonly plan: AgentPlan
  readonly runId: string
  readonly now: number
  readonly startedAt: number
  ctx: RunContext | undefined
}

/**
 * A run: its id and start, then its body within the `duration` budget, then `RunEnd`. A plain run's id
 * and start need no Effect: its start is plain code, and no generator of it is kept while the run goes
 * on (a generator's frame, ~0.5 KB here, lives as long as the run: issue #37's memory per run).
 */
const runOf = (setup: RunSetup): Effect.Effect<RunResult, AgentError, ModelClientService> => {
  const { start, env, references } = setup
  const plan = compile(setup.definition)
  const now = env.clock.currentTimeMillisUnsafe()
  const computedStart = start._tag === "Resume" ? now - start.snapshot.state.elapsedMs : now
  if (references.durability !== undefined) return Effect.gen(() => durableRunSteps(setup, plan, now, computedStart, references.durability!))
  const runId = start._tag === "Resume" ? start.snapshot.state.runId : runIdOf(now, references.random)
  return bounded({ setup, plan, runId, now, startedAt: computedStart, ctx: undefined })
}

/** A durable run chooses the run id and keeps the start time of its first execution. */
function* durableRunSteps(setup: RunSetup, plan: AgentPlan, now: number, computedStart: number, durability: Durability): Steps<RunResult, AgentError, ModelClientService> {
  const start = setup.start
  const runId = start._tag === "Resume" ? start.snapshot.state.runId : yield* durability.runId(newRunId(now))
  const startedAt = yield* durability.startedAt(runId, computedStart)
  return yield* bounded({ setup, plan, runId, now, startedAt, ctx: undefined })
}

// The generators of a run are module-level functions called per run, never `function*` expressions
// evaluated per run: on Node 20 each evaluation of a generator expression costs ~2 µs (its closure
// gets a prototype and a generator map of its own), a call of a hoisted one ~0.05 µs (issue #37).

/** The body of a run within the `duration` budget, then `RunEnd` (not after a suspension between two steps). */
const bounded = (running: Running): Effect.Effect<RunResult, AgentError, ModelClientService> => {
  const { setup, plan, runId, now, startedAt } = running
  const { start, sink, env, owned } = setup
  const body = start._tag === "Resume" ? Effect.gen(() => resumedBody(running, start)) : Effect.gen(() => freshBody(running, start))
  const maxDuration = plan.budget.maxDuration
  // Past the deadline, the stream's reader may have stopped reading: `BudgetExceeded` and `RunEnd` go
  // to their hooks at once and wait for the reader only after (`holdSink`).
  const held = sink === undefined || !Number.isFinite(maxDuration) ? undefined : holdSink(sink)
  const expire = () =>
    Clock.currentTimeMillis.pipe(
      Effect.flatMap((end) => budgetExceeded(plan, runId, { reason: "duration", limit: maxDuration, used: end - startedAt }, running.ctx?.transcript ?? [], held?.sink ?? sink))
    )
  const left = maxDuration - (now - startedAt)
  // On `agent.run`'s own fiber the deadline interrupts the fiber itself (armed as the body starts: this
  // runs when the run's Effect is evaluated); once the time is up, the run ends as `withDeadline`
  // answers it, and `runPromiseOwned` answers that instead of the fiber's interruption.
  const deadline = owned !== undefined && Number.isFinite(maxDuration) && left > 0 ? armDeadline(owned, left, env.clock) : undefined
  const limited = !Number.isFinite(maxDuration)
    ? body
    // A run with no time left ends at once, before anything of it runs: a resume whose snapshot spent
    // the budget (its snapshot and decisions still checked first, its approved calls never run), a
    // durable run replayed after its deadline (whatever its recorded steps would do). A deadline of
    // 0 ms would let a synchronous model and tool go first.
    : left <= 0
    ? (start._tag === "Resume" && setup.references.durability === undefined
      ? Effect.andThen(checkDecisions(setup.definition, start.snapshot, start.decisions ?? {}), expire())
      : expire())
    : deadline !== undefined
    ? body
    : withDeadline(body, Math.max(0, left), expire)
  const run = Effect.onExit(limited, (exit) => {
    if (deadline !== undefined) {
      disarmDeadline(deadline)
      if (deadline.expired) {
        return Effect.flatMap(Effect.exit(expire()), (timedOut) => {
          owned!.timedOut = timedOut
          return runEnd(plan, runId, startedAt, running.ctx, timedOut, sink, env)
        })
      }
    }
    // A suspension between two steps (`suspendAfter`) is no end; one that waits for decisions ends this part of the run.
    return Exit.isSuccess(exit) && exit.value._tag === "Suspended" && exit.value.pending.length === 0
      ? Effect.void
      : held?.held()
      ? Effect.andThen(runEnd(plan, runId, startedAt, running.ctx, exit, held.sink, env), held.release)
      : runEnd(plan, runId, startedAt, running.ctx, exit, sink, env)
  })
  return env.traced ? Effect.andThen(Effect.annotateCurrentSpan("agent.run_id", runId), run) : run
}

/** The body of a resumed run: the snapshot and the decisions checked, then the stepper from where the snapshot left off. */
function* resumedBody(running: Running, start: Extract<Start, { _tag: "Resume" }>): Steps<RunResult, AgentError, ModelClientService> {
  const { setup, plan, runId, now, startedAt } = running
  const { definition, control, sink, observe, env, references } = setup
  const durability = references.durability
  // The signature, the snapshot and the decisions checked (`checkDecisions`), even without decisions (a
  // `suspendAfter` snapshot needs none): a snapshot that waits for decisions, in this run, a child or a
  // handoff target, is refused then, never run again from its start.
  const checked = yield* checkDecisions(definition, start.snapshot, start.decisions ?? {})
  const skill = checked.skill
  const decided = checked.decided
  // With a ledger, a snapshot is consumed once; a durable run keeps its own record of what ran.
  const ledger = references.resumeLedger
  if (ledger !== undefined && durability === undefined) {
    const key = yield* Effect.try({
      try: () => resumeKey(start.snapshot),
      catch: (cause) => new SnapshotInvalid({ issues: `the snapshot cannot be keyed for the resume ledger: ${describeCause(cause)}` })
    })
    if (!(yield* ledger.consume(key))) return yield* new SnapshotAlreadyResumed({ agent: plan.name, runId, key })
  }
  const ctx = running.ctx = RunContext.restore(plan, skill, { ...stateOf(start.snapshot), elapsedMs: now - startedAt }, now, references.parentScope, sink, env)
  ctx.durability = durability
  observe?.(ctx)
  if (decided.size > 0) ctx.decide(decided)
  yield* armChildResumes(ctx, checked.children)
  if (env.traced) yield* Effect.annotateCurrentSpan("agent.skill", skill.name)
  if (checked.handoff !== undefined) {
    const { target, snapshot } = checked.handoff
    return yield* resumeHandoff(ctx, target, snapshot, checked.decisions)
  }
  return yield* resultOf(ctx, yield* drive(ctx, control), stateOf(start.snapshot).input)
}

/** The body of a fresh run (or a handoff's): the input, the skill, the context and the prompt, then the stepper. */
function* freshBody(running: Running, start: Exclude<Start, { _tag: "Resume" }>): Steps<RunResult, AgentError, ModelClientService> {
  const { setup, plan, runId, startedAt } = running
  const { definition, sink, env, references } = setup
  const durability = references.durability
  const input = start.input
  // What needs no Effect is not yielded (an event nobody hears, a text input, a skill without a choice).
  if (sink !== undefined || plan.listeners.has("RunStart")) yield* emit(plan, { _tag: "RunStart", agent: plan.name, runId, input }, sink)
  const text = start._tag === "Handoff" ? start.text : definition.input === undefined && typeof input === "string" ? input : yield* inputText(definition, input)
  const chosen = obviousSkill(plan) ?? (yield* chooseSkill(plan, runId, text, sink, durability))
  const ctx = running.ctx = RunContext.start(plan, chosen.skill, runId, text, startedAt, { turns: chosen.turns, tokens: chosen.tokens ?? 0 }, references.parentScope, sink, env)
  ctx.durability = durability
  if (env.traced) yield* Effect.annotateCurrentSpan("agent.skill", chosen.skill.name)
  if (ctx.hears("SkillChosen")) yield* ctx.emit({ _tag: "SkillChosen", how: chosen.how })
  const implementation = chosen.skill.definition.implementation
  setup.observe?.(ctx)
  if (implementation !== undefined) {
    const run = deterministic(plan, chosen.skill, input)
    const contract = chosen.skill.output
    if (contract === undefined) return { _tag: "Done", output: yield* (durability === undefined ? run : durability.skill(runId, chosen.skill.name, run)) }
    const checked = Effect.flatMap(run, (value) => skillOutput(plan.name, chosen.skill, input, value))
    if (durability === undefined) return { _tag: "Done", output: yield* checked }
    // Checked before the durable record (a value its Schema refuses is a typed failure, recorded as
    // such, never a defect of its encoding) and after it, so that a replayed value is checked as a fresh one is.
    const recorded = yield* durability.skill(runId, chosen.skill.name, checked, contract.schema)
    return { _tag: "Done", output: yield* skillOutput(plan.name, chosen.skill, input, recorded) }
  }
  // A session's history is handed over like a handoff's conversation, followed by the new input.
  const handedOver = start._tag === "Handoff"
    ? start.transcript
    : start.history === undefined || start.history.length === 0
    ? undefined
    : [...start.history, { role: "user" as const, content: text }]
  yield* startAgentic(ctx, text, handedOver)
  return yield* resultOf(ctx, yield* drive(ctx, setup.control), input)
}

/**
 * The stepper's end as the run's result: its output, a suspension (with the run's snapshot), or the
 * result of the agent it handed off to. Plain code answering an Effect, so no generator of it waits
 * with the run (see `runOf`).
 */
const resultOf = (ctx: RunContext, driven: Driven, input: unknown): Effect.Effect<RunResult, AgentError, ModelClientService> => {
  switch (driven._tag) {
    case "Done":
      return Effect.succeed(driven)
    case "Handoff":
      return Effect.flatMap(handOff(ctx, driven.target, input), (result) => handoffResult(ctx, driven.target, result))
    case "Suspended":
      return Effect.map(Clock.currentTimeMillis, (now): RunResult => {
        const snapshot = snapshotOf(ctx, now)
        const secret = ctx.plan.definition.snapshotSecret
        return {
          _tag: "Suspended",
          snapshot: secret === undefined ? snapshot : signSnapshot(snapshot, secret),
          pending: ctx.awaiting.map(({ json: _, ...pending }) => pending)
        }
      })
  }
}

/**
 * Runs `target` on the conversation so far, as a child run of `ctx`'s (its parent run id, its budget
 * scope), with its own model (else the caller's) and the Layers it was given. Its output is the handing-off run's output.
 */
const handOff = (ctx: RunContext, target: AgentDefinition, input: unknown): Effect.Effect<RunResult, AgentError, ModelClientService> => {
  const transcript = ctx.transcript.filter((message) => message.role !== "system")
  // A streaming run streams the target's events too; a session's run observes it (its messages are the turn's).
  const run = execute(target, { _tag: "Handoff", input, text: ctx.input, transcript }, {}, ctx.sink, handoffObservers.get(ctx))
  return (withDefinitionServices(target, run) as Effect.Effect<RunResult, AgentError, ModelClientService>).pipe(
    Effect.provideService(ParentRun, ctx.runId),
    Effect.provideService(CurrentBudgetScope, ctx.ledger.scope)
  )
}

/**
 * What a handoff target's run means for the run that handed off: its output, checked against the
 * handing-off skill's output Schema when it has one (`handedOutput`), or its suspension.
 */
const handoffResult = (ctx: RunContext, target: AgentDefinition, result: RunResult): Effect.Effect<RunResult, AgentError> => {
  if (result._tag !== "Done") return suspendedWithHandoff(ctx, target, result)
  if (ctx.skill.output === undefined) return Effect.succeed(result)
  return Effect.map(handedOutput(ctx, target.name, result.output), (output): RunResult => ({ _tag: "Done", output }))
}

/**
 * A handoff target that suspended suspends the handing-off run too: its snapshot holds the target's
 * (`state.handoff`), its waiting calls are the target's, and its resume continues the target.
 */
const suspendedWithHandoff = (ctx: RunContext, target: AgentDefinition, result: RunResult): Effect.Effect<RunResult> => {
  if (result._tag !== "Suspended" || result.pending.length === 0) return Effect.succeed(result)
  return Clock.currentTimeMillis.pipe(Effect.map((now): RunResult => {
    const own = snapshotOf(ctx, now)
    const snapshot: RunSnapshot = { ...own, state: { ...own.state, handoff: { agent: target.name, snapshot: encodeSnapshotValue(result.snapshot) as Schema.Json } } }
    const secret = ctx.plan.definition.snapshotSecret
    return { _tag: "Suspended", snapshot: secret === undefined ? snapshot : signSnapshot(snapshot, secret), pending: result.pending }
  }))
}

const encodeSnapshotValue = Schema.encodeSync(RunSnapshotSchema)

/** Continues the handoff target of a resumed run, as a child run of it, with the decisions. */
const resumeHandoff = (ctx: RunContext, target: AgentDefinition, snapshot: RunSnapshot, decisions: Decisions): Effect.Effect<RunResult, AgentError, ModelClientService> => {
  const run = execute(target, { _tag: "Resume", snapshot, decisions }, {}, ctx.sink, handoffObservers.get(ctx))
  return (withDefinitionServices(target, run) as Effect.Effect<RunResult, AgentError, ModelClientService>).pipe(
    Effect.provideService(ParentRun, ctx.runId),
    Effect.provideService(CurrentBudgetScope, ctx.ledger.scope),
    Effect.flatMap((result) => handoffResult(ctx, target, result))
  )
}

/** The decisions of a resume, checked: the snapshot's skill, the decisions by call, the children's and a handoff target's. */
interface CheckedDecisions {
  readonly skill: SkillPlan
  /** The decisions as read (`readDecisions`): what the rest of the resume uses, never the caller's object. */
  readonly decisions: Decisions
  readonly decided: ReadonlyMap<string, ResolvedDecision>
  readonly children: ReadonlyMap<string, ChildResume>
  readonly handoff: { readonly target: AgentDefinition; readonly snapshot: RunSnapshot } | undefined
}

/**
 * The decisions of a resume checked before anything runs, in this run and in every suspended child
 * (an agent used as a tool, a handoff target), each against its own snapshot and definition (and
 * trusting what only a signature shows when that definition signs: the child's own resume checks the
 * same way).
 */
const checkDecisions = (
  definition: AgentDefinition,
  snapshot: RunSnapshot,
  decisions: Decisions
): Effect.Effect<CheckedDecisions, AgentError> =>
  Effect.gen(() => checkDecisionsSteps(definition, snapshot, decisions))

function* checkDecisionsSteps(definition: AgentDefinition, snapshot: RunSnapshot, given: Decisions): Steps<CheckedDecisions, AgentError> {
  const plan = compile(definition)
  // An untyped caller may hand anything: read once, a throwing read refused, the copy read after.
  const decisions = yield* readDecisions(plan.name, given)
  if (definition.snapshotSecret !== undefined) yield* verifySnapshot(snapshot, definition.snapshotSecret)
  const signed = definition.snapshotSecret !== undefined
  const skill = yield* checkSnapshot(plan, snapshot)
  const handed = snapshot.state.handoff
  if (handed !== undefined) {
    const target = skill.definition.handoffs.find((h) => h.name === handed.agent)
    if (target === undefined) return yield* new DecisionsInvalid({ agent: plan.name, toolCallId: "*", reason: `the snapshot was handed off to "${handed.agent}", which is not a handoff of skill "${skill.name}"` })
    const child = yield* decodeSnapshotValue(handed.snapshot)
    yield* checkDecisions(target, child, decisions)
    return { skill, decisions, decided: new Map(), children: new Map(), handoff: { target, snapshot: child } }
  }
  const decided = yield* resolveDecisions(plan.name, skill, snapshot, decisions, { signed })
  const children = yield* childResumes(plan.name, skill, snapshot, decisions, checkDecisions)
  return { skill, decisions, decided, children, handoff: undefined }
}

/** `RunEnd` and the run span's closing attributes, once per run that ended. */
const runEnd = (
  plan: AgentPlan,
  runId: string,
  startedAt: number,
  ctx: RunContext | undefined,
  exit: Exit.Exit<RunResult, AgentError>,
  sink: EventSink | undefined,
  env: RunEnv
): Effect.Effect<void> => {
  const durationMs = env.clock.currentTimeMillisUnsafe() - startedAt
  const outcome: RunEndEvent["outcome"] = Exit.isSuccess(exit) && exit.value._tag === "Suspended"
    ? { _tag: "Suspended", pending: exit.value.pending, snapshot: exit.value.snapshot }
    : runOutcome(plan.name, Exit.map(exit, (result) => (result._tag === "Done" ? result.output : undefined)))
  const turns = ctx?.ledger.turns ?? 0
  const toolCalls = ctx?.ledger.toolCalls ?? 0
  // The outcome is sealed: the hooks run detached, so an interruption while they run changes nothing.
  const end = emitEnd(plan, { _tag: "RunEnd", agent: plan.name, runId, outcome, turns, toolCalls, durationMs }, sink)
  if (!env.traced) return end
  return Effect.andThen(
    Effect.annotateCurrentSpan({
      "agent.outcome": outcome._tag === "Failure" ? outcome.error._tag : outcome._tag,
      "agent.turns": turns,
      "agent.tool_calls": toolCalls,
      // The tokens of this run's own model calls (the conventions' invoke_agent usage; a child's are on its span).
      ...(ctx === undefined || ctx.inputTokens + ctx.outputTokens === 0 ? {} : { [GenAi.inputTokens]: ctx.inputTokens, [GenAi.outputTokens]: ctx.outputTokens })
    }),
    end
  )
}

/** A defect (neither a documented failure nor an interruption) is reported as `RuntimeDefect`, never as a model failure. */
export const runOutcome = (agent: string, exit: Exit.Exit<unknown, AgentError>): RunEndEvent["outcome"] => {
  if (Exit.isSuccess(exit)) return { _tag: "Success", output: exit.value }
  if (Cause.hasInterruptsOnly(exit.cause)) return { _tag: "Interrupted" }
  const error = Cause.squash(exit.cause)
  return isAgentError(error) ? { _tag: "Failure", error } : { _tag: "Failure", error: new RuntimeDefect({ agent, cause: error }) }
}

/**
 * The user message: the input as text (strings as they are, anything else JSON-encoded). No input at
 * all (`run()` from plain JavaScript) is refused: it would send the model an empty message.
 */
const inputText = (definition: AgentDefinition, input: unknown): Effect.Effect<string, InputInvalid> => {
  if (definition.input === undefined) {
    if (typeof input === "string") return Effect.succeed(input)
    if (input === undefined) return Effect.fail(new InputInvalid({ agent: definition.name, issues: "no input was given: run(input) takes the user's text" }))
    // An untyped caller may hand anything: BigInt, cycles, throwing getters or toJSON.
    return Effect.try({
      try: () => JSON.stringify(input) ?? "",
      catch: (error) => new InputInvalid({ agent: definition.name, issues: `the input is not JSON-serialisable: ${describeCause(error)}` })
    })
  }
  return Schema.encodeUnknownEffect(Schema.toCodecJson(definition.input))(input, { errors: "all" }).pipe(
    Effect.map((encoded) => (typeof encoded === "string" ? encoded : JSON.stringify(encoded))),
    Effect.mapError((error) => new InputInvalid({ agent: definition.name, issues: `it does not match the agent's input Schema: ${error.message}` }))
  )
}

/** A skill implemented by a function: no model call. Its failure ends the run with `SkillFailed`. */
const deterministic = (plan: AgentPlan, skill: SkillPlan, input: unknown): Effect.Effect<unknown, SkillFailed> =>
  fromMaybeEffect((abortable) => skill.definition.implementation!(input, abortable)).pipe(
    catchUnlessInterrupted((cause) => Effect.fail(new SkillFailed({ agent: plan.name, skill: skill.name, input, cause })))
  )

/** Preloaded knowledge: loaded once at the start; a failure ends the run with `ToolFailed` naming the source. */
const loadKnowledge = (ctx: RunContext, source: KnowledgeSource): Effect.Effect<string, ToolFailed> => {
  const load = fromMaybeEffect((abortable) => source.load(abortable)).pipe(
    Effect.map((text) => String(text)),
    catchUnlessInterrupted((cause) => Effect.fail(new ToolFailed({ agent: ctx.agent, skill: ctx.skill.name, tool: source.name, args: {}, cause })))
  )
  const durability = ctx.durability
  return (durability === undefined ? load : durability.knowledge(ctx.runId, source.name, load)).pipe(
    Effect.tap((text) => {
      ctx.rememberKnowledge(source.name, text)
      return ctx.emit({ _tag: "KnowledgeUsed", knowledge: source.name, toolCallId: "(preloaded)", characters: text.length, cached: false })
    })
  )
}

/**
 * The start of an agentic run: tool pre-selection, then the system prompt and the user message (or,
 * after a handoff, the conversation handed over).
 */
function* startAgentic(
  ctx: RunContext,
  input: string,
  handedOver: ReadonlyArray<LlmMessage> | undefined
): Steps<void, AgentError, any> {
  const selection = ctx.plan.definition.toolSelection
  if (selection !== undefined) {
    const durability = ctx.durability
    if (durability === undefined) {
      const picked = yield* pickTools(input, ctx.skill.offerable, selection)
      if (picked.length > 0) ctx.offer(picked.map((p) => p.tool))
    } else {
      // A scorer may call out (embeddings): a replay offers the tools the first execution picked.
      const pick = Effect.map(pickTools(input, ctx.skill.offerable, selection), (picked) => picked.map((p) => p.tool.name))
      const names = new Set(yield* durability.toolSelection(ctx.runId, pick))
      if (names.size > 0) ctx.offer(ctx.skill.offerable.filter((t) => names.has(t.name)))
    }
    yield* ctx.annotate("agent.offered_tools", ctx.offered.map((t) => t.name).join(","))
  }
  const knowledge: Array<string> = []
  for (const source of ctx.skill.preloaded) {
    const text = yield* loadKnowledge(ctx, source)
    knowledge.push(`Knowledge "${source.name}" (${source.description}):\n${text}`)
  }
  const base = systemPrompt(ctx)
  const prompt = knowledge.length === 0 ? base : `${base}\n\n${knowledge.join("\n\n")}`
  if (handedOver === undefined) ctx.append({ role: "system", content: prompt }, { role: "user", content: input })
  else ctx.append({ role: "system", content: prompt }, ...handedOver)
}
