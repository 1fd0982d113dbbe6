/**
 * An `ApprovalInbox` whose cancellations are known in memory, for a store one process owns (the
 * embedded engine's, the in-memory one): every cancellation goes through this process (`d.cancel`),
 * so a run's steps need not ask the store before each step (nor every half second while one runs). A run's cancellation is
 * read from the store once, then kept; a cancellation made here is written, kept, and wakes the
 * steps of the run in flight at once (`whenCancelled`). Everything else is the SQL inbox's.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ApprovalInbox } from "./approval-inbox.ts"

/** Cancellations kept at most (the runs never cancelled are dropped from memory first, and read again when asked). */
const keptAtMost = 100_000

/**
 * `inbox` with its cancellations known in memory. Only for a store no other process writes.
 *
 * @example
 * ```ts
 * const inbox = cancellationsInMemory(yield* ApprovalInbox)
 * ```
 */
export const cancellationsInMemory = (inbox: ApprovalInbox["Service"]): ApprovalInbox["Service"] => {
  const known = new Map<string, Option.Option<string>>()
  const waiting = new Map<string, Set<(reason: string) => void>>()
  const keep = (runId: string, reason: Option.Option<string>) => {
    if (known.size >= keptAtMost) for (const [id, r] of known) if (Option.isNone(r)) known.delete(id)
    known.set(runId, reason)
  }
  return {
    ...inbox,
    cancelled: (runId) =>
      Effect.suspend(() => {
        const found = known.get(runId)
        if (found !== undefined) return Effect.succeed(found)
        return Effect.tap(inbox.cancelled(runId), (reason) => Effect.sync(() => keep(runId, reason)))
      }),
    cancel: (runId, reason) =>
      Effect.andThen(
        inbox.cancel(runId, reason),
        // The first reason stays: the one in the store.
        Effect.flatMap(inbox.cancelled(runId), (stored) =>
          Effect.sync(() => {
            keep(runId, stored)
            if (Option.isNone(stored)) return
            for (const wake of waiting.get(runId) ?? []) wake(stored.value)
            waiting.delete(runId)
          }))
      ),
    onCancelled: (runId, listener) => {
      let listeners = waiting.get(runId)
      if (listeners === undefined) waiting.set(runId, (listeners = new Set()))
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
        if (listeners.size === 0 && waiting.get(runId) === listeners) waiting.delete(runId)
      }
    }
  }
}
