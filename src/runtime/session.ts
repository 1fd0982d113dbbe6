/**
 * Sessions: a conversation with one agent that continues across runs. Each `send` loads the session's
 * messages from its store, keeps the part the context window allows (whole turns: a tool call and its
 * result are never split), runs the agent with them between its system prompt and the new input, and,
 * when the run completes, appends the messages it added (a handoff target's included). The stored
 * messages are checked first: a value that is not a message (or a system message: none is ever stored)
 * fails the send (`SessionStoreFailed`), and a tool result or call without its counterpart is left out
 * of what the run sees; so is the waiting run, before it is continued or abandoned. Every call of the
 * store is guarded: a method that throws, dies or answers something other than an Effect fails the
 * turn with `SessionStoreFailed` too, never with a defect. A turn (a send or a
 * resume) that fails after some of its calls got results records its messages up to the failure, each
 * call paired with its result, the one the model got (a substitute's, an escalation's; `turn-trail.ts`),
 * and fails with its error; a send that fails before that records nothing and leaves the waiting run it
 * would have abandoned. A turn interrupted after some of its calls completed (`Fiber.interrupt`,
 * `Effect.timeout` around the send, a scope closing) records them the same way, and each call of it
 * that had no result yet (running, or waiting for its turn to run) with a result saying it was
 * interrupted and may have had its effect: the next turn's model checks rather than runs it again
 * blindly, and no call is left without a result. Its writes (and a completed turn's) run on a fiber of
 * their own: an interruption never cuts one short, nor waits for a slow store; the session's next turn
 * waits for them. Sends on one session value run one at a time. A run that suspends for approval is
 * the session's waiting run (in the store when it keeps one): `resume(decisions)` takes it (once) and
 * continues it, and its exchange is recorded when it completes; a send abandons it, and records what of
 * it ran with its own turn.
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import { checkOptions, kindOf } from "../dsl/builder-validation.ts"
import { applyWindow, type ContextWindow, contextWindowProblem } from "../dsl/context-window.ts"
import { inMemorySessionStore, type SessionStore, type WaitingRun } from "../dsl/session-store.ts"
import type { Decisions } from "../dsl/decision.ts"
import { decodeSnapshotValue, type RunSnapshot } from "../dsl/run-snapshot.ts"
import { type AgentError, AgentConfigError, DecisionsInvalid, SessionStoreFailed } from "../errors.ts"
import { describeCause } from "../internal/describe-cause.ts"
import { isRecord } from "../internal/is-record.ts"
import { shownValue } from "../internal/shown-value.ts"
import { userInterruptAsFailure } from "../internal/from-maybe-effect.ts"
import { exchangesOf } from "../model/exchanges.ts"
import type { LlmMessage } from "../model/messages.ts"
import { LlmMessageSchema } from "../model/message-schemas.ts"
import type { ModelClientService } from "../model/model-client.ts"
import { CurrentConversation } from "./gen-ai-spans.ts"
import { resumeSessionTurn, runSessionTurn } from "./run-agent.ts"
import { failedTurn, interruptedTurn, trailedDefinition, TurnTrail, waitingTurn, withTurnTrail } from "./turn-trail.ts"

/** Where a session keeps its messages and how much of them a run sees. */
export interface SessionOptions {
  /** Default: a new `inMemorySessionStore()` for this session value. */
  readonly store?: SessionStore
  /** Default: the whole conversation. */
  readonly window?: ContextWindow
}

/** A session over a definition, untyped: the entry binds the types (`session` in `agent.ts`). */
export interface SessionCore {
  readonly id: string
  readonly send: (input: unknown) => Effect.Effect<unknown, AgentError, ModelClientService>
  readonly history: () => Effect.Effect<ReadonlyArray<LlmMessage>, AgentError>
  /** The session's run waiting for decisions, if any. */
  readonly waiting: () => Effect.Effect<WaitingRun | undefined, AgentError>
  /**
   * Resumes the waiting run with the decisions; its exchange is recorded once, when it completes, or
   * as far as it went when it fails or is interrupted after its calls ran.
   */
  readonly resume: (decisions: Decisions) => Effect.Effect<unknown, AgentError, ModelClientService>
}

/**
 * Failures of a resume before anything ran, which leave a waiting run as it was: refusals (the reviewer
 * may decide again) and a resume ledger that could not record the resume (it may be tried again).
 */
const refusedBeforeRunning: ReadonlySet<string> = new Set(["DecisionsInvalid", "SnapshotRejected", "SnapshotInvalid", "DefinitionChanged", "ResumeLedgerFailed"])

/** The option keys of `session(agent, id, options)`. */
const sessionOptionKeys: ReadonlyArray<string> = ["store", "window"]

/**
 * Refuses a session id that is not a non-empty string (plain JavaScript, `any`): `AgentConfigError`.
 * `session(agent, id, options)` checks it; the A2A executor's ids are its contexts'.
 *
 * @example
 * ```ts
 * checkSessionId(undefined) // AgentConfigError: … takes the session's id as a non-empty string, got an undefined
 * ```
 */
export const checkSessionId = (id: unknown): void => {
  if (typeof id === "string" && id.length > 0) return
  throw new AgentConfigError({ subject: "session", reason: `session(agent, id, options) takes the session's id as a non-empty string, got ${id === "" ? "an empty string" : kindOf(id)}` })
}

/**
 * Refuses what untyped callers (plain JavaScript, `any`) may give as a session's options: an unknown
 * option (`stor`: the session would quietly keep its conversation in memory), a store without the
 * methods a `SessionStore` has, a window that is not one (`{ lastTurn: 1 }`, `{ lastTurns: 0 }`).
 * Each is an `AgentConfigError` when the session is made, before any send.
 *
 * @example
 * ```ts
 * checkSessionOptions("user-42", { stor: store }) // AgentConfigError: … unknown option `stor` of session(agent, id, options) (did you mean `store`?)
 * ```
 */
export const checkSessionOptions = (id: string, options: unknown): void => {
  const subject = `session ${JSON.stringify(id)}`
  checkOptions(subject, "session(agent, id, options)", options, sessionOptionKeys)
  const { store, window } = (options ?? {}) as { readonly store?: unknown; readonly window?: unknown }
  if (store !== undefined) {
    const problem = storeProblem(store)
    if (problem !== undefined) throw new AgentConfigError({ subject, reason: `\`store\` ${problem}` })
  }
  if (window !== undefined) {
    const problem = contextWindowProblem(window)
    if (problem !== undefined) throw new AgentConfigError({ subject, reason: `\`window\`: ${problem}` })
  }
}

/** The methods a store must have, and the three it has all of or none of (the waiting run). */
const storeMethods = ["load", "append"] as const
const waitingMethods = ["waiting", "setWaiting", "takeWaiting"] as const

/** What is wrong with `store` as a `SessionStore`, or undefined. */
const storeProblem = (store: unknown): string | undefined => {
  const shape = "takes a SessionStore (an object with load and append methods answering Effects, e.g. inMemorySessionStore()), or nothing for a new in-memory one"
  if (typeof store !== "object" || store === null) return `${shape}; got ${kindOf(store)}`
  const method = (name: string) => (store as Record<string, unknown>)[name]
  const missing = storeMethods.filter((name) => typeof method(name) !== "function")
  if (missing.length > 0) return `${shape}; ${missing.join(" and ")} ${missing.length === 1 ? "is" : "are"} not a function`
  const present = waitingMethods.filter((name) => method(name) !== undefined)
  const notFunctions = present.filter((name) => typeof method(name) !== "function")
  if (notFunctions.length > 0) return `has ${notFunctions.join(", ")} that ${notFunctions.length === 1 ? "is" : "are"} not a function`
  if (present.length > 0 && present.length < waitingMethods.length) {
    const absent = waitingMethods.filter((name) => !present.includes(name))
    return `has ${present.join(", ")} but not ${absent.join(", ")}: a store keeps the waiting run with all three methods (${waitingMethods.join(", ")}), or with none (the session value keeps it)`
  }
  return undefined
}

/**
 * Store errors that came from a broken method (it threw, or answered something other than an Effect),
 * not from the Effect it answered: calling it again would not help, and might write twice (a Promise
 * it answered may be writing), so they are not retried.
 */
const brokenCalls = new WeakSet<SessionStoreFailed>()

/**
 * A call of the store's `method` (see `SessionStore`) as an Effect that fails with `SessionStoreFailed`
 * (`operation`) and nothing else: the method throwing, answering something other than an Effect, or
 * its Effect dying or failing with another error (a custom store's bug, a driver's defect) fails it
 * too, naming the method, so a turn whose tools ran still reports what it gave. An interruption from
 * outside stays one; a store's Effect that interrupts itself fails (`userInterruptAsFailure`).
 */
const storeCall = <A>(
  session: string,
  operation: "load" | "append",
  method: string,
  call: () => Effect.Effect<A, SessionStoreFailed>
): Effect.Effect<A, SessionStoreFailed> =>
  Effect.suspend(() => {
    const failed = (what: string, cause: unknown) =>
      new SessionStoreFailed({ session, operation, reason: `the store's ${method}(...) ${what}`, ...(cause === undefined ? {} : { cause }) })
    let answer: unknown
    try {
      answer = call()
    } catch (cause) {
      const error = failed(`threw: ${describeCause(cause)}`, cause)
      brokenCalls.add(error)
      return Effect.fail(error)
    }
    if (!Effect.isEffect(answer)) {
      const error = failed(`answered ${kindOf(answer)}, not an Effect (a SessionStore's methods answer Effects: wrap a Promise in Effect.tryPromise)`, undefined)
      brokenCalls.add(error)
      return Effect.fail(error)
    }
    return userInterruptAsFailure(answer as Effect.Effect<A, unknown>).pipe(
      Effect.catchCause((cause): Effect.Effect<never, SessionStoreFailed> => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
        const error = Cause.squash(cause)
        if (error instanceof SessionStoreFailed) return Effect.fail(error)
        return Effect.fail(failed(`${Cause.hasFails(cause) ? "failed" : "died"}: ${describeCause(error)}`, error))
      })
    )
  })

const decodeMessage = Schema.decodeUnknownResult(LlmMessageSchema)
/** The roles of the messages a session stores (never `system`: see `decodeHistory`). */
const storedRoles: ReadonlySet<unknown> = new Set(["user", "assistant", "tool"])

/**
 * The stored messages of session `id` as messages, or `SessionStoreFailed` (`load`) naming the first
 * stored value that is not one (an edited or corrupted store, another format): a run never sends it to
 * a model, and the window never reads it.
 */
const decodeHistory = (id: string, stored: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<LlmMessage>, SessionStoreFailed> =>
  Effect.suspend(() => {
    if (!Array.isArray(stored)) return Effect.fail(new SessionStoreFailed({ session: id, operation: "load", reason: "the store gave no list of messages" }))
    const messages: Array<LlmMessage> = []
    for (const [i, value] of stored.entries()) {
      let problem: string | undefined
      try {
        const role = isRecord(value) ? value["role"] : undefined
        const decoded = decodeMessage(value)
        // A session never stores the system prompt (each run builds it from the agent): one in the
        // store would reach the model as an instruction of the agent's own.
        if (role === "system") problem = "a system message, which a session never stores (the system prompt comes from the agent)"
        else if (!storedRoles.has(role)) problem = `${isRecord(value) ? `a role of ${shownValue(role)}` : `not a message object (${shownValue(value)})`}: a session stores user, assistant and tool messages`
        else if (Result.isFailure(decoded)) problem = decoded.failure.message
        else messages.push(decoded.success as LlmMessage)
      } catch (cause) {
        // A value that throws when read (a getter, a proxy trap) is no message either.
        problem = describeCause(cause)
      }
      if (problem !== undefined) return Effect.fail(new SessionStoreFailed({ session: id, operation: "load", reason: `stored message ${i} is not a message of the conversation: ${problem}` }))
    }
    return Effect.succeed(soundConversation(messages))
  })

/**
 * `history` as a provider accepts it: every call of an assistant message answered by exactly one tool
 * result in the results that follow it. A result that answers no call of that message (or answers a
 * call a second time) is left out, a call without a result is left out of its message, and an
 * assistant message left with neither text nor calls is left out. What a sound store holds is kept as is.
 */
const soundConversation = (history: ReadonlyArray<LlmMessage>): ReadonlyArray<LlmMessage> => {
  const kept: Array<LlmMessage> = []
  for (const { message, results } of exchangesOf(history)) {
    if (message.role === "tool") continue // a result no call of the message before it asked for
    if (message.role !== "assistant" || message.toolCalls === undefined) {
      kept.push(message)
      continue
    }
    const answered = new Set<string>()
    const answers = results.filter((result) => {
      if (answered.has(result.toolCallId) || !message.toolCalls!.some((call) => call.id === result.toolCallId)) return false
      answered.add(result.toolCallId)
      return true
    })
    const calls = message.toolCalls.filter((call, at, all) => answered.has(call.id) && all.findIndex((other) => other.id === call.id) === at)
    const { toolCalls: _, ...rest } = message
    if (calls.length > 0) kept.push(calls.length === message.toolCalls.length ? message : { ...rest, toolCalls: calls })
    else if (message.content.length > 0) kept.push(rest)
    kept.push(...answers)
  }
  return kept
}

const decodeWaiting = Schema.decodeUnknownResult(Schema.Struct({
  runId: Schema.String,
  snapshot: Schema.Unknown,
  pending: Schema.Array(Schema.Struct({ id: Schema.String, tool: Schema.String, args: Schema.Unknown, reason: Schema.optionalKey(Schema.String) })),
  historyLength: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
}))

/**
 * The session's waiting run as the store gave it, checked, or `SessionStoreFailed` (`load`) naming
 * what is wrong: its fields as `WaitingRun` types them, and, when its snapshot is one, the run of that
 * snapshot, with `historyLength` pointing at the user message that started the turn (the snapshot's
 * input). A run continues from it, and records its turn from that message on: an edited length would
 * record the conversation twice, or lose the user's message and leave a result without its call.
 * (A snapshot that is none is the resume's to refuse, `SnapshotInvalid`; an abandoning send keeps
 * nothing of it.) Nothing: `undefined` (or `null`).
 */
const checkedWaiting = (id: string, stored: unknown): Effect.Effect<WaitingRun | undefined, SessionStoreFailed> =>
  Effect.suspend(() => {
    if (stored === undefined || stored === null) return Effect.succeed(undefined)
    const refused = (problem: string) =>
      new SessionStoreFailed({
        session: id,
        operation: "load",
        reason: `the stored waiting run is not one (an edited or corrupted store): ${problem}. Nothing ran; repair it, or clear it with the store's setWaiting(id, undefined)`
      })
    let run: WaitingRun
    try {
      const decoded = decodeWaiting(stored)
      if (Result.isFailure(decoded)) return Effect.fail(refused(decoded.failure.message))
      run = decoded.success
    } catch (cause) {
      return Effect.fail(refused(describeCause(cause)))
    }
    return Effect.flatMap(Effect.result(decodeSnapshotValue(run.snapshot)), (snapshot) => {
      if (Result.isFailure(snapshot)) return Effect.succeed(run)
      const { runId, input, transcript } = snapshot.success.state
      if (runId !== run.runId) return Effect.fail(refused(`its runId is ${JSON.stringify(run.runId)}, its snapshot's is ${JSON.stringify(runId)}`))
      const start = transcript[1 + run.historyLength]
      const starts = transcript.length === 0 ? run.historyLength === 0 : start?.role === "user" && start.content === input
      return starts ? Effect.succeed(run) : Effect.fail(refused(`its historyLength ${run.historyLength} is not the number of messages before the turn's own in its snapshot`))
    })
  })

/** True when some call in `messages` got a result (it ran, or was answered without running): the turn got somewhere. */
const answersACall = (messages: ReadonlyArray<LlmMessage>): boolean => messages.some((message) => message.role === "tool")

/** A store write tried twice more after a failure, 50 then 100 ms later (not after a broken method: `brokenCalls`). */
const retried = <A>(write: Effect.Effect<A, SessionStoreFailed>): Effect.Effect<A, SessionStoreFailed> =>
  Effect.retry(write, { times: 2, schedule: Schedule.exponential(Duration.millis(50)), while: (error) => !brokenCalls.has(error) })

/**
 * Whether a send's turn is in the store, or on its way there (a write of it started and did not fail):
 * then the run it abandoned stays abandoned.
 */
interface TurnWrites {
  recorded: boolean
}

/**
 * `f` after `self` (where interruption cannot stop it) when `self` ended interrupted, and only then: an
 * error, even one whose siblings were interrupted, is the error's to report.
 */
const onInterruptOnly = <E>(f: (cause: Cause.Cause<E>) => Effect.Effect<void>) => <A, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.onExit(self, (exit) => (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? f(exit.cause) : Effect.void))

/** A `SessionStoreFailed`'s own fields (to make a copy with more). */
const fieldsOf = (error: SessionStoreFailed) => ({
  session: error.session,
  operation: error.operation,
  reason: error.reason,
  ...(error.cause === undefined ? {} : { cause: error.cause })
})

/** The session `id` of `definition`. */
export const makeSession = (definition: AgentDefinition, id: string, options: SessionOptions = {}): SessionCore => {
  checkSessionOptions(id, options)
  const store = options.store ?? inMemorySessionStore()
  const lock = Semaphore.makeUnsafe(1)
  // The definition its turns run: the same, heard by the trail of the turn (for a turn that fails).
  const trailed = trailedDefinition(definition)
  const load = storeCall(id, "load", "load", () => store.load(id))
  const append = (messages: ReadonlyArray<LlmMessage>) => storeCall(id, "append", "append", () => store.append(id, messages))
  // A store without the waiting methods: the waiting run is kept here, in this session value.
  let local: WaitingRun | undefined
  const setWaiting = (run: WaitingRun | undefined) =>
    store.setWaiting !== undefined ? storeCall(id, "append", "setWaiting", () => store.setWaiting!(id, run)) : Effect.sync(() => void (local = run))
  const storedWaiting: Effect.Effect<unknown, SessionStoreFailed> = store.takeWaiting !== undefined
    ? storeCall(id, "load", "takeWaiting", () => store.takeWaiting!(id))
    : Effect.sync(() => {
      const run = local
      local = undefined
      return run
    })
  // Taken, then checked: one that is not a waiting run is put back as it was (nothing is lost), and
  // the turn fails before anything runs.
  const takeWaiting = Effect.flatMap(storedWaiting, (stored) =>
    checkedWaiting(id, stored).pipe(Effect.tapError(() => Effect.ignore(setWaiting(stored as WaitingRun)))))
  /**
   * The write of a turn still going on after its caller stopped waiting for it (`shielded`): the
   * session's next turn waits for it first, so it runs on the history with that turn in it.
   */
  let writing: Fiber.Fiber<unknown, unknown> | undefined
  const written = Effect.suspend(() => (writing === undefined ? Effect.void : Effect.asVoid(Fiber.await(writing))))
  /**
   * `write` on a fiber of its own, waited for: an interruption of the caller stops the waiting, never
   * the write (cut short, an atomic append would lose a turn whose tools ran; a write of a store that
   * never answers would hold the interrupted caller). `writes` says that the turn is being recorded.
   */
  const shielded = <A>(write: Effect.Effect<A, SessionStoreFailed>, writes: TurnWrites | undefined): Effect.Effect<A, SessionStoreFailed> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Effect.forkDetach(write, { startImmediately: true }), (fiber) => {
        writing = fiber
        if (writes !== undefined) writes.recorded = true
        return restore(Fiber.join(fiber)).pipe(
          Effect.tapError(() =>
            Effect.sync(() => {
              if (writes !== undefined) writes.recorded = false
            })
          )
        )
      })
    )
  /**
   * A store write of a turn that ran, tried twice more after a failure (a store briefly unavailable);
   * one that still fails carries the turn (its result, or the error it failed with, and its unsaved
   * messages): its tools ran, and sending it again would run them again.
   */
  const recordTurn = (write: Effect.Effect<void, SessionStoreFailed>, result: unknown, unsaved: ReadonlyArray<LlmMessage>) =>
    write.pipe(retried, Effect.mapError((error) => new SessionStoreFailed({ ...fieldsOf(error), turn: { result, unsaved } })))
  /**
   * Records what a run of the session gave: its exchange when it completed, the run when it waits;
   * `carried` (what ran of a run the turn abandoned) first, once either.
   */
  const settle = (
    outcome: { readonly result: unknown; readonly added: ReadonlyArray<LlmMessage> | undefined },
    historyLength: number,
    carried: ReadonlyArray<LlmMessage> = [],
    writes?: TurnWrites
  ) => {
    const { result, added } = outcome
    const unsaved = [...carried, ...(added ?? [])]
    const suspended = result as { readonly _tag?: unknown; readonly snapshot?: RunSnapshot; readonly pending?: WaitingRun["pending"] }
    const waiting = suspended?._tag === "Suspended" && suspended.snapshot !== undefined
      ? { runId: suspended.snapshot.state.runId, snapshot: suspended.snapshot, pending: suspended.pending ?? [], historyLength }
      : undefined
    if (unsaved.length === 0 && waiting === undefined) return Effect.succeed(result)
    return shielded(
      Effect.gen(function*() {
        if (unsaved.length > 0) yield* recordTurn(append(unsaved), result, unsaved)
        if (waiting !== undefined) yield* recordTurn(setWaiting(waiting), result, unsaved)
      }),
      writes
    ).pipe(Effect.as(result))
  }
  /**
   * Records what a turn that failed with `error` did: its messages up to the failure (after `carried`),
   * each call with its result (a call without one is left out: it did not run, or it failed the run),
   * when some call got one. Earlier in the turn nothing ran, and nothing is recorded. `waiting` is the
   * run a resume continued.
   */
  const settleFailed = (
    error: AgentError,
    trail: TurnTrail,
    historyLength: number,
    from: { readonly waiting?: WaitingRun; readonly carried?: ReadonlyArray<LlmMessage>; readonly writes?: TurnWrites }
  ) =>
    Effect.gen(function*() {
      const ran = soundConversation(yield* failedTurn(trail, error, historyLength, from.waiting?.snapshot))
      if (!answersACall(ran)) return
      const unsaved = [...(from.carried ?? []), ...ran]
      yield* shielded(recordTurn(append(unsaved), error, unsaved), from.writes)
    })
  /**
   * Records what an interrupted turn did, as `settleFailed` does a failed one's, with each call that had
   * no result answered as interrupted (`interruptedTurn`). Run where the interruption cannot stop it (a
   * finalizer); the write goes on without it (a slow store never holds the interrupted caller), and a
   * write that still fails after its retries is logged: no caller is left to hear it.
   */
  const settleInterrupted = (
    cause: Cause.Cause<unknown>,
    trail: TurnTrail,
    historyLength: number,
    from: { readonly waiting?: WaitingRun; readonly carried?: ReadonlyArray<LlmMessage>; readonly writes?: TurnWrites }
  ) =>
    Effect.gen(function*() {
      const ran = soundConversation(yield* interruptedTurn(trail, historyLength, from.waiting?.snapshot))
      if (!answersACall(ran)) return
      const unsaved = [...(from.carried ?? []), ...ran]
      const write = recordTurn(append(unsaved), cause, unsaved).pipe(
        Effect.catch((error) =>
          Effect.logWarning(`session "${id}": an interrupted turn could not be recorded (${error.reason}); its ${unsaved.length} messages are lost`, error)
        )
      )
      writing = yield* Effect.forkDetach(write, { startImmediately: true })
      if (from.writes !== undefined) from.writes.recorded = true
    })
  return {
    id,
    send: (input) =>
      lock.withPermit(Effect.gen(function*() {
        yield* written
        // A new turn abandons a run that waits for decisions (its calls never run; a later `resume`
        // finds none): resuming it after this turn would record its exchange after this one's.
        const abandoned = yield* takeWaiting
        const writes: TurnWrites = { recorded: false }
        const turn = Effect.gen(function*() {
          const stored = yield* decodeHistory(id, yield* load)
          // What ran of the abandoned run before it suspended (its calls with their results) happened:
          // the run sees it, and it is recorded with this turn, as this turn's history.
          const carried = abandoned === undefined ? [] : soundConversation(yield* waitingTurn(abandoned))
          const kept = answersACall(carried) ? carried : []
          const history = applyWindow(kept.length === 0 ? stored : [...stored, ...kept], options.window)
          const trail = new TurnTrail()
          const from = { carried: kept, writes }
          // The session's id is the run's `gen_ai.conversation.id`.
          const run = runSessionTurn(trailed, input, history, (ctx) => trail.follow(ctx))
          const outcome = yield* withTurnTrail(Effect.provideService(run, CurrentConversation, id), trail).pipe(
            onInterruptOnly((cause) => settleInterrupted(cause, trail, history.length, from)),
            Effect.catch((error) => Effect.andThen(settleFailed(error, trail, history.length, from), Effect.fail(error)))
          )
          return yield* settle(outcome, history.length, kept, writes)
        })
        // A send that fails (or is interrupted) having recorded nothing: the run it abandoned waits again.
        return yield* abandoned === undefined ? turn : Effect.onError(turn, () => (writes.recorded ? Effect.void : Effect.ignore(setWaiting(abandoned))))
      })),
    history: () => Effect.andThen(written, load),
    waiting: () =>
      Effect.andThen(
        written,
        Effect.flatMap(store.waiting !== undefined ? storeCall(id, "load", "waiting", () => store.waiting!(id)) : Effect.sync(() => local), (stored) => checkedWaiting(id, stored))
      ),
    resume: (decisions) =>
      lock.withPermit(Effect.gen(function*() {
        yield* written
        // Taken before it runs: a second resume of the same waiting run finds none (once).
        const run = yield* takeWaiting
        if (run === undefined) {
          return yield* new DecisionsInvalid({ agent: definition.name, toolCallId: "*", reason: `no run of session "${id}" waits for decisions` })
        }
        const trail = new TurnTrail()
        const resumed = Effect.provideService(
          resumeSessionTurn(trailed, run.snapshot, decisions, run.historyLength, (ctx) => trail.follow(ctx)),
          CurrentConversation,
          id
        )
        // Once past the refusals, the decisions were taken: the run no longer waits, whatever ran is recorded.
        const outcome = yield* withTurnTrail(resumed, trail).pipe(
          onInterruptOnly((cause) => settleInterrupted(cause, trail, run.historyLength, { waiting: run })),
          Effect.catch((error) =>
            Effect.andThen(
              refusedBeforeRunning.has(error._tag) ? setWaiting(run) : settleFailed(error, trail, run.historyLength, { waiting: run }),
              Effect.fail(error)
            )
          )
        )
        return yield* settle(outcome, run.historyLength)
      }))
  }
}
