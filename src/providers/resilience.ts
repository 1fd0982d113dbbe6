/**
 * What every HTTP provider does around one call: a per-attempt timeout, bounded retries with
 * exponential backoff and jitter for retryable failures, the server's own word on retrying
 * (`retry-after-ms`, `Retry-After`, `x-should-retry`), and an `AbortSignal` that aborts the request
 * when the Effect is interrupted (by the timeout, a budget, or the caller). Every wait before another
 * attempt is announced once (`announceRetry`: a log line, and a `Retrying` event in a run), so a
 * refused connection never waits in silence.
 *
 * Timeouts. A non-streaming reply shows no progress until it is complete, so a short per-attempt
 * timeout cannot tell a slow generation from a dead server, and a generation cut off and sent again is
 * billed twice. Hence: the default `timeout` is 10 minutes (the official SDKs' default), and an attempt
 * that times out is not retried unless `retryTimeouts: true`. Failures before any reply (refused
 * connection, DNS, the platform's connect timeout: 10 s for Node's fetch) are retried, since nothing was
 * generated.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import { ModelError } from "../errors.ts"
import { announceRetry } from "../model/model-retry.ts"

/**
 * Retry policy for retryable failures. Checked when the provider is built: a value out of range is an
 * `AgentConfigError` naming it (./check-fault-options.ts).
 */
export interface RetryOptions {
  /** Retries after the first attempt: a whole number, `0` for none. Default 3. */
  readonly times?: number
  /** First delay: a finite duration, `0` allowed. Default 500 ms. */
  readonly base?: Duration.Input
  /** Growth per attempt: a finite number >= 1. Default 2. */
  readonly factor?: number
  /** Upper bound of one computed delay (before jitter), `Infinity` for none. Default 10 s. */
  readonly maxDelay?: Duration.Input
  /**
   * The longest delay a server may ask for (`retry-after-ms`, `Retry-After`). A longer request ends the
   * retries at once with the `ModelError` (its `retryAfterMs` says how long the server asked). Default 60 s.
   */
  readonly maxRetryAfter?: Duration.Input
}

/** Options every provider shares, checked when the provider is built (an `AgentConfigError` names a bad one). */
export interface ResilienceOptions {
  /**
   * Total time of one attempt, from sending the request to the whole reply: a positive duration, or
   * `Infinity` for none (`0` is refused). Default 10 minutes.
   */
  readonly timeout?: Duration.Input
  /** Retry an attempt that timed out (re-sends, and so re-bills, the generation). Default false. */
  readonly retryTimeouts?: boolean
  /** `false` disables retries. */
  readonly retry?: RetryOptions | false
}

/**
 * The default per-attempt timeout: long enough for long generations (see the module comment).
 *
 * @example
 * ```ts
 * openai("o3", { timeout: defaultTimeout })
 * ```
 */
export const defaultTimeout = "10 minutes"

/**
 * The default longest server-requested delay that is honoured.
 *
 * @example
 * ```ts
 * openai("gpt-4o-mini", { retry: { maxRetryAfter: defaultMaxRetryAfter } })
 * ```
 */
export const defaultMaxRetryAfter = "60 seconds"

/**
 * HTTP statuses worth retrying: request timeout, conflict, rate limit, server errors.
 *
 * @example
 * ```ts
 * isRetryableStatus(503) // true
 * ```
 */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 409 || status === 429 || status >= 500

/** What a failed HTTP reply says about retrying it. */
export interface RetryAdvice {
  /** The delay asked for, in milliseconds, if any. */
  readonly retryAfterMs?: number
  /** `x-should-retry`, when the server sent it: it overrides the status. */
  readonly shouldRetry?: boolean
}

/** A header lookup that works for `Headers` and plain records. */
type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined> | undefined | null

const header = (headers: HeaderSource, name: string): string | undefined => {
  if (headers === undefined || headers === null) return undefined
  if (typeof (headers as { get?: unknown }).get === "function") return (headers as { get(n: string): string | null }).get(name) ?? undefined
  const record = headers as Record<string, string | string[] | undefined>
  const key = Object.keys(record).find((k) => k.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? value[0] : value
}

/**
 * Reads `retry-after-ms` (milliseconds), `Retry-After` (seconds or an HTTP date) and `x-should-retry`.
 *
 * @example
 * ```ts
 * retryAdvice(new Headers({ "retry-after": "2" })) // { retryAfterMs: 2000 }
 * ```
 */
export const retryAdvice = (headers: HeaderSource, now: number = Date.now()): RetryAdvice => {
  const advice: { retryAfterMs?: number; shouldRetry?: boolean } = {}
  const ms = Number.parseFloat(header(headers, "retry-after-ms") ?? "")
  const after = header(headers, "retry-after")
  if (Number.isFinite(ms) && ms >= 0) advice.retryAfterMs = ms
  else if (after !== undefined) {
    const seconds = Number(after.trim())
    if (after.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) advice.retryAfterMs = seconds * 1000
    else {
      const date = Date.parse(after)
      if (Number.isFinite(date)) advice.retryAfterMs = Math.max(0, date - now)
    }
  }
  const should = header(headers, "x-should-retry")?.trim().toLowerCase()
  if (should === "true") advice.shouldRetry = true
  if (should === "false") advice.shouldRetry = false
  return advice
}

/**
 * Whether a failed HTTP reply is worth another attempt: `x-should-retry` when sent, else the status
 * (408, 409, 429, 5xx), except errors that never go away by waiting (`insufficient_quota`).
 *
 * @example
 * ```ts
 * shouldRetryStatus(429, {}, "insufficient_quota") // false
 * ```
 */
export const shouldRetryStatus = (status: number, advice: RetryAdvice, code?: string): boolean => {
  if (advice.shouldRetry !== undefined) return advice.shouldRetry
  if (code === "insufficient_quota") return false
  return isRetryableStatus(status)
}

/**
 * Where a call goes: the provider, and the model when known. Retry notices name both.
 *
 * @example
 * ```ts
 * const target: CallTarget = { provider: "openai", model: "gpt-4o-mini" }
 * ```
 */
export type CallTarget = string | { readonly provider: string; readonly model?: string | undefined }

const providerOf = (target: CallTarget): string => (typeof target === "string" ? target : target.provider)
const modelOf = (target: CallTarget): string | undefined => (typeof target === "string" ? undefined : target.model)

/**
 * Runs `request` (which must honour `signal`) with the timeout and retry policy. `toModelError` maps
 * whatever the SDK threw to a `ModelError` whose `retryable` decides whether another attempt is made
 * and whose `retryAfterMs` sets its delay. Every wait before another attempt is announced
 * (`announceRetry`: one log line, and a `Retrying` event when a run made the call).
 *
 * @example
 * ```ts
 * resilientCall({ provider: "openai", model }, { timeout: "30 seconds" }, (signal) => client.chat.completions.create(body, { signal }), toModelError)
 * ```
 */
export const resilientCall = <A>(
  target: CallTarget,
  options: ResilienceOptions,
  request: (signal: AbortSignal) => Promise<A>,
  toModelError: (cause: unknown) => ModelError
): Effect.Effect<A, ModelError> => {
  const provider = providerOf(target)
  const timeout = Duration.fromInputUnsafe(options.timeout ?? defaultTimeout)
  const attempt = Effect.tryPromise({ try: request, catch: toModelError }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(
          new ModelError({
            provider,
            reason: `no response within ${Duration.format(timeout)}${options.retryTimeouts === true ? "" : " (not retried: the generation would be billed again)"}`,
            retryable: options.retryTimeouts === true
          })
        )
    })
  )
  if (options.retry === false) return attempt
  const policy = resolveRetry(options.retry)
  const attempts = (n: number): Effect.Effect<A, ModelError> =>
    Effect.catch(attempt, (error) => {
      const wait = retryWait(policy, n, error)
      return wait === undefined ? Effect.fail(error) : Effect.flatMap(wait, (waitMs) => waitBeforeRetry(target, policy, n, error, waitMs, attempts(n + 1)))
    })
  return attempts(0)
}

/** A retry policy with its defaults applied (durations in milliseconds). */
export interface RetryPolicy {
  readonly times: number
  readonly baseMs: number
  readonly factor: number
  readonly maxDelayMs: number
  readonly maxRetryAfterMs: number
}

/**
 * The policy of `options.retry`, defaults applied; `false` allows no retry.
 *
 * @example
 * ```ts
 * resolveRetry({ times: 2 }) // { times: 2, baseMs: 500, factor: 2, maxDelayMs: 10000, maxRetryAfterMs: 60000 }
 * ```
 */
export const resolveRetry = (retry: RetryOptions | false | undefined): RetryPolicy => {
  const options: RetryOptions = retry === false ? { times: 0 } : retry ?? {}
  const millis = (input: Duration.Input | undefined, fallback: Duration.Input) => Duration.toMillis(Duration.fromInputUnsafe(input ?? fallback))
  return {
    times: options.times ?? 3,
    baseMs: millis(options.base, "500 millis"),
    factor: options.factor ?? 2,
    maxDelayMs: millis(options.maxDelay, "10 seconds"),
    maxRetryAfterMs: millis(options.maxRetryAfter, defaultMaxRetryAfter)
  }
}

/**
 * The wait before retry `n` (0 for the first) after `error`, or `undefined` when it is not retried: not
 * retryable, retries used up, or the server asked for longer than `maxRetryAfter`. A delay the server
 * asked for is used as it is; a computed one is exponential, capped at `maxDelay`, jittered by ±20 %.
 *
 * @example
 * ```ts
 * retryWait(resolveRetry({}), 0, new ModelError({ provider: "openai", reason: "HTTP 503", retryable: true })) // Effect of ~400-600 ms
 * ```
 */
export const retryWait = (policy: RetryPolicy, n: number, error: ModelError): Effect.Effect<number> | undefined => {
  if (error.retryable !== true || n >= policy.times) return undefined
  if (error.retryAfterMs !== undefined) return error.retryAfterMs <= policy.maxRetryAfterMs ? Effect.succeed(error.retryAfterMs) : undefined
  const computed = Math.min(policy.maxDelayMs, policy.baseMs * policy.factor ** n)
  return Effect.map(Random.next, (r) => computed * (0.8 + 0.4 * r))
}

/**
 * Announces the wait before retry `n` (`announceRetry`), waits, then goes on with `next`.
 *
 * @example
 * ```ts
 * waitBeforeRetry({ provider: "openai", model }, policy, 0, error, 480, attempts(1))
 * ```
 */
export const waitBeforeRetry = <A, E, R>(
  target: CallTarget,
  policy: RetryPolicy,
  n: number,
  error: ModelError,
  waitMs: number,
  next: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  announceRetry({
    provider: providerOf(target),
    model: modelOf(target),
    attempt: n + 2,
    maxAttempts: policy.times + 1,
    waitMs,
    reason: error.reason,
    status: error.status,
    kind: error.kind
  }).pipe(Effect.andThen(Effect.sleep(Duration.millis(waitMs))), Effect.andThen(next))

/**
 * True for a transport failure: fetch's `TypeError("fetch failed")` (refused, DNS, connect timeout)
 * and `TypeError("terminated")` (the connection closed while the body was read).
 *
 * @example
 * ```ts
 * isConnectionFailure(new TypeError("terminated")) // true
 * ```
 */
export const isConnectionFailure = (cause: unknown): boolean =>
  cause instanceof TypeError && /fetch failed|terminated|socket|ECONNRESET|other side closed/i.test(`${cause.message} ${describeNested(cause.cause)}`)

const describeNested = (cause: unknown): string =>
  cause instanceof Error ? `${cause.message} ${(cause as { code?: string }).code ?? ""}` : ""

/**
 * The deepest message of a failure's `cause` chain: what an SDK's "Connection error." wraps
 * (`connect ECONNREFUSED 127.0.0.1:11434`), so a retry notice and the final error say what happened.
 *
 * @example
 * ```ts
 * innermostMessage(new Error("Connection error.", { cause: new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:1") }) }))
 * // "connect ECONNREFUSED 127.0.0.1:1"
 * ```
 */
export const innermostMessage = (cause: unknown): string => {
  let current: unknown = cause
  for (let depth = 0; depth < 8 && current instanceof Error && current.cause instanceof Error; depth++) current = current.cause
  return current instanceof Error ? current.message : String(current)
}
