/**
 * An event's JSON made to fit a size, for `studioHooks`: the studio refuses a body over its
 * `maxBodyBytes`, and dropping the event would lose its run's shape (a `RunStart`, a `RunEnd`, the
 * turn it belongs to). Its long strings are cut instead, at every level, each ending with a note of
 * how much was left out; the event is flagged `trimmed`. What strings cannot shrink enough (thousands
 * of small fields) keeps its top-level fields: numbers, booleans, short strings and the `_tag` of an
 * object field (a `RunEnd`'s outcome), so its run still starts, ends and has the status it had.
 */
import { isRecord } from "../../internal/is-record.ts"
import type { EventJson } from "../store/event-json.ts"

/**
 * The UTF-8 size of `text` as `JSON.stringify` writes it (which escapes lone surrogates, so every
 * surrogate is half of a 4-byte pair), counted without encoding it.
 */
export const utf8Bytes = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    bytes += unit < 0x80 ? 1 : unit < 0x800 || (unit >= 0xd800 && unit <= 0xdfff) ? 2 : 3
  }
  return bytes
}

/** `text` cut to `keep` characters (never inside a surrogate pair), with the note of what was left out. */
const cut = (text: string, keep: number): string => {
  const end = keep > 0 && /[\ud800-\udbff]/.test(text[keep - 1]!) ? keep - 1 : keep
  return `${text.slice(0, end)}… [${(text.length - end).toLocaleString("en-US")} more characters left out: the event was too large to send to the studio]`
}

/** The shortest cut tried: below it, the strings are not what makes the event large. */
const shortestCut = 64

/** Fields never cut: a run id cut would file the event under another run. */
const identifying: ReadonlySet<string> = new Set(["_tag", "runId", "parentRunId", "parentRun"])

/**
 * The JSON of `event`, at most `maxBytes` bytes when that can be done (`maxBytes` of 1 KiB and more):
 * as it is when it fits, else with its strings cut (see the module's comment).
 *
 * @example
 * ```ts
 * fitEventJson({ _tag: "ToolUse", runId: "run_1", result: "x".repeat(10_000_000) }, 1024 * 1024)
 * // {"_tag":"ToolUse","runId":"run_1","result":"xxx…… [9,737,856 more characters left out: …]","trimmed":true}
 * ```
 */
export const fitEventJson = (event: EventJson, maxBytes: number): string => {
  const whole = JSON.stringify(event)
  if (utf8Bytes(whole) <= maxBytes) return whole
  // A quarter of the room for the longest string, then a quarter of that, until the event fits.
  for (let keep = Math.floor(maxBytes / 4); keep >= shortestCut; keep = Math.floor(keep / 4)) {
    const limit = keep
    const json = JSON.stringify({ ...event, trimmed: true }, (key, value: unknown) =>
      typeof value === "string" && value.length > limit && !identifying.has(key) ? cut(value, limit) : value)
    if (utf8Bytes(json) <= maxBytes) return json
  }
  const outline: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(event)) {
    if (typeof value === "string") outline[key] = value.length > shortestCut && !identifying.has(key) ? cut(value, shortestCut) : value
    else if (typeof value === "number" || typeof value === "boolean" || value === null) outline[key] = value
    else if (isRecord(value) && typeof value._tag === "string") outline[key] = { _tag: value._tag.slice(0, shortestCut) }
  }
  const json = JSON.stringify({ ...outline, trimmed: true })
  if (utf8Bytes(json) <= maxBytes) return json
  // Thousands of top-level fields: what names the event and its run.
  const named: Record<string, unknown> = {}
  for (const key of [...identifying, "agent"]) if (key in outline) named[key] = outline[key]
  return JSON.stringify({ ...named, trimmed: true })
}
