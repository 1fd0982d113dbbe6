/**
 * Sessions: a conversation with one agent that continues across runs. Each `send` loads the session's
 * messages from its store, keeps the part the context window allows (whole turns: a tool call and its
 * result are never split), runs the agent with them between its system prompt and the new input, and,
 * when the run completes, appends the messages it added. Sends on one session value run one at a time.
 * A run that suspends for approval is the session's waiting run (in the store when it keeps one):
 * `resume(decisions)` takes it (once) and continues it, and its exchange is recorded when it completes.
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import { applyWindow, type ContextWindow } from "../dsl/context-window.ts"
import { inMemorySessionStore, type SessionStore, type WaitingRun } from "../dsl/session-store.ts"
import type { Decisions } from "../dsl/decision.ts"
import type { RunSnapshot } from "../dsl/run-snapshot.ts"
import { type AgentError, DecisionsInvalid } from "../errors.ts"
import type { LlmMessage } from "../model/messages.ts"
import type { ModelClientService } from "../model/model-client.ts"
import { CurrentConversation } from "./gen-ai-spans.ts"
import { resumeSessionTurn, runSessionTurn } from "./run-agent.ts"

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
  /** Resumes the waiting run with the decisions; its exchange is recorded once, when it completes. */
  readonly resume: (decisions: Decisions) => Effect.Effect<unknown, AgentError, ModelClientService>
}

/** Refusals that leave a waiting run as it was: nothing ran, the reviewer may decide again. */
const refusedBeforeRunning: ReadonlySet<string> = new Set(["DecisionsInvalid", "SnapshotRejected", "SnapshotInvalid", "DefinitionChanged"])

/** The session `id` of `definition`. */
export const makeSession = (definition: AgentDefinition, id: string, options: SessionOptions = {}): SessionCore => {
  const store = options.store ?? inMemorySessionStore()
  const lock = Semaphore.makeUnsafe(1)
  // A store without the waiting methods: the waiting run is kept here, in this session value.
  let local: WaitingRun | undefined
  const setWaiting = (run: WaitingRun | undefined) =>
    store.setWaiting !== undefined ? store.setWaiting(id, run) : Effect.sync(() => void (local = run))
  const takeWaiting = store.takeWaiting !== undefined
    ? store.takeWaiting(id)
    : Effect.sync(() => {
      const run = local
      local = undefined
      return run
    })
  /** Records what a run of the session gave: its exchange when it completed, the run when it waits. */
  const settle = (outcome: { readonly result: unknown; readonly added: ReadonlyArray<LlmMessage> | undefined }, historyLength: number) =>
    Effect.gen(function*() {
      const { result, added } = outcome
      if (added !== undefined && added.length > 0) yield* store.append(id, added)
      const suspended = result as { readonly _tag?: unknown; readonly snapshot?: RunSnapshot; readonly pending?: WaitingRun["pending"] }
      if (suspended?._tag === "Suspended" && suspended.snapshot !== undefined) {
        yield* setWaiting({ runId: suspended.snapshot.state.runId, snapshot: suspended.snapshot, pending: suspended.pending ?? [], historyLength })
      }
      return result
    })
  return {
    id,
    send: (input) =>
      lock.withPermit(Effect.gen(function*() {
        // A new turn abandons a run that waits for decisions (its calls never run; a later `resume`
        // finds none): resuming it after this turn would record its exchange after this one's.
        yield* takeWaiting
        const history = applyWindow(yield* store.load(id), options.window)
        // The session's id is the run's `gen_ai.conversation.id`.
        const outcome = yield* Effect.provideService(runSessionTurn(definition, input, history), CurrentConversation, id)
        return yield* settle(outcome, history.length)
      })),
    history: () => store.load(id),
    waiting: () => (store.waiting !== undefined ? store.waiting(id) : Effect.sync(() => local)),
    resume: (decisions) =>
      lock.withPermit(Effect.gen(function*() {
        // Taken before it runs: a second resume of the same waiting run finds none (once).
        const run = yield* takeWaiting
        if (run === undefined) {
          return yield* new DecisionsInvalid({ agent: definition.name, toolCallId: "*", reason: `no run of session "${id}" waits for decisions` })
        }
        const outcome = yield* Effect.provideService(resumeSessionTurn(definition, run.snapshot, decisions, run.historyLength), CurrentConversation, id).pipe(
          Effect.tapError((error) => (refusedBeforeRunning.has(error._tag) ? setWaiting(run) : Effect.void))
        )
        return yield* settle(outcome, run.historyLength)
      }))
  }
}
