/**
 * What a run of an agent returns when some of its tools may wait for a human decision: `Completed`
 * with the output, or `Suspended` with the calls that wait and a JSON-serialisable snapshot. Which of
 * the two shapes `run` has is decided by the registered tools' types (`RunResultOf`), and by the
 * handoff targets' (a target that suspends suspends the run that handed off to it), so an agent with
 * such a tool or target cannot be run as if it always finished.
 */
import type { RunSnapshot } from "./run-snapshot.ts"
import type { AnyTool, Tool } from "./tool.ts"

/** A run that finished. */
export interface Completed<Out> {
  readonly _tag: "Completed"
  readonly output: Out
}

declare const handoffWaits: unique symbol

/**
 * Phantom entry of an agent's tools record (never a value, never a tool name): the calls its handoff
 * targets, and theirs in turn, may wait on. `.skills(...)` adds it when a skill hands off to a target
 * whose run may suspend, so everything that reads a run's result from the tools record (`RunResultOf`,
 * `asTool`'s approval flag, sessions, composites) sees the handoff's suspension too. Its key is a
 * symbol, so tool names, handles, recovery and interceptors never see it (a type, not an interface:
 * the record stays assignable to `Record<string, AnyTool>`).
 */
export type HandoffWaits<TPending> = {
  readonly [handoffWaits]: TPending
}

/** The calls a tools record's handoff targets may wait on (`never` without such a target). */
export type HandoffPending<TTools> = TTools extends HandoffWaits<infer P> ? P : never

/**
 * A tools record after `.skills(...)` added skills whose targets may wait on `TPending` (`never`: none
 * may): unchanged then, else with the entry, joined with an earlier `.skills(...)`'s (skills add up).
 */
export type WithHandoffWaits<TTools extends Record<string, AnyTool>, TPending> = [TPending] extends [never] ? TTools
  : [HandoffPending<TTools>] extends [never] ? TTools & HandoffWaits<TPending>
  : Omit<TTools, typeof handoffWaits> & HandoffWaits<HandoffPending<TTools> | TPending>

/**
 * A call waiting for a decision: its id, tool and decoded arguments. Narrow on `tool` to type `args`.
 * A handoff target's waiting calls are listed as they are (its ids, its tools).
 */
export type PendingApproval<TTools extends Record<string, AnyTool> = Record<string, AnyTool>> =
  | {
    [K in keyof TTools]: TTools[K] extends Tool<infer Name, infer Args, any, any, infer Approval> ? true extends Approval ? {
          readonly id: string
          readonly tool: Name
          readonly args: Args
          /** Why an interceptor suspended the call (absent when `needsApproval` did). */
          readonly reason?: string
        }
      : never
      : never
  }[keyof TTools]
  | HandoffPending<TTools>

/**
 * A run that waits for decisions on `pending`. `snapshot` is plain JSON data (`JSON.stringify` it,
 * store it anywhere); `agent.resume(snapshot, decisions)` continues the run, in this process or another.
 * Decisions are keyed by the pending `id`: a call of a child agent used as a tool is listed as
 * `<caller's call id>/<child's call id>` (its snapshot is inside the caller's), a handoff target's
 * calls keep their ids. Without a resume ledger a snapshot can be resumed more than once (docs/guide/approval.md,
 * "Approval guarantees at each border").
 */
export interface Suspended<TTools extends Record<string, AnyTool> = Record<string, AnyTool>> {
  readonly _tag: "Suspended"
  readonly pending: ReadonlyArray<PendingApproval<TTools>>
  readonly snapshot: RunSnapshot
}

/** True when a tool of the record, or a handoff target of the agent (transitively), may wait for a human decision. */
export type MayNeedApproval<TTools extends Record<string, AnyTool>> = true extends {
  [K in keyof TTools]: TTools[K] extends Tool<any, any, any, any, infer Approval> ? Approval : never
}[keyof TTools] ? true
  : [HandoffPending<TTools>] extends [never] ? false
  : true

/**
 * What `run`, `runEffect` and `resume` produce: `Out` for an agent whose tools and handoff targets
 * never wait for approval, `Completed<Out> | Suspended` for one with a tool or a target that may.
 *
 * @example
 * ```ts
 * const result: RunResultOf<{ transfer: typeof transfer }, string> = await bank.run("pay 10 to Bob")
 * if (result._tag === "Suspended") await save(JSON.stringify(result.snapshot))
 * ```
 */
export type RunResultOf<TTools extends Record<string, AnyTool>, Out> = MayNeedApproval<TTools> extends true
  ? Completed<Out> | Suspended<TTools>
  : Out
