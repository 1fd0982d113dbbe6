/**
 * The errors of the A2A border. `A2aError` is what a remote A2A agent used as a tool fails with (the
 * agent's recovery handlers see it as the tool's failure, like `McpError`): its `kind` says which
 * part of the exchange went wrong, so callers can branch without reading messages.
 */
import * as Data from "effect/Data"
import { AgentErrorTypeId } from "../../internal/agent-error-marker.ts"

/**
 * Which part of an A2A exchange failed:
 * - `card`: the agent card could not be fetched or is not an A2A card;
 * - `transport`: the request failed (connection refused, HTTP error, stream dropped before a final state);
 * - `protocol`: the server answered with an A2A error (unknown task, invalid params, ...), see `code`;
 * - `task-failed` / `task-rejected` / `task-canceled`: the remote task ended that way;
 * - `input-required` / `auth-required`: the remote task waits for something a tool call cannot give;
 * - `timeout`: no final state within the time allowed;
 * - `invalid-output`: the answer did not decode with the tool's output Schema.
 */
export type A2aErrorKind =
  | "card"
  | "transport"
  | "protocol"
  | "task-failed"
  | "task-rejected"
  | "task-canceled"
  | "input-required"
  | "auth-required"
  | "timeout"
  | "invalid-output"

/**
 * A remote A2A agent could not give an answer.
 *
 * @example
 * ```ts
 * if (error instanceof A2aError && error.kind === "timeout") console.log(`${error.agent} took too long`)
 * ```
 */
export class A2aError extends Data.TaggedError("A2aError")<{
  /** The remote agent (its card's name, or its URL before the card is read). */
  readonly agent: string
  readonly kind: A2aErrorKind
  readonly reason: string
  /** The remote task, when one was created. */
  readonly taskId?: string | undefined
  /** The protocol's error code (`protocol` errors: -32001 task not found, -32602 invalid params, ...). */
  readonly code?: number | undefined
  readonly cause?: unknown
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  override get message(): string {
    return `A2A agent "${this.agent}" (${this.kind}${this.code === undefined ? "" : ` ${this.code}`}): ${this.reason}`
  }
}
