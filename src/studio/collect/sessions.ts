/**
 * The conversations the studio browses: a `SessionStore` (`inMemorySessionStore()`, the PostgreSQL one,
 * your own) plus a way to list its session ids, which the store contract does not have. Wrap a store
 * with `trackedSessionStore` to have it remember the ids it sees, or give `list` yourself.
 */
import * as Effect from "effect/Effect"
import type { SessionStore } from "../../dsl/session-store.ts"

/**
 * What the studio needs to browse sessions.
 *
 * @example
 * ```ts
 * export const sessions: StudioSessions = { store: pgStore, list: () => ["user-42", "user-43"] }
 * ```
 */
export interface StudioSessions {
  readonly store: SessionStore
  /** The ids of the sessions to show (any order); `updatedAt` in epoch ms when known. */
  readonly list: () => ReadonlyArray<string | { readonly id: string; readonly updatedAt?: number }> | Promise<ReadonlyArray<string | { readonly id: string; readonly updatedAt?: number }>>
}

/**
 * A session store that remembers the ids it was used with, and when: give it to the app and the studio.
 *
 * @example
 * ```ts
 * const store: TrackedSessionStore = trackedSessionStore(inMemorySessionStore())
 * ```
 */
export interface TrackedSessionStore extends SessionStore, StudioSessions {}

/**
 * Wraps `store` so it lists the sessions it loaded or appended to (in this process).
 *
 * @example
 * ```ts
 * export const sessions = trackedSessionStore(inMemorySessionStore())
 * const chat = session(assistant, "user-42", { store: sessions })
 * ```
 */
export const trackedSessionStore = (store: SessionStore): TrackedSessionStore => {
  const seen = new Map<string, number>()
  const touch = (id: string) => Effect.sync(() => void seen.set(id, Date.now()))
  const tracked: TrackedSessionStore = {
    ...store,
    // A session that holds nothing is not listed: looking up an id that does not exist must not add it.
    load: (id) => Effect.tap(store.load(id), (messages) => (seen.has(id) || messages.length === 0 ? Effect.void : touch(id))),
    append: (id, messages) => Effect.tap(store.append(id, messages), () => touch(id)),
    ...(store.setWaiting === undefined ? {} : { setWaiting: (id: string, run: Parameters<NonNullable<SessionStore["setWaiting"]>>[1]) => Effect.tap(store.setWaiting!(id, run), () => touch(id)) }),
    get store() {
      return tracked
    },
    list: () => [...seen].map(([id, updatedAt]) => ({ id, updatedAt }))
  }
  return tracked
}
