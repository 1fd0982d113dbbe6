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
  return {
    load: (session) => Effect.sync(() => structuredClone(sessions.get(session) ?? [])),
    append: (session, messages) =>
      Effect.sync(() => {
        sessions.set(session, [...(sessions.get(session) ?? []), ...structuredClone(messages)])
      })
  }
}
