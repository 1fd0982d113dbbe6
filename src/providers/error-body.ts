/**
 * Internal: what a failed HTTP reply's body says, for a `ModelError`'s `reason`. Servers word their
 * errors in many shapes: OpenAI's `{"error": {"message"}}`, a bare `{"error": "…"}` (Ollama's /v1), vLLM's
 * `{"object": "error", "message"}`, FastAPI's `{"detail": "…"}` or `{"detail": [{"loc", "msg"}]}`, a
 * proxy's `{"message"}`, or an HTML page. Each is read for its message; what is none of them is shown
 * as its text, without tags, cut short.
 */
import { isRecord } from "../internal/is-record.ts"

/** The longest piece of a body that is not a message kept in a reason. */
const maxSummary = 200
/** The longest message kept in a reason: a server's own message is kept whole unless it is huge. */
const maxMessage = 2_000

/**
 * A text cut at `max` characters, with an ellipsis when it was cut.
 *
 * @example
 * ```ts
 * truncate("a".repeat(300)) // 200 characters and "…"
 * ```
 */
export const truncate = (text: string, max: number = maxSummary): string => (text.length <= max ? text : `${text.slice(0, max).trimEnd()}…`)

/**
 * The readable text of a body that is not JSON: an HTML page without its scripts, styles and tags, in
 * one line, cut at 200 characters. Only the first 64 KB are read: what a reason can show, and a bound
 * on the tag-stripping's work.
 *
 * @example
 * ```ts
 * bodySummary("<html><body><h1>502 Bad Gateway</h1></body></html>") // "502 Bad Gateway"
 * ```
 */
export const bodySummary = (body: string): string =>
  truncate(
    body.slice(0, 65_536).replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, " ").replace(/<!--[\s\S]*?-->/g, " ").replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim()
  )

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.trim() !== ""

/** FastAPI's validation errors: `loc` joined by dots, then `msg`; anything else as JSON. */
const detailText = (detail: ReadonlyArray<unknown>): string =>
  detail.map((item) => {
    if (isRecord(item) && nonEmpty(item.msg)) return Array.isArray(item.loc) && item.loc.length > 0 ? `${item.loc.join(".")}: ${item.msg}` : item.msg
    return JSON.stringify(item) ?? String(item)
  }).join("; ")

/**
 * The message a failed reply's body holds: `error.message`, `error` (a string), `message`, `detail` (a
 * string, or FastAPI's list of `{ loc, msg }`), else the body's text (a summary of it when it is not
 * JSON); `undefined` for an empty body, or an `error` object without a message (left to the SDK's
 * own wording).
 *
 * @example
 * ```ts
 * errorBodyMessage('{"object":"error","message":"This model\'s maximum context length is 4096 tokens."}') // "This model's maximum context length is 4096 tokens."
 * errorBodyMessage('{"detail":[{"loc":["body","messages"],"msg":"field required"}]}') // "body.messages: field required"
 * ```
 */
export const errorBodyMessage = (body: string): string | undefined => {
  const text = body.trim()
  if (text === "") return undefined
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    const summary = bodySummary(text)
    return summary === "" ? undefined : summary
  }
  if (!isRecord(json)) return truncate(text)
  const { error, message, detail } = json
  if (isRecord(error)) return nonEmpty(error.message) ? truncate(error.message, maxMessage) : undefined
  if (nonEmpty(error)) return truncate(error, maxMessage)
  if (nonEmpty(message)) return truncate(message, maxMessage)
  if (nonEmpty(detail)) return truncate(detail, maxMessage)
  if (Array.isArray(detail) && detail.length > 0) return truncate(detailText(detail), maxMessage)
  return truncate(text)
}
