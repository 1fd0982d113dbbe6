/**
 * `durable(agent)`: the agent's runs as an Effect Workflow keyed by run id. The workflow body is the
 * ordinary loop (`runUntil`, then `resumeRun` after each wait for decisions) with a `Durability`
 * (`recorded-steps.ts`) that turns every model call, tool execution, knowledge load and memory call
 * into an Activity. A run waiting for approval writes its snapshot to the `ApprovalInbox` and suspends
 * on a durable deferred per wait; `decide` checks the decisions against that snapshot (as `resume`
 * does) and completes the deferred, from any process. `maxDuration` holds from the recorded start of
 * the run: a replay recomputes what is left, and a wait for decisions is raced with a durable clock.
 * Every event of the run goes to its journal (`RunJournal`, `journal-events.ts`), which `follow` reads
 * from any process and `journal` reads as typed steps (`run-inspection.ts`). A run whose stored rows
 * cannot be read is `DurableRunUnreadable` to every reader (`run-unreadable.ts`), and `list` shows it
 * as `unreadable` among the others.
 *
 * A run id names one run per engine, whatever its agent. The stores key a run's waits, cancellation,
 * journal and tool claims by the run id alone (so do the studio and the keys tools receive), so two
 * durable agents' runs with one id would share them. Rather than scope every one of those keys by
 * the workflow's name (which would change every stored key, and strand runs in flight across an
 * upgrade), the id is held by the first workflow that registers it (`ApprovalInbox.register`: one
 * insert under a unique run id, so two agents starting one id at once cannot both hold it), and every
 * entry point checks the holder first: `start`/`run` and the runner refuse another agent's id with
 * `InputInvalid` before anything runs, `cancel` refuses it, `decide` and `poll` only see waits of this
 * workflow's execution, `journal` and `follow` read only this workflow's ids, and `list` lists only them.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Activity from "effect/workflow/Activity"
import * as DurableDeferred from "effect/workflow/DurableDeferred"
import * as Workflow from "effect/workflow/Workflow"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import type { AgentBuilder, AgentShape } from "../dsl/agent.ts"
import { withDefinitionServices } from "../dsl/agent.ts"
import { type AgentDefinition, definitionOf } from "../dsl/agent-definition.ts"
import type { Decisions } from "../dsl/decision.ts"
import type { Completed, PendingApproval } from "../dsl/run-outcome.ts"
import { type RunSnapshot, RunSnapshotSchema } from "../dsl/run-snapshot.ts"
import { type AgentError, AgentConfigError, DecisionsInvalid, InputInvalid } from "../errors.ts"
import { shownValue } from "../internal/shown-value.ts"
import { checkOptions } from "../dsl/builder-validation.ts"
import { newRunId } from "../internal/run-id.ts"
import { Durability } from "../runtime/durability.ts"
import { compile } from "../runtime/plan.ts"
import { checkResumeAgent, resumeRun, type RunResult, runUntil } from "../runtime/run-agent.ts"
import { decodeSnapshotValue } from "../runtime/snapshot.ts"
import { verifySnapshot } from "../runtime/snapshot-signature.ts"
import { ApprovalInbox, type ApprovalWait } from "./approval-inbox.ts"
import type { Reconcile } from "./reconcile.ts"
import { recordedSteps } from "./recorded-steps.ts"
import { clearStrayReplies, isStrayDefect } from "./stray-defect.ts"
import { AgentErrorSchema, DecisionsSchema } from "./schemas.ts"
import { type CheckedDecisions, CheckedDecisionsSchema, waitBinding } from "./wait-binding.ts"
import { readStore, withStoreRetry } from "./store-retry.ts"
import { decodeStored, DurableRunUnreadable, unreadableIn, unreadableReason } from "./run-unreadable.ts"
import { ToolIntents } from "./tool-intents.ts"
import { type DurableJournal, inspectRun } from "./run-inspection.ts"
import type { ToolEffectClass } from "../dsl/tool.ts"
import { awaitDecisions, decisionsDeferred, plainDecisions } from "./approval-wait.ts"
import { RunJournal } from "./run-journal.ts"
import { journalSink } from "./journal-events.ts"
import { followRun, type FollowOptions, type DurableEvent } from "./follow.ts"
import { RunSettled } from "./run-settled.ts"
import type { RunJournalFailed } from "./run-journal.ts"
import type * as Stream from "effect/Stream"
import { StreamSink } from "../dsl/lineage.ts"

/** Options of {@link durable}. */
export interface DurableOptions {
  /**
   * The workflow's name; default `agent/<agent name>`. Two durable agents registered with one engine
   * need different names.
   */
  readonly name?: string
  /**
   * Says what happened to a `mutating` tool call whose outcome was lost with a crashed worker (see
   * `Reconciled`). Without it such a run ends with `OutcomeUnknown`.
   */
  readonly reconcile?: Reconcile
  /**
   * How long a claim on a `mutating` call stays valid without a renewal (default 10 seconds; its
   * owner renews it every third of that while the call runs). Another worker replaying the run
   * reconciles the call only once the lease expired or the owner is known dead (same host, process
   * gone): the time to pick up a call whose worker vanished on another host.
   */
  readonly lease?: Duration.Input
  /**
   * How long a worker replaying a run waits for a `mutating` call that another worker still runs
   * (its lease renewed: a shard moved while the call ran, and the call ignores its signal), default
   * 60 seconds. After that the call's outcome is unknown: the claim is fenced (taken from the old
   * owner, whose renewals then fail), the `reconcile` handler is asked (its `runAgain` is refused: the
   * old owner may still run the call), and without a handler the run ends with `OutcomeUnknown`. The
   * call never runs a second time on its own.
   */
  readonly handOverWait?: Duration.Input
}

/** A durable run waiting for decisions on `pending` (give them with `decide`). */
export interface AwaitingDecisions<TTools extends Record<string, any> = Record<string, any>> {
  readonly _tag: "Suspended"
  readonly runId: string
  readonly pending: ReadonlyArray<PendingApproval<TTools>>
}

/**
 * Where a durable run is: running (or not picked up yet), waiting for decisions, or ended; or
 * `unreadable`: its stored state cannot be read (a row edited or damaged, see `DurableRunUnreadable`).
 */
export type DurableRunStatus = "running" | "waiting" | "completed" | "failed" | "cancelled" | "unreadable"

/**
 * One run of `list`: its status, the calls it waits for (`waiting`), the error it ended with (`failed`,
 * `cancelled`), or why its stored state cannot be read (`unreadable`).
 */
export interface DurableRunInfo<TTools extends Record<string, any> = Record<string, any>> {
  readonly runId: string
  readonly status: DurableRunStatus
  readonly pending?: ReadonlyArray<PendingApproval<TTools>>
  readonly error?: AgentError
  /** The row that cannot be read and what is wrong with it (status `unreadable`). */
  readonly unreadable?: DurableRunUnreadable
}

const statuses: ReadonlyArray<DurableRunStatus> = ["running", "waiting", "completed", "failed", "cancelled", "unreadable"]

/** What a durable run has come to: its output, or a wait for decisions. */
export type DurableRunResult<T extends AgentShape> = Completed<T["output"]> | AwaitingDecisions<T["tools"]>

/** The services every process that starts, polls or decides durable runs provides. */
export type DurableClient = WorkflowEngine | ApprovalInbox

/**
 * An agent whose runs survive crashes and restarts. Runners provide `layer` (with an engine and the
 * stores, see `memoryEngine`); any process with the same engine starts, polls and decides runs.
 */
export interface DurableAgent<T extends AgentShape> {
  readonly name: string
  /** The effect/workflow Workflow: payload `{ runId, input }` (the input as JSON), keyed by `runId`. */
  readonly workflow: Workflow.Workflow<string, Schema.Struct<{ readonly runId: Schema.String; readonly input: Schema.Codec<Schema.Json> }>, Schema.Codec<any, any>, Schema.Codec<AgentError, any>>
  /**
   * Registers the workflow's handler with the engine: what every runner process provides. Requires
   * the engine, the stores (`ToolIntents`, `ApprovalInbox`, `RunJournal`) and the services the agent
   * requires.
   */
  readonly layer: Layer.Layer<never, never, WorkflowEngine | ToolIntents | ApprovalInbox | RunJournal | T["requirements"]>
  /**
   * Starts a run (a new run id unless `runId` is given) and answers its id at once. Starting an id
   * that exists already joins that run: it runs once. A run id names one run per engine, whatever its
   * agent: an id another durable agent's run holds on this engine is refused with `InputInvalid`
   * before anything runs.
   */
  start(input: T["input"], options?: { readonly runId?: string }): Effect.Effect<string, InputInvalid, WorkflowEngine>
  /**
   * Starts (or joins) a run and waits until it completes, or waits for decisions. Fails with
   * `DurableRunUnreadable` when the run's stored state cannot be read (as `result`, `join`, `poll`),
   * and with `InputInvalid` when another agent's run holds the id (as `start`).
   */
  run(input: T["input"], options?: { readonly runId?: string }): Effect.Effect<DurableRunResult<T>, AgentError | DurableRunUnreadable, DurableClient>
  /** Waits until run `runId` completes, or waits for decisions. */
  result(runId: string): Effect.Effect<DurableRunResult<T>, AgentError | DurableRunUnreadable, DurableClient>
  /**
   * Waits until run `runId` ended, through any waits for decisions: its output, or the error it ended
   * with; `DurableRunUnreadable` when a row of the run cannot be read (not JSON, another shape), which
   * names the table and the row.
   */
  join(runId: string): Effect.Effect<T["output"], AgentError | DurableRunUnreadable, WorkflowEngine>
  /**
   * Where run `runId` is now: `None` while it runs (or for an id this agent never ran, another agent's
   * run included); fails with the error it ended with.
   */
  poll(runId: string): Effect.Effect<Option.Option<DurableRunResult<T>>, AgentError | DurableRunUnreadable, DurableClient>
  /**
   * Decides on the calls run `runId` waits for (one decision per waiting call, as `resume` takes
   * them), from any process; the run goes on. `DecisionsInvalid`, nothing recorded, when it waits for
   * nothing (it ended, was cancelled, or is another agent's run) or the decisions do not fit (or the
   * wait's row cannot be read: the reason names it). A wait is decided once: of two `decide` calls at
   * the same moment one succeeds and the other is refused.
   */
  decide(runId: string, decisions: Decisions): Effect.Effect<void, DecisionsInvalid, DurableClient>
  /**
   * Cancels run `runId` from any process: the cancellation is recorded (durably: it holds across a
   * crash of this process or of the run's runner), the step in flight is interrupted within about half
   * a second (its signal aborts), a wait for decisions ends, and the run ends with `Cancelled { reason }`.
   * A run that already ended keeps its outcome; an id that never ran ends `Cancelled` if started later
   * (by this agent: the id is held for it, and listed as running until then). `InputInvalid`, nothing
   * recorded, for another agent's run.
   */
  cancel(runId: string, reason?: string): Effect.Effect<void, InputInvalid, DurableClient>
  /**
   * Follows run `runId`'s events from any process, live: each with its id in the run's journal (1, 2,
   * … with no gap), from the first, or from the one after `after` (the last id a client saw: a
   * re-attach after a disconnect, or after the run's runner crashed, sees every event once). The
   * stream ends after the run's end (`RunEnd` with its output or error); it waits (polls) while the run
   * runs or waits for decisions, and for a run not started yet. Events are those of the loop without
   * deltas and `ModelCall` (see "Following a durable run" in docs/guide/durable.md). An `after` that is not a
   * non-negative integer fails with `InputInvalid`, as does the id of another agent's run (where the
   * process has the `ApprovalInbox`, as every engine gives it).
   */
  follow(runId: string, options?: FollowOptions): Stream.Stream<DurableEvent, RunJournalFailed | DurableRunUnreadable | InputInvalid, WorkflowEngine | RunJournal>
  /**
   * Run `runId`'s journal as typed values, for operators and the studio: its recorded steps (model
   * calls, tool calls with their effect class and outcome, a mutating call's claim with owner and
   * lease, retries, approvals asked for and decided, waits, its end), every claim of the run (calls in
   * flight too) and its cancellation. An unknown id (another agent's run included) has an empty
   * journal; a row of the run that cannot be read fails with `DurableRunUnreadable`.
   */
  journal(runId: string): Effect.Effect<DurableJournal, DurableRunUnreadable, RunJournal | ToolIntents | ApprovalInbox>
  /**
   * The runs of this agent started so far (oldest first, at most `limit`, default 1000), with their
   * status; `status` keeps only those. A waiting run lists the calls it waits for. Each run is read on
   * its own: one whose stored state cannot be read is listed `unreadable` (with the
   * `DurableRunUnreadable` saying which row and why) and the others as usual. Options that are not a
   * status or a positive integer limit fail with `InputInvalid`.
   */
  list(options?: {
    readonly status?: DurableRunStatus | ReadonlyArray<DurableRunStatus>
    readonly limit?: number
  }): Effect.Effect<ReadonlyArray<DurableRunInfo<T["tools"]>>, InputInvalid, DurableClient>
}

const decodeHandedSnapshot = Schema.decodeUnknownSync(RunSnapshotSchema)

/**
 * The calls a stored snapshot of `definition` waits on, their arguments decoded by their tools: its
 * own, or, when it handed off, those of the handoff target it holds (`state.handoff`, at any depth),
 * which are the run's (`resume` takes decisions on them by their ids). Throws on a nested snapshot
 * that is none (the caller reports the row unreadable).
 */
const awaitingOf = (definition: AgentDefinition, snapshot: RunSnapshot): ReadonlyArray<{ readonly id: string; readonly tool: string; readonly args: unknown; readonly reason?: string }> => {
  const plan = compile(definition)
  const skill = plan.skills.find((s) => s.name === snapshot.state.skill)
  const handed = snapshot.state.handoff
  const target = handed === undefined ? undefined : skill?.definition.handoffs.find((h) => h.name === handed.agent)
  if (handed !== undefined && target !== undefined) return awaitingOf(target, decodeHandedSnapshot(handed.snapshot))
  return (snapshot.state.awaiting ?? []).map((entry) => {
    const decoded = skill?.tools.get(entry.tool)?.codec.decode(entry.args, { repair: false })
    return { id: entry.id, tool: entry.tool, args: decoded?._tag === "Valid" ? decoded.args : entry.args, ...(entry.reason === undefined ? {} : { reason: entry.reason }) }
  })
}

/**
 * The durable form of `agent`: each run an Effect Workflow keyed by its run id, each model call, tool
 * execution, knowledge load and memory call an Activity, approvals durable deferreds that `decide`
 * completes from any process.
 *
 * @example
 * ```ts
 * const d = durable(bank, { reconcile: (u) => Effect.succeed(Reconciled.fail("check the ledger")) })
 * const runner = d.layer.pipe(Layer.provideMerge(memoryEngine))
 * const result = yield* d.run("pay 10 to Bob", { runId: "order-42" }).pipe(Effect.provide(runner))
 * if (result._tag === "Suspended") yield* d.decide(result.runId, { [result.pending[0]!.id]: Decision.approve })
 * ```
 */
export const durable = <T extends AgentShape>(agent: AgentBuilder<T>, options: DurableOptions = {}): DurableAgent<T> => {
  const definition = definitionOf(agent)
  // A plain JavaScript caller's misspelt option (`reconcle`) or value of another kind is refused, not dropped.
  const subject = `durable agent "${definition.name}"`
  checkOptions(subject, "durable(agent, options)", options, ["name", "reconcile", "lease", "handOverWait"])
  if (options.name !== undefined && (typeof options.name !== "string" || options.name === "")) {
    throw new AgentConfigError({ subject, reason: `name is the workflow's name, a non-empty string, got ${shownValue(options.name)}` })
  }
  if (options.reconcile !== undefined && typeof options.reconcile !== "function") {
    throw new AgentConfigError({ subject, reason: `reconcile is a function from an OutcomeUnknown to an Effect of Reconciled, got ${shownValue(options.reconcile)}` })
  }
  const leaseMs = options.lease === undefined ? undefined : leaseOf(definition.name, options.lease, "lease")
  const handOverMs = options.handOverWait === undefined ? undefined : leaseOf(definition.name, options.handOverWait, "handOverWait")
  const name = options.name ?? `agent/${definition.name}`
  const inputCodec = Schema.toCodecJson((definition.input ?? Schema.Json) as Schema.Codec<unknown, unknown>)
  const encodeInput = Schema.encodeUnknownEffect(inputCodec)
  const decodeInput = Schema.decodeUnknownEffect(inputCodec)
  const output = (definition.output ?? Schema.Json) as Schema.Codec<unknown, unknown>
  const workflow = Workflow.make(name, {
    payload: { runId: Schema.String, input: Schema.Json },
    success: output,
    error: AgentErrorSchema as Schema.Codec<AgentError, any>,
    idempotencyKey: (payload) => payload.runId
  }) as unknown as DurableAgent<T>["workflow"]

  // A run's execution id is a SHA-256 of the workflow and the run id through WebCrypto (an async job
  // on libuv's pool): asked at every poll, it was a sixth of a resume's CPU. Kept for the last runs asked.
  const executionIds = new Map<string, string>()
  const heldRunIds = heldByInbox()
  const executionIdOf = (runId: string): Effect.Effect<string> => {
    const known = executionIds.get(runId)
    if (known !== undefined) return Effect.succeed(known)
    return Effect.tap(workflow.executionId({ runId, input: null }), (id) =>
      Effect.sync(() => {
        if (executionIds.size >= executionIdsKept) executionIds.delete(executionIds.keys().next().value!)
        executionIds.set(runId, id)
      }))
  }

  const body = (payload: { readonly runId: string; readonly input: Schema.Json }, executionId: string) =>
    Effect.gen(function*() {
      // An input that no longer decodes (its row edited): the run's stored state is unreadable, nothing is recorded.
      const input = yield* decodeInput(payload.input).pipe(
        Effect.catch((error) => Effect.die(new DurableRunUnreadable({ runId: payload.runId, table: "agent_workflow_executions", row: "payload", reason: unreadableReason(error) })))
      )
      const inbox = yield* ApprovalInbox
      // Listed by `list` (kept once: a replay's register does nothing), and the run id held by this
      // workflow before anything of the run is written; another workflow's id is refused here.
      yield* claimRunId(inbox, payload.runId)
      const durability = yield* recordedSteps({ rootRunId: payload.runId, reconcile: options.reconcile, leaseMs, handOverMs, inbox, agent: definition.name })
      // The run's events go to its journal (`follow`); a replay appends only those not there yet.
      const journal = yield* RunJournal
      const known = yield* withStoreRetry(journal.keys(payload.runId))
      const events = journalSink(journal, payload.runId, known)
      const step = (run: Effect.Effect<RunResult, AgentError, any>) =>
        withDefinitionServices(definition, run).pipe(Effect.provideService(Durability, durability), Effect.provideService(StreamSink, events.sink))
      let wait = 0
      const loop = Effect.gen(function*() {
        let result: RunResult = yield* step(runUntil(definition, input))
        while (result._tag === "Suspended") {
          wait += 1
          const decisions = yield* awaitDecisions(definition, durability, inbox, { runId: payload.runId, executionId, wait, snapshot: result.snapshot })
          // Checked against another snapshot than this one (the wait's row edited): asked again, in the next wait.
          if (decisions === undefined) continue
          result = yield* step(resumeRun(definition, result.snapshot, { decisions }))
        }
        return result.output
      })
      // The run's end closes its waits (a replay that ends before it meets its wait again, at its
      // deadline, included), so `decide` refuses it from then on: before the engine records the end.
      // Not closed: the store failing here is logged (`decide` also asks the engine whether the run ended).
      const closeWaits = inbox.closeAll(payload.runId).pipe(
        Effect.catch((e) => Effect.logWarning(`durable: the end of run ${payload.runId} could not close its waits: ${e.message}`)),
        Effect.asVoid
      )
      // An end outside the loop (cancelled or expired while waiting for decisions) is journalled too;
      // a stored row that cannot be read is no end: the run stays as stored (`run-unreadable.ts`).
      return yield* loop.pipe(Effect.onExit((exit) => {
        if (Exit.isSuccess(exit)) return wait > 0 ? closeWaits : Effect.void
        const cause = exit.cause
        if (Cause.hasInterruptsOnly(cause) || unreadableIn(cause, payload.runId) !== undefined) return Effect.void
        return Effect.andThen(
          closeWaits,
          events.ended()
            ? Effect.void
            : events.sink({ _tag: "RunEnd", agent: definition.name, runId: payload.runId, outcome: { _tag: "Failure", error: Cause.squash(cause) as AgentError }, turns: 0, toolCalls: 0, durationMs: 0 })
        )
      }))
    })

  // The hand-over at start runs once the workflow is registered (a run it wakes is run), in the background.
  const layer = Layer.effectDiscard(Effect.forkScoped(Effect.suspend(() => handOverAll))).pipe(
    Layer.provideMerge(workflow.toLayer(body as any))
  ) as unknown as DurableAgent<T>["layer"]

  /** Run id `runId` is another workflow's: refused before anything of the run is written. */
  const takenBy = (runId: string, holder: string) =>
    new InputInvalid({
      agent: definition.name,
      issues: `run id ${JSON.stringify(runId)} is a run of ${JSON.stringify(holder)} on this engine, not of ${JSON.stringify(name)}: ` +
        "a run id names one run per engine, whatever its agent (give this agent's runs ids of their own)"
    })

  /**
   * Holds run id `runId` for this workflow (`ApprovalInbox.register`, atomic in the store), or
   * `InputInvalid` when another workflow holds it. Known for the last ids held through each inbox, so a
   * replay in this process asks the store nothing.
   */
  const claimRunId = (inbox: ApprovalInbox["Service"], runId: string): Effect.Effect<void, InputInvalid> =>
    Effect.suspend(() => {
      let held = heldRunIds.get(inbox)
      if (held?.has(runId)) return Effect.void
      return Effect.flatMap(withStoreRetry(inbox.register(name, runId)), (holder) => {
        if (holder !== name) return Effect.fail(takenBy(runId, holder))
        if (held === undefined) heldRunIds.set(inbox, (held = new Set()))
        if (held.size >= executionIdsKept) held.delete(held.values().next().value!)
        held.add(runId)
        return Effect.void
      })
    })

  /** Whether run id `runId` is this workflow's, by the store (`None`: no workflow registered it). */
  const holderOf = (inbox: ApprovalInbox["Service"], runId: string): Effect.Effect<Option.Option<string>> =>
    heldRunIds.get(inbox)?.has(runId) === true ? Effect.succeed(Option.some(name)) : withStoreRetry(inbox.owner(runId))

  const start = (input: T["input"], startOptions: { readonly runId?: string } = {}) =>
    Effect.gen(function*() {
      const runId = startOptions.runId ?? (yield* Effect.flatMap(Clock.currentTimeMillis, newRunId))
      const encoded = yield* encodeInput(input).pipe(
        Effect.mapError((error) => new InputInvalid({ agent: definition.name, issues: `it does not match the agent's input Schema: ${error.message}` }))
      )
      // Listed by `list`, and the id held by this workflow, or refused as another's before anything runs
      // (where the process has the stores; the runner registers it again when it runs, and refuses it there).
      const inbox = yield* Effect.serviceOption(ApprovalInbox)
      if (Option.isSome(inbox)) yield* claimRunId(inbox.value, runId)
      yield* workflow.execute({ runId, input: encoded as Schema.Json }, { discard: true })
      return runId
    })

  const pendingOf = (runId: string, snapshot: RunSnapshot): AwaitingDecisions<T["tools"]> =>
    ({ _tag: "Suspended", runId, pending: awaitingOf(definition, snapshot) as unknown as AwaitingDecisions<T["tools"]>["pending"] })

  /** The open wait of run `runId` of this workflow (a wait of another workflow's execution is not this run's). */
  const openWait = (inbox: ApprovalInbox["Service"], runId: string) =>
    Effect.gen(function*() {
      const open = yield* readStore(inbox.current(runId))
      if (Option.isNone(open)) return open
      return open.value.executionId === (yield* executionIdOf(runId)) ? open : Option.none<ApprovalWait>()
    })

  const waiting = (runId: string) =>
    Effect.gen(function*() {
      const inbox = yield* ApprovalInbox
      const open = yield* openWait(inbox, runId)
      if (Option.isNone(open)) return Option.none<AwaitingDecisions<T["tools"]>>()
      const where = { runId, table: "agent_approval_waits", row: `wait ${open.value.wait}` }
      const snapshot = yield* decodeSnapshotValue(open.value.snapshot).pipe(Effect.mapError((e) => new DurableRunUnreadable({ ...where, reason: unreadableReason(e) })))
      // A snapshot of another run, or a signing agent's whose signature does not hold, was put in the
      // row after it was written: its calls are not shown as this run's.
      if (snapshot.state.runId !== runId) return yield* new DurableRunUnreadable({ ...where, reason: `it holds the snapshot of run ${JSON.stringify(snapshot.state.runId)}` })
      if (definition.snapshotSecret !== undefined) {
        yield* verifySnapshot(snapshot, definition.snapshotSecret).pipe(Effect.mapError((e) => new DurableRunUnreadable({ ...where, reason: e.message })))
      }
      const pending = decodeStored(where, () => pendingOf(runId, snapshot))
      if (pending instanceof DurableRunUnreadable) return yield* pending
      return Option.some(pending)
    })

  /** The run's end, once it ended; `DurableRunUnreadable` when the engine cannot read the run's rows. */
  const ended = (runId: string): Effect.Effect<Option.Option<Exit.Exit<unknown, AgentError>>, DurableRunUnreadable, WorkflowEngine> =>
    Effect.gen(function*() {
      const executionId = yield* executionIdOf(runId)
      // A stray reply (a runner without the workflow answered for it) is not the run's end: cleared, the run goes on.
      // An unreadable row comes as the poll's defect (an engine's poll has no error channel): typed here.
      const polled = yield* workflow.poll(executionId).pipe(
        Effect.catchCause((cause) => {
          const unreadable = unreadableIn(cause, runId)
          if (unreadable !== undefined) return Effect.fail(unreadable)
          return isStrayDefect(Exit.failCause(cause)) ? Effect.as(clearStrayReplies(executionId), Option.none()) : Effect.failCause(cause)
        })
      )
      if (Option.isNone(polled) || polled.value._tag !== "Complete") return Option.none()
      const exit = polled.value.exit as Exit.Exit<unknown, AgentError>
      const unreadable = Exit.isFailure(exit) ? unreadableIn(exit.cause, runId) : undefined
      if (unreadable !== undefined) return yield* unreadable
      if (isStrayDefect(exit)) {
        yield* clearStrayReplies(executionId)
        return Option.none()
      }
      return Option.some(exit)
    })

  const poll = (runId: string): Effect.Effect<Option.Option<DurableRunResult<T>>, AgentError | DurableRunUnreadable, DurableClient> =>
    Effect.gen(function*() {
      const end = yield* ended(runId)
      if (Option.isSome(end)) {
        const exit = end.value
        if (Exit.isSuccess(exit)) return Option.some<DurableRunResult<T>>({ _tag: "Completed", output: exit.value })
        return yield* Effect.failCause(exit.cause)
      }
      return yield* waiting(runId)
    })

  const join = (runId: string): Effect.Effect<T["output"], AgentError | DurableRunUnreadable, WorkflowEngine> =>
    Effect.flatMap(pollUntil(executionIdOf(runId), ended(runId)), (exit) => exit)

  const result = (runId: string): Effect.Effect<DurableRunResult<T>, AgentError | DurableRunUnreadable, DurableClient> =>
    pollUntil(executionIdOf(runId), poll(runId))

  /** Hands `value` to wait `wait` of the run's execution (its durable deferred: the first value given wins). */
  const deliver = (wait: number, executionId: string, value: CheckedDecisions) => {
    const deferred = decisionsDeferred(wait)
    const token = DurableDeferred.tokenFromExecutionId(deferred, { workflow, executionId })
    return DurableDeferred.succeed(deferred, { token, value })
  }

  /**
   * Hands over the decisions a decider took for run `runId` and did not hand over (it stopped between
   * the take and the hand-over): the wait they were taken for, or `None` when there are none (or the
   * run ended meanwhile: its end closes its waits). Handing over twice gives the run the first only.
   */
  const handOverTaken = (inbox: ApprovalInbox["Service"], runId: string): Effect.Effect<Option.Option<number>, DurableRunUnreadable | Schema.SchemaError, WorkflowEngine> =>
    Effect.gen(function*() {
      const executionId = yield* executionIdOf(runId)
      const taken = yield* readStore(inbox.undelivered(runId))
      if (Option.isNone(taken) || taken.value.executionId !== executionId) return Option.none()
      const value = yield* Schema.decodeUnknownEffect(CheckedDecisionsSchema)(taken.value.decisions)
      if (Option.isNone(yield* ended(runId))) yield* deliver(taken.value.wait, executionId, value)
      return Option.some(taken.value.wait)
    })

  /**
   * Checks the decisions against the open wait exactly as `resume` checks them (its snapshot's
   * signature when the agent signs, the definition, every decision bound to its pending call), then
   * takes the wait (`ApprovalInbox.take`: records them and closes it, only while it is open, in one
   * statement) and hands them to the run, bound to the snapshot they were checked against
   * (`wait-binding.ts`: the run applies them only if its own snapshot is that one). The take is where
   * deciding is arbitrated: of two deciders at once one takes it and the other is refused, and a run
   * that ended (its end closes its waits) or was cancelled (so does the cancellation) is refused;
   * nothing of a refused decide is recorded. A decider that stops between the take and the hand-over
   * leaves the decisions in the wait: the next `decide`, or the next runner to start, hands them over.
   */
  const decide = (runId: string, decisions: Decisions): Effect.Effect<void, DecisionsInvalid, DurableClient> =>
    Effect.gen(function*() {
      const inbox = yield* ApprovalInbox
      const refuse = (reason: string) => new DecisionsInvalid({ agent: definition.name, toolCallId: "*", reason })
      // A wait whose row cannot be read cannot be checked against: refused (as a snapshot of another shape is).
      const open = yield* openWait(inbox, runId).pipe(Effect.mapError((e) => refuse(e.message)))
      if (Option.isNone(open)) {
        const handed = yield* handOverTaken(inbox, runId).pipe(Effect.mapError((e) => refuse(e.message)))
        if (Option.isSome(handed)) return yield* refuse(`run "${runId}" waits for no decisions: the decisions of its wait ${handed.value} were given already`)
        return yield* refuse(`run "${runId}" waits for no decisions`)
      }
      // A run that ended with a wait left open (by an earlier version) waits for nothing either.
      if (Option.isSome(yield* ended(runId).pipe(Effect.mapError((e) => refuse(e.message))))) {
        yield* withStoreRetry(inbox.closeAll(runId))
        return yield* refuse(`run "${runId}" has ended: it waits for no decisions`)
      }
      const where = `the snapshot of its wait ${open.value.wait} (agent_approval_waits)`
      yield* checkResumeAgent(definition, open.value.snapshot, decisions).pipe(
        Effect.mapError((e) => e._tag === "DecisionsInvalid" ? e : refuse(`${where} is refused: ${e._tag}: ${e.message}`))
      )
      const snapshot = yield* decodeSnapshotValue(open.value.snapshot).pipe(Effect.mapError((e) => refuse(`${where} cannot be read: ${e.message}`)))
      if (snapshot.state.runId !== runId) return yield* refuse(`${where} is of run ${JSON.stringify(snapshot.state.runId)}: it was changed after it was written`)
      const checked = yield* Schema.decodeUnknownEffect(DecisionsSchema)(plainDecisions(decisions)).pipe(
        Effect.mapError((e) => refuse(`the decisions are not JSON: ${e.message}`))
      )
      const value: CheckedDecisions = { decisions: checked, checked: waitBinding(snapshot) }
      const taken = yield* withStoreRetry(inbox.take(runId, open.value.wait, value as unknown as Schema.Json))
      if (!taken) return yield* refuse(`run "${runId}" waits for no decisions: its wait ${open.value.wait} was decided, cancelled or ended meanwhile`)
      yield* deliver(open.value.wait, open.value.executionId, value)
    })

  /**
   * What a runner does as it starts: hands over the decisions deciders took and did not hand over (a
   * decider killed between the take and the hand-over), so those runs go on without another `decide`.
   * Each run on its own; what fails is logged, and the next `decide` of that run hands them over.
   */
  const handOverAll = Effect.gen(function*() {
    const inbox = yield* ApprovalInbox
    const runIds = yield* withStoreRetry(inbox.undeliveredRuns(name))
    yield* Effect.forEach(runIds, (runId) =>
      handOverTaken(inbox, runId).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logWarning(`durable: the decisions taken for run ${runId} could not be handed over at start (the next decide hands them over): ${Cause.pretty(cause)}`)
        )
      ), { discard: true, concurrency: 4 })
  })

  const cancel = (runId: string, reason = "cancelled"): Effect.Effect<void, InputInvalid, DurableClient> =>
    Effect.gen(function*() {
      const inbox = yield* ApprovalInbox
      // The cancellation is keyed by the run id: only this workflow's (an id never run is held for it).
      yield* claimRunId(inbox, runId)
      yield* withStoreRetry(inbox.cancel(runId, String(reason)))
      // A run waiting for decisions holds no step to interrupt: its waits are closed (a `decide` from now
      // on is refused) and it is woken (no decisions); it finds its cancellation. A wait opened after
      // this finds the cancellation as it opens.
      const closed = yield* withStoreRetry(inbox.closeAll(runId))
      yield* Effect.forEach(closed, (w) => deliver(w.wait, w.executionId, {}), { discard: true })
    })

  const info = (runId: string): Effect.Effect<DurableRunInfo<T["tools"]>, DurableRunUnreadable, DurableClient> =>
    Effect.gen(function*() {
      const end = yield* ended(runId)
      if (Option.isSome(end)) {
        const exit = end.value
        if (Exit.isSuccess(exit)) return { runId, status: "completed" as const }
        const error = Option.getOrUndefined(Exit.findErrorOption(exit))
        return error === undefined
          ? { runId, status: "failed" as const }
          : { runId, status: error._tag === "Cancelled" ? "cancelled" as const : "failed" as const, error }
      }
      const waits = yield* waiting(runId)
      return Option.isSome(waits) ? { runId, status: "waiting" as const, pending: waits.value.pending } : { runId, status: "running" as const }
    })

  /**
   * `info`, each run on its own: a run whose rows cannot be read is listed `unreadable` (the list says
   * why); any other failure reading it (a defect past the store's retries) is too, with a warning, so
   * one run never hides the others.
   */
  const infoOrUnreadable = (runId: string): Effect.Effect<DurableRunInfo<T["tools"]>, never, DurableClient> =>
    info(runId).pipe(
      Effect.catchCause((cause) => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
        const unreadable = unreadableIn(cause, runId)
        if (unreadable !== undefined) return Effect.succeed({ runId, status: "unreadable" as const, unreadable })
        const other = new DurableRunUnreadable({ runId, table: "(unknown)", row: "(the run)", reason: unreadableReason(Cause.squash(cause)) })
        return Effect.as(Effect.logWarning(`durable: list: ${other.message}`), { runId, status: "unreadable" as const, unreadable: other })
      })
    )

  const list: DurableAgent<T>["list"] = (listOptions = {}) =>
    Effect.gen(function*() {
      const invalid = (issues: string) => new InputInvalid({ agent: definition.name, issues })
      const wanted = listOptions.status === undefined ? statuses : typeof listOptions.status === "string" ? [listOptions.status] : listOptions.status
      if (!Array.isArray(wanted) || wanted.some((w) => !statuses.includes(w))) {
        return yield* invalid(`list: status must be one of ${statuses.join(", ")}`)
      }
      const limit = listOptions.limit ?? 1000
      if (!Number.isInteger(limit) || limit <= 0) return yield* invalid("list: limit must be a positive integer")
      const inbox = yield* ApprovalInbox
      const ids = yield* withStoreRetry(inbox.runs(name, limit))
      const infos = yield* Effect.forEach(ids, (runId) => infoOrUnreadable(runId), { concurrency: 8 })
      return infos.filter((i) => wanted.includes(i.status))
    })

  // Another workflow's run (its id held by it) is never followed: refused once the store says so; an
  // id no workflow holds yet is waited for, as a run not started yet.
  const follow: DurableAgent<T>["follow"] = (runId, followOptions = {}) =>
    followRun(definition.name, runId, followOptions, Effect.map(ended(runId), Option.isSome), Effect.gen(function*() {
      const inbox = yield* Effect.serviceOption(ApprovalInbox)
      if (Option.isNone(inbox)) return "ours" as const
      const holder = yield* holderOf(inbox.value, runId)
      if (Option.isNone(holder)) return "unknown" as const
      return holder.value === name ? "ours" as const : takenBy(runId, holder.value)
    }))

  const effects = new Map<string, ToolEffectClass>()
  for (const skill of compile(definition).skills) for (const [toolName, t] of skill.tools) effects.set(toolName, t.effect)
  // Another workflow's run is an unknown run here: nothing of it is read. An id no workflow held when
  // asked is read, then asked again: rows of an id are written only after its holder registered it, so
  // what was read is this run's when the holder is now this workflow.
  const journalOf: DurableAgent<T>["journal"] = (runId) =>
    Effect.gen(function*() {
      const stores = { journal: yield* RunJournal, intents: yield* ToolIntents, inbox: yield* ApprovalInbox }
      const unknown: DurableJournal = { runId, entries: [], claims: [] }
      const ours = (holder: Option.Option<string>) => Option.isSome(holder) && holder.value === name
      const before = yield* holderOf(stores.inbox, runId)
      if (Option.isSome(before) && !ours(before)) return unknown
      const read = yield* inspectRun(runId, (toolName) => effects.get(toolName), stores)
      return ours(before) || ours(yield* holderOf(stores.inbox, runId)) ? read : unknown
    })

  return {
    name,
    workflow,
    cancel,
    follow,
    journal: journalOf,
    list,
    layer,
    start,
    run: (input, runOptions) => Effect.flatMap(start(input, runOptions), result),
    result,
    join,
    poll,
    decide
  }
}

/** How many runs' execution ids a durable agent keeps (the oldest asked are dropped first); as many run ids held, per inbox. */
const executionIdsKept = 10_000

/** The run ids each durable agent's workflow is known to hold, by the inbox (the engine's store) that said so. */
const heldByInbox = () => new WeakMap<ApprovalInbox["Service"], Set<string>>()

/** A duration option (`lease`, `handOverWait`) in milliseconds: a positive finite duration, else an `AgentConfigError`. */
const leaseOf = (agent: string, lease: Duration.Input, option: string): number => {
  const refuse = () => new AgentConfigError({ subject: `durable(${agent})`, reason: `\`${option}\` must be a positive finite duration` })
  const decoded = Duration.fromInput(lease)
  if (Option.isNone(decoded)) throw refuse()
  const ms = Duration.toMillis(decoded.value)
  if (!Number.isFinite(ms) || ms <= 0) throw refuse()
  return ms
}

/**
 * `check` until it finds something: tried again after 5 ms, then 1.5 times longer each time up to
 * every half second, or as soon as the engine of this process says a run of the execution ended
 * (`RunSettled`, the embedded engine's: a run in this process is then seen at once, not at the next
 * poll). The wait is armed before each try, so an end between a try and the wait is not missed.
 */
const pollUntil = <A, E, R, R2>(executionId: Effect.Effect<string, never, R2>, check: Effect.Effect<Option.Option<A>, E, R>): Effect.Effect<A, E, R | R2> =>
  Effect.gen(function*() {
    const settled = Option.getOrUndefined(yield* Effect.serviceOption(RunSettled))
    const execution = settled === undefined ? undefined : yield* executionId
    let delay = 5
    while (true) {
      let ended = false
      let wake: (() => void) | undefined
      const stop = settled?.onSettled(execution!, () => {
        ended = true
        wake?.()
      })
      const told = Effect.callback<void>((resume) => {
        if (ended) return resume(Effect.void)
        wake = () => resume(Effect.void)
        return Effect.sync(() => {
          wake = undefined
        })
      })
      const found = yield* Effect.gen(function*() {
        const found = yield* check
        if (Option.isNone(found) && !ended) {
          yield* settled === undefined ? Effect.sleep(Duration.millis(delay)) : Effect.raceFirst(Effect.sleep(Duration.millis(delay)), told)
        }
        return found
      }).pipe(Effect.ensuring(Effect.sync(() => stop?.())))
      if (Option.isSome(found)) return found.value
      delay = Math.min(500, delay * 1.5)
    }
  })
