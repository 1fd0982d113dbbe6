/**
 * ModelError: the one way a model call fails, part of the protocol beside `ModelClient` because every
 * client (providers, mocks, user code) produces it and the loop consumes it.
 */
import * as Data from "effect/Data"
import { AgentErrorTypeId } from "../internal/agent-error-marker.ts"
import type { Usage } from "./messages.ts"

/**
 * Why a model answered without a usable reply, when it did (`ModelError.kind`):
 * - `length`: cut off at the output token limit (`finish_reason`/`done_reason`/`stop_reason` "length",
 *   "max_tokens"); `partial` holds the text that arrived;
 * - `content-filter`: the provider's content filter withheld the reply;
 * - `refusal`: the model refused (OpenAI `refusal`, Anthropic `stop_reason: "refusal"`); `partial` holds
 *   its words;
 * - `thinking-only`: the reply held reasoning but neither an answer nor a tool call;
 * - `malformed`: the reply held neither an answer nor a tool call and ended for a reason that is not a
 *   plain stop (an unknown finish reason), or it was to be a tool call that the provider could not make
 *   (Gemini `MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`, `TOO_MANY_TOOL_CALLS`, even after some
 *   text: `partial` holds it), or it names a tool call without a tool's name;
 * - `unsupported`: the reply uses something this library cannot act on.
 */
export type ModelErrorKind = "length" | "content-filter" | "refusal" | "thinking-only" | "malformed" | "unsupported"

/**
 * The model (or the transport to it) failed: HTTP status, network, timeout, an unusable reply, or a
 * scripted mock that ran out of responses. `isRetryable` says whether another attempt may succeed
 * (429, 5xx, network, timeout); providers retry those before the error reaches the loop. `kind` names a
 * reply the model did give but that cannot be used (truncated, filtered, refused); `retryAfterMs` is the
 * delay the server asked for, if any; `usage` the tokens such a reply cost.
 *
 * @example
 * ```ts
 * const client = ModelClient.fromFunction(() => { throw new Error("down") }) // surfaces as ModelError
 * Effect.catchTag("ModelError", (e) => e.kind === "length" ? Effect.succeed(e.partial ?? "") : Effect.fail(e))
 * ```
 */
export class ModelError extends Data.TaggedError("ModelError")<{
  readonly provider: string
  readonly reason: string
  readonly status?: number
  readonly retryable?: boolean
  readonly kind?: ModelErrorKind
  readonly partial?: string
  readonly retryAfterMs?: number
  /**
   * The tokens the model spent on what failed, when it reported them: a reply it did give but that
   * cannot be used (truncated, filtered, refused), or `jsonMode`'s replies and corrections. A run
   * charges them to its budget and its usage like an answered call's.
   */
  readonly usage?: Usage
  readonly cause?: unknown
}> {
  get [AgentErrorTypeId](): true {
    return true
  }
  /** True when another attempt may succeed. */
  get isRetryable(): boolean {
    return this.retryable === true
  }
  /**
   * This error carrying `usage` (its other fields kept): for a client that knows what a failed call cost.
   *
   * @example
   * ```ts
   * Effect.mapError(call, (error) => error.withUsage({ inputTokens: 120, outputTokens: 4096 }))
   * ```
   */
  withUsage(usage: Usage): ModelError {
    const { provider, reason, status, retryable, kind, partial, retryAfterMs, cause } = this
    return new ModelError({
      provider,
      reason,
      ...(status === undefined ? {} : { status }),
      ...(retryable === undefined ? {} : { retryable }),
      ...(kind === undefined ? {} : { kind }),
      ...(partial === undefined ? {} : { partial }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...(cause === undefined ? {} : { cause }),
      usage
    })
  }
  override get message(): string {
    const status = this.status === undefined ? "" : ` (HTTP ${this.status})`
    return `Model call to ${this.provider} failed${status}: ${this.reason}`
  }
}
