/**
 * What every HTTP provider does around one streaming call: open the stream with an `AbortSignal`
 * (aborted when the stream ends, fails or is interrupted, which closes the HTTP response), decode its
 * chunks into response parts, fail with a retryable `ModelError` when nothing arrives for `idleTimeout`
 * (a stall) or when the stream ends before the answer finished (a cut), and retry with backoff only
 * while no content part (text, reasoning, tool call; usage does not count) has reached the caller: a
 * retry never repeats text the caller already saw. Every wait is announced (`announceRetry`) like a
 * non-streaming call's.
 *
 * There is no total timeout on a stream: a long generation that keeps sending is healthy. Bound a
 * run's wall time with the `maxDuration` budget.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import { ModelError } from "../errors.ts"
import type { ResponsePart } from "../model/response-part.ts"
import { type CallTarget, type ResilienceOptions, resolveRetry, retryWait, waitBeforeRetry } from "./resilience.ts"
import { effectStream as stream } from "../internal/lazy-effect.ts"


/** Options of streaming calls, beside the retry policy every provider shares. */
export interface StreamingOptions extends ResilienceOptions {
  /**
   * The longest wait for the next chunk (the first one included) before the stream counts as stalled:
   * a retryable `ModelError`, retried only when nothing reached the caller yet. Default 2 minutes
   * (reasoning models may think for a long time before their first token).
   */
  readonly idleTimeout?: Duration.Input
}

/**
 * The default idle timeout of a streaming call.
 *
 * @example
 * ```ts
 * openai("o3", { idleTimeout: defaultIdleTimeout })
 * ```
 */
export const defaultIdleTimeout = "2 minutes"

/** Turns one stream's chunks into parts; made anew for every attempt. */
export interface ChunkDecoder<C> {
  /** The parts a chunk carries. */
  readonly chunk: (chunk: C) => Effect.Effect<ReadonlyArray<ResponsePart>, ModelError>
  /** The parts after the last chunk (call ends, usage, finish), or why the answer is unusable or incomplete. */
  readonly end: () => Effect.Effect<ReadonlyArray<ResponsePart>, ModelError>
}

/**
 * Streams `open(signal)`'s chunks as response parts, with the idle timeout and the retry policy.
 *
 * @example
 * ```ts
 * resilientStream({ provider: "openai", model }, options, (signal) => client.chat.completions.create({ ...body, stream: true }, { signal }), toModelError, openAiChunkDecoder)
 * ```
 */
export const resilientStream = <C>(
  target: CallTarget,
  options: StreamingOptions,
  open: (signal: AbortSignal) => Promise<AsyncIterable<C>>,
  toModelError: (cause: unknown) => ModelError,
  makeDecoder: () => ChunkDecoder<C>
): Stream.Stream<ResponsePart, ModelError> =>
  stream().suspend(() => {
    const provider = typeof target === "string" ? target : target.provider
    const idle = Duration.fromInputUnsafe(options.idleTimeout ?? defaultIdleTimeout)
    let delivered = false
    const attempt = (): Stream.Stream<ResponsePart, ModelError> =>
      stream().suspend(() => {
        const controller = new AbortController()
        const decoder = makeDecoder()
        const chunks = stream().unwrap(
          Effect.tryPromise({ try: () => open(controller.signal), catch: toModelError }).pipe(
            Effect.map((iterable) => stream().fromAsyncIterable(iterable, toModelError))
          )
        )
        return chunks.pipe(
          stream().timeoutOrElse({
            duration: idle,
            orElse: () =>
              stream().fail(new ModelError({ provider, reason: `the stream stalled: nothing arrived for ${Duration.format(idle)}`, retryable: true }))
          }),
          stream().mapEffect(decoder.chunk),
          stream().concat(stream().fromEffect(Effect.suspend(decoder.end))),
          // Each chunk's parts as one chunk of the stream (not a stream per chunk: `flatMap` + `fromIterable`).
          stream().filter(isNonEmpty),
          stream().flattenArray,
          stream().ensuring(Effect.sync(() => controller.abort()))
        )
      })
    const policy = resolveRetry(options.retry)
    const attempts = (n: number): Stream.Stream<ResponsePart, ModelError> =>
      attempt().pipe(
        stream().catchTag("ModelError", (error) => {
          const wait = delivered ? undefined : retryWait(policy, n, error)
          if (wait === undefined) return stream().fail(error)
          return stream().unwrap(Effect.flatMap(wait, (waitMs) => waitBeforeRetry(target, policy, n, error, waitMs, Effect.succeed(attempts(n + 1)))))
        })
      )
    // Plain code per part (no Effect per part): remembers whether the caller has seen content.
    return attempts(0).pipe(
      stream().map((part) => {
        if (isContent(part)) delivered = true
        return part
      })
    )
  })

const isNonEmpty = (parts: ReadonlyArray<ResponsePart>): parts is readonly [ResponsePart, ...Array<ResponsePart>] => parts.length > 0

/**
 * Whether a part shows the caller some of the answer. Usage, finish and response-info parts do not: a
 * provider that reports usage first (Anthropic's `message_start`) may still be retried after them, and
 * the retry's usage and response info replace theirs (usage parts are cumulative, the last one counts).
 *
 * @example
 * ```ts
 * isContent({ _tag: "Usage", usage: { inputTokens: 1, outputTokens: 0 } }) // false
 * ```
 */
export const isContent = (part: ResponsePart): boolean =>
  part._tag !== "Usage" && part._tag !== "Finish" && part._tag !== "ResponseInfo"
