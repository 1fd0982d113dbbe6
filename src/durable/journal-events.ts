/**
 * A durable run's events, into its journal (`RunJournal`) and back. The workflow body runs the loop
 * with `journalSink` as its event sink:
 * - an event the run's control flow emits (a turn, a model answer, a tool's result, an approval asked
 *   for or decided, the run's end) is keyed by the run, its tag, its tool call (when it has one) and
 *   how many such events came before it in this execution. A replay emits the same events with the
 *   same keys, which the journal already holds: it appends none of them again.
 * - an event that happens only while a step really runs (`InStep`: a retry's wait inside a model
 *   call, a child run's events inside an agent-as-tool) or that a replay does not repeat reliably
 *   (`HookFailed`) gets a key of its own: a step that really ran twice shows both runs.
 * Left out: deltas (`TextDelta`, `ReasoningDelta`, `ToolCallStart`, `ToolCallDelta`: a replay has
 * none; the text arrives whole in `ModelResponse`), `ModelCall` (the whole transcript at every turn)
 * and a `RunEnd` of outcome `Interrupted` (a worker stopping is not the run's end: another replays it).
 *
 * Events are stored as JSON: errors as their tag, message and fields (a run's failure is rebuilt as
 * its `AgentError` class), `cause` left out, bigints as strings. Read back, an event is checked for
 * the fields its readers go by; a row that is not an event is a `DurableRunUnreadable`, not a defect.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { RunStreamEvent } from "../dsl/events.ts"
import type { AgentError } from "../errors.ts"
import type { EventSink } from "../runtime/emit.ts"
import type { RunJournal } from "./run-journal.ts"
import { AgentErrorSchema } from "./schemas.ts"
import { withStoreRetry } from "./store-retry.ts"
import { decodeStored, DurableRunUnreadable, isUnreadableError } from "./run-unreadable.ts"
import { isRecord } from "../internal/is-record.ts"

/**
 * Set while a step of a durable run really executes (inside its activity): events emitted then are
 * not emitted again by a replay.
 */
export const InStep = Context.Reference<boolean>("effect-agent-dsl/durable/InStep", { defaultValue: () => false })

const leftOut = new Set<string>(["TextDelta", "ReasoningDelta", "ToolCallStart", "ToolCallDelta", "ModelCall"])
const notReplayed = new Set<string>(["Retrying", "HookFailed", "ToolProgress"])

const encodeError = Schema.encodeSync(Schema.toCodecJson(AgentErrorSchema as unknown as Schema.Codec<AgentError, unknown>))
const decodeError = Schema.decodeUnknownOption(Schema.toCodecJson(AgentErrorSchema as unknown as Schema.Codec<AgentError, unknown>))

const replacer = (key: string, value: unknown): unknown => {
  if (key === "cause") return undefined
  if (value instanceof Error) return { ...value, _tag: (value as { _tag?: unknown })._tag ?? value.name, message: value.message }
  if (typeof value === "bigint") return value.toString()
  return value
}

/**
 * `replacer` that also survives what user code may put in an event (a tool's result, its arguments):
 * a cycle becomes "[Circular]", a getter that throws "[unreadable]". Used when the plain one throws.
 */
const carefulReplacer = () => {
  const seen = new WeakSet<object>()
  return function(this: unknown, key: string, value: unknown): unknown {
    const replaced = replacer(key, value)
    if (typeof replaced === "object" && replaced !== null) {
      if (seen.has(replaced)) return "[Circular]"
      seen.add(replaced)
    }
    return replaced
  }
}

const stringify = (value: unknown): string => {
  try {
    return JSON.stringify(value, replacer)
  } catch {
    try {
      return JSON.stringify(value, carefulReplacer())
    } catch (error) {
      return JSON.stringify({ _tag: (value as { _tag?: unknown })?._tag, unserialisable: String(error) })
    }
  }
}

/** `event` as the journal stores it, as JSON text (never throws: what cannot be written is said so). */
export const encodeJournalEventText = (event: RunStreamEvent): string => {
  if (event._tag === "RunEnd" && event.outcome._tag === "Failure") {
    let error: unknown
    try {
      error = encodeError(event.outcome.error)
    } catch {
      error = JSON.parse(stringify(event.outcome.error))
    }
    return stringify({ ...event, outcome: { _tag: "Failure", error: { recorded: error } } })
  }
  return stringify(event)
}

/** `event` as the journal stores it. */
export const encodeJournalEvent = (event: RunStreamEvent): Schema.Json => JSON.parse(encodeJournalEventText(event)) as Schema.Json


/**
 * What is wrong with `json` as a journalled event, or undefined: the fields a reader of the journal
 * (`follow`, `d.journal`, the studio) goes by, by tag. The rest of an event is shown, not followed.
 */
const eventIssue = (json: unknown): string | undefined => {
  if (!isRecord(json)) return `not an event object (${Array.isArray(json) ? "an array" : json === null ? "null" : typeof json})`
  const tag = json["_tag"]
  if (typeof tag !== "string") return "an event has a string _tag"
  if (typeof json["runId"] !== "string") return `a ${tag.slice(0, 40)} event has a string runId`
  if (json["parentRunId"] !== undefined && typeof json["parentRunId"] !== "string") return `the parentRunId of a ${tag} event is a string`
  switch (tag) {
    case "RunEnd": {
      const outcome = json["outcome"]
      if (!isRecord(outcome) || typeof outcome["_tag"] !== "string") return "a RunEnd event has an outcome with a string _tag"
      if (outcome["_tag"] === "Suspended" && !Array.isArray(outcome["pending"])) return "a Suspended outcome has an array of pending calls"
      if (outcome["_tag"] === "Failure" && !isRecord(outcome["error"])) return "a Failure outcome has an error object"
      return undefined
    }
    case "ToolUse":
    case "ToolError":
    case "ApprovalDecided":
      return typeof json["toolCallId"] === "string" && typeof json["tool"] === "string" ? undefined : `a ${tag} event has a string tool and toolCallId`
    case "ApprovalRequested":
      return Array.isArray(json["calls"]) ? undefined : "an ApprovalRequested event has an array of calls"
    default:
      return undefined
  }
}

/**
 * Event `id` of run `runId`'s journal, read back (a run's failure as its `AgentError` class again);
 * a `DurableRunUnreadable` naming the row when it is not an event (a row edited or damaged: JSON of
 * another shape). Yield it: `if (event instanceof DurableRunUnreadable) return yield* event`.
 *
 * @example
 * ```ts
 * const event = decodeJournalEvent("order-42", record) // RunStreamEvent | DurableRunUnreadable
 * ```
 */
export const decodeJournalEvent = (runId: string, record: { readonly id: number; readonly event: unknown }): RunStreamEvent | DurableRunUnreadable => {
  const where = { runId, table: "agent_run_events", row: `event ${record.id}` }
  const issue = eventIssue(record.event)
  if (issue !== undefined) return new DurableRunUnreadable({ ...where, reason: issue })
  const event = record.event as unknown as RunStreamEvent
  if (event._tag === "RunEnd" && event.outcome._tag === "Failure") {
    const stored = (event.outcome.error as unknown as { readonly recorded?: unknown }).recorded
    const decoded = decodeStored(where, () => decodeError(stored))
    if (decoded instanceof DurableRunUnreadable) return decoded
    return { ...event, outcome: { _tag: "Failure", error: decoded._tag === "Some" ? decoded.value : ((stored ?? event.outcome.error) as AgentError) } }
  }
  return event
}

/** Whether `event` ends run `rootRunId` (its output, or the error it ended with): the last event a follower sees. */
export const endsRun = (event: RunStreamEvent, rootRunId: string): boolean =>
  event._tag === "RunEnd" && event.runId === rootRunId && (event.outcome._tag === "Success" || event.outcome._tag === "Failure")

/** The journal sink of one execution of run `rootRunId`'s workflow, and whether the run's end went through it. */
export interface JournalSink {
  readonly sink: EventSink
  readonly ended: () => boolean
}

/**
 * The sink of one execution of the workflow of run `rootRunId`: events not in `known` (the journal's
 * keys when the execution started) are appended.
 */
export const journalSink = (journal: RunJournal["Service"], rootRunId: string, known: ReadonlySet<string>): JournalSink => {
  const seen = new Map<string, number>()
  let ended = false
  const sink: EventSink = Object.assign((event: RunStreamEvent) => {
    if (leftOut.has(event._tag)) return Effect.void
    if (event._tag === "RunEnd" && event.outcome._tag === "Interrupted") return Effect.void
    // A replay stopped by a stored row it cannot read is no end: the run stays as stored (`run-unreadable.ts`).
    if (event._tag === "RunEnd" && event.outcome._tag === "Failure" && isUnreadableError(event.outcome.error)) return Effect.void
    return Effect.flatMap(InStep, (inStep) => {
      let key: string
      if (inStep || notReplayed.has(event._tag)) {
        key = `live/${globalThis.crypto.randomUUID()}`
      } else {
        const callId = (event as { readonly toolCallId?: unknown }).toolCallId
        // A run's end is counted apart from its suspensions: a replay after the deadline ends the run
        // before it meets its suspension again, and its end is not that suspension's key.
        const tail = typeof callId === "string" ? callId : endsRun(event, event.runId) ? "end" : ""
        const base = `${event.runId}/${event._tag}/${tail}`
        const n = (seen.get(base) ?? 0) + 1
        seen.set(base, n)
        key = `${base}#${n}`
      }
      if (endsRun(event, rootRunId)) ended = true
      if (known.has(key)) return Effect.void
      const appendText = journal.appendText
      return withStoreRetry(appendText === undefined ? journal.append(rootRunId, key, encodeJournalEvent(event)) : appendText(rootRunId, key, encodeJournalEventText(event)))
    })
  }, { deltas: false as const })
  return { sink, ended: () => ended }
}
