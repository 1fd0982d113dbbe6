/**
 * A durable run whose stored state cannot be read: a row of the store (its execution, a recorded
 * step, a journal event, a wait's snapshot, a claim's outcome) holds what this version cannot decode:
 * text that is not JSON, or JSON of another shape (a row edited by hand, damaged on disk, or written
 * by something else). Every read of a stored row decodes inside this typed failure, which names the
 * run, the table and the row and says what is wrong; nothing is repaired or overwritten, so a row put
 * right lets the run go on at its next wake (or the next start of its runner).
 *
 * What it looks like from outside: `join`, `poll`, `result`, `journal` and `follow` of that run fail
 * with `DurableRunUnreadable`; `list` shows the run with status `unreadable` (and the error), and every
 * other run as usual; a runner that meets it while replaying says so in a warning and goes on serving
 * its other runs.
 */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"

/**
 * The stored state of durable run `runId` cannot be read: `row` of `table` is `reason`.
 *
 * @example
 * ```ts
 * d.join("order-42").pipe(Effect.catchTag("DurableRunUnreadable", (e) => Effect.logError(e.message)))
 * ```
 */
export class DurableRunUnreadable extends Data.TaggedError("DurableRunUnreadable")<{
  readonly runId: string
  /** The table of the row (`agent_workflow_steps`, `agent_run_events`, `agent_approval_waits`, …). */
  readonly table: string
  /** Which row: its key within the run (`step a:model/r6/step/1/1`, `event 3`, `wait 1`). */
  readonly row: string
  /** What is wrong with it (the parser's or the decoder's words). */
  readonly reason: string
}> {
  override get message(): string {
    return `The stored state of durable run "${this.runId}" cannot be read: ${this.table}, ${this.row}: ${this.reason}`
  }
}

/** The longest reason kept (a decoder's message may quote the whole value). */
const reasonLength = 300

/** What went wrong decoding a stored value, in a line of at most 300 characters. */
export const unreadableReason = (error: unknown): string => {
  let text: string
  try {
    text = error instanceof Error ? `${error.name === "Error" ? "" : `${error.name}: `}${error.message}` : String(error)
  } catch {
    text = "unreadable value"
  }
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > reasonLength ? `${line.slice(0, reasonLength - 1)}…` : line
}

/**
 * `decode()`, or the `DurableRunUnreadable` of the row it reads when it throws (a parser's
 * `SyntaxError`, a Schema's issue, a `RangeError` of a value nested too deep).
 */
export const decodeStored = <A>(where: { readonly runId: string; readonly table: string; readonly row: string }, decode: () => A): A | DurableRunUnreadable => {
  try {
    return decode()
  } catch (error) {
    return new DurableRunUnreadable({ ...where, reason: unreadableReason(error) })
  }
}

/**
 * The unreadable row that ended `cause`, when it ended so: a `DurableRunUnreadable`, or an engine's
 * `StoredRowUnreadable` (carried as a defect: an engine's `poll` has no error channel), given the
 * run's id.
 */
export const unreadableIn = (cause: Cause.Cause<unknown>, runId: string): DurableRunUnreadable | undefined => {
  for (const reason of cause.reasons) {
    const value = reason._tag === "Fail" ? reason.error : reason._tag === "Die" ? reason.defect : undefined
    if (value instanceof DurableRunUnreadable) return value
    const tagged = value as { readonly _tag?: unknown; readonly table?: unknown; readonly row?: unknown; readonly reason?: unknown } | null | undefined
    if (typeof tagged === "object" && tagged !== null && tagged._tag === "StoredRowUnreadable") {
      return new DurableRunUnreadable({ runId, table: String(tagged.table), row: String(tagged.row), reason: String(tagged.reason) })
    }
  }
  return undefined
}

/**
 * Whether a run's error is an unreadable stored row: a `DurableRunUnreadable` or an engine's
 * `StoredRowUnreadable`, itself or as the defect a `RuntimeDefect` carries (how the loop ends on it).
 */
export const isUnreadableError = (error: unknown): boolean => {
  const isRow = (value: unknown) =>
    value instanceof DurableRunUnreadable || (typeof value === "object" && value !== null && (value as { readonly _tag?: unknown })._tag === "StoredRowUnreadable")
  return isRow(error) || (typeof error === "object" && error !== null && (error as { readonly _tag?: unknown })._tag === "RuntimeDefect" && isRow((error as { readonly cause?: unknown }).cause))
}

/** Whether `cause` ended with an unreadable stored row (see {@link unreadableIn}). */
export const isUnreadableCause = (cause: Cause.Cause<unknown>): boolean => unreadableIn(cause, "") !== undefined
