/**
 * The error of the web border: a chat request body that is not what `useChat` sends.
 */
import * as Data from "effect/Data"
import { AgentErrorTypeId } from "../internal/agent-error-marker.ts"

/**
 * A chat request body (the `UIMessage[]` that `useChat` posts, or `{ messages, ... }` around it) did
 * not decode: not JSON, not an array of messages, a part of an unknown or malformed kind, a string or
 * a list over its limit, a system message from the client, or no user message where one was needed.
 * `issues` lists what was wrong, one issue per line with its path (at most 2,000 characters).
 * `chatHandler` answers it with status 400 (413 when the body is over `maxBodyBytes`).
 *
 * @example
 * ```ts
 * const input = fromUIMessages(body)
 * if (input instanceof UIMessagesInvalid) return Response.json({ error: input.message }, { status: 400 })
 * ```
 */
export class UIMessagesInvalid extends Data.TaggedError("UIMessagesInvalid")<{
  readonly issues: string
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `The chat request body is not a list of UI messages:\n${this.issues}`
  }
}
