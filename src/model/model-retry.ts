/**
 * Retry notices: what a client says each time it waits before trying a model call again, so a retry
 * is never silent. A provider that retries calls `announceRetry` once per wait: it logs one line through
 * Effect's logger (level Info) and hands the notice to the fiber's `ModelRetryListener`, which a run
 * sets to emit a `Retrying` event to its hooks and streams. The listener is a `Context.Reference`, so a
 * provider reaches the run it serves without knowing the runtime: the run's fiber carries it down to
 * the provider's call.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type { ModelErrorKind } from "./model-error.ts"
import { withoutUrlCredentials } from "../internal/url-credentials.ts"
import { logQuotingContent } from "../internal/content-log.ts"

/** One wait before another attempt of a model call. */
export interface RetryNotice {
  /** The provider that retries (`openai`, `ollama`, `anthropic`, `ai-sdk:…`). */
  readonly provider: string
  /** The model called, when the provider knows it. */
  readonly model?: string | undefined
  /** The attempt about to be made: 2 for the first retry. */
  readonly attempt: number
  /** The most attempts the retry policy allows (its retries + 1). */
  readonly maxAttempts: number
  /** How long the provider waits before that attempt, in milliseconds. */
  readonly waitMs: number
  /** Why the previous attempt failed: the `ModelError`'s reason. */
  readonly reason: string
  /** The HTTP status of the failed attempt, when it had one. */
  readonly status?: number | undefined
  /** The `ModelError`'s kind, when it had one. */
  readonly kind?: ModelErrorKind | undefined
}

/** What receives retry notices in a fiber. */
export type RetryListener = (notice: RetryNotice) => Effect.Effect<void>

/**
 * The fiber's listener of retry notices; none by default. A run provides one around each model call
 * (it emits `Retrying`); provide your own to observe the retries of a client called directly.
 *
 * @example
 * ```ts
 * client.chat(request).pipe(Effect.provideService(ModelRetryListener, (notice) => Effect.sync(() => seen.push(notice))))
 * ```
 */
export const ModelRetryListener = Context.Reference<RetryListener | undefined>(
  "effect-agent-dsl/ModelRetryListener",
  { defaultValue: () => undefined }
)

/**
 * The log line of a notice: `retrying model call to openai (gpt-4o) in 1.2 s (attempt 2 of 4): connection failed: …`.
 *
 * @example
 * ```ts
 * retryLine({ provider: "openai", attempt: 2, maxAttempts: 4, waitMs: 1200, reason: "connection refused" })
 * // "retrying model call to openai in 1.2 s (attempt 2 of 4): connection refused"
 * ```
 */
export const retryLine = (notice: RetryNotice): string => {
  const target = notice.model === undefined ? notice.provider : `${notice.provider} (${notice.model})`
  const status = notice.status === undefined ? "" : ` (HTTP ${notice.status})`
  // A log line: a URL's credentials in the reason (a `baseURL` with `user:password@`) are hidden.
  return `retrying model call to ${target} in ${formatWait(notice.waitMs)} (attempt ${notice.attempt} of ${notice.maxAttempts})${status}: ${withoutUrlCredentials(notice.reason)}`
}

const formatWait = (ms: number): string =>
  !Number.isFinite(ms) ? `${ms} ms` : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`

/**
 * Announces one wait: logs `retryLine(notice)` (level Info) and hands the notice to the fiber's
 * `ModelRetryListener`. Never fails. Call it right before the wait, once per wait.
 *
 * @example
 * ```ts
 * yield* announceRetry({ provider: "my-gateway", attempt: 2, maxAttempts: 3, waitMs: 500, reason: "HTTP 503" })
 * yield* Effect.sleep("500 millis")
 * ```
 */
export const announceRetry = (notice: RetryNotice): Effect.Effect<void> =>
  logQuotingContent(Effect.logInfo(retryLine(notice))).pipe(
    Effect.andThen(Effect.flatMap(ModelRetryListener, (listener) => (listener === undefined ? Effect.void : listener(notice))))
  )
