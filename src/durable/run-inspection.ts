/**
 * A durable run's journal as typed values (`d.journal`), for operators and the studio: what the run
 * recorded, step by step — model calls, tool calls with their effect class and outcome (a mutating
 * call with its claim: owner, lease, outcome written), retries, approvals asked for and decided, waits,
 * its end — read from the event journal (`RunJournal`), the claims (`ToolIntents`) and the
 * cancellation (`ApprovalInbox`). Claims include calls in flight (claimed, no result yet): a run
 * stuck in a mutating call shows its owner and whether that owner's lease still lives. A row of the
 * run that cannot be read (an event that is not one, a claim's outcome that is not JSON) fails the
 * read with `DurableRunUnreadable`, naming it.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { RunStreamEvent, WaitingCall } from "../dsl/events.ts"
import type { ToolEffectClass } from "../dsl/tool.ts"
import type { AgentError } from "../errors.ts"
import type { LlmResponse } from "../model/messages.ts"
import type { ApprovalInbox } from "./approval-inbox.ts"
import { decodeJournalEvent } from "./journal-events.ts"
import type { RunJournal } from "./run-journal.ts"
import { DurableRunUnreadable } from "./run-unreadable.ts"
import { readStore } from "./store-retry.ts"
import type { ToolIntents } from "./tool-intents.ts"
import { isClaimOfRun } from "./step-keys.ts"

/**
 * A claim on a mutating call: who holds it (`owner`, a worker id `host/pid/…`), whether their lease
 * still lives, and whether the call's outcome was written beside it.
 */
export interface ToolClaim {
  readonly key: string
  readonly runId: string
  readonly tool: string
  readonly toolCallId: string
  readonly owner?: string | undefined
  readonly leaseLive: boolean
  readonly finished: boolean
}

/** One recorded step of a durable run, with the id of its event in the run's journal. */
export type JournalEntry =
  | { readonly _tag: "Started"; readonly id: number; readonly runId: string; readonly input: unknown }
  | { readonly _tag: "ModelCalled"; readonly id: number; readonly runId: string; readonly turn: number; readonly response: LlmResponse; readonly durationMs: number }
  | { readonly _tag: "ModelRetried"; readonly id: number; readonly runId: string; readonly turn: number; readonly attempt: number; readonly waitMs: number; readonly reason: string }
  | {
    readonly _tag: "ToolCalled"
    readonly id: number
    readonly runId: string
    readonly turn: number
    readonly tool: string
    readonly toolCallId: string
    /** The tool's effect class (`readOnly`, `idempotent`, `mutating`); `unknown` for a tool this agent does not have (a child's). */
    readonly effect: ToolEffectClass | "unknown"
    readonly args: unknown
    readonly outcome: { readonly _tag: "Succeeded"; readonly value: unknown } | { readonly _tag: "Failed"; readonly error: unknown }
    /** The claim of a mutating call. */
    readonly claim?: ToolClaim
  }
  | { readonly _tag: "ApprovalRequested"; readonly id: number; readonly runId: string; readonly turn: number; readonly calls: ReadonlyArray<WaitingCall> }
  | {
    readonly _tag: "ApprovalDecided"
    readonly id: number
    readonly runId: string
    readonly turn: number
    readonly toolCallId: string
    readonly tool: string
    readonly decision: "approve" | "edit" | "deny"
    readonly reason?: string | undefined
  }
  | { readonly _tag: "Suspended"; readonly id: number; readonly runId: string; readonly pending: ReadonlyArray<WaitingCall> }
  | {
    readonly _tag: "Ended"
    readonly id: number
    readonly runId: string
    readonly outcome: { readonly _tag: "Success"; readonly output: unknown } | { readonly _tag: "Failure"; readonly error: AgentError }
  }
  /** Any other event of the run (a turn, a skill chosen, invalid arguments, a handoff, a budget notice, a child run's event). */
  | { readonly _tag: "Event"; readonly id: number; readonly event: RunStreamEvent }

/** A durable run's journal: its recorded steps, its claims, its cancellation. */
export interface DurableJournal {
  readonly runId: string
  readonly entries: ReadonlyArray<JournalEntry>
  /** Every claim on a mutating call of the run, oldest first: those still in flight (no outcome) too. */
  readonly claims: ReadonlyArray<ToolClaim>
  /** Why the run was cancelled, when `cancel` was called for it. */
  readonly cancelled?: string
}

const pageSize = 1000

/** The journal of run `runId`; `effectOf` gives a tool's effect class by name. */
export const inspectRun = (
  runId: string,
  effectOf: (tool: string) => ToolEffectClass | undefined,
  stores: { readonly journal: RunJournal["Service"]; readonly intents: ToolIntents["Service"]; readonly inbox: ApprovalInbox["Service"] }
): Effect.Effect<DurableJournal, DurableRunUnreadable> =>
  Effect.gen(function*() {
    const records: Array<{ readonly id: number; readonly event: RunStreamEvent }> = []
    while (true) {
      const page = yield* readStore(stores.journal.read(runId, records.at(-1)?.id ?? 0, pageSize))
      for (const r of page) {
        const event = decodeJournalEvent(runId, r)
        if (event instanceof DurableRunUnreadable) return yield* event
        records.push({ id: r.id, event })
      }
      if (page.length < pageSize) break
    }
    // The store answers the claims of ids `<runId>~…` too: a user's run "x~2" is not run "x"'s handoff.
    const found = (yield* readStore(stores.intents.forRun(runId))).filter((c) => isClaimOfRun(runId, c.key, c.runId))
    const claims: Array<ToolClaim> = found.map((c) => ({
      key: c.key,
      runId: c.runId,
      tool: c.tool,
      toolCallId: c.toolCallId,
      owner: c._tag === "Claimed" ? c.owner : undefined,
      leaseLive: c._tag === "Claimed" && c.leaseLive,
      finished: c._tag === "Finished"
    }))
    const claimOf = (run: string, toolCallId: string) => claims.find((c) => c.runId === run && c.toolCallId === toolCallId)
    const entries = records.map(({ id, event }): JournalEntry => {
      switch (event._tag) {
        case "RunStart":
          return event.parentRunId === undefined ? { _tag: "Started", id, runId: event.runId, input: event.input } : { _tag: "Event", id, event }
        case "ModelResponse":
          return { _tag: "ModelCalled", id, runId: event.runId, turn: event.turn, response: event.response, durationMs: event.durationMs }
        case "Retrying":
          return { _tag: "ModelRetried", id, runId: event.runId, turn: event.turn, attempt: event.attempt, waitMs: event.waitMs, reason: event.reason }
        case "ToolUse":
        case "ToolError": {
          const claim = claimOf(event.runId, event.toolCallId)
          const own = event.parentRunId === undefined || event.runId.startsWith(`${runId}~`)
          return {
            _tag: "ToolCalled",
            id,
            runId: event.runId,
            turn: event.turn,
            tool: event.tool,
            toolCallId: event.toolCallId,
            effect: (own ? effectOf(event.tool) : undefined) ?? "unknown",
            args: event.args,
            outcome: event._tag === "ToolUse" ? { _tag: "Succeeded", value: event.result } : { _tag: "Failed", error: event.error },
            ...(claim === undefined ? {} : { claim })
          }
        }
        case "ApprovalRequested":
          return { _tag: "ApprovalRequested", id, runId: event.runId, turn: event.turn, calls: event.calls }
        case "ApprovalDecided":
          return { _tag: "ApprovalDecided", id, runId: event.runId, turn: event.turn, toolCallId: event.toolCallId, tool: event.tool, decision: event.decision, reason: event.reason }
        case "RunEnd":
          if (event.parentRunId !== undefined && event.runId !== runId) return { _tag: "Event", id, event }
          switch (event.outcome._tag) {
            case "Suspended":
              return { _tag: "Suspended", id, runId: event.runId, pending: event.outcome.pending }
            case "Success":
              return { _tag: "Ended", id, runId: event.runId, outcome: { _tag: "Success", output: event.outcome.output } }
            case "Failure":
              return { _tag: "Ended", id, runId: event.runId, outcome: { _tag: "Failure", error: event.outcome.error } }
            default:
              return { _tag: "Event", id, event }
          }
        default:
          return { _tag: "Event", id, event }
      }
    })
    const cancelled = yield* readStore(stores.inbox.cancelled(runId))
    return { runId, entries, claims, ...(Option.isSome(cancelled) ? { cancelled: cancelled.value } : {}) }
  })
