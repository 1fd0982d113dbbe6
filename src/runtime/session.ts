/**
 * Sessions: a conversation with one agent that continues across runs. Each `send` loads the session's
 * messages from its store, keeps the part the context window allows (whole turns: a tool call and its
 * result are never split), runs the agent with them between its system prompt and the new input, and,
 * when the run completes, appends the messages it added. Sends on one session value run one at a time.
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import type { AgentDefinition } from "../dsl/agent-definition.ts"
import { applyWindow, type ContextWindow } from "../dsl/context-window.ts"
import { inMemorySessionStore, type SessionStore } from "../dsl/session-store.ts"
import type { AgentError } from "../errors.ts"
import type { LlmMessage } from "../model/messages.ts"
import type { ModelClientService } from "../model/model-client.ts"
import { CurrentConversation } from "./gen-ai-spans.ts"
import { runSessionTurn } from "./run-agent.ts"

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
}

/** The session `id` of `definition`. */
export const makeSession = (definition: AgentDefinition, id: string, options: SessionOptions = {}): SessionCore => {
  const store = options.store ?? inMemorySessionStore()
  const lock = Semaphore.makeUnsafe(1)
  return {
    id,
    send: (input) =>
      lock.withPermit(Effect.gen(function*() {
        const history = applyWindow(yield* store.load(id), options.window)
        // The session's id is the run's `gen_ai.conversation.id`.
        const { result, added } = yield* Effect.provideService(runSessionTurn(definition, input, history), CurrentConversation, id)
        if (added !== undefined && added.length > 0) yield* store.append(id, added)
        return result
      })),
    history: () => store.load(id)
  }
}
