/**
 * What every HTTP provider does around one streaming call: open the stream with an `AbortSignal`
 * (aborted when the stream ends, fails or is interrupted, which closes the HTTP response), decode its
 * chunks into response parts, fail with a retryable `ModelError` when nothing arrives for `idleTimeout`
 * (a stall: not a chunk, nor a byte of the body when the provider reads it and reports its reads) or
 * when the stream ends before the answer finished (a cut), and retry with backoff only
 * while no content part (text, reasoning, tool call; usage does not count) has reached the caller: a
 * retry never repeats text the caller already saw. Every wait is announced (`announceRetry`) like a
 * non-streaming call's.
 *
 * There is no total timeout on a stream: a long generation that keeps sending is healthy. Bound a
 * run's wall time with the `maxDuration` budget.
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import type * as Stream from "effect/Stream"
import { ModelError } from "../errors.ts"
import type { ResponsePart } from "../model/response-part.ts"
import { type CallTarget, type ResilienceOptions, resolveRetry, type RetryPolicy, retryWait, waitBeforeRetry } from "./resilience.ts"
import { effectStream as stream } from "../internal/lazy-effect.ts"


/** Options of streaming calls, beside the retry policy every provider shares. */
export interface StreamingOptions extends ResilienceOptions {
  /**
   * The longest time with nothing arriving (before the first chunk too) before the stream counts as
   * stalled: a retryable `ModelError`, retried only when nothing reached the caller yet. Any byte of the
   * body counts (a keep-alive comment, a ping, a piece of a long event), for the providers that read
   * the body themselves (all but `fromAiSdk`, whose model hands over parts). A positive duration, or
   * `Infinity` for none: `0` is refused when the provider is built, not read as "off". Default 2 minutes
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
  /** The parts a chunk carries, or why the chunk is unusable. Plain code: it runs once per chunk. */
  readonly chunk: (chunk: C) => ReadonlyArray<ResponsePart> | ModelError
  /** The parts after the last chunk (call ends, usage, finish), or why the answer is unusable or incomplete. */
  readonly end: () => Effect.Effect<ReadonlyArray<ResponsePart>, ModelError>
}

/**
 * Runs `decode` (a decoder's plain code over one chunk); what it throws becomes the `ModelError`
 * `onThrow` makes.
 *
 * @example
 * ```ts
 * chunk: (chunk) => decodeChunk(() => partsOf(chunk), (cause) => new ModelError({ provider, reason: describeCause(cause), retryable: false, cause }))
 * ```
 */
export const decodeChunk = (
  decode: () => ReadonlyArray<ResponsePart>,
  onThrow: (cause: unknown) => ModelError
): ReadonlyArray<ResponsePart> | ModelError => {
  try {
    return decode()
  } catch (cause) {
    return onThrow(cause)
  }
}

/**
 * Streams `open(signal, onRead)`'s chunks as response parts, with the idle timeout and the retry
 * policy. `open` calls `onRead` whenever bytes of the body arrive (a reader of our own reports its
 * reads): that is activity for the idle timeout even when it completes no chunk.
 *
 * One pull per stream chunk, in plain code between the SDK's promises: a pull asks the SDK's iterator
 * for chunks until one decodes to parts (chunks without parts, such as pings, do not wake the caller),
 * and hands those parts on as one stream chunk. The idle timeout is one watchdog fiber per attempt
 * that sleeps until the pending pull's deadline (Effect's `Clock`), not a timer or a merged stream per
 * chunk. Same elements, order, failures and retry rule as the operator pipeline it replaces
 * (`fromAsyncIterable` + `timeoutOrElse` + `mapEffect` + `flattenArray` + `catchTag`).
 *
 * @example
 * ```ts
 * resilientStream({ provider: "openai", model }, options, (signal, onRead) => openStream(body, signal, onRead), toModelError, openAiChunkDecoder)
 * ```
 */
export const resilientStream = <C>(
  target: CallTarget,
  options: StreamingOptions,
  open: (signal: AbortSignal, onRead: () => void) => Promise<AsyncIterable<C>>,
  toModelError: (cause: unknown) => ModelError,
  makeDecoder: () => ChunkDecoder<C>
): Stream.Stream<ResponsePart, ModelError> =>
  stream().suspend(() => {
    const provider = typeof target === "string" ? target : target.provider
    const idle = Duration.fromInputUnsafe(options.idleTimeout ?? defaultIdleTimeout)
    const spec: CallSpec<C> = {
      target,
      policy: resolveRetry(options.retry),
      idleMs: Duration.isFinite(idle) ? Duration.toMillis(idle) : Infinity,
      stalled: () => new ModelError({ provider, reason: `the stream stalled: nothing arrived for ${Duration.format(idle)}`, retryable: true }),
      open,
      toModelError,
      makeDecoder
    }
    let call: StreamCall<C> | undefined
    return stream().fromPull(
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          call = new StreamCall(spec, clock)
          return call.pull
        })
      )
    ).pipe(stream().ensuring(Effect.suspend(() => call?.close() ?? Effect.void)))
  })

/** What a streaming call is made of: where it goes, its policies, how to open and decode it. */
interface CallSpec<C> {
  readonly target: CallTarget
  readonly policy: RetryPolicy
  /** The idle timeout in milliseconds (`Infinity`: none). */
  readonly idleMs: number
  readonly stalled: () => ModelError
  readonly open: (signal: AbortSignal, onRead: () => void) => Promise<AsyncIterable<C>>
  readonly toModelError: (cause: unknown) => ModelError
  readonly makeDecoder: () => ChunkDecoder<C>
}

type Parts = readonly [ResponsePart, ...Array<ResponsePart>]
type Pull = Effect.Effect<Parts, ModelError | Cause.Done>

/** One attempt: its abort controller, decoder, the SDK's iterator, and the pull waiting on it. */
interface Attempt<C> {
  readonly controller: AbortController
  readonly decoder: ChunkDecoder<C>
  iterator: AsyncIterator<C> | undefined
  /** Whether the `open` or an `iterator.next()` is pending. */
  pulling: boolean
  /** The pending pull's resume; cleared once it is resumed (by a chunk, a failure or the watchdog). */
  resume: ((effect: Pull) => void) | undefined
  /** When the pending pull started waiting (or its last chunk without parts, or bytes, came), by the run's `Clock`. */
  waitingSince: number
  watchdog: Fiber.Fiber<void> | undefined
  /** The last chunk came: the next pull ends the stream. */
  ended: boolean
  /** This attempt's promise handlers (made once per attempt, not per chunk). */
  readonly onResult: (result: IteratorResult<C>) => void
  readonly onError: (cause: unknown) => void
  /** Bytes of the body arrived: activity, though no chunk may be complete yet. */
  readonly onRead: () => void
}

/** The state of one streaming call across its attempts. */
class StreamCall<C> {
  #attempt: Attempt<C> | undefined
  #retries = 0
  /** Whether the caller has seen content: no retry after that. */
  #delivered = false

  constructor(readonly spec: CallSpec<C>, readonly clock: Clock.Clock) {}

  /** The stream's pull: the next non-empty array of parts, `Cause.Done` after the last. */
  readonly pull: Pull = Effect.suspend(() => {
    const attempt = this.#attempt
    if (attempt === undefined) return this.#start()
    return attempt.ended ? Cause.done() : this.#wait
  })

  /** Waits for the next chunk with parts (the watchdog may fail it first). */
  readonly #wait: Pull = Effect.callback((resume) => {
    const attempt = this.#attempt!
    attempt.resume = resume
    attempt.waitingSince = this.clock.currentTimeMillisUnsafe()
    this.#next(attempt)
  })

  /** A new attempt: a zero idle timeout stalls at once; else the watchdog starts and the first pull opens the stream. */
  #start(): Pull {
    if (this.spec.idleMs <= 0) return this.#retryOrFail(this.spec.stalled())
    const attempt: Attempt<C> = {
      controller: new AbortController(),
      decoder: this.spec.makeDecoder(),
      iterator: undefined,
      pulling: false,
      resume: undefined,
      waitingSince: 0,
      watchdog: undefined,
      ended: false,
      onResult: (result) => this.#result(attempt, result),
      onError: (cause) => {
        attempt.pulling = false
        this.#settle(attempt, () => this.#retryOrFail(this.spec.toModelError(cause)))
      },
      onRead: () => {
        if (this.#attempt === attempt && attempt.resume !== undefined) attempt.waitingSince = this.clock.currentTimeMillisUnsafe()
      }
    }
    this.#attempt = attempt
    if (this.spec.idleMs === Infinity) return this.#wait
    return Effect.flatMap(Effect.forkDetach(this.#watch(attempt)), (fiber) => {
      attempt.watchdog = fiber
      return this.#wait
    })
  }

  /** Sleeps until the pending pull's deadline; fails the pull as stalled when nothing came by then. */
  #watch(attempt: Attempt<C>): Effect.Effect<void> {
    return Effect.suspend(() => {
      const now = this.clock.currentTimeMillisUnsafe()
      const waiting = attempt.resume !== undefined
      if (waiting && now - attempt.waitingSince >= this.spec.idleMs) {
        this.#settle(attempt, () => this.#retryOrFail(this.spec.stalled()))
        return Effect.void
      }
      const due = (waiting ? attempt.waitingSince : now) + this.spec.idleMs
      return Effect.flatMap(Effect.sleep(Duration.millis(due - now)), () => this.#watch(attempt))
    })
  }

  /** Asks the SDK for the next chunk (opens the stream first, on the attempt's first pull). */
  #next(attempt: Attempt<C>): void {
    attempt.pulling = true
    try {
      if (attempt.iterator !== undefined) {
        attempt.iterator.next().then(attempt.onResult, attempt.onError)
        return
      }
      this.spec.open(attempt.controller.signal, attempt.onRead).then((iterable) => {
        if (this.#attempt !== attempt || attempt.resume === undefined) return
        attempt.iterator = iterable[Symbol.asyncIterator]()
        this.#next(attempt)
      }, attempt.onError)
    } catch (cause) {
      attempt.onError(cause)
    }
  }

  #result(attempt: Attempt<C>, result: IteratorResult<C>): void {
    attempt.pulling = false
    if (this.#attempt !== attempt || attempt.resume === undefined) return
    if (result.done === true) {
      attempt.ended = true
      this.#settle(attempt, () => this.#end(attempt))
      return
    }
    let parts: ReadonlyArray<ResponsePart> | ModelError
    try {
      parts = attempt.decoder.chunk(result.value)
    } catch (defect) {
      this.#settle(attempt, () => Effect.die(defect))
      return
    }
    if (parts instanceof ModelError) {
      const error = parts
      this.#settle(attempt, () => this.#retryOrFail(error))
    } else if (parts.length === 0) {
      // A chunk without parts (a ping, a role-only delta) is still progress: wait again without waking the caller.
      attempt.waitingSince = this.clock.currentTimeMillisUnsafe()
      this.#next(attempt)
    } else {
      const resume = attempt.resume
      attempt.resume = undefined
      resume(Effect.succeed(this.#deliver(parts as Parts)))
    }
  }

  /** The decoder's last parts, then the end of the stream. */
  #end(attempt: Attempt<C>): Pull {
    return Effect.matchEffect(Effect.suspend(attempt.decoder.end), {
      onFailure: (error) => this.#retryOrFail(error),
      onSuccess: (parts) => (parts.length === 0 ? Cause.done() : Effect.succeed(this.#deliver(parts as Parts)))
    })
  }

  /** Remembers whether the caller has seen content (plain code per chunk, no Effect per part). */
  #deliver(parts: Parts): Parts {
    if (!this.#delivered) for (const part of parts) if (isContent(part)) this.#delivered = true
    return parts
  }

  /**
   * Resumes the attempt's pending pull with what `next` makes (the end, a failure, a retry), unless it
   * is no longer waiting; what `next` throws (a decoder's or `toModelError`'s bug) is a defect, as it
   * was inside Effect's operators.
   */
  #settle(attempt: Attempt<C>, next: () => Pull): void {
    const resume = attempt.resume
    if (this.#attempt !== attempt || resume === undefined) return
    attempt.resume = undefined
    let effect: Pull
    try {
      effect = next()
    } catch (defect) {
      effect = Effect.die(defect)
    }
    resume(effect)
  }

  /**
   * After a failure: another attempt (the failed one closed, the wait announced) while nothing reached
   * the caller and the policy allows; else the failure.
   */
  #retryOrFail(error: ModelError): Pull {
    const n = this.#retries
    const wait = this.#delivered ? undefined : retryWait(this.spec.policy, n, error)
    if (wait === undefined) return Effect.fail(error)
    return Effect.andThen(
      this.close(),
      Effect.flatMap(wait, (waitMs) => {
        this.#retries = n + 1
        return waitBeforeRetry(this.spec.target, this.spec.policy, n, error, waitMs, this.pull)
      })
    )
  }

  /**
   * Ends the current attempt, as the stream's finalizer does: stops the watchdog, closes the SDK's
   * iterator (awaited when no `next()` is pending, as Effect's `fromAsyncIterable` does), then aborts
   * the request, which closes the HTTP response.
   */
  close(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const attempt = this.#attempt
      if (attempt === undefined) return Effect.void
      this.#attempt = undefined
      attempt.resume = undefined
      attempt.watchdog?.interruptUnsafe()
      const iterator = attempt.iterator
      const abort = Effect.sync(() => attempt.controller.abort())
      if (iterator?.return === undefined) return abort
      if (attempt.pulling) {
        iterator.return().catch(() => {})
        return abort
      }
      return Effect.andThen(Effect.promise(() => iterator.return!()), abort)
    })
  }
}

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
