/**
 * Where a session keeps its conversation between runs: the messages of each completed run (the user's
 * input, the model's tool calls and their results, the final answer), in order, by session id. The
 * system prompt is not stored: each run builds it from the agent. `inMemorySessionStore()` is the
 * default; `effect-agent-dsl/postgres` has one on PostgreSQL.
 */
import * as Effect from "effect/Effect"
import type { SessionStoreFailed } from "../errors.ts"
import type { LlmMessage } from "../model/messages.ts"

/**
 * A conversation store. `load` gives the messages of a session in order (empty for a new one);
 * `append` adds the messages of one run, atomically.
 *
 * @example
 * ```ts
 * const store: SessionStore = inMemorySessionStore()
 * ```
 */
export interface SessionStore {
  readonly load: (session: string) => Effect.Effect<ReadonlyArray<LlmMessage>, SessionStoreFailed>
  readonly append: (session: string, messages: ReadonlyArray<LlmMessage>) => Effect.Effect<void, SessionStoreFailed>
  /**
   * The session's run waiting for decisions, if any. Optional: a store without the three waiting
   * methods keeps the waiting run in the session value (this process) only.
   */
  readonly waiting?: (session: string) => Effect.Effect<WaitingRun | undefined, SessionStoreFailed>
  /** Records (or clears) the session's waiting run. */
  readonly setWaiting?: (session: string, waiting: WaitingRun | undefined) => Effect.Effect<void, SessionStoreFailed>
  /** Clears the session's waiting run and gives it, atomically: of two takes, one gets it. */
  readonly takeWaiting?: (session: string) => Effect.Effect<WaitingRun | undefined, SessionStoreFailed>
}

/**
 * A run of a session that waits for decisions: its snapshot (JSON), the calls it waits on, and how many
 * of the session's messages it was given (so its exchange is recorded from the right message on).
 *
 * @example
 * ```ts
 * const waiting = await Effect.runPromise(chat.waiting()) // { runId, pending, snapshot, historyLength } | undefined
 * ```
 */
export interface WaitingRun {
  readonly runId: string
  readonly snapshot: unknown
  readonly pending: ReadonlyArray<{ readonly id: string; readonly tool: string; readonly args: unknown; readonly reason?: string }>
  readonly historyLength: number
}

/**
 * A session store in this process's memory (lost when it exits); messages are copied in and out.
 *
 * @example
 * ```ts
 * const chat = session(assistant, "user-42", { store: inMemorySessionStore() })
 * ```
 */
export const inMemorySessionStore = (): SessionStore => {
  const sessions = new Map<string, ReadonlyArray<LlmMessage>>()
  const waiting = new Map<string, WaitingRun>()
  return {
    load: (session) => Effect.sync(() => structuredClone(sessions.get(session) ?? [])),
    append: (session, messages) =>
      Effect.sync(() => {
        sessions.set(session, [...(sessions.get(session) ?? []), ...structuredClone(messages)])
      }),
    waiting: (session) => Effect.sync(() => structuredClone(waiting.get(session))),
    setWaiting: (session, run) =>
      Effect.sync(() => {
        if (run === undefined) waiting.delete(session)
        else waiting.set(session, structuredClone(run))
      }),
    takeWaiting: (session) =>
      Effect.sync(() => {
        const run = waiting.get(session)
        waiting.delete(session)
        return run
      })
  }
}
