/**
 * ModelError: the one way a model call fails, part of the protocol beside `ModelClient` because every
 * client (providers, mocks, user code) produces it and the loop consumes it.
 */
import { Data } from "effect"
import { AgentErrorTypeId } from "../internal/agent-error-marker.ts"

/**
 * The model (or the transport to it) failed: HTTP status, network, timeout, an unusable reply, or a
 * scripted mock that ran out of responses. `isRetryable` says whether another attempt may succeed
 * (429, 5xx, network, timeout); providers retry those before the error reaches the loop.
 *
 * @example
 * ```ts
 * const client = ModelClient.fromFunction(() => { throw new Error("down") }) // surfaces as ModelError
 * ```
 */
export class ModelError extends Data.TaggedError("ModelError")<{
  readonly provider: string
  readonly reason: string
  readonly status?: number
  readonly retryable?: boolean
  readonly cause?: unknown
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  /** True when another attempt may succeed. */
  get isRetryable(): boolean {
    return this.retryable === true
  }
  override get message(): string {
    const status = this.status === undefined ? "" : ` (HTTP ${this.status})`
    return `Model call to ${this.provider} failed${status}: ${this.reason}`
  }
}
