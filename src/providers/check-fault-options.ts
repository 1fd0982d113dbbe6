/**
 * The fault options every provider shares (`timeout`, `retryTimeouts`, `retry`, `idleTimeout`),
 * checked when the provider is built: a value that would misbehave at call time (`retry.times: NaN`
 * retrying forever, `idleTimeout: 0` stalling before the request is sent, `timeout: "soon"` crashing
 * every call) is an `AgentConfigError` naming the option, the value and what is accepted, as a
 * budget's limits are. Durations are Effect `Duration` inputs (`"30 seconds"`, `30000` milliseconds,
 * `Duration.seconds(30)`); a timeout is switched off with `Infinity`, never `0`, as budgets have it.
 */
import * as Duration from "effect/Duration"
import { AgentConfigError } from "../errors.ts"
import { isRecord } from "../internal/is-record.ts"
import { shownValue } from "../internal/shown-value.ts"
import type { RetryOptions } from "./resilience.ts"
import type { StreamingOptions } from "./resilient-stream.ts"
import { durationMillis } from "../internal/duration-millis.ts"

/** What `retry` may hold: a near miss (`time`, `delay`) is refused rather than ignored. */
const retryKeys: ReadonlyArray<keyof RetryOptions> = ["times", "base", "factor", "maxDelay", "maxRetryAfter"]

/** Fault options of the provider SDKs (OpenAI's, Anthropic's `maxRetries`; Ollama's fetch `timeoutMs`), and what this package names them. */
const sdkFaultNames: ReadonlyArray<readonly [string, string]> = [
  ["maxRetries", "retry: { times } (or retry: false)"],
  ["timeoutMs", "timeout (a duration, or milliseconds)"]
]

/** The fields of Effect's `DurationObject` (`{ seconds: 30 }`). */
const durationFields: ReadonlySet<string> = new Set(["weeks", "days", "hours", "minutes", "seconds", "milliseconds", "microseconds", "nanoseconds"])

/**
 * A duration input in milliseconds, `NaN` when it is none. Stricter than Effect's reading where that
 * one quietly makes zero of a mistake: the number `NaN`, an object of other fields (`{ secs: 5 }`) or
 * of values that are not numbers, a `[seconds, nanos]` pair that is not two finite numbers.
 */
const millisOf = (value: unknown): number => {
  // Milliseconds as given (Effect reads `NaN` as zero, and rounds a tiny negative to zero).
  if (typeof value === "number") return value
  if (Array.isArray(value) && !(value.length === 2 && value.every(Number.isFinite))) return Number.NaN
  if (isRecord(value) && !Duration.isDuration(value)) {
    const fields = Object.entries(value)
    if (fields.length === 0 || fields.some(([key, field]) => !durationFields.has(key) || typeof field !== "number" || Number.isNaN(field))) return Number.NaN
  }
  return durationMillis(value)
}

/**
 * Refuses fault options that are not what {@link StreamingOptions} documents, naming `subject` (the
 * provider and model) in the `AgentConfigError`. Options it does not know are left to their provider.
 *
 * @example
 * ```ts
 * checkFaultOptions(`openai model "gpt-4o-mini"`, { retry: { times: Number.NaN } })
 * // throws AgentConfigError: Invalid openai model "gpt-4o-mini": retry.times must be a whole number >= 0 (0: no retry), got NaN
 * ```
 */
export const checkFaultOptions = (subject: string, options: unknown): void => {
  const fail = (option: string, value: unknown, accepted: string): never => {
    throw new AgentConfigError({ subject, reason: `${option} must be ${accepted}, got ${shownValue(value)}` })
  }
  if (!isRecord(options)) return fail("options", options, "an object of options")
  const { timeout, idleTimeout, retryTimeouts, retry } = options as StreamingOptions & Record<string, unknown>
  const positiveDuration = (option: string, value: unknown) => {
    if (value !== undefined && !(millisOf(value) > 0)) fail(option, value, `a positive duration ("30 seconds", or milliseconds), or Infinity for none`)
  }
  positiveDuration("timeout", timeout)
  positiveDuration("idleTimeout", idleTimeout)
  if (retryTimeouts !== undefined && typeof retryTimeouts !== "boolean") fail("retryTimeouts", retryTimeouts, "true or false")
  // The provider SDKs' own names (a plain JavaScript caller coming from them): silently ignored, they
  // would leave the retries the caller meant to switch off.
  for (const [name, instead] of sdkFaultNames) {
    if (Object.hasOwn(options, name)) fail(name, options[name], `left out: it is the provider SDK's option, not this package's; use ${instead}`)
  }
  if (retry === undefined || retry === false) return
  if (!isRecord(retry)) return fail("retry", retry, "false (no retry) or an object { times, base, factor, maxDelay, maxRetryAfter }")
  for (const key of Object.keys(retry)) {
    if (!(retryKeys as ReadonlyArray<string>).includes(key)) fail(`retry.${key}`, retry[key], `one of retry.${retryKeys.join(", retry.")} (an unknown option)`)
  }
  const { times, base, factor, maxDelay, maxRetryAfter } = retry as RetryOptions
  if (times !== undefined && !(Number.isInteger(times) && times >= 0)) fail("retry.times", times, "a whole number >= 0 (0: no retry)")
  if (factor !== undefined && !(typeof factor === "number" && Number.isFinite(factor) && factor >= 1)) fail("retry.factor", factor, "a finite number >= 1")
  if (base !== undefined) {
    const millis = millisOf(base)
    if (!(Number.isFinite(millis) && millis >= 0)) fail("retry.base", base, `a finite duration >= 0 ("500 millis", or milliseconds)`)
  }
  for (const [option, value] of [["retry.maxDelay", maxDelay], ["retry.maxRetryAfter", maxRetryAfter]] as const) {
    if (value !== undefined && !(millisOf(value) >= 0)) fail(option, value, `a duration >= 0 ("10 seconds", or milliseconds), or Infinity for no bound`)
  }
}
