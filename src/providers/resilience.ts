/**
 * What every HTTP provider does around one call: a per-call timeout, bounded retries with exponential
 * backoff and jitter for retryable failures (429, 5xx, network, timeout), and an `AbortSignal` that
 * aborts the request when the Effect is interrupted (by the timeout, a budget, or the caller).
 */
import { Duration, Effect, Schedule } from "effect"
import { ModelError } from "../errors.ts"

/** Retry policy for retryable failures. */
export interface RetryOptions {
  /** Retries after the first attempt. Default 3. */
  readonly times?: number
  /** First delay. Default 500 ms. */
  readonly base?: Duration.Input
  /** Growth per attempt. Default 2. */
  readonly factor?: number
  /** Upper bound of one delay (before jitter). Default 10 s. */
  readonly maxDelay?: Duration.Input
}

/** Options every provider shares. */
export interface ResilienceOptions {
  /** Per attempt. Default 60 s. */
  readonly timeout?: Duration.Input
  /** `false` disables retries. */
  readonly retry?: RetryOptions | false
}

/** HTTP statuses worth retrying: request timeout, conflict, rate limit, server errors. */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 409 || status === 429 || status >= 500

/**
 * Runs `request` (which must honour `signal`) with the timeout and retry policy. `toModelError` maps
 * whatever the SDK threw to a `ModelError` whose `retryable` decides whether another attempt is made.
 *
 * @example
 * ```ts
 * resilientCall("openai", { timeout: "30 seconds" }, (signal) => client.chat.completions.create(body, { signal }), toModelError)
 * ```
 */
export const resilientCall = <A>(
  provider: string,
  options: ResilienceOptions,
  request: (signal: AbortSignal) => Promise<A>,
  toModelError: (cause: unknown) => ModelError
): Effect.Effect<A, ModelError> => {
  const timeout = Duration.fromInputUnsafe(options.timeout ?? "60 seconds")
  const attempt = Effect.tryPromise({ try: request, catch: toModelError }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(new ModelError({ provider, reason: `no response within ${Duration.format(timeout)}`, retryable: true }))
    })
  )
  if (options.retry === false) return attempt
  return Effect.retry(attempt, { schedule: retrySchedule(options.retry ?? {}), while: (error) => error.retryable === true })
}

const retrySchedule = (options: RetryOptions) => {
  const maxDelay = Duration.fromInputUnsafe(options.maxDelay ?? "10 seconds")
  return Schedule.exponential(options.base ?? "500 millis", options.factor ?? 2).pipe(
    Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(Duration.fromInputUnsafe(duration), maxDelay))),
    Schedule.jittered,
    Schedule.upTo({ times: options.times ?? 3 })
  )
}
