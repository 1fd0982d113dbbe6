/**
 * Internal: the parsed body of a successful reply, as a provider SDK hands it over. The official SDKs
 * (`openai`, `@anthropic-ai/sdk`) parse the body as JSON only when the server labels it
 * `application/json`, else they hand over its text: some OpenAI-compatible servers and proxies send
 * JSON as `text/plain`. That text is parsed here; a body that is empty or not a JSON object is a
 * `ModelError` saying so, not a reply "without choices" or "without output".
 */
import { ModelError } from "../errors.ts"
import { isRecord } from "../internal/is-record.ts"
import { shownValue } from "../internal/shown-value.ts"
import { bodySummary } from "./error-body.ts"

/**
 * The reply's body as a JSON object, or the non-retryable `ModelError` of `provider` saying why not.
 *
 * @example
 * ```ts
 * replyBody("openai", '{"id":"chatcmpl-1","choices":[]}') // { id: "chatcmpl-1", choices: [] }
 * replyBody("anthropic", "")                             // ModelError: the response body is empty
 * ```
 */
export const replyBody = (provider: string, reply: unknown): Record<string, unknown> | ModelError => {
  if (isRecord(reply)) return reply
  if (reply === undefined || (typeof reply === "string" && reply.trim() === "")) {
    return new ModelError({ provider, reason: "the response body is empty", retryable: false })
  }
  if (typeof reply === "string") {
    try {
      const json: unknown = JSON.parse(reply)
      if (isRecord(json)) return json
    } catch {
      // described below
    }
    return new ModelError({ provider, reason: `the response body is not a JSON object: ${bodySummary(reply)}`, retryable: false })
  }
  return new ModelError({ provider, reason: `unexpected response shape: ${shownValue(reply)}`, retryable: false })
}
